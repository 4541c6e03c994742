"""The Antigravity reader: one aggregate entry per conversation from `agy`'s prompt log.

The lines below copy the real shapes (agentgrep's antigravity-cli backend page, the
dev.to "Antigravity CLI tutorial part 2", and a published audit of 977 real history
lines): `{display, timestamp (ms), workspace, type?, conversationId?}`, `type` being
absent, "slash_command" or "shell", and `conversationId` missing on a conversation's
first prompt. Brain transcripts are `{step_index, source, type, status, created_at,
content}` lines.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harnesslink_core.harnesses.antigravity import reader as antigravity
from harnesslink_core.model import Turn

BIG = 1 << 40
T0 = 1_780_000_000.0  # 2026-05-28T20:26:40Z
WS = "/home/me/work/api"
OTHER_WS = "/home/me/work/site"
C1 = "3b4a1d20-3968-4ed2-90b3-00eea3060b02"
C2 = "11111111-2222-3333-4444-555555555555"


def line(display: str, t: float, workspace: str | None = WS, conv: str | None = None, kind: str | None = None) -> dict:
    obj: dict[str, Any] = {"display": display, "timestamp": int(t * 1000)}
    if workspace is not None:
        obj["workspace"] = workspace
    if kind is not None:
        obj["type"] = kind
    if conv is not None:
        obj["conversationId"] = conv
    return obj


def cli(home: Path) -> Path:
    folder = home / ".gemini" / "antigravity-cli"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def write_history(home: Path, lines: list[dict], append: bool = False) -> Path:
    path = cli(home) / "history.jsonl"
    with open(path, "a" if append else "w", encoding="utf-8") as f:
        for obj in lines:
            f.write(json.dumps(obj) + "\n")
    return path


def write_steps(home: Path, conv: str, steps: int, name: str = "transcript_full.jsonl") -> None:
    logs = cli(home) / "brain" / conv / ".system_generated" / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    with open(logs / name, "a", encoding="utf-8") as f:
        for i in range(steps):
            step = {"step_index": i, "source": "MODEL", "type": "PLANNER_RESPONSE", "status": "DONE",
                    "created_at": "2026-05-28T20:27:00Z", "content": f"step {i}"}
            if i == 0:
                step.update(source="USER_EXPLICIT", type="USER_INPUT",
                            content="<USER_REQUEST>\nadd a health endpoint\n</USER_REQUEST>")
            f.write(json.dumps(step) + "\n")


def by_key(turns: list[Turn]) -> dict[str, Turn]:
    return {t.key: t for t in turns}


def read_all(path: Path, carry: dict | None = None, start: int = 0):
    return antigravity.read(path, start, carry or {}, BIG)


# -- one entry per conversation --------------------------------------------

def test_one_turn_per_conversation_with_its_first_prompt_workspace_and_title(isolated_home: Path):
    path = write_history(isolated_home, [
        line("add a health endpoint to the API", T0),  # no id yet: the conversation's first prompt
        line("now write tests for it", T0 + 60, conv=C1),
        line("/model", T0 + 70, conv=C1, kind="slash_command"),
        line("ls -la", T0 + 80, conv=C1, kind="shell"),
        line("build the landing page", T0 + 100, workspace=OTHER_WS),
        line("make the header sticky", T0 + 200, workspace=OTHER_WS, conv=C2),
        line("and run the linter", T0 + 300, conv=C1),
    ])
    brain = cli(isolated_home) / "brain" / C1
    write_steps(isolated_home, C1, 7)
    (brain / "task.md").write_text("# Health endpoint for the API\n\n- [x] add route\n- [ ] tests\n")

    reading = read_all(path)

    assert [t.session_id for t in reading.turns] == [C1, C2]
    first, second = reading.turns
    assert first.turn_id == C1 and first.harness == "antigravity"
    assert first.prompt == "add a health endpoint to the API"
    assert first.cwd == WS
    assert first.started == first.ended == T0
    assert first.title == "Health endpoint for the API"
    assert first.closed and first.always_bank and first.offset == 0
    assert "- Steps: 7 (agent transcript)" in first.result
    assert "- Prompts: 3" in first.result  # the slash command and the shell command are not prompts
    assert "- Last activity: 2026-05-28T20:31:40.000Z" in first.result
    assert first.result.endswith("Prompts:\n- add a health endpoint to the API\n- now write tests for it\n"
                                 "- and run the linter")
    assert second.prompt == "build the landing page" and second.cwd == OTHER_WS
    assert second.title is None
    assert "- Steps: 2 (prompts; no readable agent transcript)" in second.result
    assert reading.at_eof and reading.end == path.stat().st_size and reading.bad_lines == 0
    assert reading.session is None


def test_step_count_falls_back_to_the_truncated_transcript(isolated_home: Path):
    path = write_history(isolated_home, [line("hello", T0, conv=C1)])
    write_steps(isolated_home, C1, 4, name="transcript.jsonl")
    assert "- Steps: 4 (agent transcript)" in read_all(path).turns[0].result


def test_only_the_last_20_prompts_are_listed(isolated_home: Path):
    path = write_history(isolated_home, [line(f"prompt number {i}", T0 + i, conv=C1) for i in range(1, 26)])
    turn = read_all(path).turns[0]
    assert turn.prompt == "prompt number 1"
    assert "Last 20 of 25 prompts:" in turn.result
    listed = [ln[2:] for ln in turn.result.splitlines() if ln.startswith("- prompt number")]
    assert listed == [f"prompt number {i}" for i in range(6, 26)]


def test_a_long_prompt_is_cut_in_the_list_and_says_so(isolated_home: Path):
    path = write_history(isolated_home, [line("x" * 1000, T0, conv=C1)])
    turn = read_all(path).turns[0]
    assert turn.prompt == "x" * 1000
    assert "x" * 300 + "…[cut: 700 more characters]" in turn.result


# -- the revision ------------------------------------------------------------

def test_revision_changes_with_a_new_prompt_or_more_steps_and_not_otherwise(isolated_home: Path):
    path = write_history(isolated_home, [line("start", T0, conv=C1), line("other", T0 + 5, OTHER_WS, conv=C2)])
    write_steps(isolated_home, C1, 3)
    first = read_all(path)
    base = by_key(first.turns)[f"antigravity:{C1}:{C1}"].revision

    again = by_key(read_all(path).turns)[f"antigravity:{C1}:{C1}"]
    assert again.revision == base
    (cli(isolated_home) / "brain" / C1 / "task.md").write_text("# A new title\n")
    assert by_key(read_all(path).turns)[f"antigravity:{C1}:{C1}"].revision == base

    write_steps(isolated_home, C1, 2)  # the agent worked on
    more_steps = by_key(read_all(path).turns)[f"antigravity:{C1}:{C1}"]
    assert "- Steps: 5 (agent transcript)" in more_steps.result
    assert more_steps.revision != base

    write_history(isolated_home, [line("continue", T0 + 60, conv=C1)], append=True)
    later = antigravity.read(path, first.end, first.carry, BIG)
    assert [t.session_id for t in later.turns] == [C1]  # only the conversation that changed
    assert later.turns[0].revision not in (base, more_steps.revision)
    assert later.turns[0].started == T0 and later.turns[0].prompt == "start"


# -- what is skipped, and how id-less prompts are grouped ----------------------

def test_conversations_without_a_workspace_are_skipped(isolated_home: Path):
    path = write_history(isolated_home, [
        line("no folder at all", T0, workspace=None, conv=C2),
        line("empty folder", T0 + 1, workspace="", conv=C2),
        line("no id and no folder", T0 + 2, workspace=None),
        line("kept", T0 + 3, conv=C1),
    ])
    assert [t.session_id for t in read_all(path).turns] == [C1]


def test_a_first_prompt_waits_for_its_conversation_id_across_reads(isolated_home: Path):
    path = write_history(isolated_home, [line("first, before the id exists", T0)])
    first = read_all(path)
    assert first.turns == [] and first.end == path.stat().st_size

    write_history(isolated_home, [line("elsewhere", T0 + 10, OTHER_WS, conv=C2),
                                  line("second", T0 + 20, conv=C1)], append=True)
    second = antigravity.read(path, first.end, first.carry, BIG)
    turn = by_key(second.turns)[f"antigravity:{C1}:{C1}"]
    assert turn.prompt == "first, before the id exists" and turn.started == T0
    assert "- Prompts: 2" in turn.result


def test_lone_prompts_without_an_id_group_by_workspace_and_day(isolated_home: Path):
    path = write_history(isolated_home, [
        line("earlier conversation", T0 - 100, conv=C1),
        line("one-shot question", T0),
        line("another one-shot", T0 + 30),  # settles the first: it did not open a conversation
        line("existing conversation", T0 + 40, conv=C1),  # settles the second the same way
    ])
    turns = read_all(path).turns
    loose = [t for t in turns if t.session_id.startswith("loose-2026-05-28-")]
    assert len(loose) == 1
    assert loose[0].prompt == "one-shot question" and loose[0].cwd == WS and loose[0].title is None
    assert "- Prompts: 2" in loose[0].result
    conv = by_key(turns)[f"antigravity:{C1}:{C1}"]
    assert conv.prompt == "earlier conversation" and "- Prompts: 2" in conv.result


def test_a_prompt_waiting_too_long_goes_to_the_loose_group(isolated_home: Path):
    path = write_history(isolated_home, [
        line("asked and left", T0),
        line("next morning, new conversation", T0 + 20 * 3600, conv=C1),
    ])
    turns = read_all(path).turns
    assert [t.prompt for t in turns] == ["asked and left", "next morning, new conversation"]
    assert turns[0].session_id.startswith("loose-")


# -- incremental reading and robustness ---------------------------------------

def _sample_history(home: Path) -> Path:
    write_steps(home, C1, 5)
    return write_history(home, [
        line("first", T0),
        line("second", T0 + 10, conv=C1),
        line("lone", T0 + 20, OTHER_WS),
        line("/clear", T0 + 25, OTHER_WS, kind="slash_command"),
        line("site work", T0 + 30, OTHER_WS, conv=C2),
        line("third", T0 + 40, conv=C1),
        line("dangling", T0 + 50),
    ])


def test_incremental_reads_equal_one_read(isolated_home: Path):
    path = _sample_history(isolated_home)
    whole = read_all(path)

    carry: dict = {}
    start = 0
    latest: dict[str, Turn] = {}
    while True:
        part = antigravity.read(path, start, carry, 0)  # budget 0: one line per read
        latest.update(by_key(part.turns))
        assert part.end > start or part.at_eof
        carry, start = part.carry, part.end
        if part.at_eof:
            break
    assert start == whole.end
    assert carry == whole.carry
    assert latest == by_key(whole.turns)
    assert json.loads(json.dumps(carry)) == carry  # the carry is JSON-able


def test_a_partial_last_line_is_left_for_the_next_read(isolated_home: Path):
    path = write_history(isolated_home, [line("done", T0, conv=C1)])
    size = path.stat().st_size
    with open(path, "a") as f:
        f.write('{"display": "half wri')
    reading = read_all(path)
    assert reading.end == size and [t.prompt for t in reading.turns] == ["done"]


def test_garbage_lines_are_counted_and_skipped(isolated_home: Path):
    path = cli(isolated_home) / "history.jsonl"
    good = json.dumps(line("real prompt", T0, conv=C1)).encode()
    path.write_bytes(b"\xff\xfe not json\n[1, 2]\n{\"display\": 5}\n" + good + b"\n\n")
    reading = read_all(path)
    assert [t.prompt for t in reading.turns] == ["real prompt"]
    assert reading.bad_lines == 2  # the non-JSON line and the array


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
_entry = st.fixed_dictionaries({}, optional={
    "display": st.text() | _json, "timestamp": st.integers() | st.floats() | st.text() | _json,
    "workspace": st.sampled_from([WS, OTHER_WS, "", "file:///x/y%20z"]) | _json,
    "conversationId": st.sampled_from([C1, C2, "..", "loose-x", "a/b"]) | _json,
    "type": st.sampled_from(["slash_command", "shell", "prompt"]) | _json,
})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(_entry.map(lambda d: json.dumps(d).encode()), st.binary(max_size=40)), max_size=12),
       st.integers(min_value=0, max_value=200))
def test_garbage_never_raises(isolated_home: Path, raw_lines: list[bytes], budget: int):
    path = cli(isolated_home) / "history.jsonl"
    path.write_bytes(b"\n".join(raw_lines))
    carry: dict = {}
    start = 0
    for _ in range(path.read_bytes().count(b"\n") + 2):  # a line at least per read; an item may hold several
        reading = antigravity.read(path, start, carry, budget)
        for turn in reading.turns:
            assert turn.cwd and turn.closed and turn.revision
        json.dumps(reading.carry)
        carry, start = reading.carry, reading.end
        if reading.at_eof:
            break
    assert reading.at_eof


# -- where things are, and what cannot be read --------------------------------

def test_the_history_is_the_transcript_and_the_harness_is_detected(isolated_home: Path, locs):
    assert antigravity.home(locs) == isolated_home / ".gemini"
    assert list(antigravity.iter_transcripts(locs)) == []
    path = write_history(isolated_home, [line("hi", T0, conv=C1)])
    assert antigravity.detect(locs)
    assert list(antigravity.iter_transcripts(locs)) == [path]


def test_unreadable_reports_the_encrypted_ide_conversations(isolated_home: Path, locs):
    assert antigravity.unreadable(locs) is None
    conversations = isolated_home / ".gemini" / "antigravity" / "conversations"
    conversations.mkdir(parents=True)
    for name in ("a.pb", "b.pb", "c.pb", "notes.txt"):
        (conversations / name).write_bytes(b"\x0a\x03abc")
    assert antigravity.unreadable(locs) == (
        "3 IDE conversations are encrypted protobuf (~/.gemini/antigravity/conversations/*.pb): not read")
