"""The Codex rollout reader: real fixtures, incremental reads, forks, subagents, garbage."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harnesslink_core.harnesses.codex import reader as codex
from harnesslink_core.model import Reading, Turn
from harnesslink_core.paths import locations
from tests.conftest import FIXTURES as SHARED_FIXTURES

FIXTURES = SHARED_FIXTURES / "codex"
GENERATED = Path(__file__).resolve().parents[1] / "fixtures" / "generated" / "codex"
EVERYTHING = 1 << 40

KVSANKAR = FIXTURES / "kvsankar__agent-history__session-01.jsonl"
OPEN_TURN = FIXTURES / "madshn__localpush__rollout-2026-02-23T13-19-38-019c8a70-dda7-7f33-98ea-f30553347322.jsonl"
MCP_TURN = FIXTURES / "madshn__localpush__rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl"
LEGACY = FIXTURES / "AcidicSoil__codex-session-viewer__example.first46lines.jsonl"


def line_offset(path: Path, number: int) -> int:
    """Byte offset of the 1-based line `number`."""
    with open(path, "rb") as f:
        return sum(len(f.readline()) for _ in range(number - 1))


def read_all(path: Path) -> Reading:
    return codex.read(path, 0, {}, EVERYTHING)


# -- the real fixtures, expectations written down by reading each file


FIXTURE_EXPECTATIONS = [
    pytest.param(
        KVSANKAR,
        {
            "session_id": "019e9625-802f-7e91-840a-cfe88d14117a",
            "cwd": "/tmp/agent-history-real-agent/codex/workspace",
            "turns": [
                dict(turn_id="019e9625-806b-7343-9798-a7ca2de29a04", line=2, prompt="[REDACTED_PROMPT]",
                     tools=[], closed=True, aborted=False, pending=0, result="[REDACTED_ASSISTANT_TEXT]",
                     started=1780635500.0, ended=1780635506.0, end_marker=True),
            ],
        },
        id="kvsankar-exec-one-turn",
    ),
    pytest.param(
        OPEN_TURN,
        {
            "session_id": "019c8a70-dda7-7f33-98ea-f30553347322",
            "cwd": "/redacted/path/da0ba47443",
            "turns": [
                dict(turn_id="019c8a70-ebe7-7e83-92b2-f77ddd49c5f9", line=8,
                     prompt="[REDACTED_MESSAGE len=86 sha=2239bcba]", tools=["bash"], closed=False,
                     aborted=False, pending=1, result="[REDACTED_TEXT len=124 sha=7a220b7e]",
                     started=None, ended=None, end_marker=True),
            ],
        },
        id="madshn-turn-never-completed",
    ),
    pytest.param(
        MCP_TURN,
        {
            "session_id": "019c8bfe-ec25-79e0-97d7-bda6a9c575ff",
            "cwd": "/redacted/path/ea96e59ed9",
            "turns": [
                dict(turn_id="019c8bfe-ed40-7a21-b57f-6447436c5881", line=8,
                     prompt="[REDACTED_MESSAGE len=98 sha=c002ff99]",
                     tools=["mcp__cloud-associates__search_workflows", "[redacted_name len=43 sha=c186413b]",
                            "mcp__cloud-associates__execute_workflow", "mcp__cloud-associates__execute_workflow",
                            "mcp__cloud-associates__execute_workflow"],
                     closed=True, aborted=False, pending=0,
                     result="[REDACTED_LAST_AGENT_MESSAGE len=647", started=None, ended=None, end_marker=True),
            ],
        },
        id="madshn-mcp-calls-completed",
    ),
    pytest.param(
        LEGACY,
        {
            "session_id": "cf4def41-21e0-4b91-adb4-5397c1492084",
            "cwd": "/home/user/projects/codex-session-viewer",
            "turns": [
                dict(turn_id=None, line=6,
                     prompt="What's the next task I should work on? Please consider dependencies and priorities.",
                     tools=["task-master-ai__next_task", "task-master-ai__get_task"], closed=True, aborted=False,
                     pending=0, result="**Recommended Next Task**", started=None, ended=None, end_marker=False),
                dict(turn_id=None, line=23, prompt="check codebase to see progress on it",
                     tools=["bash", "bash", "bash", "bash"], closed=True, aborted=False, pending=0,
                     result="I’ll scan the repo for scanner docs", started=None, ended=None, end_marker=False),
            ],
        },
        id="acidicsoil-legacy-format",
    ),
]


@pytest.mark.parametrize("path, expected", FIXTURE_EXPECTATIONS)
def test_fixture_turns_match_what_the_file_says(path: Path, expected: dict[str, Any]) -> None:
    reading = read_all(path)
    assert reading.at_eof and reading.end == path.stat().st_size
    assert reading.bad_lines == 0 and reading.excluded is None
    assert reading.session is not None
    assert (reading.session.session_id, reading.session.cwd) == (expected["session_id"], expected["cwd"])
    assert len(reading.turns) == len(expected["turns"])
    for turn, want in zip(reading.turns, expected["turns"]):
        offset = line_offset(path, want["line"])
        assert turn.offset == offset
        assert turn.turn_id == (want["turn_id"] or f"at-{offset}")
        assert turn.key == f"codex:{expected['session_id']}:{turn.turn_id}"
        assert turn.harness == "codex" and turn.cwd == expected["cwd"]
        assert turn.prompt == want["prompt"]
        assert [a.tool for a in turn.actions] == want["tools"]
        assert (turn.closed, turn.aborted, turn.pending_tools) == (want["closed"], want["aborted"], want["pending"])
        assert turn.needs_end_marker is want["end_marker"]
        assert turn.dedupe_id == want["turn_id"]  # the uuid a fork's copy would repeat; none for offsets
        assert turn.result.startswith(want["result"])
        if want["started"] is not None:
            assert (turn.started, turn.ended) == (want["started"], want["ended"])
        assert turn.started <= turn.ended


def test_function_arguments_that_are_not_json_are_kept_as_written() -> None:
    turn = read_all(MCP_TURN).turns[0]
    assert turn.actions[0].input == "[REDACTED_ARGUMENTS len=46 sha=4cb9a2fc]"


def test_legacy_shell_arguments_are_parsed_from_their_json_string() -> None:
    turn = read_all(LEGACY).turns[1]
    assert turn.actions[0].input == {"command": ["bash", "-lc", "ls -la"], "timeout_ms": 120000}


def test_open_turn_ends_at_its_last_line_time() -> None:
    turn = read_all(OPEN_TURN).turns[0]
    assert turn.ended == pytest.approx(1771849192.689)  # line 19, 2026-02-23T12:19:52.689Z


# -- incremental reads


def drain(path: Path, budget: int) -> tuple[dict[str, Turn], int]:
    """Read like the pass does: resume at the first unsettled turn, else at the end."""
    turns: dict[str, Turn] = {}
    position, carry, reads = 0, {}, 0
    while True:
        reading = codex.read(path, position, carry, budget)
        reads += 1
        carry = reading.carry
        for turn in reading.turns:
            turns[turn.turn_id] = turn
        unsettled = [t.offset for t in reading.turns if not t.closed]
        following = min(unsettled) if unsettled and min(unsettled) > position else reading.end
        if reading.at_eof:
            return turns, reads
        assert following > position, "a read must make progress"
        position = following


def same_turns(a: dict[str, Turn], b: list[Turn]) -> None:
    assert list(a) == [t.turn_id for t in b]
    for turn in b:
        assert a[turn.turn_id] == turn


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.jsonl")), ids=lambda p: p.name[:30])
@pytest.mark.parametrize("budget", [1, 500, 4000])
def test_reading_in_budgeted_chunks_yields_the_same_turns_as_one_read(path: Path, budget: int) -> None:
    turns, reads = drain(path, budget)
    same_turns(turns, read_all(path).turns)
    if budget == 1:
        assert reads > 1


@pytest.mark.parametrize("path", [KVSANKAR, OPEN_TURN, MCP_TURN], ids=lambda p: p.name[:30])
def test_a_growing_file_read_from_the_returned_offsets_ends_with_the_same_turns(path: Path, tmp_path: Path) -> None:
    data = path.read_bytes()
    target = tmp_path / path.name
    target.write_bytes(b"")
    turns: dict[str, Turn] = {}
    position, carry = 0, {}
    for cut in list(range(0, len(data), 777)) + [len(data)]:
        target.write_bytes(data[:cut])
        reading = codex.read(target, position, carry, EVERYTHING)
        carry = reading.carry
        for turn in reading.turns:
            turns[turn.turn_id] = turn
        unsettled = [t.offset for t in reading.turns if not t.closed]
        position = min(unsettled) if unsettled else reading.end
    same_turns(turns, read_all(path).turns)


def test_a_partial_last_line_is_not_consumed(tmp_path: Path) -> None:
    data = KVSANKAR.read_bytes()
    target = tmp_path / "rollout.jsonl"
    target.write_bytes(data[:-40])  # cut inside the task_complete line
    reading = codex.read(target, 0, {}, EVERYTHING)
    assert reading.end == line_offset(KVSANKAR, 11)
    assert reading.at_eof
    assert [t.closed for t in reading.turns] == [False]


# -- synthetic rollouts that follow the real shapes


def uuid7(ms: int, n: int = 0) -> str:
    head = f"{ms:012x}"
    return f"{head[:8]}-{head[8:]}-7{n:03x}-8000-{n:012x}"


def iso(seconds: float) -> str:
    from harnesslink_core.clock import iso as to_iso

    return to_iso(seconds)


class Rollout:
    """Builds rollout lines the way Codex writes them."""

    def __init__(self, thread_id: str, cwd: str = "/work/app", t0: float = 1_780_000_000.0, **meta: Any) -> None:
        self.lines: list[dict[str, Any]] = []
        self.t = t0
        self.thread_id = thread_id
        self.add("session_meta", {"id": thread_id, "timestamp": iso(t0), "cwd": cwd, "originator": "codex_cli_rs",
                                  "cli_version": "0.135.0", "source": "cli", **meta})

    def add(self, kind: str, payload: dict[str, Any], step: float = 1.0) -> Rollout:
        self.lines.append({"timestamp": iso(self.t), "type": kind, "payload": payload})
        self.t += step
        return self

    def event(self, kind: str, **fields: Any) -> Rollout:
        return self.add("event_msg", {"type": kind, **fields})

    def item(self, kind: str, **fields: Any) -> Rollout:
        return self.add("response_item", {"type": kind, **fields})

    def user_item(self, text: str) -> Rollout:
        return self.item("message", role="user", content=[{"type": "input_text", "text": text}])

    def turn(self, turn_id: str, prompt: str, answer: str = "done", *, complete: bool = True,
             calls: list[dict[str, Any]] | None = None) -> Rollout:
        self.event("task_started", turn_id=turn_id, model_context_window=258400)
        self.add("turn_context", {"turn_id": turn_id, "cwd": "/work/app", "model": "gpt-5.5"})
        self.user_item(prompt)
        self.event("user_message", message=prompt, images=[])
        for call in calls or []:
            self.item(**call)
        self.item("message", role="assistant", content=[{"type": "output_text", "text": answer}], phase="final_answer")
        if complete:
            self.event("task_complete", turn_id=turn_id, last_agent_message=answer)
        return self

    def write(self, path: Path) -> Path:
        path.write_bytes(b"".join(json.dumps(line).encode() + b"\n" for line in self.lines))
        return path


@pytest.mark.parametrize(
    "meta, reason",
    [
        ({"source": {"subagent": {"thread_spawn": {"parent_thread_id": "p", "depth": 1, "agent_role": "explorer"}}},
          "thread_source": "subagent"}, "subagent (thread_spawn)"),
        ({"source": {"subagent": "review"}}, "review thread"),
        ({"source": {"subagent": "compact"}}, "compaction thread"),
        ({"source": {"subagent": {"other": "guardian"}}}, "subagent (other)"),
        ({"source": "exec", "thread_source": "subagent"}, "subagent"),
    ],
)
def test_subagent_review_and_compact_threads_are_excluded(meta: dict[str, Any], reason: str, tmp_path: Path) -> None:
    rollout = Rollout(uuid7(1_780_000_000_000), **meta)
    rollout.turn(uuid7(1_780_000_001_000), "look around the repository", calls=[
        {"kind": "function_call", "name": "exec_command", "arguments": '{"cmd":"ls"}', "call_id": "c1"},
    ])
    path = rollout.write(tmp_path / "rollout.jsonl")
    reading = read_all(path)
    assert reading.excluded == reason
    assert reading.turns == [] and reading.states == []
    assert reading.end == path.stat().st_size and reading.at_eof
    resumed = codex.read(path, line_offset(path, 2), {}, EVERYTHING)  # mid-file, facts from the head
    assert resumed.excluded == reason and resumed.turns == []


def test_a_user_thread_is_not_excluded(tmp_path: Path) -> None:
    rollout = Rollout(uuid7(1_780_000_000_000), thread_source="user")
    rollout.turn(uuid7(1_780_000_001_000), "hello there")
    reading = read_all(rollout.write(tmp_path / "rollout.jsonl"))
    assert reading.excluded is None and len(reading.turns) == 1


PARENT_MS = 1_780_000_000_000
FORK_MS = PARENT_MS + 3_600_000


def parent_rollout() -> Rollout:
    parent = Rollout(uuid7(PARENT_MS), t0=PARENT_MS / 1000)
    parent.turn(uuid7(PARENT_MS + 1000, 1), "first question", "first answer")
    parent.turn(uuid7(PARENT_MS + 60_000, 2), "second question", "second answer")
    return parent


def fork_of(parent: Rollout, *, copy: bool, reference: bool, own_turn_id: str, pause: float = 30) -> Rollout:
    """A fork as Codex writes it: own session_meta, then the parent's items re-stamped at fork time."""
    fork = Rollout(uuid7(FORK_MS, 9), t0=FORK_MS / 1000, forked_from_id=parent.thread_id)
    fork.t = FORK_MS / 1000  # the copy follows the session_meta at once
    if reference:
        fork.add("fork_reference", {"rollout_path": "/home/u/.codex/sessions/parent.jsonl",
                                    "nth_user_message": 2}, step=0.0)
    if copy:
        for line in parent.lines:  # includes the parent's own session_meta
            fork.add(line["type"], line["payload"], step=0.001)
    fork.t += pause
    fork.user_item("<environment_context>\n  <cwd>/work/app</cwd>\n</environment_context>")
    fork.turn(own_turn_id, "try it another way", "other answer")
    return fork


@pytest.mark.parametrize("copy, reference", [(True, False), (True, True), (False, True)],
                         ids=["copied-history", "reference-then-copy", "reference-only"])
def test_a_fork_banks_only_its_own_turns(copy: bool, reference: bool, tmp_path: Path) -> None:
    parent = parent_rollout()
    parent_turns = read_all(parent.write(tmp_path / "parent.jsonl")).turns
    own = uuid7(FORK_MS + 45_000, 3)
    fork = read_all(fork_of(parent, copy=copy, reference=reference, own_turn_id=own).write(tmp_path / "fork.jsonl"))
    assert fork.session is not None and fork.session.session_id == uuid7(FORK_MS, 9)
    assert [t.turn_id for t in fork.turns] == [own]
    assert fork.turns[0].prompt == "try it another way"
    assert {t.key for t in fork.turns}.isdisjoint({t.key for t in parent_turns})
    assert [t.turn_id for t in parent_turns] == [uuid7(PARENT_MS + 1000, 1), uuid7(PARENT_MS + 60_000, 2)]


def test_a_forks_own_turn_started_right_away_is_kept(tmp_path: Path) -> None:
    own = uuid7(FORK_MS + 200, 3)  # `codex exec` style: the prompt follows the fork at once
    fork = fork_of(parent_rollout(), copy=True, reference=False, own_turn_id=own, pause=0)
    assert [t.turn_id for t in read_all(fork.write(tmp_path / "fork.jsonl")).turns] == [own]


def test_a_fork_without_uuid7_turn_ids_skips_the_history_copied_at_fork_time(tmp_path: Path) -> None:
    parent = Rollout("parent-thread", t0=1_700_000_000.0)
    parent.turn("1", "first question").turn("2", "second question")
    fork = Rollout("fork-thread", t0=1_700_100_000.0, forked_from_id="parent-thread")
    for line in parent.lines[1:]:
        fork.add(line["type"], line["payload"], step=0.001)
    fork.t += 20
    fork.turn("1", "a fresh question")
    reading = read_all(fork.write(tmp_path / "fork.jsonl"))
    assert [t.prompt for t in reading.turns] == ["a fresh question"]


def test_a_fork_read_from_mid_file_still_knows_it_is_a_fork(tmp_path: Path) -> None:
    parent = parent_rollout()
    own = uuid7(FORK_MS + 45_000, 3)
    path = fork_of(parent, copy=True, reference=False, own_turn_id=own).write(tmp_path / "fork.jsonl")
    copied_turn_start = line_offset(path, 2 + 1)  # after both session_metas: the copied task_started
    for carry in ({}, read_all(path).carry):
        reading = codex.read(path, copied_turn_start, carry, EVERYTHING)
        assert [t.turn_id for t in reading.turns] == [own]


INJECTED = [
    "<environment_context>\n  <cwd>/work/app</cwd>\n  <shell>bash</shell>\n</environment_context>",
    "# AGENTS.md instructions for /work/app\n\n<INSTRUCTIONS>\nbe nice\n</INSTRUCTIONS>",
    "<user_instructions>\n\nfollow the rules\n\n</user_instructions>",
    '<hook_prompt hook_run_id="r1">keep going</hook_prompt>',
    "<harnesslink-memory>\npast entry: fixed the login bug\n</harnesslink-memory>",
]


@pytest.mark.parametrize("context", INJECTED, ids=["environment", "agents-md", "user-instructions", "hook", "ours"])
def test_injected_context_never_becomes_a_prompt(context: str, tmp_path: Path) -> None:
    rollout = Rollout(uuid7(1_780_000_000_000))
    rollout.item("message", role="developer", content=[{"type": "input_text", "text": "permissions: sandboxed"}])
    rollout.user_item(context)
    turn_id = uuid7(1_780_000_001_000)
    rollout.event("task_started", turn_id=turn_id)
    rollout.user_item(context)
    rollout.event("user_message", message=context)  # a hook prompt may come as an event too
    rollout.user_item("fix the flaky test")
    rollout.event("user_message", message="fix the flaky test")
    rollout.event("task_complete", turn_id=turn_id, last_agent_message="fixed")
    reading = read_all(rollout.write(tmp_path / "rollout.jsonl"))
    assert [t.prompt for t in reading.turns] == ["fix the flaky test"]


def test_our_memory_block_is_cut_from_a_prompt_that_carries_it(tmp_path: Path) -> None:
    rollout = Rollout(uuid7(1_780_000_000_000))
    text = "<harnesslink-memory>\nold entry\n</harnesslink-memory>\nwhy does the build fail?"
    rollout.turn(uuid7(1_780_000_001_000), text)
    assert read_all(rollout.write(tmp_path / "r.jsonl")).turns[0].prompt == "why does the build fail?"


def test_a_turn_with_only_developer_and_context_messages_has_no_prompt(tmp_path: Path) -> None:
    rollout = Rollout(uuid7(1_780_000_000_000))
    turn_id = uuid7(1_780_000_001_000)
    rollout.event("task_started", turn_id=turn_id)
    rollout.item("message", role="developer", content=[{"type": "input_text", "text": "you are codex"}])
    rollout.user_item(INJECTED[0])
    rollout.event("task_complete", turn_id=turn_id, last_agent_message="ok")
    assert read_all(rollout.write(tmp_path / "r.jsonl")).turns[0].prompt == ""


def test_update_plan_becomes_todos_and_plan(tmp_path: Path) -> None:
    plan = {"explanation": "Fix parser first", "plan": [
        {"step": "Read the parser", "status": "completed"},
        {"step": "Patch the tokenizer", "status": "in_progress"},
        {"step": "Run the tests", "status": "pending"},
    ]}
    rollout = Rollout(uuid7(1_780_000_000_000))
    rollout.turn(uuid7(1_780_000_001_000), "fix the parser", calls=[
        {"kind": "function_call", "name": "update_plan", "arguments": json.dumps(plan), "call_id": "p1"},
        {"kind": "function_call_output", "call_id": "p1", "output": "Plan updated"},
    ])
    reading = read_all(rollout.write(tmp_path / "r.jsonl"))
    kinds = {s.kind: s for s in reading.states}
    assert kinds["todos"].todos == [("x", "Read the parser"), ("~", "Patch the tokenizer"), (" ", "Run the tests")]
    assert kinds["plan"].plan == "Fix parser first"
    assert reading.turns[0].actions[0].tool == "update_plan" and reading.turns[0].pending_tools == 0


def test_compaction_is_reported_once(tmp_path: Path) -> None:
    rollout = Rollout(uuid7(1_780_000_000_000))
    rollout.turn(uuid7(1_780_000_001_000), "first")
    rollout.add("compacted", {"message": "summary of the work", "replacement_history": []}, step=0.01)
    rollout.event("context_compacted")
    rollout.turn(uuid7(1_780_000_009_000), "second")
    reading = read_all(rollout.write(tmp_path / "r.jsonl"))
    assert [s.kind for s in reading.states] == ["compaction"]


def test_tool_calls_of_every_shape_become_actions(tmp_path: Path) -> None:
    patch = "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch"
    rollout = Rollout(uuid7(1_780_000_000_000))
    rollout.turn(uuid7(1_780_000_001_000), "do things", calls=[
        {"kind": "function_call", "name": "shell", "arguments": '{"command":["bash","-lc","ls"]}', "call_id": "a"},
        {"kind": "function_call_output", "call_id": "a", "output": "x"},
        {"kind": "custom_tool_call", "name": "apply_patch", "input": patch, "call_id": "b", "status": "completed"},
        {"kind": "custom_tool_call_output", "call_id": "b", "output": "ok"},
        {"kind": "local_shell_call", "call_id": "c", "status": "completed",
         "action": {"type": "exec", "command": ["git", "status"]}},
        {"kind": "web_search_call", "status": "completed", "action": {"type": "search", "query": "orjson"}},
        {"kind": "function_call", "name": "exec_command", "arguments": "not json", "call_id": "d"},
    ])
    turn = read_all(rollout.write(tmp_path / "r.jsonl")).turns[0]
    assert [(a.tool, a.input) for a in turn.actions] == [
        ("bash", {"command": ["bash", "-lc", "ls"]}),
        ("apply_patch", patch),
        ("bash", {"command": ["git", "status"]}),
        ("web_search", {"type": "search", "query": "orjson"}),
        ("bash", "not json"),
    ]
    assert turn.pending_tools == 2  # the local shell call and exec_command got no output


def test_an_aborted_turn_is_marked_aborted(tmp_path: Path) -> None:
    rollout = Rollout(uuid7(1_780_000_000_000))
    turn_id = uuid7(1_780_000_001_000)
    rollout.turn(turn_id, "long job", complete=False)
    rollout.event("turn_aborted", turn_id=turn_id, reason="interrupted")
    turn = read_all(rollout.write(tmp_path / "r.jsonl")).turns[0]
    assert turn.aborted and turn.closed


def test_result_prefers_last_agent_message_then_last_answer(tmp_path: Path) -> None:
    rollout = Rollout(uuid7(1_780_000_000_000))
    first, second = uuid7(1_780_000_001_000, 1), uuid7(1_780_000_002_000, 2)
    rollout.turn(first, "q1", "streamed answer", complete=False)
    rollout.event("task_complete", turn_id=first, last_agent_message="final answer")
    rollout.turn(second, "q2", "only answer", complete=False)
    rollout.event("task_complete", turn_id=second, last_agent_message=None)
    turns = read_all(rollout.write(tmp_path / "r.jsonl")).turns
    assert [t.result for t in turns] == ["final answer", "only answer"]
    assert all(t.closed for t in turns)


def test_the_budget_stops_before_a_turn_start(tmp_path: Path) -> None:
    rollout = Rollout(uuid7(1_780_000_000_000))
    ids = [uuid7(1_780_000_001_000 + i, i) for i in range(3)]
    for i, turn_id in enumerate(ids):
        rollout.turn(turn_id, f"question {i}")
    path = rollout.write(tmp_path / "r.jsonl")
    starts = [line_offset(path, 2 + 6 * i) for i in range(3)]  # each turn is six lines
    first = codex.read(path, 0, {}, 1)
    assert (first.turns, first.end, first.at_eof) == ([], starts[0], False)
    second = codex.read(path, first.end, first.carry, 1)
    assert [t.turn_id for t in second.turns] == ids[:1] and second.end == starts[1] and not second.at_eof
    rest = codex.read(path, second.end, second.carry, EVERYTHING)
    assert [t.turn_id for t in rest.turns] == ids[1:] and rest.at_eof


def test_a_read_resuming_mid_file_without_carry_learns_the_session_from_the_head(tmp_path: Path) -> None:
    rollout = Rollout(uuid7(1_780_000_000_000), cwd="/srv/proj")
    rollout.turn(uuid7(1_780_000_001_000, 1), "one").turn(uuid7(1_780_000_002_000, 2), "two")
    path = rollout.write(tmp_path / "r.jsonl")
    reading = codex.read(path, line_offset(path, 7), {}, EVERYTHING)
    assert [(t.session_id, t.prompt) for t in reading.turns] == [(uuid7(1_780_000_000_000), "two")]
    assert reading.session is not None and reading.session.cwd == "/srv/proj"


def test_turns_without_markers_close_at_the_next_prompt_and_keep_their_ids(tmp_path: Path) -> None:
    rollout = Rollout("0199a000-0000-0000-0000-000000000000")  # an autumn-2025 file: no task markers
    for prompt in ("first prompt", "second prompt"):
        rollout.user_item(prompt)
        rollout.event("user_message", message=prompt)
        rollout.item("function_call", name="shell", arguments='{"command":["ls"]}', call_id=prompt)
        rollout.item("function_call_output", call_id=prompt, output="ok")
        rollout.item("message", role="assistant", content=[{"type": "output_text", "text": "answer " + prompt}])
    path = rollout.write(tmp_path / "r.jsonl")
    turns = read_all(path).turns
    assert [(t.prompt, t.closed, t.needs_end_marker) for t in turns] == [
        ("first prompt", True, False), ("second prompt", False, False)]
    assert [t.turn_id for t in turns] == [f"at-{line_offset(path, 3)}", f"at-{line_offset(path, 8)}"]
    assert codex.read(path, turns[1].offset, {}, EVERYTHING).turns[0].turn_id == turns[1].turn_id


def test_a_prompt_turn_is_closed_by_the_next_prompt_even_where_the_budget_stops() -> None:
    reading = codex.read(LEGACY, 0, {}, 60_000)  # stops before the second prompt
    assert [t.prompt[:10] for t in reading.turns] == ["What's the"]
    assert not reading.at_eof and reading.turns[0].closed
    assert reading.end == line_offset(LEGACY, 23)


# -- where the files are


def test_transcripts_live_and_archived_are_listed_and_compressed_ones_counted(tmp_path: Path) -> None:
    codex_home = tmp_path / "codex-home"
    live = codex_home / "sessions" / "2026" / "02" / "23" / "rollout-2026-02-23T12-00-00-a.jsonl"
    archived = codex_home / "archived_sessions" / "rollout-2026-01-01T00-00-00-b.jsonl"
    compressed = codex_home / "sessions" / "2026" / "02" / "24" / "rollout-2026-02-24T00-00-00-c.jsonl.zst"
    other = codex_home / "sessions" / "2026" / "02" / "23" / "notes.jsonl"
    for path in (live, archived, compressed, other):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")
    locs = locations({"HOME": str(tmp_path), "CODEX_HOME": str(codex_home), "PATH": ""})
    assert codex.home(locs) == codex_home
    assert [Path(p) for p in codex.iter_transcripts(locs)] == [live, archived]
    assert codex.count_unreadable(locs) == 1
    assert codex.detect(locs)


def test_home_defaults_to_dot_codex_and_detect_looks_on_path(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    locs = locations({"HOME": str(tmp_path), "PATH": str(bin_dir)})
    assert codex.home(locs) == tmp_path / ".codex"
    assert not codex.detect(locs)
    assert [Path(p) for p in codex.iter_transcripts(locs)] == [] and codex.count_unreadable(locs) == 0
    exe = bin_dir / "codex"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    assert codex.detect(locs)


def test_a_missing_file_reads_as_nothing(tmp_path: Path) -> None:
    reading = codex.read(tmp_path / "gone.jsonl", 0, {}, EVERYTHING)
    assert reading.turns == [] and reading.end == 0


# -- garbage never raises


def check_sane(path: Path, start: int = 0, budget: int = EVERYTHING) -> None:
    reading = codex.read(path, start, {}, budget)
    assert start <= reading.end <= max(start, path.stat().st_size)
    for turn in reading.turns:
        assert isinstance(turn.prompt, str) and isinstance(turn.result, str)
        assert turn.offset >= start


FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@FUZZ
@given(data=st.binary(max_size=3000), start=st.integers(0, 3000))
def test_random_bytes_never_raise(data: bytes, start: int, tmp_path: Path) -> None:
    path = tmp_path / "fuzz.jsonl"
    path.write_bytes(data)
    check_sane(path, min(start, len(data)))


KEYS = ["type", "payload", "timestamp", "id", "turn_id", "message", "role", "content", "name", "arguments",
        "call_id", "input", "action", "source", "forked_from_id", "thread_source", "cwd", "plan", "text",
        "last_agent_message", "started_at", "completed_at", "record_type", "subagent", "status", "step"]
WORDS = ["session_meta", "event_msg", "response_item", "turn_context", "compacted", "task_started",
         "task_complete", "turn_aborted", "user_message", "agent_message", "message", "function_call",
         "function_call_output", "custom_tool_call", "local_shell_call", "web_search_call", "update_plan", "user",
         "assistant", "developer", "input_text", "review", "subagent", "<environment_context>", "{not json",
         "2026-02-23T12:19:42.561Z", "019c8a70-dda7-7f33-98ea-f30553347322"]
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.sampled_from(WORDS) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=6),
    max_leaves=25,
)


@FUZZ
@given(lines=st.lists(st.dictionaries(st.sampled_from(KEYS), JSON_VALUES, max_size=6), max_size=30),
       budget=st.integers(1, 5000))
def test_random_json_lines_never_raise(lines: list[dict[str, Any]], budget: int, tmp_path: Path) -> None:
    path = tmp_path / "fuzz.jsonl"
    path.write_bytes(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
    check_sane(path, budget=budget)


REAL_LINES = [line for p in sorted(FIXTURES.glob("*.jsonl")) for line in p.read_bytes().splitlines(keepends=True)]


@FUZZ
@given(picks=st.lists(st.tuples(st.integers(0, len(REAL_LINES) - 1), st.floats(0, 1)), max_size=25),
       start=st.integers(0, 20_000))
def test_truncated_real_lines_never_raise(picks: list[tuple[int, float]], start: int, tmp_path: Path) -> None:
    chunks = []
    for index, keep in picks:
        line = REAL_LINES[index]
        chunks.append(line[: int(len(line) * keep)] + b"\n")
    path = tmp_path / "fuzz.jsonl"
    path.write_bytes(b"".join(chunks))
    check_sane(path, min(start, path.stat().st_size))


def test_non_utf8_bytes_in_a_prompt_do_not_lose_the_turn(tmp_path: Path) -> None:
    rollout = Rollout(uuid7(1_780_000_000_000))
    rollout.turn(uuid7(1_780_000_001_000), "PLACEHOLDER")
    path = rollout.write(tmp_path / "r.jsonl")
    path.write_bytes(path.read_bytes().replace(b"PLACEHOLDER", b"caf\xe9 au lait"))
    reading = read_all(path)
    assert [t.prompt for t in reading.turns] == ["caf\ufffd au lait"]


# -- real transcripts generated with the real CLI (codex 0.171.0, see EXPECTED.md there)


GENERATED_FILES = sorted(GENERATED.rglob("rollout-*.jsonl")) if GENERATED.is_dir() else []
# File names change whenever the fixtures are regenerated: tell parent and fork apart by content.
GENERATED_PARENT = "parent"
GENERATED_FORK = "fork"


def generated_file(role: str) -> Path:
    forks = [p for p in GENERATED_FILES if b'"forked_from_id":"' in p.read_bytes().split(b"\n", 1)[0]]
    parents = [p for p in GENERATED_FILES if p not in forks]
    (found,) = forks if role == "fork" else parents
    return found
GENERATED_EXPECTATIONS = {  # (prompt line, prompt start, tools, answer characters) from EXPECTED.md
    GENERATED_PARENT: [
        (9, "Create the setup file for this project", ["bash"], 132),
        (26, "thanks!", [], 11),
        (38, "Explain how this project is laid out", [], 260),
        (50, "Write down a note", ["bash"], 130),
    ],
    GENERATED_FORK: [(7, "In a fork, show the setup file", ["bash"], 138)],
}


@pytest.mark.parametrize("name", sorted(GENERATED_EXPECTATIONS), ids=["parent", "fork"])
def test_generated_transcripts_give_the_expected_turns(name: str) -> None:
    path = generated_file(name)
    reading = read_all(path)
    assert reading.bad_lines == 0 and reading.excluded is None
    assert reading.session is not None and reading.session.cwd == "/home/tester/project"
    expected = GENERATED_EXPECTATIONS[name]
    assert len(reading.turns) == len(expected)
    for turn, (line, prompt, tools, answer_chars) in zip(reading.turns, expected):
        assert turn.offset < line_offset(path, line)  # the turn opens at its task_started, before the prompt
        assert turn.prompt.startswith(prompt)
        assert [a.tool for a in turn.actions] == tools
        assert len(turn.result) == answer_chars
        assert turn.closed and turn.needs_end_marker and turn.pending_tools == 0


@pytest.mark.parametrize("path", GENERATED_FILES, ids=lambda p: p.name[:40])
def test_generated_transcripts_read_the_same_incrementally(path: Path) -> None:
    turns, _ = drain(path, 1)
    same_turns(turns, read_all(path).turns)
