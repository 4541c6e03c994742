"""The Claude Code plugin (plugins/harnesslink, harnesslink_core/harnesses/claude_code/plugin.py) without the CLI:
its manifest says what install.py wires, install.py's wiring wins, a hook never waits past its bound, and a
ready private venv is what every hook and the server run. tests/e2e/test_claude_plugin.py drives the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harnesslink_core import __version__
from harnesslink_core.harnesses.claude_code import plugin as claude_plugin
from harnesslink_core.wiring import hooks_json

from .conftest import World

REPO = Path(__file__).resolve().parents[2]
ROOT = REPO / "plugins" / "harnesslink"


def manifest() -> dict:
    return json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text())


def test_the_manifest_runs_install_pys_four_hooks_through_the_launcher() -> None:
    hooks = manifest()["hooks"]
    assert list(hooks) == [event for event, *_ in hooks_json.EVENTS]
    for event, matcher, hook, timeout in hooks_json.EVENTS:
        [group] = hooks[event]
        assert group.get("matcher") == matcher
        [handler] = group["hooks"]
        assert handler["command"] == f'python3 -I -S "${{CLAUDE_PLUGIN_ROOT}}/launch.py" hook {hook}'
        assert handler["timeout"] == timeout
        assert claude_plugin.WAIT.get(hook, 0) < timeout, "a hook gives up waiting before Claude Code kills it"
    server = manifest()["mcpServers"]["harnesslink"]
    assert server["args"][-2:] == ["${CLAUDE_PLUGIN_ROOT}/launch.py", "mcp"] and server["alwaysLoad"] is True


def test_the_marketplace_lists_the_plugin_folder_which_holds_the_package() -> None:
    market = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text())
    [entry] = market["plugins"]
    assert entry["name"] == manifest()["name"] == "harnesslink" and market["name"] == "harnesslink"
    assert (REPO / entry["source"]).resolve() == ROOT
    assert manifest()["version"] == __version__
    assert (ROOT / "harnesslink_core" / "hooks.py").resolve() == REPO / "harnesslink_core" / "hooks.py"
    assert (ROOT / "pyproject.toml").is_file() and (ROOT / "README.md").is_file(), "pip builds the venv from here"


def plugin_env(world: World, data: Path, root: Path = ROOT) -> dict[str, str]:
    return {**world.env, "PATH": os.environ["PATH"], "CLAUDE_PLUGIN_ROOT": str(root), "CLAUDE_PLUGIN_DATA": str(data)}


def launch(env: dict[str, str], *args: str, stdin: str = "{}") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-I", "-S", env["CLAUDE_PLUGIN_ROOT"] + "/launch.py", *args], env=env,
                          input=stdin, capture_output=True, text=True, timeout=60)


def fake_venv(data: Path, root: Path = ROOT, version: str = __version__) -> None:
    """A ready venv whose two executables say how they were called."""
    bin_dir = data / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    for name in ("context-hook", "harnesslink"):
        (bin_dir / name).write_text(f'#!/bin/sh\necho "{name} $*"\n')
        (bin_dir / name).chmod(0o755)
    (data / "venv" / claude_plugin.STAMP).write_text(f"{version} {root}\n")


def test_a_ready_venv_runs_each_hook_and_the_server(world: World, tmp_path: Path) -> None:
    data = tmp_path / "data"
    fake_venv(data)
    env = plugin_env(world, data)
    assert launch(env, "hook", "user-prompt-submit").stdout == "context-hook user-prompt-submit --harness claude-code\n"
    assert launch(env, "mcp").stdout == "harnesslink mcp --harness claude-code\n"
    assert not (data / "setup.log").exists(), "a current venv starts no setup"


def test_install_py_wiring_wins_and_the_plugin_steps_aside(world: World, tmp_path: Path) -> None:
    (world.home / ".claude").mkdir()
    code, out = world.install("--harness", "claude-code")
    assert code == 0, out
    data = tmp_path / "data"
    fake_venv(data)
    env = plugin_env(world, data)
    for event in ("session-start", "user-prompt-submit", "stop", "pre-compact"):
        done = launch(env, "hook", event)
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    server = launch(env, "mcp")
    assert server.returncode == 0 and server.stdout == "" and "steps aside" in server.stderr

    code, out = world.install("--harness", "claude-code", "--no-mcp")  # install.py's hooks only: the tools are ours
    assert launch(env, "mcp").stdout == "harnesslink mcp --harness claude-code\n"
    world.uninstall()
    assert launch(env, "hook", "stop").stdout == "context-hook stop --harness claude-code\n", "handed back"


def test_only_install_pys_own_hooks_make_the_plugin_step_aside(world: World, tmp_path: Path) -> None:
    (world.home / ".claude").mkdir()
    hooks = {"Stop": [{"hooks": [{"type": "command", "command": "context-hook stop --harness codex"}]}],
             "Broken": 3}
    (world.home / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    data = tmp_path / "data"
    fake_venv(data)
    assert launch(plugin_env(world, data), "hook", "stop").stdout == "context-hook stop --harness claude-code\n"
    del hooks["Broken"]
    (world.home / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    assert launch(plugin_env(world, data), "hook", "stop").stdout == "context-hook stop --harness claude-code\n"


def test_install_py_says_when_the_plugin_is_enabled_too(world: World) -> None:
    (world.home / ".claude").mkdir()
    (world.home / ".claude" / "settings.json").write_text('{"enabledPlugins": {"harnesslink@harnesslink": true}}')
    code, out = world.install("--harness", "claude-code")
    assert code == 0 and "the HarnessLink plugin (harnesslink@harnesslink) is enabled too" in out, out


def stub_root(tmp_path: Path) -> Path:
    """A plugin folder whose launch.py, called for `setup`, only records that it was (and holds on a moment)."""
    root = tmp_path / "plugin"
    root.mkdir()
    (root / "launch.py").write_text(
        "import sys, time, pathlib\n"
        "if sys.argv[1:] == ['setup']:\n"
        "    pathlib.Path('setups').open('a').write('setup\\n')\n"
        "    time.sleep(2)\n"
        "else:\n"
        f"    sys.path.insert(0, {str(REPO)!r})\n"
        "    from harnesslink_core.harnesses.claude_code.plugin import main\n"
        "    raise SystemExit(main())\n")
    return root


def test_without_a_venv_a_hook_starts_the_setup_says_so_and_does_not_wait(world: World, tmp_path: Path) -> None:
    root, data = stub_root(tmp_path), tmp_path / "data"
    env = plugin_env(world, data, root)
    started = time.monotonic()
    done = launch(env, "hook", "user-prompt-submit")
    assert time.monotonic() - started < 5
    assert done.returncode == 0 and done.stdout == ""
    assert "making the private environment" in done.stderr and str(data / "venv") in done.stderr
    deadline = time.monotonic() + 10
    while not (data / "setups").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert (data / "setups").read_text() == "setup\n"


def test_session_start_waits_no_longer_than_its_bound(world: World, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(claude_plugin.WAIT, "session-start", 0.5)
    root, data = stub_root(tmp_path), tmp_path / "data"
    started = time.monotonic()
    assert claude_plugin.main(["hook", "session-start"], plugin_env(world, data, root)) == 0
    assert 0.5 <= time.monotonic() - started < 3
    said = capsys.readouterr()
    assert "setting up" in json.loads(said.out)["systemMessage"] and "in the background" in said.err


def test_a_stale_venv_keeps_serving_while_the_new_one_is_made(world: World, tmp_path: Path) -> None:
    root, data = stub_root(tmp_path), tmp_path / "data"
    fake_venv(data, root, version="0.0.1")
    done = launch(plugin_env(world, data, root), "hook", "stop")
    assert done.stdout == "context-hook stop --harness claude-code\n"
    deadline = time.monotonic() + 10
    while not (data / "setups").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert (data / "setups").exists(), "the refresh was started"


def test_a_hook_call_imports_what_it_needs_and_no_more(tmp_path: Path) -> None:
    """The launcher is paid on every hook call, before the hook itself: the standard library (not even json, re,
    pathlib or subprocess while the venv is ready) and four modules of ours (two of them empty packages). -S: no site-packages either."""
    fake_venv(tmp_path / "data")
    code = (f"import sys, os; sys.path.insert(0, {str(ROOT)!r})\n"
            "from harnesslink_core.harnesses.claude_code import plugin as claude_plugin\n"
            "os.execv = lambda exe, argv: print(sorted(m for m in sys.modules if m.startswith('harnesslink_core')\n"
            "    or m in ('json', 're', 'pathlib', 'subprocess', 'typing')))\n"
            "claude_plugin.main(['hook', 'user-prompt-submit'])\n")
    env = {"HOME": str(tmp_path), "CLAUDE_PLUGIN_ROOT": str(ROOT), "CLAUDE_PLUGIN_DATA": str(tmp_path / "data")}
    done = subprocess.run([sys.executable, "-I", "-S", "-c", code], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout == str(["harnesslink_core", "harnesslink_core.harnesses", "harnesslink_core.harnesses.claude_code",
                               "harnesslink_core.harnesses.claude_code.plugin", "harnesslink_core.paths"]) + "\n"


def test_the_codex_plugin_builds_its_venv_from_the_folder_holding_the_package(tmp_path: Path) -> None:
    """Codex copies the plugin without the package: its setup builds from the checkout this code runs from."""
    from harnesslink_core.harnesses.codex import plugin as codex_plugin
    from harnesslink_core.paths import locations

    source = Path(codex_plugin.plugin_for(locations({"HOME": str(tmp_path)}), str(tmp_path)).source)
    assert (source / "harnesslink_core" / "harnesses" / "codex" / "plugin.py").is_file()
    assert (source / "pyproject.toml").is_file()
