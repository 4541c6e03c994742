"""install.py wires the memory tools with the hooks' merge rules: never clobber, idempotent,
one backup, exact restore. Claude Code: `mcpServers.harnesslink` in .claude.json plus a permission;
Codex: a marked `[mcp_servers.harnesslink]` block in config.toml; pi/omp: native tools in the extension."""

from __future__ import annotations

import json
import tomllib

import pytest

from harnesslink_core.harnesses.claude_code import wiring as claude_code
from harnesslink_core.harnesses.codex import wiring as codex
from harnesslink_core.harnesses.omp.wiring import OMP
from harnesslink_core.harnesses.pi.wiring import PI
from harnesslink_core.wiring import mcp
from harnesslink_core.wiring.files import backup_path

from .conftest import World

CLAUDE_JSON = json.dumps({
    "numStartups": 3, "userID": "abc", "mcpServers": {"github": {"type": "stdio", "command": "gh-mcp"}},
    "projects": {"/w": {"allowedTools": []}}}, indent=2).encode() + b"\n"
SETTINGS = b'{\n  "permissions": {\n    "allow": ["Bash(ls:*)"]\n  },\n  "theme": "dark"\n}\n'
CONFIG_TOML = b'''# my codex config
model = "gpt-5"   # keep this comment
approval_policy = "on-request"

[mcp_servers.github]
command = "gh-mcp"
args = ["--stdio"]

[profiles.fast]
model = "gpt-5-mini"
'''


def claude_files(world: World) -> tuple:
    return mcp.claude_json(world.locs), claude_code.target(world.locs)


def test_claude_code_gets_our_server_in_the_user_scope_and_the_permission(world: World) -> None:
    dot_json, settings = claude_files(world)
    dot_json.write_bytes(CLAUDE_JSON)
    settings.parent.mkdir(parents=True)
    settings.write_bytes(SETTINGS)

    code, out = world.install("--harness", "claude-code")

    assert code == 0, out
    config = json.loads(dot_json.read_text())
    ours = config["mcpServers"]["harnesslink"]
    assert ours["type"] == "stdio" and ours["args"] == ["mcp", "--harness", "claude-code"]
    assert ours["command"] == str(world.locs.agent_dir / "venv" / "bin" / "harnesslink") and ours["env"] == {}
    assert {k: v for k, v in config.items() if k != "mcpServers"} == {
        k: v for k, v in json.loads(CLAUDE_JSON).items() if k != "mcpServers"}
    assert config["mcpServers"]["github"] == {"type": "stdio", "command": "gh-mcp"}
    allow = json.loads(settings.read_text())["permissions"]["allow"]
    assert allow == ["Bash(ls:*)", "mcp__harnesslink"]
    assert backup_path(dot_json).read_bytes() == CLAUDE_JSON

    first = world.snapshot()
    assert world.install("--harness", "claude-code")[0] == 0
    assert world.snapshot() == first, "a second install changes no byte"

    code, out = world.uninstall()
    assert code == 0, out
    assert dot_json.read_bytes() == CLAUDE_JSON and settings.read_bytes() == SETTINGS
    assert not backup_path(dot_json).exists() and not backup_path(settings).exists()


def test_claude_code_changes_made_meanwhile_stay_and_only_our_key_goes(world: World) -> None:
    dot_json, settings = claude_files(world)
    dot_json.write_bytes(CLAUDE_JSON)
    world.install("--harness", "claude-code")
    config = json.loads(dot_json.read_text())
    config["numStartups"] = 9  # Claude Code rewrites the file all the time
    config["mcpServers"]["later"] = {"command": "x"}
    dot_json.write_text(json.dumps(config, indent=2))

    world.uninstall()

    after = json.loads(dot_json.read_text())
    assert "harnesslink" not in after["mcpServers"] and after["mcpServers"]["later"] == {"command": "x"}
    assert after["numStartups"] == 9
    assert not settings.exists(), "settings.json did not exist before install"


def test_a_permission_the_user_had_before_stays_after_uninstall(world: World) -> None:
    _, settings = claude_files(world)
    settings.parent.mkdir(parents=True)
    mine = b'{"permissions": {"allow": ["mcp__harnesslink", "Read"]}}'
    settings.write_bytes(mine)
    world.install("--harness", "claude-code")
    assert json.loads(settings.read_text())["permissions"]["allow"] == ["mcp__harnesslink", "Read"]
    world.uninstall()
    assert settings.read_bytes() == mine


def test_a_server_named_harnesslink_that_is_not_ours_is_refused_and_nothing_is_touched(world: World) -> None:
    dot_json, _ = claude_files(world)
    theirs = b'{"mcpServers": {"harnesslink": {"command": "/opt/other/server"}}}'
    dot_json.write_bytes(theirs)
    before = world.snapshot()

    code, out = world.install("--harness", "claude-code")

    assert code == 1 and "did not write" in out and "--no-mcp" in out
    assert world.snapshot() == before
    code, out = world.install("--harness", "claude-code", "--no-mcp")
    assert code == 0 and dot_json.read_bytes() == theirs


def test_claude_config_dir_moves_dot_claude_json_too(world: World) -> None:
    world.env["CLAUDE_CONFIG_DIR"] = str(world.root / "claude cfg")
    world.env["HARNESSLINK_HOME"] = str(world.root / "agent home")
    world.install("--harness", "claude-code")
    config = json.loads((world.root / "claude cfg" / ".claude.json").read_text())
    assert config["mcpServers"]["harnesslink"]["env"] == {"HARNESSLINK_HOME": str(world.root / "agent home")}
    assert not (world.home / ".claude.json").exists()


def test_codex_gets_a_marked_block_and_every_other_byte_of_config_toml_stays(world: World) -> None:
    config = codex.config_toml(world.locs)
    config.parent.mkdir(parents=True)
    config.write_bytes(CONFIG_TOML)

    code, out = world.install("--harness", "codex")

    assert code == 0, out
    text = config.read_bytes()
    assert text.startswith(CONFIG_TOML + b"\n" + mcp.BLOCK_START.encode())
    server = tomllib.loads(text.decode())["mcp_servers"]["harnesslink"]
    assert server == {"command": str(world.locs.agent_dir / "venv" / "bin" / "harnesslink"),
                      "args": ["mcp", "--harness", "codex"], "default_tools_approval_mode": "approve"}
    first = world.snapshot()
    world.install("--harness", "codex")
    assert world.snapshot() == first

    world.uninstall()
    assert config.read_bytes() == CONFIG_TOML and not backup_path(config).exists()


@pytest.mark.parametrize("original", [None, b"", b'model = "gpt-5"', b'model = "gpt-5"\n', b'model = "gpt-5"\n\n',
                                      b"# only a comment\n\n\n"],
                         ids=["missing", "empty", "no-newline", "newline", "blank-line", "comment"])
def test_codex_uninstall_gives_back_the_original_bytes(world: World, original: bytes | None) -> None:
    config = codex.config_toml(world.locs)
    config.parent.mkdir(parents=True)
    if original is not None:
        config.write_bytes(original)
    world.install("--harness", "codex")
    assert tomllib.loads(config.read_text())["mcp_servers"]["harnesslink"]
    world.uninstall()
    assert (config.read_bytes() if config.exists() else None) == original


def test_codex_reinstall_replaces_the_block_in_place_and_keeps_what_came_after(world: World) -> None:
    config = codex.config_toml(world.locs)
    config.parent.mkdir(parents=True)
    config.write_bytes(CONFIG_TOML)
    world.install("--harness", "codex")
    later = b'\n[mcp_servers.later]\ncommand = "later"\n'
    config.write_bytes(config.read_bytes() + later)
    world.env["HARNESSLINK_HOME"] = str(world.root / "elsewhere")

    world.install("--harness", "codex")

    text = config.read_text()
    assert text.count(mcp.BLOCK_START) == 1 and text.endswith(later.decode())
    data = tomllib.loads(text)
    assert data["mcp_servers"]["harnesslink"]["env"] == {"HARNESSLINK_HOME": str(world.root / "elsewhere")}
    world.uninstall()
    assert config.read_bytes() == CONFIG_TOML + later


@pytest.mark.parametrize("content, message", [
    (b'[mcp_servers.harnesslink]\ncommand = "/opt/theirs"\n', "did not write"),
    (b"model = = broken\n", "not valid TOML"),
    (b'mcp_servers = { github = { command = "gh" } }\n', "would break it"),
])
def test_codex_config_we_must_not_edit_is_refused_untouched(world: World, content: bytes, message: str) -> None:
    config = codex.config_toml(world.locs)
    config.parent.mkdir(parents=True)
    config.write_bytes(content)
    before = world.snapshot()
    code, out = world.install("--harness", "codex")
    assert code == 1 and message in out, out
    assert world.snapshot() == before


def test_no_mcp_wires_the_hooks_alone_and_takes_out_tools_wired_before(world: World) -> None:
    for name in ("claude-code", "codex", "pi", "omp"):
        world.install("--harness", name)
    dot_json, settings = claude_files(world)
    assert "harnesslink" in json.loads(dot_json.read_text())["mcpServers"]

    code, out = world.install("--harness", "claude-code", "--harness", "codex", "--harness", "pi",
                              "--harness", "omp", "--no-mcp")

    assert code == 0, out
    assert not dot_json.exists(), "install created it for our server alone"
    assert "permissions" not in json.loads(settings.read_text())
    assert json.loads(settings.read_text())["hooks"]["Stop"]
    assert not codex.config_toml(world.locs).exists(), "install created it for our block alone"
    for family in (PI, OMP):
        text = family.target(world.locs).read_text()
        assert "const TOOLS: any[] = [];" in text and "user-prompt-submit" in text


def test_the_extension_registers_the_same_tools_as_the_server(world: World) -> None:
    from harnesslink_core.memory_tools import listing

    world.install("--harness", "pi", "--harness", "omp")
    for family in (PI, OMP):
        text = family.target(world.locs).read_text()
        start = text.index("const TOOLS: any[] = ") + len("const TOOLS: any[] = ")
        tools, _ = json.JSONDecoder().raw_decode(text[start:])
        assert [t["name"] for t in tools] == [t["name"] for t in listing()]
        assert all(t["parameters"]["type"] == "object" and t["description"] for t in tools)
        assert {t["name"] for t in tools if t["readOnly"]} == {"memory_search", "memory_get", "context_brief",
                                                               "recall_memory"}
        assert json.dumps(str(world.locs.agent_dir / "venv" / "bin" / "harnesslink")) in text
        assert "__CLI__" not in text and "__TOOLS__" not in text
