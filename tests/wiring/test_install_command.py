"""install.py and uninstall.py as commands: detection, dry run, autobank, environment, purge."""

from __future__ import annotations

import json

import pytest
import yaml

from harnesslink_core.harnesses.claude_code import wiring as claude_code
from harnesslink_core.harnesses.codex import wiring as codex
from harnesslink_core.harnesses.omp.wiring import OMP
from harnesslink_core.harnesses.pi.wiring import PI
from harnesslink_core.wiring import installer

from .conftest import World


def test_nothing_found_means_nothing_written_and_a_hint(world: World) -> None:
    before = world.snapshot()
    code, out = world.install()
    assert code == 1
    assert "--harness" in out
    assert world.snapshot() == before


@pytest.mark.parametrize(
    "setup, expected",
    [
        (lambda w: (w.home / ".claude").mkdir(), "claude-code"),
        (lambda w: w.put_command("claude"), "claude-code"),
        (lambda w: w.env.update(CLAUDE_CONFIG_DIR=str(w.root / "cc")), "claude-code"),
        (lambda w: (w.home / ".codex").mkdir(), "codex"),
        (lambda w: w.put_command("codex"), "codex"),
        (lambda w: w.env.update(CODEX_HOME=str(w.root / "cx")), "codex"),
        (lambda w: (w.home / ".pi").mkdir(), "pi"),
        (lambda w: w.put_command("pi"), "pi"),
        (lambda w: w.env.update(PI_CODING_AGENT_DIR=str(w.root / "pa")), "pi"),
        (lambda w: (w.home / ".omp").mkdir(), "omp"),
        (lambda w: w.put_command("omp"), "omp"),
    ],
    ids=["claude-dir", "claude-cmd", "claude-env", "codex-dir", "codex-cmd", "codex-env", "pi-dir", "pi-cmd",
         "pi-env", "omp-dir", "omp-cmd"],
)
def test_a_harness_is_detected_by_its_folder_command_or_variable(world: World, setup, expected: str) -> None:
    setup(world)
    code, out = world.install()
    assert code == 0, out
    wiring = {"claude-code": claude_code, "codex": codex, "pi": PI, "omp": OMP}
    for name, module in wiring.items():
        assert module.target(world.locs).exists() == (name == expected), name
    assert f"{expected}: wired" in out
    assert out.count("skipped, not found") == 3


def test_harness_flag_limits_and_forces(world: World) -> None:
    (world.home / ".claude").mkdir()
    code, out = world.install("--harness", "omp")
    assert code == 0
    assert OMP.target(world.locs).exists()
    assert not claude_code.target(world.locs).exists()


def test_dry_run_changes_nothing_and_shows_each_diff(world: World) -> None:
    for folder in (".claude", ".codex", ".pi", ".omp"):
        (world.home / folder).mkdir()
    (world.home / ".claude" / "settings.json").write_text('{"model": "opus"}\n')
    before = world.snapshot()
    code, out = world.install("--dry-run")
    assert code == 0
    assert world.snapshot() == before
    assert '+        "matcher": "startup|resume|clear|compact|fork",' in out
    assert ' "model": "opus"' in out
    assert f"new file {codex.target(world.locs)}:" in out, "a file made whole is summarised, not printed"
    assert "+// harnesslink-extension v1:" not in out
    assert "would turn on claude-code, codex, pi, omp" in out


def test_uninstall_dry_run_changes_nothing(world: World) -> None:
    (world.home / ".claude").mkdir()
    world.install()
    before = world.snapshot()
    code, out = world.uninstall("--dry-run")
    assert code == 0
    assert world.snapshot() == before
    assert "would remove" in out


def test_install_turns_autobank_on_for_what_it_wired_and_keeps_the_rest_of_config(world: World) -> None:
    config = world.locs.config_file
    config.parent.mkdir(parents=True)
    config.write_text("# my notes\nmemory:\n  autoBank: true\ncloud:\n  autobank: [pi]\n  token: abc\n")
    (world.home / ".codex").mkdir()
    code, out = world.install()
    assert code == 0, out
    data = yaml.safe_load(config.read_text())
    assert data == {"memory": {"autoBank": True}, "cloud": {"autobank": ["codex", "pi"], "token": "abc"}}
    assert config.read_text().startswith("# my notes\n")
    assert "cloud.autobank: codex, pi" in out


def test_no_venv_install_puts_runnable_hook_scripts_where_the_venv_would_be(world: World) -> None:
    (world.home / ".claude").mkdir()
    world.install()
    bin_dir = world.locs.agent_dir / "venv" / "bin"
    for script in ("context-hook", "harnesslink"):
        assert (bin_dir / script).stat().st_mode & 0o111
    command = json.loads(claude_code.target(world.locs).read_text())["hooks"]["Stop"][0]["hooks"][0]["command"]
    assert command.startswith(f'"{bin_dir / "context-hook"}" ')


def test_uninstall_removes_the_environment_and_keeps_the_memories(world: World) -> None:
    (world.home / ".claude").mkdir()
    world.install()
    memories = world.locs.memories / "--proj--" / "bank"
    memories.mkdir(parents=True)
    (memories / "entry.md").write_text("x")
    code, out = world.uninstall()
    assert code == 0
    assert not (world.locs.agent_dir / "venv").exists()
    assert not (world.locs.agent_dir / "install.json").exists()
    assert (memories / "entry.md").read_text() == "x"
    assert "memories: kept" in out


def test_uninstall_purge_removes_the_agent_dir(world: World) -> None:
    (world.home / ".claude").mkdir()
    world.install()
    code, out = world.uninstall("--purge")
    assert code == 0
    assert not world.locs.agent_dir.exists()


def test_uninstall_of_one_harness_keeps_the_environment_for_the_others(world: World) -> None:
    (world.home / ".claude").mkdir()
    (world.home / ".codex").mkdir()
    world.install()
    world.uninstall("--harness", "codex")
    assert not codex.target(world.locs).exists()
    assert claude_code.target(world.locs).exists()
    assert (world.locs.agent_dir / "venv" / "bin" / "context-hook").exists()


def test_a_refused_uninstall_keeps_the_environment_its_hooks_still_use(world: World) -> None:
    (world.home / ".claude").mkdir()
    world.install()
    path = claude_code.target(world.locs)
    path.write_text(path.read_text() + "garbage")
    code, out = world.uninstall()
    assert code == 1 and "hint:" in out
    assert (world.locs.agent_dir / "venv" / "bin" / "context-hook").exists()


def test_install_then_uninstall_leaves_no_trace_outside_the_agent_dir(world: World) -> None:
    for folder in (".claude", ".codex", ".pi", ".omp"):
        (world.home / folder).mkdir()
    (world.home / ".claude" / "settings.json").write_text('{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x"}]}]}}')
    before = world.snapshot()
    world.install()
    world.uninstall()
    after = world.snapshot()
    assert {k: v for k, v in after.items() if "/.superpi" not in k} == before


def test_missing_folders_lists_what_install_creates(world: World) -> None:
    target = world.home / "a" / "b" / "file"
    assert installer.missing_folders(target) == [world.home / "a" / "b", world.home / "a"]
