"""With the real Claude Code CLI: this repository as a plugin marketplace.

`claude plugin marketplace add <this checkout>` and `claude plugin install harnesslink@harnesslink` wire Claude
Code without install.py: the first session makes the private venv in the plugin's data folder (in the
background, waiting no longer than the hook may), a tool-using turn is banked when the CLI exits, a new session
gets the brief and the prompt's match, the memory tools answer through the plugin's MCP server, the user's own
hooks still run, and `claude plugin uninstall` leaves nothing of ours: no hook, no server, no venv.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

from harnesslink_core.harnesses.claude_code import plugin as claude_plugin

from . import clis
from .harnesses import Sandbox
from .install_flow import REPO, Flow, assert_plugin_gone, prove_plugin_memory
from .marks import SLOW_E2E

pytestmark = SLOW_E2E

PLUGIN = "harnesslink@harnesslink"
TOOLS = "mcp__plugin_harnesslink_harnesslink"  # how Claude Code names a plugin's server in permissions
SETUP_TIMEOUT_SECONDS = 300


def claude(flow: Flow, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(clis.cli_path("claude-code")), *args], env=flow.env(), cwd=flow.sandbox.project,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"claude {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done


def data_dir(sandbox: Sandbox) -> Path:
    return sandbox.home / ".claude" / "plugins" / "data" / "harnesslink-harnesslink"


def wait_for_setup(sandbox: Sandbox) -> str:
    stamp = data_dir(sandbox) / "venv" / claude_plugin.STAMP
    deadline = time.monotonic() + SETUP_TIMEOUT_SECONDS
    while not stamp.exists() and time.monotonic() < deadline:
        time.sleep(1)
    log = data_dir(sandbox) / "setup.log"
    text = log.read_text(encoding="utf-8") if log.exists() else "(no setup log)"
    assert stamp.exists(), f"the plugin's setup did not finish in {SETUP_TIMEOUT_SECONDS} s:\n{text[-3000:]}"
    return text


def test_the_plugin_from_a_local_marketplace_wires_claude_code_and_uninstalls_clean(sandbox: Sandbox) -> None:
    flow = Flow("claude-code", sandbox)
    flow.driver.prepare(sandbox)  # the user's own hooks, which must keep running
    settings = sandbox.home / ".claude" / "settings.json"
    user = json.loads(settings.read_text())
    user["permissions"]["allow"].append(TOOLS)  # what a user answers `claude -p`'s tool prompt with
    settings.write_text(json.dumps(user, indent=2))
    original_hooks = user["hooks"]

    claude(flow, "plugin", "marketplace", "add", str(REPO))
    claude(flow, "plugin", "install", PLUGIN)
    assert not (flow.agent_dir / "venv").exists(), "the plugin does not use install.py's environment"

    flow.driver.start(sandbox, "hello").check()  # the first session starts the setup
    log = wait_for_setup(sandbox)
    assert "making" in log and "ready" in log and "cloud.autobank: claude-code" in log, log

    topic, entries = prove_plugin_memory(flow, TOOLS)

    claude(flow, "plugin", "uninstall", PLUGIN)
    claude(flow, "plugin", "marketplace", "remove", "harnesslink")
    assert not data_dir(sandbox).exists(), "the private venv goes with the plugin"
    after = json.loads(settings.read_text())
    assert after["hooks"] == original_hooks
    assert "launch.py" not in settings.read_text() and "harnesslink@" not in settings.read_text()
    dot_json = json.loads((sandbox.home / ".claude.json").read_text())
    assert "harnesslink" not in (dot_json.get("mcpServers") or {})
    assert_plugin_gone(flow, topic, entries[0])
