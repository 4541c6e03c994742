"""Codex sessions: rollouts under `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<ts>-<uuid>.jsonl`.

The folder is not in the path, so each rollout's first line (`session_meta`, whose
`cwd` comes within its first few hundred bytes) says which project it belongs to.
Resume: `codex resume <id>` works from any folder. A resume replays the newest
`compacted` line's `replacement_history`, then every later `response_item`; the
context size is `info.last_token_usage.total_tokens` of the newest `token_count`
event with `info` (mcp-and-resume.md §2).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...paths import Locations
from ...sessions.base import (
    Estimate,
    Session,
    estimate_from_tail,
    first_line_bytes,
    head_records,
    number,
    one_line,
    tokens_of,
    uuid_in,
)
from . import reader

NAME = reader.NAME
EXECUTABLE = "codex"
MUST_RUN_IN_FOLDER = False
_CWD = re.compile(rb'"cwd"\s*:\s*("(?:[^"\\]|\\.)*")')


def all_transcripts(locs: Locations) -> Iterator[Path]:
    for entry in reader.iter_transcripts(locs):
        yield Path(entry)


def transcripts(locs: Locations, cwd: str) -> Iterator[Path]:
    for path in all_transcripts(locs):
        if _head_cwd(path) == cwd:
            yield path


def _head_cwd(path: Path) -> str | None:
    head = first_line_bytes(path, 8192)
    first = head.split(b"\n", 1)[0]
    found = _CWD.search(first)
    if found is None and len(first) == len(head):  # a long first line: look further
        first = first_line_bytes(path, 1024 * 1024).split(b"\n", 1)[0]
        found = _CWD.search(first)
    if found is None:
        return None
    try:
        value = json.loads(found.group(1))
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def id_from_name(path: Path) -> str:
    return uuid_in(path.name) or path.stem


def describe(path: Path) -> Session | None:
    try:
        st = path.stat()
    except OSError:
        return None
    facts: dict[str, Any] = {}
    title = ""
    for record in head_records(path):
        if reader._learn_session(record, facts):
            if facts.get("excluded"):
                return None  # a subagent, review or compaction thread: nobody resumes those
            continue
        title = _prompt(record)
        if title:
            break
    session_id = facts.get("session_id")
    if not session_id:
        return None
    return Session(NAME, session_id, facts.get("cwd") or "", path, one_line(title), st.st_mtime, st.st_size,
                   estimate(path))


def _prompt(record: dict[str, Any]) -> str:
    payload = record.get("payload")
    if "payload" not in record:  # the pre-envelope format: bare response items
        payload, record = record, {"type": "response_item"}
    if not isinstance(payload, dict):
        return ""
    if record.get("type") == "event_msg" and payload.get("type") == "user_message":
        text = reader.strip_injected(reader._text(payload.get("message")))
    elif record.get("type") == "response_item" and payload.get("type") == "message" and payload.get("role") == "user":
        text = reader.strip_injected(reader.text_of(payload.get("content")))
    else:
        return ""
    return "" if reader._is_context(text) else text.strip()


def estimate(path: Path) -> Estimate:
    return estimate_from_tail(path, estimate_records)


def estimate_records(records: list[dict[str, Any]], final: bool) -> Estimate | None:
    """Back from the end: later items count chars/4 until a usage figure or a compaction."""
    tokens = 0
    for record in reversed(records):
        kind = record.get("type")
        payload = record.get("payload")
        if "payload" not in record and isinstance(kind, str):
            kind, payload = "response_item", record  # the pre-envelope format: bare response items
        if not isinstance(payload, dict):
            continue
        if kind == "event_msg" and payload.get("type") == "token_count" and isinstance(payload.get("info"), dict):
            last = payload["info"].get("last_token_usage")
            used = number(last.get("total_tokens")) if isinstance(last, dict) else 0
            if used:
                return Estimate(used + tokens, "usage")
        elif kind == "compacted":
            history = payload.get("replacement_history")
            base = tokens_of(history) if history else tokens_of(payload.get("message"))
            return Estimate(base + tokens, "compaction")
        elif kind == "response_item":
            tokens += tokens_of(payload)
    return Estimate(tokens, "text") if final else None


def resume_argv(session: Session) -> list[str]:
    return [EXECUTABLE, "resume", session.session_id]


def fresh_argv() -> list[str]:
    return [EXECUTABLE]
