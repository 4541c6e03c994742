"""Claude Code's settings.json and Codex's hooks.json: every merge case, through install.py and uninstall.py."""

from __future__ import annotations

import json
import os
import shlex
import stat
from pathlib import Path

import pytest

from harnesslink_core.harnesses.claude_code import wiring as claude_code
from harnesslink_core.harnesses.codex import wiring as codex
from harnesslink_core.wiring.files import backup_path

from .conftest import World

EVENTS = ["SessionStart", "UserPromptSubmit", "Stop", "PreCompact"]

USER_SETTINGS = b"""{
    "model": "opus",
    "env": {"FOO": "bar"},
    "hooks": {
        "Stop": [
            {"hooks": [{"type": "command", "command": "say done", "timeout": 5}]}
        ],
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]}
        ]
    },
    "permissions": {"allow": ["Bash(ls:*)"]}
}
"""

harness_modules = pytest.mark.parametrize("module", [claude_code, codex], ids=["claude-code", "codex"])


def settings_of(module, world: World) -> Path:  # type: ignore[no-untyped-def]
    path = module.target(world.locs)
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def our_handlers(data: dict, name: str, event: str) -> list[dict]:
    found = []
    for group in data["hooks"].get(event, []):
        for handler in group["hooks"]:
            if "context-hook" in handler["command"] and f"--harness {name}" in handler["command"]:
                found.append(handler)
    return found


@harness_modules
def test_install_into_a_missing_file_creates_it_with_our_four_events(module, world: World) -> None:
    path = module.target(world.locs)
    code, out = world.install("--harness", module.NAME)
    assert code == 0, out
    data = json.loads(path.read_text())
    assert list(data["hooks"]) == EVENTS
    for event in EVENTS:
        [handler] = our_handlers(data, module.NAME, event)
        assert handler["type"] == "command" and handler["timeout"] > 0
    assert data["hooks"]["SessionStart"][0]["matcher"] == "startup|resume|clear|compact|fork"
    assert data["hooks"]["PreCompact"][0]["matcher"] == "manual|auto"
    assert "matcher" not in data["hooks"]["UserPromptSubmit"][0]
    assert not backup_path(path).exists()  # nothing of the user's to keep


@harness_modules
def test_install_into_an_empty_file(module, world: World) -> None:
    path = settings_of(module, world)
    path.write_bytes(b"")
    code, out = world.install("--harness", module.NAME)
    assert code == 0, out
    assert list(json.loads(path.read_text())["hooks"]) == EVENTS
    assert backup_path(path).read_bytes() == b""


@harness_modules
def test_install_keeps_user_hooks_and_other_keys_where_they_are(module, world: World) -> None:
    path = settings_of(module, world)
    path.write_bytes(USER_SETTINGS)
    world.install("--harness", module.NAME)
    before, after = json.loads(USER_SETTINGS), json.loads(path.read_text())
    if module.NAME == "claude-code":
        before["permissions"]["allow"].append("mcp__harnesslink")  # the memory tools (test_mcp_wiring.py)
    assert {k: v for k, v in after.items() if k != "hooks"} == {k: v for k, v in before.items() if k != "hooks"}
    assert list(after) == list(before)
    assert after["hooks"]["PreToolUse"] == before["hooks"]["PreToolUse"]
    assert after["hooks"]["Stop"][0] == before["hooks"]["Stop"][0]  # the user's Stop group is still first
    assert len(after["hooks"]["Stop"]) == 2
    assert path.read_text().startswith('{\n    "model"')  # the file's own four-space indent is kept


def test_codex_install_never_moves_an_existing_entry(world: World) -> None:
    """Codex keys trust by <event>:<group>:<handler> position: every user entry keeps its index."""
    path = settings_of(codex, world)
    user = {
        "hooks": {
            "Stop": [{"hooks": [{"type": "command", "command": "a"}, {"type": "command", "command": "b"}]}],
            "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "c"}]}],
        }
    }
    path.write_text(json.dumps(user))
    world.install("--harness", "codex")
    data = json.loads(path.read_text())
    for event, groups in user["hooks"].items():
        assert data["hooks"][event][: len(groups)] == groups
    # upgrading our entry (a new venv path) replaces it where it stands
    first = path.read_text()
    world.env["HARNESSLINK_HOME"] = str(world.root / "moved agent dir")
    world.install("--harness", "codex")
    data2 = json.loads(path.read_text())
    assert path.read_text() != first
    for event in EVENTS:
        assert [len(g["hooks"]) for g in data2["hooks"][event]] == [len(g["hooks"]) for g in data["hooks"][event]]
        [handler] = our_handlers(data2, "codex", event)
        assert "moved agent dir" in handler["command"]


@harness_modules
def test_our_old_entries_are_replaced_not_duplicated(module, world: World) -> None:
    path = settings_of(module, world)
    old = {
        "hooks": {
            "Stop": [
                {"hooks": [{"type": "command", "command": "mine.sh"}]},
                {"hooks": [{"type": "command", "command": f"/old/venv/bin/context-hook stop --agent {module.NAME}"}]},
                {"hooks": [{"type": "command", "command": f"/old/venv/bin/context-hook stop --agent {module.NAME}"}]},
            ],
            "UserPromptSubmit": [
                {
                    "hooks": [
                        {"type": "command", "command": "theirs.sh"},
                        {"type": "command", "command": f"/x/context-hook user-prompt-submit --harness {module.NAME}"},
                    ]
                }
            ],
        }
    }
    path.write_text(json.dumps(old))
    world.install("--harness", module.NAME)
    data = json.loads(path.read_text())
    for event in EVENTS:
        [handler] = our_handlers(data, module.NAME, event)
        assert str(world.locs.agent_dir) in handler["command"]
    assert data["hooks"]["Stop"][0] == old["hooks"]["Stop"][0]
    assert len(data["hooks"]["Stop"]) == 2  # old copy replaced in place, the duplicate dropped
    assert data["hooks"]["UserPromptSubmit"][0]["hooks"] == [{"type": "command", "command": "theirs.sh"}]
    assert "--agent" not in path.read_text()


@harness_modules
@pytest.mark.parametrize("content", [b"{not json", b"[1, 2]", b'{"hooks": []}', b'{"hooks": {"Stop": {}}}', b"\xff\xfe"])
def test_a_file_that_does_not_parse_is_refused_and_left_untouched(module, world: World, content: bytes) -> None:
    path = settings_of(module, world)
    path.write_bytes(content)
    code, out = world.install("--harness", module.NAME)
    assert code == 1
    assert "refused" in out and "hint:" in out
    assert path.read_bytes() == content
    assert not backup_path(path).exists()
    code, out = world.uninstall("--harness", module.NAME)
    assert code == 1 and "hint:" in out and path.read_bytes() == content


@harness_modules
def test_a_read_only_file_is_refused(module, world: World) -> None:
    path = settings_of(module, world)
    path.write_bytes(USER_SETTINGS)
    path.chmod(0o444)
    code, out = world.install("--harness", module.NAME)
    assert code == 1
    assert "read-only" in out and "hint:" in out
    assert path.read_bytes() == USER_SETTINGS


def test_a_refused_harness_does_not_stop_the_others(world: World) -> None:
    settings_of(claude_code, world).write_bytes(b"{oops")
    code, out = world.install("--harness", "claude-code", "--harness", "codex")
    assert code == 1
    assert json.loads(codex.target(world.locs).read_text())["hooks"]


@harness_modules
def test_second_run_changes_no_byte(module, world: World) -> None:
    path = settings_of(module, world)
    path.write_bytes(USER_SETTINGS)
    world.install("--harness", module.NAME)
    first = world.snapshot()
    mtime = path.stat().st_mtime_ns
    code, out = world.install("--harness", module.NAME)
    assert code == 0
    assert "already wired" in out
    assert world.snapshot() == first
    assert path.stat().st_mtime_ns == mtime  # not even rewritten with the same bytes


@harness_modules
@pytest.mark.parametrize(
    "original",
    [None, b"", b"{}", b'{"hooks": {}}', USER_SETTINGS, b'{"a":1,"hooks":{"Stop":[]}}'],
    ids=["missing", "empty", "empty-object", "empty-hooks", "user", "compact"],
)
def test_uninstall_restores_the_original_bytes(module, world: World, original: bytes | None) -> None:
    path = settings_of(module, world)
    if original is not None:
        path.write_bytes(original)
    world.install("--harness", module.NAME)
    assert path.read_bytes() != original
    code, out = world.uninstall()
    assert code == 0, out
    if original is None:
        assert not path.exists()
    else:
        assert path.read_bytes() == original
    assert not backup_path(path).exists()


@harness_modules
def test_uninstall_keeps_hooks_added_after_install(module, world: World) -> None:
    path = settings_of(module, world)
    path.write_bytes(USER_SETTINGS)
    world.install("--harness", module.NAME)
    data = json.loads(path.read_text())
    data["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "later.sh"}]})
    data["theme"] = "dark"
    path.write_text(json.dumps(data, indent=4))
    world.uninstall()
    expected = json.loads(USER_SETTINGS)
    expected["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "later.sh"}]})
    expected["theme"] = "dark"
    assert json.loads(path.read_text()) == expected
    assert backup_path(path).exists()  # not the original any more: the backup stays for the user


@harness_modules
def test_backup_is_taken_once_and_never_overwritten(module, world: World) -> None:
    path = settings_of(module, world)
    path.write_bytes(USER_SETTINGS)
    world.install("--harness", module.NAME)
    world.env["HARNESSLINK_HOME"] = str(world.root / "elsewhere")  # a reinstall that changes our entries
    world.install("--harness", module.NAME)
    assert backup_path(path).read_bytes() == USER_SETTINGS


@harness_modules
def test_file_mode_is_kept(module, world: World) -> None:
    path = settings_of(module, world)
    path.write_bytes(USER_SETTINGS)
    path.chmod(0o600)
    world.install("--harness", module.NAME)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(backup_path(path).stat().st_mode) == 0o600


@harness_modules
def test_a_symlinked_settings_file_is_written_through_its_link(module, world: World) -> None:
    dotfiles = world.root / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "settings.json"
    real.write_bytes(USER_SETTINGS)
    path = settings_of(module, world)
    path.symlink_to(real)
    world.install("--harness", module.NAME)
    assert path.is_symlink()
    assert our_handlers(json.loads(real.read_text()), module.NAME, "Stop")
    world.uninstall()
    assert path.is_symlink() and real.read_bytes() == USER_SETTINGS


@harness_modules
def test_hook_commands_with_spaces_in_paths_run_in_a_shell(module, world: World) -> None:
    world.install("--harness", module.NAME)
    exe = world.locs.agent_dir / "venv" / "bin" / "context-hook"
    assert " " in str(exe)
    record = world.root / "argv.txt"
    exe.write_text(f'#!/bin/sh\nprintf "%s\\n" "$0" "$@" > {shlex.quote(str(record))}\n')
    handler = our_handlers(json.loads(module.target(world.locs).read_text()), module.NAME, "Stop")[0]
    assert os.system(handler["command"]) == 0  # sh -c, as both harnesses run it
    assert record.read_text().splitlines() == [str(exe), "stop", "--harness", module.NAME]


def test_claude_config_dir_is_respected(world: World) -> None:
    world.env["CLAUDE_CONFIG_DIR"] = str(world.root / "claude conf")
    code, out = world.install()
    assert code == 0, out
    assert (world.root / "claude conf" / "settings.json").exists()
    assert not (world.home / ".claude").exists()


def test_codex_home_is_respected(world: World) -> None:
    world.env["CODEX_HOME"] = str(world.root / "codex home")
    world.install()
    assert (world.root / "codex home" / "hooks.json").exists()


def test_claude_disable_all_hooks_is_reported(world: World) -> None:
    path = settings_of(claude_code, world)
    path.write_text('{"disableAllHooks": true}')
    code, out = world.install("--harness", "claude-code")
    assert code == 0
    assert "disableAllHooks" in out
    assert json.loads(path.read_text())["disableAllHooks"] is True


@pytest.mark.parametrize("key", ["hooks", "codex_hooks"])
def test_codex_hooks_switched_off_in_config_toml_is_reported_not_edited(world: World, key: str) -> None:
    config = codex.home(world.locs) / "config.toml"
    config.parent.mkdir(parents=True)
    text = f'model = "gpt-5"\n\n[features]\n{key} = false  # mine\n'
    config.write_text(text)
    code, out = world.install("--harness", "codex")
    assert code == 0
    assert f"[features] {key} = false" in out
    assert config.read_text().startswith(text)  # only our memory tools' block is added (test_mcp_wiring.py)


def test_codex_install_says_how_to_trust_the_hooks(world: World) -> None:
    code, out = world.install("--harness", "codex")
    assert "/hooks" in out and "trust" in out
