"""With the real CLIs: the memory tools, wired by install.py alone, in all four harnesses.

One sandbox, one install of every harness. Then a relay: each harness's model calls the search tool on
its session's first turn and finds what the harness before it recorded with `record_learning` (the request
after the tool call carries that entry's text), then records a learning of its own for the next one:
Claude Code → Codex → pi → omp → Claude Code. Each learning is one entry (`source: mcp:<harness>`) and the
memory a search returned is never banked again. Uninstall leaves every settings file as it was.
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path

from .fake_model import tool_result_of
from .harnesses import Sandbox
from .install_flow import Flow, assert_restored
from .marks import SLOW_E2E

pytestmark = SLOW_E2E

RELAY = ["claude-code", "codex", "pi", "omp", "claude-code"]


def tool_prompt(tool: str, arguments: dict) -> str:
    return f"Please use HarnessLink memory. [[tool: {tool} | {json.dumps(arguments)}]]"


def settings_files(sandbox: Sandbox) -> dict[str, Path]:
    """Every file install may touch for any of the four, with the Claude Code user-scope config."""
    home = sandbox.home
    return {
        "claude settings.json": home / ".claude" / "settings.json",
        ".claude.json": home / ".claude.json",
        "codex hooks.json": home / ".codex" / "hooks.json",
        "codex config.toml": home / ".codex" / "config.toml",
        "pi extensions": home / ".pi" / "agent" / "extensions",
        "omp extensions": home / ".omp" / "agent" / "extensions",
    }


def snapshot(sandbox: Sandbox) -> dict[str, object]:
    found: dict[str, object] = {}
    for label, path in settings_files(sandbox).items():
        if path.is_dir():
            found[label] = {p.name: p.read_bytes() for p in sorted(path.iterdir())}
        else:
            found[label] = path.read_bytes() if path.exists() else None
    return found


def test_memory_tools_relay_through_all_four_harnesses(sandbox: Sandbox) -> None:
    flows = {name: Flow(name, sandbox) for name in dict.fromkeys(RELAY)}
    for flow in flows.values():
        flow.driver.prepare(sandbox)
    originals = snapshot(sandbox)
    flow = flows["claude-code"]
    installed = flow.run_script("install.py", *(a for h in flows for a in ("--harness", h)), "--no-backfill")
    for name in flows:
        assert f"{name}: wired" in installed.stdout, installed.stdout

    topics: dict[int, str] = {}
    for step, harness in enumerate(RELAY):
        flow = flows[harness]
        if step > 0:  # search on the session's first turn for what the previous harness recorded
            wanted = topics[step - 1]
            since = len(sandbox.server.model_requests())
            flow.driver.start(sandbox, tool_prompt("memory_search", {"query": f"{wanted} calibration"})).check()
            requests = sandbox.server.model_requests()[since:]
            assert requests and requests[0].reply and requests[0].reply.tool_call, (
                f"{harness}: the search tool was not offered on the first turn: {requests[0].reply if requests else None}")
            assert requests[0].reply.tool_call.name.endswith("memory_search")
            result = tool_result_of(requests[1]) if len(requests) > 1 else None
            assert result and f"The {wanted} flux calibration needs" in result, (
                f"{harness}: the next request does not carry the entry as the tool's result: {result!r}; "
                f"log:\n{_log(flow)}")
            assert '<harnesslink-memory kind="recall"' in result, "framed as records"
        if step < len(RELAY) - 1:
            topic = topics[step] = f"quasar{secrets.token_hex(3)}"
            flow.driver.start(sandbox, tool_prompt("record_learning", {
                "text": f"The {topic} flux calibration needs the damping set to 42 before the sweep.",
                "tags": ["calibration"]})).check()
            [entry] = flow.settled_entries(topic)
            text = entry.read_text(encoding="utf-8")
            assert f"source: mcp:{harness}" in text and f"harness: {harness}" in text, text

    for step, topic in topics.items():
        found = flows[RELAY[step]].settled_entries(topic)
        assert len(found) == 1, f"{topic}: recorded once and never banked again from a search: {found}"
    for harness in flows:  # every reader sees our tools in its harness's real transcript
        assert {"harnesslink.memory_search", "harnesslink.memory_bank"} <= actions_in_transcripts(sandbox, harness)
    assert not list((flows["pi"].agent_dir / "logs").glob("*.log")) or "Traceback" not in _log(flows["pi"])

    just_before = snapshot(sandbox)
    flows["claude-code"].run_script("uninstall.py")
    after = snapshot(sandbox)
    for label in ("codex hooks.json", "codex config.toml", "pi extensions", "omp extensions"):
        assert after[label] == originals[label], f"{label} is not back as it was"
    claude = flows["claude-code"]
    assert_restored(claude, {"settings.json": originals["claude settings.json"]},  # type: ignore[dict-item]
                    {"settings.json": just_before["claude settings.json"]})  # type: ignore[dict-item]
    dot_json = json.loads(after[".claude.json"] or b"{}")  # type: ignore[arg-type]
    assert "harnesslink" not in (dot_json.get("mcpServers") or {})
    assert "mcp__harnesslink" not in json.dumps(json.loads(after["claude settings.json"] or b"{}"))  # type: ignore


def actions_in_transcripts(sandbox: Sandbox, harness: str) -> set[str]:
    from harnesslink_core.harnesses import registry
    from harnesslink_core.paths import locations

    reader = registry.get(harness)
    locs = locations({"HOME": str(sandbox.home)})
    return {action.tool for path in reader.iter_transcripts(locs)
            for turn in reader.read(Path(path), 0, {}, 1 << 40).turns for action in turn.actions}


def _log(flow: Flow) -> str:
    log = flow.agent_dir / "logs" / "harnesslink.log"
    return log.read_text(encoding="utf-8")[-3000:] if log.exists() else "(no log)"
