"""The Claude Code reader on real transcripts, written down by reading each file."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harnesslink_core.harnesses.claude_code import reader as claude_code
from harnesslink_core.paths import locations
from tests.conftest import FIXTURES

CC = FIXTURES / "claude-code"
BIG = 10**9


def turns_of(path: Path):
    return claude_code.read(path, 0, {}, BIG).turns


# (prompt start, tools in order, closed, result start) per real prompt, read off the files by hand.
EXPECTED = {
    "oneryalcin__fasthooks__sample_main_transcript.jsonl": [
        ("can you run a command ls -la", ["bash"], True, "Done! Here's the output of `ls -la`"),
        ("ok can you create a hello_world.py file", ["write"], True, "Done! I've created a `hello_world.py`"),
        ("can you read it back with Read tool?", ["read"], True, "Perfect! Here's the content"),
        ("can you run `cat nonexistent.txt`", ["bash"], True, "As expected, the command failed"),
        ("do something requiring multiple tools in one turn,",
         ["write", "write", "read", "bash", "bash", "bash"], True, "Great! Here's what I did"),
        ("/compact", [], False, ""),  # built-in command after the compaction: no answer, never banked
    ],
    "marot__spotter__short.jsonl": [
        # rejected tool calls, then "[Request interrupted by user for tool use]": over, with what it did
        ("mix phx.server doesnt seem to start", ["bash", "glob"], True, "Let me check the project structure"),
    ],
    "d-kimuson__claude-code-viewer__5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl": [
        # custom slash command + its isMeta expansion; inline sidechain (Task) lines are not ours
        ("/orchestrator @CLAUDE.md を最新の状態にアップデートしてください",
         ["todowrite", "glob", "glob", "todowrite", "task", "task", "todowrite", "task", "todowrite",
          "edit", "read", "multiedit", "todowrite"], False, "CLAUDE.mdファイルを最新の状態にアップデートしました"),
    ],
    "marot__spotter__agent-aac57f5.jsonl": [],  # a subagent file: every line is a sidechain
    "oneryalcin__fasthooks__sample_agent_sidechain.jsonl": [],
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_reader_finds_the_turns_a_person_sees(name: str) -> None:
    turns = turns_of(CC / name)
    got = [(t.prompt, [a.tool for a in t.actions], t.closed, t.result) for t in turns]
    assert len(got) == len(EXPECTED[name])
    for (prompt, tools, closed, result), (p0, tools0, closed0, r0) in zip(got, EXPECTED[name]):
        assert prompt.startswith(p0)
        assert tools == tools0
        assert closed == closed0
        assert result.startswith(r0)


def test_every_fixture_is_covered() -> None:
    assert {p.name for p in CC.glob("*.jsonl")} == set(EXPECTED)


def test_turn_ids_are_prompt_uuids_and_stable() -> None:
    turns = turns_of(CC / "oneryalcin__fasthooks__sample_main_transcript.jsonl")
    assert turns[0].turn_id == "0bdd2740-5e8a-4a8f-a2a5-6d1beaca0e1a" or turns[0].turn_id.startswith("0bdd2740")
    assert [t.turn_id for t in turns] == [t.turn_id for t in turns_of(CC / "oneryalcin__fasthooks__sample_main_transcript.jsonl")]
    assert all(t.dedupe_id == t.turn_id for t in turns)


def test_one_message_split_over_lines_gives_one_answer() -> None:
    turns = turns_of(CC / "oneryalcin__fasthooks__sample_main_transcript.jsonl")
    last = turns[4]
    # lines 50-51 share a message id (text then tool_use); the final answer is the text after the last tool
    assert last.result.startswith("Great! Here's what I did across multiple tool calls")
    assert "I just demonstrated multiple tools" not in last.result
    assert last.pending_tools == 0


def test_turn_ends_when_it_finished_not_at_later_plumbing() -> None:
    turns = turns_of(CC / "oneryalcin__fasthooks__sample_main_transcript.jsonl")
    from harnesslink_core.clock import iso

    # its last message ends it (not the stop_hook_summary after it, nor the compaction lines later)
    assert iso(turns[4].ended) == "2026-01-02T19:20:39.984Z"


def test_todowrite_feeds_the_state() -> None:
    reading = claude_code.read(CC / "d-kimuson__claude-code-viewer__5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl", 0, {}, BIG)
    todos = [s for s in reading.states if s.kind == "todos"]
    assert todos[0].todos[0] == (" ", "Discover available commands in the project")
    assert todos[1].todos[0] == ("~", "Discover available commands in the project")
    assert all(mark == "x" for mark, _ in todos[-1].todos)


def test_compaction_is_a_state_checkpoint() -> None:
    reading = claude_code.read(CC / "oneryalcin__fasthooks__sample_main_transcript.jsonl", 0, {}, BIG)
    assert [s.kind for s in reading.states] == ["compaction"]


def test_subagent_files_are_not_listed(tmp_path: Path) -> None:
    locs = locations({"HOME": str(tmp_path)})
    project = tmp_path / ".claude" / "projects" / "-workspace"
    (project / "sess" / "subagents").mkdir(parents=True)
    (project / "memory").mkdir()
    shutil.copy(CC / "marot__spotter__short.jsonl", project / "sess.jsonl")
    shutil.copy(CC / "marot__spotter__agent-aac57f5.jsonl", project / "sess" / "subagents" / "agent-aac57f5.jsonl")
    shutil.copy(CC / "oneryalcin__fasthooks__sample_agent_sidechain.jsonl", project / "agent-0f1.jsonl")
    (project / "memory" / "MEMORY.md").write_text("x")
    assert [p.name for p in claude_code.iter_transcripts(locs)] == ["sess.jsonl"]


def test_claude_config_dir_is_respected(tmp_path: Path) -> None:
    locs = locations({"HOME": str(tmp_path), "CLAUDE_CONFIG_DIR": str(tmp_path / "cfg")})
    (tmp_path / "cfg" / "projects" / "-x").mkdir(parents=True)
    shutil.copy(CC / "marot__spotter__short.jsonl", tmp_path / "cfg" / "projects" / "-x" / "s.jsonl")
    assert len(list(claude_code.iter_transcripts(locs))) == 1


def _line(**fields) -> str:
    return json.dumps(fields) + "\n"


def _prompt(uuid: str, text: str, ts: str, **extra) -> str:
    return _line(type="user", uuid=uuid, sessionId="s1", cwd="/proj", timestamp=ts,
                 message={"role": "user", "content": text}, **extra)


def _answer(uuid: str, mid: str, text: str, ts: str) -> str:
    return _line(type="assistant", uuid=uuid, sessionId="s1", cwd="/proj", timestamp=ts,
                 message={"id": mid, "role": "assistant", "content": [{"type": "text", "text": text}]})


def _tool(uuid: str, mid: str, tool_id: str, name: str, tool_input: dict, ts: str) -> str:
    return _line(type="assistant", uuid=uuid, sessionId="s1", cwd="/proj", timestamp=ts,
                 message={"id": mid, "role": "assistant",
                          "content": [{"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}]})


def _result(uuid: str, tool_id: str, ts: str) -> str:
    return _line(type="user", uuid=uuid, sessionId="s1", cwd="/proj", timestamp=ts, toolUseResult={"stdout": "ok"},
                 message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": "ok"}]})


def test_meta_and_injected_lines_are_never_prompts(tmp_path: Path) -> None:
    path = tmp_path / "s1.jsonl"
    path.write_text(
        _prompt("u1", "<harnesslink-memory source=\"x\">old notes</harnesslink-memory>", "2026-01-01T00:00:00Z")
        + _prompt("u2", "<local-command-stdout>hi</local-command-stdout>", "2026-01-01T00:00:01Z")
        + _prompt("u3", "Caveat: The messages below were generated by the user while running local commands.",
                  "2026-01-01T00:00:02Z", isMeta=True)
        + _prompt("u4", "This session is being continued from a previous conversation", "2026-01-01T00:00:03Z",
                  isCompactSummary=True)
        + _prompt("u5", "real question\n<harnesslink-memory>injected</harnesslink-memory>", "2026-01-01T00:00:04Z")
        + _answer("a1", "m1", "answer", "2026-01-01T00:00:05Z")
    )
    turns = turns_of(path)
    assert [t.prompt for t in turns] == ["real question"]


def test_a_tool_still_waiting_is_pending(tmp_path: Path) -> None:
    path = tmp_path / "s1.jsonl"
    path.write_text(
        _prompt("u1", "run the tests", "2026-01-01T00:00:00Z")
        + _tool("a1", "m1", "t1", "Bash", {"command": "pytest"}, "2026-01-01T00:00:01Z")
    )
    (turn,) = turns_of(path)
    assert turn.pending_tools == 1 and not turn.closed
    with path.open("a") as f:
        f.write(_result("r1", "t1", "2026-01-01T00:00:02Z") + _answer("a2", "m2", "all green", "2026-01-01T00:00:03Z"))
    (turn,) = turns_of(path)
    assert turn.pending_tools == 0 and turn.result == "all green"


def test_reading_from_a_turn_offset_resumes_exactly(tmp_path: Path) -> None:
    src = CC / "oneryalcin__fasthooks__sample_main_transcript.jsonl"
    whole = claude_code.read(src, 0, {}, BIG)
    third = whole.turns[2]
    again = claude_code.read(src, third.offset, whole.carry, BIG)
    assert [t.turn_id for t in again.turns] == [t.turn_id for t in whole.turns[2:]]
    assert again.end == whole.end == os.path.getsize(src)


def test_budget_stops_before_a_new_turn(tmp_path: Path) -> None:
    src = CC / "oneryalcin__fasthooks__sample_main_transcript.jsonl"
    first = claude_code.read(src, 0, {}, 1)
    assert len(first.turns) == 1 and not first.at_eof
    assert first.end == turns_of(src)[1].offset


def test_partial_last_line_is_left_for_later(tmp_path: Path) -> None:
    path = tmp_path / "s1.jsonl"
    full = _prompt("u1", "explain the build", "2026-01-01T00:00:00Z")
    path.write_text(full + _answer("a1", "m1", "x" * 300, "2026-01-01T00:00:05Z")[:40])
    reading = claude_code.read(path, 0, {}, BIG)
    assert reading.end == len(full.encode())
    assert reading.turns[0].result == ""


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(
    st.binary(max_size=200),
    st.dictionaries(st.sampled_from(["type", "message", "uuid", "isSidechain", "isMeta", "timestamp", "cwd"]),
                    st.one_of(st.none(), st.text(max_size=20), st.integers(), st.booleans(),
                              st.sampled_from(["user", "assistant", "system"]),
                              st.fixed_dictionaries({"content": st.one_of(st.text(max_size=20), st.lists(
                                  st.dictionaries(st.sampled_from(["type", "text", "id", "name", "input", "tool_use_id"]),
                                                  st.one_of(st.text(max_size=10), st.sampled_from(["text", "tool_use", "tool_result"]))),
                                  max_size=3))}))).map(lambda d: json.dumps(d).encode()),
), max_size=20))
def test_garbage_never_raises(tmp_path_factory, lines: list[bytes]) -> None:
    path = tmp_path_factory.mktemp("fuzz") / "s.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    reading = claude_code.read(path, 0, {}, BIG)
    assert reading.end <= path.stat().st_size


def test_answers_after_a_closed_turn_do_not_join_it(tmp_path: Path) -> None:
    path = tmp_path / "s1.jsonl"
    path.write_text(
        _prompt("u1", "start the build agent", "2026-01-01T00:00:00Z")
        + _answer("a1", "m1", "Started it in the background.", "2026-01-01T00:00:01Z")
        + _line(type="system", uuid="x1", subtype="stop_hook_summary", timestamp="2026-01-01T00:00:02Z")
        + _line(type="user", uuid="n1", timestamp="2026-01-01T00:01:00Z", promptSource="system",
                origin={"kind": "task-notification"},
                message={"role": "user", "content": "<task-notification>done</task-notification>"})
        + _answer("a2", "m2", "The agent finished: all green.", "2026-01-01T00:01:01Z")
    )
    (turn,) = turns_of(path)
    assert turn.result == "Started it in the background."


def test_a_stop_hook_that_blocks_keeps_the_turn_open(tmp_path: Path) -> None:
    path = tmp_path / "s1.jsonl"
    path.write_text(
        _prompt("u1", "fix the tests", "2026-01-01T00:00:00Z")
        + _answer("a1", "m1", "Done, I think.", "2026-01-01T00:00:01Z")
        + _line(type="system", uuid="x1", subtype="stop_hook_summary", preventedContinuation=True,
                timestamp="2026-01-01T00:00:02Z")
        + _answer("a2", "m2", "Ran them again: all 40 pass.", "2026-01-01T00:00:05Z")
    )
    (turn,) = turns_of(path)
    assert not turn.closed and turn.result.endswith("Ran them again: all 40 pass.")


@pytest.mark.parametrize("cwd", ["/home/dev/shop", "/home/dév/my project.v2/ü_x", "/srv/a--b/C3~"])
def test_the_sessions_and_the_brief_find_a_project_folder_where_the_reader_names_it(tmp_path: Path, cwd: str):
    """The encoding is the reader's; the session-start brief's lean copy of it finds the same MEMORY.md."""
    from harnesslink_core.harnesses.claude_code import sessions
    from harnesslink_core.recall.brief import build_brief

    locs = locations({"HOME": str(tmp_path)})
    folder = claude_code.home(locs) / "projects" / claude_code.project_folder_name(cwd)
    assert sessions.project_folder(locs, cwd) == folder
    (folder / "memory").mkdir(parents=True)
    (folder / "memory" / "MEMORY.md").write_text("Use uv for virtualenvs in this repo.\n")
    assert "Use uv for virtualenvs" in build_brief(locs, cwd, "pi", budget=20000).text
