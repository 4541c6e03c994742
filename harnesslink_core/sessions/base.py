"""A project's sessions across harnesses, what resuming each would replay, and how to resume it.

One module per harness (`harnesses/<id>/sessions.py`; pi's and omp's share `harnesses/pi_family/sessions.py`)
behind one small interface, the `SessionSource` protocol below:

- `transcripts(locs, cwd)`: candidate transcript files for a folder (cheap: a
  folder listing plus, where the folder name does not say, a few KB of each head);
- `describe(path)`: session id, folder, title (the first prompt, from the head)
  and the replay estimate (from the tail);
- `resume_argv(session)` / `fresh_argv()`: the harness's own commands.

The replay estimate follows research/mcp-and-resume.md §5: the active chain
since the last compaction, the newest usage figure on it, plus ceil(chars/4)
for each message after it. Transcripts are read from the END, in a window that
grows only until the estimate is found (`estimate_from_tail`), so listing
sessions never reads a whole 100 MB transcript.
"""

from __future__ import annotations

import importlib
import os
import re
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..fastsqlite import connect
from ..harnesses import registry
from ..harnesses.base import decode, iter_lines
from ..paths import Locations

HARNESSES = registry.WIRED  # a read-only harness has no session to resume
BRIEF_THRESHOLD = 50_000  # tokens: at or above, a fresh session with the handoff is offered
HEAD_BYTES = 1024 * 1024  # how far into a transcript we look for its first prompt
TAIL_START = 256 * 1024  # the first tail window; it grows x4 until the estimate is found
TAIL_MAX = 32 * 1024 * 1024  # never read more than this of one transcript to estimate it
_METADATA_KEYS = {
    "id", "type", "role", "call_id", "status", "uuid", "parentUuid", "timestamp", "encrypted_content",
    "signature", "toolCallId", "model", "provider", "api", "stopReason", "usage",
}


@dataclass
class Estimate:
    tokens: int
    basis: str  # "usage" (a usage figure plus later text), "compaction" (from the summary), "text" (chars/4 only)
    partial: bool = False  # the chain ran past the most we read: the real figure may be higher


@dataclass
class Session:
    harness: str
    session_id: str
    cwd: str
    path: Path
    title: str
    last_activity: float  # epoch seconds (the transcript's mtime)
    size: int  # bytes
    replay: Estimate = field(default_factory=lambda: Estimate(0, "text"))
    turns_banked: int = 0

    @property
    def replay_tokens(self) -> int:
        return self.replay.tokens

    @property
    def brief_offered(self) -> bool:
        return self.replay.tokens >= BRIEF_THRESHOLD


class SessionSource(Protocol):
    NAME: str
    EXECUTABLE: str
    MUST_RUN_IN_FOLDER: bool  # the native resume only finds the session from its project folder

    def transcripts(self, locs: Locations, cwd: str) -> Iterator[Path]: ...
    def describe(self, path: Path) -> Session | None: ...
    def resume_argv(self, session: Session) -> list[str]: ...
    def fresh_argv(self) -> list[str]: ...
    def all_transcripts(self, locs: Locations) -> Iterator[Path]: ...
    def id_from_name(self, path: Path) -> str: ...


def source(harness: str) -> SessionSource:
    """The harness's module (`claude-code`: `harnesses/claude_code/sessions.py`), imported by name: each
    imports this module, so an import statement here would close a circle."""
    if harness not in HARNESSES:
        raise KeyError(harness)
    return importlib.import_module(registry.module_name(harness, "sessions"))


# --- the listing ---------------------------------------------------------------


def list_sessions(locs: Locations, cwd: str, *, harnesses: tuple[str, ...] = HARNESSES,
                  limit: int | None = None) -> list[Session]:
    """This folder's sessions, and those of the same repository's other folders on this machine (its
    worktrees and clones: SPEC §11), newest first; only the newest `limit` are read and estimated."""
    cwd = os.path.abspath(cwd)
    folders = [cwd, *repository_folders(locs, cwd)]
    candidates: list[tuple[float, str, Path]] = []
    for harness in harnesses:
        for folder in folders:
            for path in source(harness).transcripts(locs, folder):
                try:
                    candidates.append((path.stat().st_mtime, harness, path))
                except OSError:
                    continue
    candidates.sort(key=lambda c: c[0], reverse=True)
    found: list[Session] = []
    seen: set[Path] = set()
    for _mtime, harness, path in candidates:
        if path in seen:
            continue
        seen.add(path)
        session = _describe(harness, path)
        if session is None or os.path.abspath(session.cwd or "/") not in folders:
            continue
        found.append(session)
        if limit is not None and len(found) >= limit:
            break
    count_banked(locs, found)
    return found


def repository_folders(locs: Locations, cwd: str) -> list[str]:
    """The other folders on this machine that are the same repository as `cwd`: the folders the entries of
    its joined slugs were banked in (the index knows them), that still are that repository."""
    from ..recall import index, query
    from ..store.identity import joined, repository_of
    from ..store.scope import project_slug

    repository = repository_of(cwd)
    slugs = joined(locs, project_slug(cwd), cwd) if repository else []
    if not slugs:
        return []
    try:
        conn = index.connect(locs, create=False)
    except index.IndexUnavailable:
        return []
    try:
        rows = query.folders_of(conn, slugs)
    except index.sqlite3.Error:
        return []
    finally:
        conn.close()
    return sorted({os.path.abspath(c) for _, c in rows if c and os.path.abspath(c) != cwd and os.path.isdir(c)
                   and repository_of(c) == repository})


def find_by_prefix(locs: Locations, prefix: str, harnesses: tuple[str, ...] = HARNESSES) -> list[Session]:
    """Every session, in any folder, whose id starts with `prefix` (file names say the id: no file is opened
    but the matches)."""
    prefix = prefix.strip().lower()
    if not prefix:
        return []
    matches = []
    seen: set[tuple[str, str]] = set()
    for harness in harnesses:
        src = source(harness)
        for path in src.all_transcripts(locs):
            if not src.id_from_name(path).lower().startswith(prefix):
                continue
            session = _describe(harness, path)
            if session is not None and (harness, session.session_id) not in seen:
                seen.add((harness, session.session_id))
                matches.append(session)
    matches.sort(key=lambda s: s.last_activity, reverse=True)
    count_banked(locs, matches)
    return matches


def _describe(harness: str, path: Path) -> Session | None:
    """A transcript's session, or None when it cannot be read as one (written by a newer CLI, damaged, ...)."""
    try:
        return source(harness).describe(path)
    except (OSError, ValueError, TypeError, KeyError, AttributeError, RecursionError):
        return None


def count_banked(locs: Locations, sessions: list[Session]) -> None:
    """Fill `turns_banked` from the ledger, read-only (no ledger yet: zero)."""
    if not sessions or not locs.ledger_file.exists():
        return
    try:
        db = connect(str(locs.ledger_file), read_only=True, timeout=2)
    except sqlite3.Error:
        return
    try:
        for session in sessions:
            key = f"{session.harness}:{session.session_id}:"
            row = db.execute(
                "SELECT count(*) FROM turns WHERE status = 'banked' AND harness = ? AND substr(turn_key, 1, ?) = ?",
                (session.harness, len(key), key),
            ).fetchone()
            session.turns_banked = int(row[0]) if row else 0
    except sqlite3.Error:
        pass
    finally:
        db.close()


# --- reading heads and tails -----------------------------------------------------


def head_records(path: Path, max_bytes: int = HEAD_BYTES) -> Iterator[dict[str, Any]]:
    """Decoded lines from the start of a file, stopping after about `max_bytes`."""
    try:
        f = open(path, "rb")
    except OSError:
        return
    with f:
        for offset, _end, raw in iter_lines(f, 0):
            if offset > max_bytes:
                return
            record = decode(raw)
            if record is not None:
                yield record


def first_line_bytes(path: Path, limit: int = 4096) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read(limit)
    except OSError:
        return b""


def tail_records(path: Path, window: int) -> tuple[list[dict[str, Any]], bool]:
    """Decoded complete lines of the last `window` bytes, and whether that reached the file's start."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            start = max(0, size - window)
            f.seek(start)
            data = f.read(size - start)
    except OSError:
        return [], True
    if start > 0:
        newline = data.find(b"\n")
        data = data[newline + 1:] if newline >= 0 else b""
    lines = data.split(b"\n")
    if lines and lines[-1]:  # a last line without its newline is still being written
        lines = lines[:-1]
    records = [r for r in (decode(line) for line in lines) if r is not None]
    return records, start == 0


Estimator = Callable[[list[dict[str, Any]], bool], Estimate | None]


def estimate_from_tail(path: Path, estimator: Estimator, *, start: int = TAIL_START,
                       cap: int = TAIL_MAX) -> Estimate:
    """Run `estimator` on a tail window that grows until it answers (it returns None for "read more")."""
    window = start
    while True:
        records, whole = tail_records(path, window)
        result = estimator(records, whole or window >= cap)
        if result is not None:
            if window >= cap and not whole and result.basis == "text":
                result.partial = True
            return result
        window *= 4


def tokens_of(value: Any) -> int:
    """ceil(chars/4) of the text in a message: every string in it but ids, types and other metadata."""
    return -(-_chars(value) // 4)


def _chars(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return sum(_chars(v) for k, v in value.items() if k not in _METADATA_KEYS)
    if isinstance(value, list):
        return sum(_chars(v) for v in value)
    return 0


def number(value: Any) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else 0


def one_line(text: str, limit: int = 80) -> str:
    """A session's title: redacted first, then cut (a token cut in two would no longer be recognised)."""
    from ..redact import redact

    text = " ".join(redact(text).split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def uuid_in(name: str) -> str | None:
    found = _UUID.findall(name)
    return found[-1] if found else None
