"""Every reader recognises a call to our own memory tools, however its harness names it: a bank entry
lists it as the action `harnesslink.<tool>`, and memory a tool returned is never banked again as new work."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harnesslink_core.banking import autobank
from harnesslink_core.harnesses.claude_code import reader as claude_code
from harnesslink_core.harnesses.codex import reader as codex
from harnesslink_core.harnesses.omp import reader as omp
from harnesslink_core.harnesses.pi import reader as pi
from harnesslink_core.harnesses.base import our_tool
from harnesslink_core.paths import locations
from tests.claude_builder import ClaudeSession
from tests.harnesses.test_codex import Rollout
from tests.harnesses.test_pi import Session

BIG = 1 << 40
MEMORY = ('<harnesslink-memory kind="recall" project="--w-proj--">\nHarnessLink memory: entries from earlier '
          "sessions...\n\n1. Zephyr cache eviction uses LFU\n   Result: switched the zephyr cache to LFU\n"
          "</harnesslink-memory>")


@pytest.mark.parametrize("name, kwargs, expected", [
    ("mcp__harnesslink__memory_search", {}, "harnesslink.memory_search"),  # Claude Code, older Codex
    ("mcp__harnesslink_record_learning", {}, "harnesslink.memory_bank"),  # omp's MCP bridge
    ("memory_get", {"namespace": "mcp__harnesslink"}, "harnesslink.memory_get"),  # Codex's namespace
    ("context_brief", {"bare": True}, "harnesslink.context_brief"),  # the pi/omp extension
    ("recall_memory", {"bare": True}, "harnesslink.memory_search"),
    ("memory_search", {}, None),  # a bare name is ours only where a harness calls extension tools bare
    ("memory_search", {"namespace": "mcp__other"}, None),
    ("mcp__harnesslinkx__memory_search", {}, None),
    ("mcp__harnesslink__delete_all", {}, None),
    ("mcp__other__memory_search", {}, None),
])
def test_our_tool_names_per_harness(name: str, kwargs: dict, expected: str | None) -> None:
    assert our_tool(name, **kwargs) == expected


def test_claude_code_lists_our_mcp_call_as_an_action_and_never_banks_the_memory_it_returned(tmp_path: Path) -> None:
    s = ClaudeSession(tmp_path, cwd="/w/proj")
    s.prompt("How did we fix the zephyr cache last time?")
    s.tool("mcp__harnesslink__memory_search", {"query": "zephyr cache"}, output=MEMORY)
    s.tool("Bash", {"command": "grep -rn LFU src/"}, output="src/cache.py: LFU")
    s.answer("We switched it to LFU. " + MEMORY)
    s.end_of_turn()
    s.path.write_text("".join(s.lines))

    [turn] = claude_code.read(s.path, 0, {}, BIG).turns
    assert [a.tool for a in turn.actions] == ["harnesslink.memory_search", "bash"]
    assert turn.actions[0].input == {"query": "zephyr cache"}
    assert "Zephyr cache eviction" not in turn.result and turn.result.startswith("We switched it to LFU.")


@pytest.mark.parametrize("call", [
    {"kind": "function_call", "name": "memory_search", "namespace": "mcp__harnesslink",  # Codex 0.171
     "arguments": json.dumps({"query": "zephyr cache"}), "call_id": "c1"},
    {"kind": "function_call", "name": "mcp__harnesslink__memory_search",  # earlier Codex: one flat name
     "arguments": json.dumps({"query": "zephyr cache"}), "call_id": "c1"},
])
def test_codex_lists_our_mcp_call_as_an_action_and_never_banks_the_memory_it_returned(tmp_path: Path, call) -> None:
    rollout = Rollout("019c0000-0000-7000-8000-000000000001", cwd="/w/proj")
    output = {"kind": "function_call_output", "call_id": "c1", "output": MEMORY}
    rollout.turn("t1", "How did we fix the zephyr cache last time?", answer="LFU, as before. " + MEMORY,
                 calls=[call, output])
    path = rollout.write(tmp_path / "rollout.jsonl")

    [turn] = codex.read(path, 0, {}, BIG).turns
    assert [a.tool for a in turn.actions] == ["harnesslink.memory_search"]
    assert turn.actions[0].input == {"query": "zephyr cache"}
    assert turn.result == "LFU, as before."


def _pi_turn(tmp_path: Path, name: str, arguments: dict) -> Path:
    s = Session(cwd="/w/proj")
    s.user("How did we fix the zephyr cache last time?", 1_780_000_001)
    s.assistant(1_780_000_002, calls=(("call_1", name, arguments),), stop="toolUse")
    s.result(1_780_000_003, "call_1", name, text=MEMORY)
    s.assistant(1_780_000_004, text="LFU, as before. " + MEMORY)
    return s.write(tmp_path / "s.jsonl")


@pytest.mark.parametrize("module", [pi, omp])
def test_pi_and_omp_list_the_extensions_native_tool_as_our_action(tmp_path: Path, module) -> None:
    path = _pi_turn(tmp_path, "recall_memory", {"query": "zephyr cache"})
    [turn] = module.read(path, 0, {}, BIG).turns
    assert [(a.tool, a.input) for a in turn.actions] == [("harnesslink.memory_search", {"query": "zephyr cache"})]
    assert turn.result == "LFU, as before."


def test_omp_lists_a_call_through_its_mcp_device_as_our_action(tmp_path: Path) -> None:
    path = _pi_turn(tmp_path, "write", {"path": "xd://mcp__harnesslink_memory_search",
                                        "content": json.dumps({"query": "zephyr cache"})})
    [turn] = omp.read(path, 0, {}, BIG).turns
    assert [(a.tool, a.input) for a in turn.actions] == [("harnesslink.memory_search", {"query": "zephyr cache"})]


def test_a_turn_that_only_used_our_tools_is_skipped_like_one_without_tools(tmp_path: Path, isolated_home: Path) -> None:
    """A short answer after a memory look-up (or a recorded learning, which is its own entry) is no new work;
    the same look-up next to real work is banked, listing the call, without the memory it returned."""
    s = ClaudeSession(isolated_home, cwd="/w/proj")
    s.prompt("What did we decide about the zephyr cache?")
    s.tool("mcp__harnesslink__memory_search", {"query": "zephyr cache"}, output=MEMORY)
    s.tool("mcp__harnesslink__record_learning", {"text": "Zephyr stays on LFU."}, output="Recorded.")
    s.answer("LFU. " + MEMORY)
    s.end_of_turn()
    s.prompt("Now make the zephyr cache size configurable")
    s.tool("mcp__harnesslink__memory_search", {"query": "zephyr cache size"}, output=MEMORY)
    s.tool("Edit", {"file_path": "/w/proj/cache.py", "old_string": "SIZE = 10", "new_string": "SIZE = env()"})
    s.answer("Done: the size comes from ZEPHYR_CACHE_SIZE. " + MEMORY)
    s.end_of_turn()
    s.path.write_text("".join(s.lines))

    locs = locations()
    report = autobank.run_pass(locs, harnesses=["claude-code"])

    assert (report.banked, report.skipped) == (1, 1)
    [entry] = locs.memories.glob("*/bank/*.md")
    text = entry.read_text()
    assert "- harnesslink.memory_search: {\"query\":\"zephyr cache size\"}" in text
    assert "  - harnesslink.memory_search\n  - edit\n" in text
    assert "Zephyr cache eviction uses LFU" not in text and "harnesslink-memory" not in text
