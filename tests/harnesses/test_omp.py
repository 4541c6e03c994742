"""The omp reader: what omp adds to pi's session format, and where omp keeps its files.

The reader itself is shared with pi (`pi_family`); test_pi.py covers turns,
forks, never-prompts, incremental reads and fuzzing for both harnesses.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harnesslink_core.clock import iso
from harnesslink_core.harnesses.omp import reader as omp
from harnesslink_core.paths import locations

from .test_pi import BIG, OMP_LARGE, T0, Session, check_generated, generated_expectations, read_all


def _title_slot(title: str = "") -> bytes:
    """omp's fixed 256-byte first line (`session-title-slot.ts`)."""
    slot = {"type": "title", "v": 1, "title": title, "updatedAt": iso(T0), "pad": ""}
    raw = json.dumps(slot, separators=(",", ":"))
    slot["pad"] = " " * (255 - len(raw))
    line = json.dumps(slot, separators=(",", ":")).encode() + b"\n"
    assert len(line) == 256
    return line


def _write_with_slot(session: Session, path: Path) -> Path:
    session.write(path)
    path.write_bytes(_title_slot("Fix login") + path.read_bytes())
    return path


# -- the title slot and the header --------------------------------------------------


def test_real_omp_file_title_slot_is_skipped():
    reading = read_all(omp, OMP_LARGE)
    assert reading.bad_lines == 0
    assert [t.offset for t in reading.turns] == [488, 1251, 74015, 93027]  # lines 3, 6, 19 and 27
    assert reading.session is not None
    assert (reading.session.harness, reading.session.session_id) == ("omp", "d703a1a9-1b7b-4fb1-b512-c9738b1fe617")
    assert all(t.harness == "omp" for t in reading.turns)
    assert reading.carry["version"] == 3


def test_read_starting_after_the_title_slot_learns_the_header(tmp_path: Path):
    s = Session(cwd="/home/me/code/app")
    s.user("first", T0 + 1)
    s.assistant(T0 + 2, "one")
    s.user("second", T0 + 3)
    s.assistant(T0 + 4, "two")
    path = _write_with_slot(s, tmp_path / "s.jsonl")
    data = path.read_bytes()
    second = data.index(b'{"id": "00000003"')
    reading = omp.read(path, second, {}, BIG)
    assert [(t.prompt, t.session_id, t.cwd) for t in reading.turns] == [
        ("second", "0a0b0c0d-0000-4000-8000-000000000001", "/home/me/code/app")]


def test_cwd_comes_from_the_header_never_the_folder_name(tmp_path: Path):
    s = Session(cwd="/home/me/code/my-app.v2")
    s.user("hi", T0 + 1)
    s.assistant(T0 + 2, "hello")
    path = _write_with_slot(s, tmp_path / ".omp" / "agent" / "sessions" / "-code-my-app-v2" / "2026_x.jsonl")
    (turn,) = read_all(omp, path).turns
    assert turn.cwd == "/home/me/code/my-app.v2"


@pytest.mark.parametrize("path, expected", generated_expectations("omp"), ids=lambda v: v.name[:30] if isinstance(v, Path) else "")
def test_generated_omp_transcripts_match_expected_md(path: Path, expected: list):
    check_generated(omp, path, expected)


# -- prompts omp marks as not the user's ------------------------------------------------


def test_steering_message_joins_the_running_turn(tmp_path: Path):
    s = Session()
    s.user("refactor the parser", T0 + 1)
    s.assistant(T0 + 2, "Reading it", calls=(("a", "read", {"path": "p.py", "i": "Reading the parser"}),))
    s.user("also keep the old API", T0 + 3, steering=True, attribution="user")
    s.result(T0 + 4, "a", "read")
    s.assistant(T0 + 5, "Done, old API kept")
    s.user("thanks", T0 + 6, attribution="user")
    reading = read_all(omp, s.write(tmp_path / "s.jsonl"))
    assert [(t.prompt, t.result, t.closed) for t in reading.turns] == [
        ("refactor the parser\n\nalso keep the old API", "Done, old API kept", True), ("thanks", "", False)]
    assert reading.turns[0].actions[0].input == {"path": "p.py", "i": "Reading the parser"}


@pytest.mark.parametrize("extra", [{"synthetic": True}, {"attribution": "agent"}], ids=["synthetic", "agent"])
def test_user_messages_omp_did_not_get_from_the_user_are_not_prompts(tmp_path: Path, extra: dict[str, Any]):
    s = Session()
    s.user("the request", T0 + 1, attribution="user")
    s.assistant(T0 + 2, "partial")
    s.user("Continue where you left off.", T0 + 3, **extra)
    s.assistant(T0 + 4, "complete answer")
    reading = read_all(omp, s.write(tmp_path / "s.jsonl"))
    assert [(t.prompt, t.result) for t in reading.turns] == [("the request", "complete answer")]


# -- todos, plans, compactions --------------------------------------------------------------

PHASES = {
    "phases": [
        {"name": "Build", "tasks": [
            {"content": "write parser", "status": "completed"},
            {"content": "write tests", "status": "in_progress"},
        ]},
        {"name": "Ship", "tasks": [
            {"content": "release", "status": "blocked", "blocker": "waiting on CI"},
            {"content": "old idea", "status": "abandoned"},
            {"content": "announce", "status": "pending"},
        ]},
    ],
    "storage": "session",
}
PHASED_TODOS = [("x", "write parser"), ("~", "write tests"), ("!", "release"), ("-", "old idea"), (" ", "announce")]
FLAT = [{"content": "a", "status": "completed", "activeForm": "Doing a"},
        {"content": "b", "status": "in_progress", "activeForm": "Doing b"},
        {"content": "c", "status": "pending", "activeForm": "Doing c"}]
FLAT_TODOS = [("x", "a"), ("~", "b"), (" ", "c")]

TODO_SHAPES = {
    # 2026-01: todo_write {todos:[...]}, the list echoed in details.todos
    "todo_write todos": ("todo_write", {"todos": FLAT}, {"todos": FLAT}, FLAT_TODOS),
    # same, from a version whose result carried no details: the call's own list
    "todo_write todos, no details": ("todo_write", {"todos": FLAT}, None, FLAT_TODOS),
    # 2026-02: phased todo_write {ops:[...]}, state in details.phases
    "todo_write ops": ("todo_write", {"ops": [{"op": "replace", "phases": []}, {"op": "add_task", "phase": "Build"}]},
                       PHASES, PHASED_TODOS),
    # 2026-06: `todo`, one op per call
    "todo op": ("todo", {"op": "block", "task": "release", "reason": "waiting on CI"}, PHASES, PHASED_TODOS),
    # pi's example extension tool
    "pi example todo": ("todo", {"action": "toggle", "id": 1},
                        {"action": "toggle", "todos": [{"id": 1, "text": "wash car", "done": True},
                                                       {"id": 2, "text": "buy milk", "done": False}], "nextId": 3},
                        [("x", "wash car"), (" ", "buy milk")]),
}


@pytest.mark.parametrize("tool, arguments, details, todos", TODO_SHAPES.values(), ids=TODO_SHAPES.keys())
def test_todo_tool_shapes_become_todos(tmp_path: Path, tool: str, arguments: Any, details: Any, todos: list):
    s = Session()
    s.user("plan the work", T0 + 1)
    s.assistant(T0 + 2, calls=(("t1", tool, arguments),), stop="toolUse")
    s.result(T0 + 3, "t1", tool, "Remaining items: ...", details=details)
    s.assistant(T0 + 4, "Planned.")
    reading = read_all(omp, s.write(tmp_path / "s.jsonl"))
    assert [(u.kind, u.todos, u.at) for u in reading.states] == [("todos", todos, T0 + 3)]
    assert [a.tool for a in reading.turns[0].actions] == [tool]


def test_failed_todo_call_changes_nothing(tmp_path: Path):
    s = Session()
    s.user("plan", T0 + 1)
    s.assistant(T0 + 2, calls=(("t1", "todo", {"op": "start", "task": "nope"}),), stop="toolUse")
    s.result(T0 + 3, "t1", "todo", 'Errors: Task "nope" not found', details=PHASES, error=True)
    assert read_all(omp, s.write(tmp_path / "s.jsonl")).states == []


def test_todo_edits_from_the_ui_become_todos(tmp_path: Path):
    s = Session()
    s.add({"type": "custom", "customType": "user_todo_edit", "data": {"phases": PHASES["phases"]}}, T0 + 1)
    s.add({"type": "custom", "customType": "tool_execution_start", "data": {"x": 1}}, T0 + 2)
    reading = read_all(omp, s.write(tmp_path / "s.jsonl"))
    assert [(u.kind, u.todos) for u in reading.states] == [("todos", PHASED_TODOS)]


def test_plan_mode_and_compaction_become_states(tmp_path: Path):
    s = Session()
    s.user("design it first", T0 + 1)
    s.add({"type": "mode_change", "mode": "plan", "data": {"planFile": "local://PLAN.md"}}, T0 + 2)
    s.assistant(T0 + 3, "Here is the plan")
    s.add({"type": "mode_change", "mode": "none"}, T0 + 4)
    s.add({"type": "compaction", "summary": "## Goal\nShip the parser", "shortSummary": "Parser work, tests pending",
           "firstKeptEntryId": "00000003", "tokensBefore": 120_000}, T0 + 5)
    reading = read_all(omp, s.write(tmp_path / "s.jsonl"))
    assert [(u.kind, u.plan, u.note, u.at) for u in reading.states] == [
        ("plan", "local://PLAN.md", "plan mode", T0 + 2),
        ("compaction", None, "Parser work, tests pending", T0 + 5),
    ]
    assert [t.prompt for t in reading.turns] == ["design it first"]


# -- subagents -----------------------------------------------------------------------------


def test_task_subagent_transcripts_are_excluded(tmp_path: Path):
    folder = tmp_path / "-code-app"
    parent = Session()
    parent.user("delegate", T0 + 1)
    parent.write(folder / "2026-08-28T10-30-00-000Z_abc.jsonl")
    for child_path in (folder / "2026-08-28T10-30-00-000Z_abc" / "SwiftFalcon.jsonl",
                       folder / "2026-08-28T10-30-00-000Z_abc" / "SwiftFalcon" / "SwiftFalcon.Helper.jsonl"):
        child_path.parent.mkdir(parents=True, exist_ok=True)
        (child_path.parent.parent / (child_path.parent.name + ".jsonl")).touch()
        child = Session()
        child.user("subtask", T0 + 2)
        child.assistant(T0 + 3, "subtask done")
        reading = read_all(omp, child.write(child_path))
        assert reading.excluded == "subagent" and reading.turns == []


def test_session_init_entry_marks_a_subagent_wherever_it_lies(tmp_path: Path):
    s = Session()
    s.add({"type": "session_init", "systemPrompt": "You are Scout", "task": "find x", "tools": ["read"]}, T0 + 1)
    s.user("find x", T0 + 2)
    s.assistant(T0 + 3, "found")
    reading = read_all(omp, s.write(tmp_path / "elsewhere.jsonl"))
    assert reading.excluded == "subagent" and reading.turns == []


# -- locations -------------------------------------------------------------------------------


def _touch(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{}\n")
    return path


def test_iter_transcripts_lists_sessions_but_not_subagent_files(tmp_path: Path):
    sessions = tmp_path / ".omp" / "agent" / "sessions"
    stem = "2026-08-28T10-30-00-000Z_019a0000-0000-7000-8000-000000000001"
    wanted = [
        _touch(sessions / "-" / "2026-08-27T09-00-00-000Z_home.jsonl"),
        _touch(sessions / "-code-app" / f"{stem}.jsonl"),
        _touch(sessions / "-tmp-scratch" / "2026-08-29T00-00-00-000Z_tmp.jsonl"),
    ]
    _touch(sessions / "-code-app" / stem / "SwiftFalcon.jsonl")
    _touch(sessions / "-code-app" / stem / "SwiftFalcon" / "SwiftFalcon.Helper.jsonl")
    _touch(sessions / "-code-app" / stem / "__advisor-1.jsonl")
    _touch(sessions / "-code-app" / stem / "3.bash.log")
    locs = locations({"HOME": str(tmp_path)})
    assert omp.detect(locs)
    assert [Path(p) for p in omp.iter_transcripts(locs)] == wanted


def test_profiles_and_config_dir_name_are_followed(tmp_path: Path):
    root = tmp_path / ".omp-dev"
    wanted = [
        _touch(root / "agent" / "sessions" / "-a" / "1.jsonl"),
        _touch(root / "profiles" / "work" / "agent" / "sessions" / "-b" / "2.jsonl"),
    ]
    _touch(tmp_path / ".omp" / "agent" / "sessions" / "-c" / "3.jsonl")  # the default root is not ours now
    locs = locations({"HOME": str(tmp_path), "PI_CONFIG_DIR": ".omp-dev"})
    assert omp.home(locs) == root / "agent"
    assert [Path(p) for p in omp.iter_transcripts(locs)] == wanted


def test_xdg_data_home_sessions_are_listed_once_omp_moved_there(tmp_path: Path):
    xdg = tmp_path / "xdg"
    locs = locations({"HOME": str(tmp_path), "XDG_DATA_HOME": str(xdg)})
    assert not omp.detect(locs)
    wanted = _touch(xdg / "omp" / "sessions" / "-code" / "s.jsonl")
    assert omp.detect(locs)
    assert [Path(p) for p in omp.iter_transcripts(locs)] == [wanted]


def test_pi_coding_agent_dir_is_left_to_pi(tmp_path: Path):
    shared = tmp_path / "agent-dir"
    _touch(shared / "sessions" / "--w--" / "s.jsonl")
    locs = locations({"HOME": str(tmp_path), "PI_CODING_AGENT_DIR": str(shared)})
    assert omp.home(locs) == tmp_path / ".omp" / "agent"
    assert [Path(p) for p in omp.iter_transcripts(locs)] == []
    assert not omp.detect(locs)
