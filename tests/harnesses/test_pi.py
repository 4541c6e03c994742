"""The pi reader (and what it shares with omp through pi_family).

Expected values for the real fixtures were written down by reading the files
line by line, not by running the reader.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harnesslink_core.clock import iso
from harnesslink_core.harnesses.omp import reader as omp
from harnesslink_core.harnesses.pi import reader as pi
from harnesslink_core.harnesses.base import INJECTED_TAG
from harnesslink_core.paths import locations
from tests.conftest import FIXTURES as SHARED_FIXTURES

_HERE = Path(__file__).resolve().parent
FIXTURES = SHARED_FIXTURES / "pi-omp"
V1_FEATURES = _HERE.parent / "fixtures" / "written" / "pi" / "2024-03-02T09-15-00-000Z_5f0c2a9e-7d41-4c3b-9e2a-1b6d8c4f7a30.jsonl"
PI_LARGE = FIXTURES / "badlogic__pi-mono__large-session.head.jsonl"
PI_COMPACTION = FIXTURES / "badlogic__pi-mono__before-compaction.excerpt.jsonl"
OMP_LARGE = FIXTURES / "yorha2B0826__oh-my-pi__large-session.head.jsonl"
ALL_FIXTURES = [V1_FEATURES, PI_LARGE, PI_COMPACTION, OMP_LARGE]
BIG = 1 << 40



# -- a small session builder ------------------------------------------------

T0 = 1_780_000_000.0  # 2026-05-28


class Session:
    """Entries of a v3 session file, each a child of the previous one unless told otherwise."""

    def __init__(self, sid: str = "0a0b0c0d-0000-4000-8000-000000000001", cwd: str = "/w/proj", **header: Any):
        self.entries: list[dict[str, Any]] = [
            {"type": "session", "version": 3, "id": sid, "timestamp": iso(T0), "cwd": cwd, **header}
        ]
        self.last_id: str | None = None
        self.count = 0

    def add(self, entry: dict[str, Any], t: float, parent: str | None = "last") -> str:
        self.count += 1
        entry_id = f"{self.count:08x}"
        full = {"id": entry_id, "parentId": self.last_id if parent == "last" else parent, "timestamp": iso(t), **entry}
        self.entries.append(full)
        self.last_id = entry_id
        return entry_id

    def message(self, message: dict[str, Any], t: float, parent: str | None = "last") -> str:
        return self.add({"type": "message", "message": {**message, "timestamp": int(t * 1000)}}, t, parent)

    def user(self, text: str, t: float, parent: str | None = "last", **extra: Any) -> str:
        return self.message({"role": "user", "content": [{"type": "text", "text": text}], **extra}, t, parent)

    def assistant(self, t: float, text: str = "", calls: tuple[tuple[str, str, dict], ...] = (), stop: str = "stop") -> str:
        content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        content += [{"type": "toolCall", "id": cid, "name": name, "arguments": args} for cid, name, args in calls]
        return self.message({"role": "assistant", "content": content, "stopReason": stop}, t)

    def result(self, t: float, call_id: str, name: str, text: str = "ok", details: Any = None, error: bool = False) -> str:
        return self.message(
            {"role": "toolResult", "toolCallId": call_id, "toolName": name,
             "content": [{"type": "text", "text": text}], "details": details, "isError": error},
            t,
        )

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"".join(json.dumps(e).encode() + b"\n" for e in self.entries))
        return path


def read_all(module: Any, path: Path, **kw: Any):
    return module.read(path, 0, {}, BIG, **kw)


def summary(turns, like: list[tuple[str, list[str], str, bool]]) -> list[tuple[str, list[str], str, bool]]:
    """The turns as (prompt, tools, result, closed), prompt and result cut to the length of `like`'s."""
    cut = [(len(p), len(r)) for p, _, r, _ in like] + [(40, 40)] * len(turns)
    return [(t.prompt[:np], [a.tool for a in t.actions], t.result[:nr], t.closed) for t, (np, nr) in zip(turns, cut)]


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


# -- the real fixtures ----------------------------------------------------------

EXPECTED = {
    V1_FEATURES.name: [
        ("How do I stop a goroutine when the reque", [], "Select on `ctx.Done()` inside the loop a", True),
        ("Can you read the worker file first?", ["read"], "Reading worker.go to see where the loop ", False),
    ],
    PI_LARGE.name: [
        ("/mode", [], "", True),
        ("read packages/coding-agent/docs/theme.md",
         ["read", "read", "bash", "read", "read", "read", "read", "edit"], "Perfect! I've ported the `user-message-", True),
        ("you fucked thet component up REAL fuckin", ["read", "edit", "edit", "edit"],
         "Done. I've properly ported `user-message", True),
        ("alright, i think there's only one file l", ["read", "bash", "bash"],
         "I can see the file still uses `chalk` ex", False),
    ],
    # a branched v1 file: everything in it was copied from its parent (see test_fork_*)
    PI_COMPACTION.name: [],
    OMP_LARGE.name: [
        ("/mode", [], "", True),
        ("read packages/coding-agent/docs/theme.md",
         ["read", "read", "bash", "read", "read", "read", "read", "edit"], "Perfect! I've ported the `user-message-", True),
        ("you fucked thet component up REAL fuckin", ["read", "edit", "edit", "edit"],
         "Done. I've properly ported `user-message", True),
        ("alright, i think there's only one file l", ["read", "bash", "bash"],
         "I can see the file still uses `chalk` ex", False),
    ],
}

SESSIONS = {
    V1_FEATURES.name: ("5f0c2a9e-7d41-4c3b-9e2a-1b6d8c4f7a30", "/home/dev/queue-worker"),
    PI_LARGE.name: ("d703a1a9-1b7b-4fb1-b512-c9738b1fe617", "/Users/badlogic/workspaces/pi-mono"),
    PI_COMPACTION.name: ("ffae836b-9420-4060-ac13-7745215f90ff", "/Users/badlogic/workspaces/pi-mono"),
    OMP_LARGE.name: ("d703a1a9-1b7b-4fb1-b512-c9738b1fe617", "/Users/badlogic/workspaces/pi-mono"),
}


@pytest.mark.parametrize("path", ALL_FIXTURES, ids=lambda p: p.name[:40])
def test_fixture_turns_match_what_the_file_says(path: Path):
    reading = read_all(pi, path)
    assert summary(reading.turns, EXPECTED[path.name]) == EXPECTED[path.name]
    assert reading.end == path.stat().st_size and reading.at_eof
    assert reading.bad_lines == 0 and reading.excluded is None
    session_id, cwd = SESSIONS[path.name]
    assert reading.session is not None and (reading.session.session_id, reading.session.cwd) == (session_id, cwd)
    for turn in reading.turns:
        assert (turn.harness, turn.session_id, turn.cwd) == ("pi", session_id, cwd)
        assert path.read_bytes()[turn.offset:].startswith(b'{"type":"message"')
        assert turn.started <= turn.ended
        assert turn.pending_tools == 0 and not turn.aborted


def test_turn_offsets_point_at_the_user_lines():
    offsets = [t.offset for t in read_all(pi, PI_LARGE).turns]
    assert offsets == [220, 875, 73209, 91933]  # lines 2, 5, 18 and 26


def test_turn_times_come_from_the_entries():
    turn = read_all(pi, PI_LARGE).turns[1]
    assert iso(turn.started) == "2025-11-20T23:33:50.804Z"
    assert iso(turn.ended) == "2025-11-20T23:34:38.891Z"


def test_turn_ids_survive_pis_rewrite_of_a_v1_file_with_fresh_entry_ids():
    """The omp fixture is the same conversation as the pi v1 file, rewritten with ids."""
    assert [t.turn_id for t in read_all(pi, PI_LARGE).turns] == [t.turn_id for t in read_all(omp, OMP_LARGE).turns]
    ids = [t.turn_id for t in read_all(pi, PI_LARGE).turns]
    assert len(set(ids)) == len(ids)


def test_v1_session_id_falls_back_to_the_filename_uuid(tmp_path: Path):
    lines = lines_of(V1_FEATURES)
    path = tmp_path / V1_FEATURES.name
    path.write_bytes(b"".join(lines[1:]))  # no header line
    reading = read_all(pi, path)
    assert reading.session.session_id == "5f0c2a9e-7d41-4c3b-9e2a-1b6d8c4f7a30"
    assert [t.session_id for t in reading.turns] == ["5f0c2a9e-7d41-4c3b-9e2a-1b6d8c4f7a30"] * 2


# -- transcripts generated with the real CLI (tests/fixtures/generated/<harness>/) ------------

GENERATED = _HERE.parent / "fixtures" / "generated"


def generated_expectations(harness: str) -> list[tuple[Path, list[tuple[int, str, list[str], int]]]]:
    """(file, [(line, prompt, tools, answer chars)]) for the turns EXPECTED.md says a reader reports.

    EXPECTED.md was written by reading the generated files; rows marked "not banked
    here" are turns a fork copied from its parent, which the reader must not report.
    """
    expected_md = GENERATED / harness / "EXPECTED.md"
    if not expected_md.is_file():
        return []
    files: list[tuple[Path, list[tuple[int, str, list[str], int]]]] = []
    for line in expected_md.read_text().splitlines():
        if line.startswith("## `"):
            files.append((GENERATED / harness / line.split("`")[1], []))
        elif line.startswith("| ") and files and line.split("|")[1].strip().isdigit():
            cells = [c.strip() for c in line.replace("\\|", "\0").split("|")[1:-1]]
            number, prompt, tools, chars, banker = (c.replace("\0", "|") for c in cells)
            if not banker.startswith("not banked here"):
                files[-1][1].append((int(number), prompt, [] if tools == "—" else tools.split(", "), int(chars)))
    return files


def check_generated(module: Any, path: Path, expected: list[tuple[int, str, list[str], int]]) -> None:
    reading = read_all(module, path)
    data = path.read_bytes()
    got = [(data[: t.offset].count(b"\n") + 1, t.prompt, [a.tool for a in t.actions], len(t.result)) for t in reading.turns]
    assert got == expected
    assert [t.closed for t in reading.turns] == [True] * (len(expected) - 1) + [False]
    assert all(t.pending_tools == 0 and t.cwd == "/home/tester/project" for t in reading.turns)
    assert reading.bad_lines == 0 and reading.excluded is None and reading.end == len(data)


@pytest.mark.parametrize("path, expected", generated_expectations("pi"), ids=lambda v: v.name[:30] if isinstance(v, Path) else "")
def test_generated_pi_transcripts_match_expected_md(path: Path, expected: list):
    check_generated(pi, path, expected)


def test_generated_pi_session_is_listed_by_iter_transcripts():
    sessions = GENERATED / "pi" / "sessions"
    locs = locations({"HOME": str(GENERATED), "PI_CODING_AGENT_DIR": str(GENERATED / "pi")})
    assert [Path(p) for p in pi.iter_transcripts(locs)] == sorted(sessions.glob("*/*.jsonl"))


# -- forks --------------------------------------------------------------------------


def test_fork_real_branched_v1_file_returns_none_of_its_parents_turns():
    reading = read_all(pi, PI_COMPACTION)
    assert reading.turns == [] and reading.states == []
    assert reading.carry["parent"].endswith("_d97339c6-6c10-4827-846b-9ff1d9c3dc37.jsonl")


def test_same_file_without_lineage_yields_its_turns(tmp_path: Path):
    lines = lines_of(PI_COMPACTION)
    header = json.loads(lines[0])
    del header["branchedFrom"]
    path = tmp_path / "unbranched.jsonl"
    path.write_bytes(json.dumps(header).encode() + b"\n" + b"".join(lines[1:]))
    reading = read_all(pi, path)
    expected = [
        ("ok, i hope i haven't lobotimized you by", [], "", True),
        ("you can look up the detailed history of", ["bash"], "Done. We're at:\n\n**Completed:**\n- File ", True),
        ("so, i'm now in the new implementation, ", [], "", True),  # bashExecution `ls` is no prompt
        ("wow, it works", [], "Here are the duplication/conciseness opp", True),
        ("are we all commited? if yes, do it, if n", [], "", False),
    ]
    assert summary(reading.turns, expected) == expected
    assert [t.pending_tools for t in reading.turns] == [0, 1, 0, 0, 0]  # line 10's bash result is not in the excerpt
    assert [(s.kind, s.note) for s in reading.states] == [("compaction", "Context Checkpoint: Coding Agent Refactoring")]


def _parent_and_fork(tmp_path: Path, whole: bool) -> tuple[Path, Path, Session]:
    parent = Session(sid="11111111-0000-4000-8000-000000000001")
    parent.user("first task", T0 + 10)
    parent.assistant(T0 + 11, calls=(("c1", "bash", {"command": "ls"}),), stop="toolUse")
    parent.result(T0 + 12, "c1", "bash")
    parent.assistant(T0 + 13, "first done")
    parent.user("second task", T0 + 20)
    cut = parent.assistant(T0 + 21, "second done")
    parent.user("third task, only in the parent", T0 + 30)
    parent.assistant(T0 + 31, "third done")
    parent_path = parent.write(tmp_path / "s" / "--w-proj--" / "parent.jsonl")

    # SessionManager.forkFrom / omp fork copy every entry; createBranchedSession the path to a leaf
    copied = parent.entries[1:] if whole else parent.entries[1 : 1 + int(cut, 16)]
    fork = Session(sid="22222222-0000-4000-8000-000000000002", parentSession=str(parent_path))
    fork.entries[0]["timestamp"] = iso(T0 + 100)
    fork.entries += [dict(e) for e in copied]
    fork.count, fork.last_id = 100, copied[-1]["id"]
    fork.user("new work after the fork", T0 + 110)
    fork.assistant(T0 + 111, "new work done")
    return parent_path, fork.write(tmp_path / "s" / "--w-proj--" / "fork.jsonl"), fork


@pytest.mark.parametrize("whole", [True, False], ids=["fork-whole-session", "branched-session-path"])
def test_fork_does_not_return_the_parents_turns(tmp_path: Path, whole: bool):
    parent_path, fork_path, _ = _parent_and_fork(tmp_path, whole)
    parent_ids = {t.turn_id for t in read_all(pi, parent_path).turns}
    reading = read_all(pi, fork_path)
    assert [t.prompt for t in reading.turns] == ["new work after the fork"]
    assert reading.turns[0].session_id == "22222222-0000-4000-8000-000000000002"
    assert not parent_ids & {t.turn_id for t in reading.turns}
    assert len(parent_ids) == 3


def test_fork_copied_turns_stay_skipped_when_a_read_resumes_mid_file(tmp_path: Path):
    _, fork_path, fork = _parent_and_fork(tmp_path, whole=True)
    data = fork_path.read_bytes()
    second_user = data.index(b"second task") - data[: data.index(b"second task")][::-1].index(b"\n")
    reading = pi.read(fork_path, second_user, {}, BIG)
    assert [t.prompt for t in reading.turns] == ["new work after the fork"]


# -- what is never a prompt -------------------------------------------------------------

NEVER_PROMPTS = {
    "custom_message (ours)": {"type": "custom_message", "customType": "harnesslink", "display": False,
                              "content": f"<{INJECTED_TAG}>\npast entry\n</{INJECTED_TAG}>"},
    "custom_message (another extension)": {"type": "custom_message", "customType": "plan-mode", "display": True,
                                           "content": "Plan mode is on"},
    "compaction": {"type": "compaction", "summary": "## Goal\nstuff", "firstKeptEntryId": "00000001", "tokensBefore": 9},
    "branch_summary": {"type": "branch_summary", "fromId": "00000001", "summary": "We tried X"},
    "bashExecution": {"type": "message", "message": {"role": "bashExecution", "command": "ls", "output": "a\n",
                                                     "exitCode": 0, "cancelled": False, "truncated": False}},
    "developer": {"type": "message", "message": {"role": "developer", "content": "<system-reminder>x</system-reminder>",
                                                 "attribution": "agent"}},
    "hookMessage": {"type": "message", "message": {"role": "hookMessage", "customType": "x", "content": "hook says"}},
    "custom role": {"type": "message", "message": {"role": "custom", "customType": "x", "content": "ext says",
                                                   "display": True}},
    "fileMention": {"type": "message", "message": {"role": "fileMention", "files": [{"path": "a.py"}]}},
    "synthetic user": {"type": "message", "message": {"role": "user", "synthetic": True,
                                                      "content": [{"type": "text", "text": "Continue."}]}},
    "agent-attributed user": {"type": "message", "message": {"role": "user", "attribution": "agent",
                                                             "content": "Write the handoff document"}},
    "injected memory as a user message": {"type": "message", "message": {
        "role": "user", "content": [{"type": "text", "text": f"<{INJECTED_TAG} kind=\"matches\">\nold stuff\n</{INJECTED_TAG}>"}]}},
    "empty user message": {"type": "message", "message": {"role": "user", "content": []}},
}


@pytest.mark.parametrize("module", [pi, omp], ids=["pi", "omp"])
@pytest.mark.parametrize("line", NEVER_PROMPTS.values(), ids=NEVER_PROMPTS.keys())
def test_meta_lines_never_become_prompts(tmp_path: Path, module: Any, line: dict[str, Any]):
    s = Session()
    s.user("the real request", T0 + 1)
    s.assistant(T0 + 2, "working on it")
    s.add(line, T0 + 3)
    s.assistant(T0 + 4, "the final answer")
    reading = read_all(module, s.write(tmp_path / "s.jsonl"))
    assert [(t.prompt, t.result, t.closed) for t in reading.turns] == [("the real request", "the final answer", False)]


def test_injected_memory_inside_a_genuine_prompt_is_stripped(tmp_path: Path):
    s = Session()
    s.user(f"<{INJECTED_TAG}>\nremembered things\n</{INJECTED_TAG}>\n\nFix the login bug", T0 + 1)
    s.assistant(T0 + 2, "fixed")
    (turn,) = read_all(pi, s.write(tmp_path / "s.jsonl")).turns
    assert turn.prompt == "Fix the login bug"


def test_user_attributed_and_string_content_prompts_count(tmp_path: Path):
    s = Session()
    s.message({"role": "user", "content": "plain string prompt", "attribution": "user"}, T0 + 1)
    s.assistant(T0 + 2, "ok")
    s.message({"role": "user", "content": [{"type": "image", "data": "AAAA", "mimeType": "image/png"}]}, T0 + 3)
    s.assistant(T0 + 4, "nice picture")
    reading = read_all(pi, s.write(tmp_path / "s.jsonl"))
    assert [(t.prompt, t.closed) for t in reading.turns] == [("plain string prompt", True), ("[image]", False)]


# -- turns, tools and results --------------------------------------------------------


def test_actions_result_and_pending_tools(tmp_path: Path):
    s = Session()
    s.user("do things", T0 + 1)
    s.assistant(T0 + 2, "Let me look.", calls=(("a", "Bash", {"command": "ls"}), ("b", "read", {"path": "x"})))
    s.result(T0 + 3, "a", "Bash")
    s.assistant(T0 + 4, "Now edit.", calls=(("c", "edit", {"path": "x", "oldText": "1", "newText": "2"}),))
    reading = read_all(pi, s.write(tmp_path / "s.jsonl"))
    (turn,) = reading.turns
    assert [(a.tool, a.input) for a in turn.actions] == [
        ("bash", {"command": "ls"}), ("read", {"path": "x"}), ("edit", {"path": "x", "oldText": "1", "newText": "2"})]
    assert turn.pending_tools == 2  # b and c have no result yet
    assert turn.result == "Now edit."
    assert turn.ended == T0 + 4 and not turn.closed


def test_result_is_the_text_after_the_last_tool_call(tmp_path: Path):
    s = Session()
    s.user("go", T0 + 1)
    s.message({"role": "assistant", "stopReason": "stop", "content": [
        {"type": "text", "text": "before"}, {"type": "toolCall", "id": "a", "name": "ls", "arguments": {}},
        {"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "after the call"}]}, T0 + 2)
    s.result(T0 + 3, "a", "ls")
    (turn,) = read_all(pi, s.write(tmp_path / "s.jsonl")).turns
    assert turn.result == "after the call" and turn.pending_tools == 0


def test_aborted_reply_keeps_its_turn(tmp_path: Path):
    s = Session()
    s.user("hello", T0 + 1)
    s.message({"role": "assistant", "content": [], "stopReason": "aborted", "errorMessage": "Request was aborted"}, T0 + 2)
    s.user("again", T0 + 3)
    reading = read_all(pi, s.write(tmp_path / "s.jsonl"))
    assert [(t.prompt, t.result, t.closed, t.aborted) for t in reading.turns] == [
        ("hello", "", True, False), ("again", "", False, False)]


def test_tree_branches_in_one_file_are_each_a_turn_once(tmp_path: Path):
    s = Session()
    s.user("root question", T0 + 1)
    first_answer = s.assistant(T0 + 2, "answer one")
    s.user("follow-up on branch A", T0 + 3)
    s.assistant(T0 + 4, "answer A")
    s.add({"type": "branch_summary", "fromId": first_answer, "summary": "abandoned A"}, T0 + 5, parent=first_answer)
    s.user("follow-up on branch B", T0 + 6)
    s.assistant(T0 + 7, "answer B")
    s.user("root question", T0 + 8, parent=None)  # same text again from the very start: a new turn
    s.assistant(T0 + 9, "answer again")
    reading = read_all(pi, s.write(tmp_path / "s.jsonl"))
    assert [(t.prompt, t.result, t.closed) for t in reading.turns] == [
        ("root question", "answer one", True), ("follow-up on branch A", "answer A", True),
        ("follow-up on branch B", "answer B", True), ("root question", "answer again", False)]
    assert len({t.turn_id for t in reading.turns}) == 4


# -- incremental reading ----------------------------------------------------------------


def _read_in_chunks(module: Any, path: Path, budget: int) -> tuple[dict[str, Any], int]:
    seen: dict[str, Any] = {}
    start, carry, reads = 0, {}, 0
    while True:
        reading = module.read(path, start, carry, budget)
        reads += 1
        for turn in reading.turns:
            seen[turn.turn_id] = turn
        if reading.at_eof:
            return seen, reads
        assert reading.end > start
        start, carry = reading.end, reading.carry


@pytest.mark.parametrize("budget", [0, 1, 5_000, 80_000])
@pytest.mark.parametrize("path", [V1_FEATURES, PI_LARGE, OMP_LARGE], ids=lambda p: p.name[:30])
def test_reads_in_budgeted_chunks_equal_one_read(path: Path, budget: int):
    module = omp if path == OMP_LARGE else pi
    whole = {t.turn_id: t for t in read_all(module, path).turns}
    chunked, reads = _read_in_chunks(module, path, budget)
    assert chunked == whole
    if budget <= 1:
        assert reads == len(whole) + 1  # the header, then one turn per read: each stop is right before a prompt


def test_budget_stops_before_a_turn_start():
    reading = pi.read(PI_LARGE, 0, {}, 1_000)
    assert not reading.at_eof
    assert reading.end == 73209  # the third prompt's line: turn 2 ran past the budget
    assert [t.offset for t in reading.turns] == [220, 875]
    assert all(t.closed for t in reading.turns)


def test_growing_file_read_as_the_pass_does_equals_one_read(tmp_path: Path):
    data = OMP_LARGE.read_bytes()
    whole = {t.turn_id: t for t in read_all(omp, OMP_LARGE).turns}
    path = tmp_path / "grow.jsonl"
    cuts = sorted(random.Random(7).sample(range(1, len(data)), 60)) + [len(data)]
    seen: dict[str, Any] = {}
    start, carry = 0, {}
    for cut in cuts:
        path.write_bytes(data[:cut])
        reading = omp.read(path, start, carry, BIG)
        assert reading.end <= cut and data[: reading.end].endswith(b"\n") or reading.end == start
        for turn in reading.turns:
            seen[turn.turn_id] = turn
        open_turns = [t.offset for t in reading.turns if not t.closed]
        start, carry = (open_turns[0] if open_turns else reading.end), reading.carry
    assert seen == whole


def test_partial_last_line_is_not_consumed(tmp_path: Path):
    data = PI_LARGE.read_bytes()
    path = tmp_path / "partial.jsonl"
    path.write_bytes(data[: 91933 + 100])  # the last prompt's line, cut short
    reading = pi.read(path, 0, {}, BIG)
    assert reading.end == 91933 and reading.at_eof
    assert [t.offset for t in reading.turns] == [220, 875, 73209]
    assert reading.turns[-1].closed is False  # nothing complete proves it is over yet
    assert reading.bad_lines == 0


def test_read_starting_mid_file_without_carry_learns_the_session():
    reading = pi.read(PI_LARGE, 73209, {}, BIG)
    assert [t.offset for t in reading.turns] == [73209, 91933]
    assert reading.turns[0].session_id == "d703a1a9-1b7b-4fb1-b512-c9738b1fe617"
    assert reading.turns[0].cwd == "/Users/badlogic/workspaces/pi-mono"


# -- locations -----------------------------------------------------------------------------


def _touch(path: Path, text: str = "{}\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_iter_transcripts_lists_sessions_but_not_subagent_files(tmp_path: Path):
    sessions = tmp_path / ".pi" / "agent" / "sessions"
    stem = "2026-08-28T10-30-00-000Z_0a0b0c0d-0000-4000-8000-000000000001"
    wanted = [
        _touch(sessions / "--w-a--" / f"{stem}.jsonl"),
        _touch(sessions / "--w-b--" / "2026-08-29T10-30-00-000Z_x.jsonl"),
    ]
    _touch(sessions / "--w-a--" / stem / "run1" / "run-0" / "child.jsonl")  # pi-subagents child session
    _touch(sessions / "--w-a--" / stem / "Scout.jsonl")
    _touch(sessions / "--w-a--" / "subagent-artifacts" / "r1_scout_transcript.jsonl")
    _touch(sessions / "--w-a--" / "notes.txt")
    _touch(sessions / "stray.jsonl")  # not inside a cwd folder
    locs = locations({"HOME": str(tmp_path)})
    assert pi.detect(locs)
    assert [Path(p) for p in pi.iter_transcripts(locs)] == wanted


def test_home_honours_pi_coding_agent_dir(tmp_path: Path):
    custom = tmp_path / "elsewhere"
    wanted = _touch(custom / "sessions" / "--w--" / "s.jsonl")
    locs = locations({"HOME": str(tmp_path), "PI_CODING_AGENT_DIR": str(custom)})
    assert pi.home(locs) == custom
    assert [Path(p) for p in pi.iter_transcripts(locs)] == [wanted]
    assert pi.home(locations({"HOME": str(tmp_path), "PI_CODING_AGENT_DIR": "~/pi-home"})) == tmp_path / "pi-home"


def test_detect_is_false_without_a_pi_folder(tmp_path: Path):
    locs = locations({"HOME": str(tmp_path)})
    assert not pi.detect(locs)
    assert [Path(p) for p in pi.iter_transcripts(locs)] == []


def test_file_in_a_session_folder_is_an_excluded_subagent(tmp_path: Path):
    folder = tmp_path / "--w--"
    s = Session()
    s.user("parent prompt", T0 + 1)
    s.write(folder / "2026_abc.jsonl")
    child = Session()
    child.user("child task", T0 + 2)
    child.assistant(T0 + 3, "child done")
    for child_path in (folder / "2026_abc" / "Scout.jsonl", folder / "2026_abc" / "run7" / "run-0" / "child.jsonl"):
        reading = read_all(pi, child.write(child_path))
        assert reading.excluded == "subagent" and reading.turns == []


# -- garbage in, no exceptions out ----------------------------------------------------------

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@FUZZ
@given(data=st.binary(max_size=2_000), budget=st.integers(0, 3_000))
def test_random_bytes_never_raise(tmp_path: Path, data: bytes, budget: int):
    path = tmp_path / "random.jsonl"
    path.write_bytes(data)
    for module in (pi, omp):
        reading = module.read(path, 0, {}, budget)
        assert 0 <= reading.end <= len(data)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
entry_types = st.sampled_from(["session", "title", "message", "compaction", "custom", "custom_message", "mode_change",
                               "session_init", "branch_summary", "model_change", "label", "weird", None, 3])
roles = st.sampled_from(["user", "assistant", "toolResult", "bashExecution", "developer", "custom", None, 7, ["x"]])
blocks = st.lists(
    st.fixed_dictionaries({"type": st.sampled_from(["text", "toolCall", "thinking", "image", None])},
                          optional={"text": json_values, "id": json_values, "name": json_values,
                                    "arguments": json_values}),
    max_size=4,
)
messages = st.fixed_dictionaries(
    {"role": roles},
    optional={"content": blocks | json_values, "timestamp": json_values, "toolCallId": json_values,
              "toolName": st.sampled_from(["todo", "todo_write", "bash"]) | json_values,
              "details": json_values, "synthetic": json_values, "attribution": json_values,
              "steering": json_values, "isError": json_values},
)
entries = st.fixed_dictionaries(
    {"type": entry_types},
    optional={"message": messages | json_values, "timestamp": json_values, "id": json_values, "cwd": json_values,
              "parentSession": json_values, "data": json_values, "mode": json_values, "summary": json_values,
              "customType": st.sampled_from(["user_todo_edit", "x"]) | json_values},
)


@FUZZ
@given(lines=st.lists(entries | json_values, max_size=25), budget=st.integers(0, 2_000), cut=st.integers(0, 50))
def test_random_json_lines_never_raise(tmp_path: Path, lines: list[Any], budget: int, cut: int):
    data = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
    data = data[: max(0, len(data) - cut)]
    path = tmp_path / "lines.jsonl"
    path.write_bytes(data)
    for module in (pi, omp):
        reading = module.read(path, 0, {}, budget)
        assert 0 <= reading.end <= len(data)
        for turn in reading.turns:
            assert isinstance(turn.prompt, str) and isinstance(turn.result, str) and turn.prompt


@FUZZ
@given(picks=st.lists(st.tuples(st.integers(0, 200), st.floats(0, 1)), min_size=1, max_size=12), junk=st.binary(max_size=40))
def test_truncated_real_lines_never_raise(tmp_path: Path, picks: list[tuple[int, float]], junk: bytes):
    pool = lines_of(V1_FEATURES) + lines_of(OMP_LARGE)[:8] + lines_of(PI_COMPACTION)[:10]
    out = []
    for index, fraction in picks:
        line = pool[index % len(pool)]
        out.append(line[: int(len(line) * fraction)] + b"\n")
    data = b"".join(out) + junk
    path = tmp_path / "cut.jsonl"
    path.write_bytes(data)
    for module in (pi, omp):
        reading = module.read(path, 0, {}, 500)
        assert 0 <= reading.end <= len(data)


def test_non_utf8_lines_count_as_bad_and_are_skipped(tmp_path: Path):
    s = Session()
    s.user("café", T0 + 1)
    s.assistant(T0 + 2, "ok")
    path = s.write(tmp_path / "s.jsonl")
    path.write_bytes(path.read_bytes() + b"\xff\xfe{not json\n" + b'{"type":"message","message":{"role":"user"\n')
    reading = read_all(pi, path)
    assert reading.bad_lines == 2
    assert [t.prompt for t in reading.turns] == ["café"]
    assert reading.end == path.stat().st_size


def test_a_copied_turn_shares_its_dedupe_id_with_the_original(tmp_path: Path):
    parent_path, fork_path, fork = _parent_and_fork(tmp_path, whole=True)
    del fork.entries[0]["parentSession"]  # were the lineage lost, the copies would still be recognisable
    originals = {t.prompt: t.dedupe_id for t in read_all(pi, parent_path).turns}
    copies = {t.prompt: t.dedupe_id for t in read_all(pi, fork.write(tmp_path / "lost-lineage.jsonl")).turns}
    assert all(copies[prompt] == dedupe for prompt, dedupe in originals.items())
    assert copies["new work after the fork"] not in originals.values()
