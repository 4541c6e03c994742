"""With the real Codex CLI: this repository as a Codex plugin marketplace.

`codex plugin marketplace add <this checkout>` and `codex plugin add harnesslink@harnesslink` wire Codex without
install.py: the first session makes the private venv (in the background, in the agent dir, since Codex keeps a
plugin's data folder after removing it), a tool-using turn is banked when the CLI exits, a new session gets the
brief and the prompt's match, `memory_search` answers through the plugin's MCP server, the user's own hooks still
run, and `codex plugin remove` plus `codex plugin marketplace remove` leave no file or line of ours in ~/.codex.
The hooks run with `--dangerously-bypass-hook-trust`, which stands for the user's trust step in `/hooks`.
"""

from __future__ import annotations

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
SETUP_TIMEOUT_SECONDS = 300


def codex(flow: Flow, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(clis.cli_path("codex")), *args], env=flow.env(), cwd=flow.sandbox.project,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"codex {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done


def wait_for_setup(flow: Flow) -> str:
    data = flow.agent_dir / "codex-plugin"
    stamp = data / "venv" / claude_plugin.STAMP
    deadline = time.monotonic() + SETUP_TIMEOUT_SECONDS
    while not stamp.exists() and time.monotonic() < deadline:
        time.sleep(1)
    log = data / "setup.log"
    text = log.read_text(encoding="utf-8") if log.exists() else "(no setup log)"
    assert stamp.exists(), f"the plugin's setup did not finish in {SETUP_TIMEOUT_SECONDS} s:\n{text[-3000:]}"
    return text


def banked(flow: Flow, topic: str) -> list[Path]:
    """The entries about `topic`, once the stop hook's banking (after its answer, detached) has written one."""
    deadline = time.monotonic() + 30
    while not flow.bank_entries(topic) and time.monotonic() < deadline:
        time.sleep(0.2)
    if not flow.bank_entries(topic):
        # the first backfill held the pass lock when the turn ended: the next session's start banks it
        flow.driver.start(flow.sandbox, "hello again").check()
    return flow.bank_entries(topic)


def user_files(home: Path) -> dict[str, bytes | None]:
    return {name: (home / name).read_bytes() if (home / name).exists() else None for name in ("config.toml", "hooks.json")}


def ours_in(home: Path) -> list[str]:
    """Every file under ~/.codex that names HarnessLink or holds its name, but the user's two (compared whole),
    the transcripts and Codex's own databases (which record what the sessions did, the plugin's tools included).
    Codex leaves the empty folder plugins/cache/<marketplace> behind: a folder, no file, and Codex's own."""
    found = []
    for path in sorted(home.rglob("*")):
        parts = path.relative_to(home).parts
        if not path.is_file() or parts[0] in ("sessions", "tmp", ".tmp") or ".sqlite" in path.name:
            continue
        if path.name in ("config.toml", "hooks.json") and len(parts) == 1:
            continue
        if "harnesslink" in str(path.relative_to(home)) or b"harnesslink" in path.read_bytes():
            found.append(str(path.relative_to(home)))
    return found


def test_the_plugin_from_a_local_marketplace_wires_codex_and_removes_clean(sandbox: Sandbox) -> None:
    flow = Flow("codex", sandbox)
    flow.driver.prepare(sandbox)  # the user's own hooks and config.toml, which must keep running and stay
    codex_home = sandbox.home / ".codex"
    before = user_files(codex_home)

    codex(flow, "plugin", "marketplace", "add", str(REPO))
    codex(flow, "plugin", "add", PLUGIN)
    assert not (flow.agent_dir / "venv").exists(), "the plugin does not use install.py's environment"

    flow.driver.start(sandbox, "hello").check()  # the first session starts the setup
    log = wait_for_setup(flow)
    assert "making" in log and "ready" in log and "cloud.autobank: codex" in log, log

    topic = f"quasar{secrets.token_hex(3)}"
    flow.driver.start(sandbox, f"Calibrate the {topic} flux capacitor [[bash: echo calibrated-$((40+2))]]").check()
    entries = banked(flow, topic)
    assert len(entries) == 1, f"expected one entry about {topic}: {entries}\n{log}"
    assert "harness: codex" in entries[0].read_text(encoding="utf-8")

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
    call = next((r.reply.tool_call for r in requests if r.reply and r.reply.tool_call), None)
    offered = [t.get("name") for r in requests[:1] for t in (r.body.get("tools") or [])]
    assert call and "memory_search" in call.name, f"the plugin's memory tools were not offered: {call}; {offered}"
    result = next((tool_result_of(r) for r in requests if tool_result_of(r)), None)
    assert result and topic in result, result

    codex(flow, "plugin", "remove", PLUGIN)
    codex(flow, "plugin", "marketplace", "remove", "harnesslink")
    assert user_files(codex_home) == before, "config.toml and hooks.json are back byte for byte"
    assert not ours_in(codex_home), ours_in(codex_home)
    since = len(sandbox.server.model_requests())
    flow.driver.start(sandbox, f"How did we calibrate the {topic} flux capacitor before?").check()
    assert not list(flow.framed_blocks(since)), "no memory reaches a session once the plugin is gone"
    assert entries[0].exists(), "the memory itself stays, as with uninstall.py (it is the user's)"
