"""With the real Claude Code CLI: this repository as a plugin marketplace.

`claude plugin marketplace add <this checkout>` and `claude plugin install harnesslink@harnesslink` wire Claude
Code without install.py: the first session makes the private venv in the plugin's data folder (in the
background, waiting no longer than the hook may), a tool-using turn is banked when the CLI exits, a new session
gets the brief and the prompt's match, the memory tools answer through the plugin's MCP server, the user's own
hooks still run, and `claude plugin uninstall` leaves nothing of ours: no hook, no server, no venv.
"""

from __future__ import annotations

import json
import secrets
import subprocess
import time
from pathlib import Path

from harnesslink_core.recall.matches import BUDGET as MATCHES_BUDGET
from harnesslink_core.wiring import claude_plugin

from . import clis
from .fake_model import tool_result_of
from .harnesses import Sandbox
from .install_flow import REPO, Flow, user_hooks_ran
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

    topic = f"quasar{secrets.token_hex(3)}"
    flow.driver.start(sandbox, f"Calibrate the {topic} flux capacitor [[bash: echo calibrated-$((40+2))]]").check()
    entries = flow.banked(topic)
    assert len(entries) == 1, f"expected one entry about {topic}: {entries}\n{log}"

    since = len(sandbox.server.model_requests())
    flow.driver.start(sandbox, f"How did we calibrate the {topic} flux capacitor before?").check()
    blocks = list(flow.framed_blocks(since))
    matches = [block for kind, block in blocks if kind == "matches"]
    assert any(topic in block and entries[0].name in block for block in matches), [k for k, _ in blocks]
    assert all(len(block) <= MATCHES_BUDGET for block in matches)
    assert any(kind == "brief" and topic in block for kind, block in blocks), "the session-start brief names it"
    assert {"SessionStart", "UserPromptSubmit", "Stop"} <= user_hooks_ran(flow)

    since = len(sandbox.server.model_requests())
    flow.driver.start(sandbox, f'Use memory. [[tool: memory_search | {{"query": "{topic} calibration"}}]]').check()
    requests = sandbox.server.model_requests()[since:]
    call = requests[0].reply.tool_call if requests and requests[0].reply else None
    offered = [t.get("name") for t in (requests[0].body.get("tools") or [])] if requests else []
    assert call and call.name.startswith(TOOLS), f"the plugin's memory tools were not offered: {call}; {offered}"
    result = tool_result_of(requests[1]) if len(requests) > 1 else None
    assert result and topic in result, result

    claude(flow, "plugin", "uninstall", PLUGIN)
    claude(flow, "plugin", "marketplace", "remove", "harnesslink")
    assert not data_dir(sandbox).exists(), "the private venv goes with the plugin"
    after = json.loads(settings.read_text())
    assert after["hooks"] == original_hooks
    assert "launch.py" not in settings.read_text() and "harnesslink@" not in settings.read_text()
    dot_json = json.loads((sandbox.home / ".claude.json").read_text())
    assert "harnesslink" not in (dot_json.get("mcpServers") or {})
    since = len(sandbox.server.model_requests())
    flow.driver.start(sandbox, f"How did we calibrate the {topic} flux capacitor before?").check()
    assert not list(flow.framed_blocks(since)), "no memory reaches a session once the plugin is gone"
    assert entries[0].exists(), "the memory itself stays, as with uninstall.py (it is the user's)"
