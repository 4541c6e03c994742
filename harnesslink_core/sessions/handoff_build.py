"""The text of a handoff: where a session stood, for the next session of any harness in its folder.

Sections, whole or dropped under the budget like the brief's (`brief.assemble`):
the source session (harness, id, title, how to resume it natively); its state file
(todos with their status, plan, last checkpoints); its last few finished turns
(title, what was done, an excerpt of the answer, the bank entry); the turn still
open, if any; and where the full entries are. Everything taken from a transcript
is redacted and neutralised like a bank entry.

The turns come from the END of the transcript, read with the harness's own reader
in a window that grows only until it holds a prompt.
"""

from __future__ import annotations

import json
import shlex
import sqlite3
import time
from collections import Counter
from pathlib import Path

from ..fastsqlite import connect
from ..harnesses import registry
from ..model import Reading, StateUpdate, Turn
from ..paths import Locations
from ..recall.brief import DEFAULT_BUDGET, Section, assemble, build_brief
from ..recall.framing import cut, neutralise, one_line
from ..redact import redact, redact_value
from ..store import state
from ..store.entries import split_frontmatter
from ..store.scope import project_dir, project_slug
from .base import Session, source
from .handoff import brief_budget

BUDGET = 3500  # with the brief (<= 6,000) it stays under Claude Code's 10,000-character hook cap
LAST_TURNS = 3
STATE_CHARS = 1600
ANSWER_CHARS = 360
WINDOW = 2 * 1024 * 1024
WINDOW_CAP = 32 * 1024 * 1024
STATE_READ_CAP = 8 * 1024 * 1024  # without a state file, fold the states of a transcript up to this size


def build(locs: Locations, session: Session, target: str, budget: int = BUDGET) -> str:
    """The framed handoff block for `target` ("" if nothing fits the budget)."""
    reading = tail_reading(session)
    turns = [t for t in reading.turns if t.prompt.strip()]
    statuses = _ledger_status(locs, [t.key for t in turns])
    open_turn = turns[-1] if turns and _is_open(turns[-1], statuses) else None
    finished = [t for t in turns if t is not open_turn and statuses.get(t.key, ("", ""))[0] != "skipped"]
    sections = [_source_section(session, target)]
    sections += _state_section(locs, session)
    if finished:
        sections.append(_turns_section(finished[-LAST_TURNS:], statuses))
    if open_turn is not None:
        sections.append(_open_section(open_turn))
    sections.append(_where_section(locs, session))
    return assemble(sections, budget, project=project_slug(session.cwd), kind="handoff").text


def tail_reading(session: Session) -> Reading:
    """The harness reader's view of the transcript's end: a window grown until it holds a turn."""
    reader = registry.get(session.harness)
    window = WINDOW
    while True:
        start = _line_start(session.path, max(0, session.size - window))
        reading = reader.read(session.path, start, {}, 1 << 60)
        if reading.turns or start == 0 or window >= WINDOW_CAP:
            return reading
        window *= 4


def _line_start(path: Path, offset: int) -> int:
    if offset <= 0:
        return 0
    with open(path, "rb") as f:
        f.seek(offset - 1)
        f.readline()
        return f.tell()


def _is_open(turn: Turn, statuses: dict[str, tuple[str, str]]) -> bool:
    if statuses.get(turn.key, ("", ""))[0] in ("banked", "skipped"):
        return False
    return turn.pending_tools > 0 or (turn.needs_end_marker and not turn.closed) or not turn.result.strip()


def _ledger_status(locs: Locations, keys: list[str]) -> dict[str, tuple[str, str]]:
    """turn_key -> (status, entry path) for the turns the ledger knows, read-only."""
    if not keys or not locs.ledger_file.exists():
        return {}
    try:
        db = connect(str(locs.ledger_file), read_only=True, timeout=2)
    except sqlite3.Error:
        return {}
    try:
        marks = ",".join("?" * len(keys))
        rows = db.execute(f"SELECT turn_key, status, entry FROM turns WHERE turn_key IN ({marks})", keys).fetchall()
        return {key: (status, entry or "") for key, status, entry in rows}
    except sqlite3.Error:
        return {}
    finally:
        db.close()


# --- sections -------------------------------------------------------------------


def _clean(text: str, limit: int) -> str:
    return neutralise(cut(redact(text), limit))


def _when(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(ts)) if ts else "undated"


def native_command(session: Session) -> str:
    argv = source(session.harness).resume_argv(session)
    return f"cd {shlex.quote(session.cwd)} && {shlex.join(argv)}"


def _source_section(session: Session, target: str) -> Section:
    title = neutralise(one_line(redact(session.title or "(no prompt)"), 120))
    lines = [
        f"- From: {session.harness} session {session.session_id}" + (" (same harness)" if target == session.harness
                                                                     else f", now continued in {target}"),
        f"- Started with: {title}",
        f"- Last active: {_when(session.last_activity)}; about {session.replay_tokens:,} tokens of context",
        f"- Folder: {neutralise(session.cwd)}",
        f"- The original can still be resumed natively: `{neutralise(native_command(session))}`",
    ]
    return Section("Handed over from", "\n".join(lines), str(session.path))


def _state_section(locs: Locations, session: Session) -> list[Section]:
    folder = project_dir(locs, project_slug(session.cwd))
    path = folder / "state" / state.file_name(session.harness, session.session_id) if folder else None
    body = ""
    if path is not None:
        try:
            body = split_frontmatter(path.read_text(encoding="utf-8"))[1].strip()
        except (OSError, UnicodeDecodeError):
            body = ""
    if not body:
        body = _computed_state(session)
    if not body:
        return []
    where = str(path) if path is not None and path.exists() else str(session.path)
    return [Section("Saved state (todos, plan, checkpoints)", _clean(body, STATE_CHARS), where)]


def _computed_state(session: Session) -> str:
    """The state a pass would have written, folded from the transcript (when no state file exists)."""
    if session.size > STATE_READ_CAP:
        return ""
    reading = registry.get(session.harness).read(session.path, 0, {}, 1 << 60)
    updates = [u for u in reading.states if u.kind in ("todos", "plan", "compaction")]
    updates += [StateUpdate(at=t.ended, kind="turn", note=one_line(redact(t.prompt), 80))
                for t in reading.turns if t.result.strip() or t.actions]
    if not updates:
        return ""
    folded = state.apply({}, updates)
    return split_frontmatter(state.render(session.harness, session.session_id, session.cwd, folded))[1].strip()


def _did(turn: Turn) -> str:
    if not turn.actions:
        return "no tool calls"
    counts = Counter(a.tool for a in turn.actions)
    summary = ", ".join(f"{tool} ×{n}" if n > 1 else tool for tool, n in counts.most_common(6))
    last = turn.actions[-1]
    try:  # the values redacted before they are serialised, and before the line is cut
        shown = json.dumps(redact_value(last.input), ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        shown = redact(str(last.input))
    return f"{summary}; last: {last.tool} {one_line(shown, 140)}"


def _turns_section(turns: list[Turn], statuses: dict[str, tuple[str, str]]) -> Section:
    blocks = []
    for turn in turns:
        lines = [f"- {_when(turn.ended)} — {_clean(one_line(redact(turn.prompt), 100), 110)}"]
        lines.append(f"  - Did: {_clean(_did(turn), 260)}")
        if turn.result.strip():
            lines.append(f"  - Answer: {_clean(one_line(redact(turn.result), ANSWER_CHARS), ANSWER_CHARS + 20)}")
        entry = statuses.get(turn.key, ("", ""))[1]
        if entry:
            lines.append(f"  - Full entry: {neutralise(entry)}")
        blocks.append("\n".join(lines))
    name = "Last turn" if len(turns) == 1 else f"Last {len(turns)} turns"
    return Section(f"{name}, oldest first", "\n".join(blocks), "the bank entries and the transcript")


def _open_section(turn: Turn) -> Section:
    lines = [f"- Prompt: {_clean(one_line(turn.prompt, 400), 420)}", f"- Done so far: {_clean(_did(turn), 260)}"]
    if turn.pending_tools:
        lines.append(f"- {turn.pending_tools} tool call(s) were still waiting for their result")
    if turn.result.strip():
        lines.append(f"- Last words: {_clean(one_line(turn.result, 300), 320)}")
    return Section("Turn still open (not finished when the session stopped)", "\n".join(lines),
                   "the end of the transcript")


def _where_section(locs: Locations, session: Session) -> Section:
    folder = project_dir(locs, project_slug(session.cwd))
    lines = []
    if folder is not None:
        lines.append(f"- Bank entries of this project: {folder / 'bank'} (`harnesslink recall <words>` searches them)")
    lines.append(f"- The whole transcript: {session.path}")
    return Section("Where to find the full entries", neutralise("\n".join(lines)), str(session.path))


def fresh_tokens(locs: Locations, session: Session, target: str, handoff_text: str) -> int:
    """What a fresh session would start with: the brief plus the handoff, at chars/4."""
    brief = build_brief(locs, session.cwd, target, budget=brief_budget(handoff_text, DEFAULT_BUDGET))
    return -(-(len(brief.text) + len(handoff_text)) // 4)
