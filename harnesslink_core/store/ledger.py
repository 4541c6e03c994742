"""The ledger, `harness-autobank.db`: what has been read, what is pending, what is banked.

Read positions live in `files`: where the next read resumes (the first line
of the oldest unsettled turn), where the last read ended, and two digests —
of the file's head and of the bytes just before `read_end` — so a file that
was truncated, rotated, regrown or replaced under the same name is noticed
and read again from the start. Re-reading is always safe: `turns` keys every
turn by its turn_key, and a turn is written only by the pass holding its
reservation. A reservation older than ten minutes belongs to a pass that died
and may be taken over.

Its tables are made and changed by the named migrations of `ledger_schema.py`, which
`open_ledger` applies.
"""

from __future__ import annotations

import os
import time
from collections import namedtuple

from ..fastsqlite import Transaction, connect, sqlite3
from ..safefile import open_append, read_regular_text
from .ledger_schema import MIGRATIONS, migrate  # noqa: F401 - MIGRATIONS: the schema's, named here for its callers

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: the stop hook's pass opens the ledger
if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path
    from typing import Any

    from ..paths import Locations

# json and redact are imported where a row is written or decoded: a pass with nothing new needs neither


def redact(text: str) -> str:
    from .. import redact as module

    return module.redact(text)


def redact_json(text: str) -> str:
    from .. import redact as module

    return module.redact_json(text)


def redact_value(value: Any) -> Any:
    from .. import redact as module

    return module.redact_value(value)

RESERVATION_TTL = 600.0
BUSY_TIMEOUT_MS = 5_000
MAX_ERRORS_KEPT = 500


class FileRecord:
    """A transcript's read position and what the next read needs (see the module docstring).

    The defaults are those of a transcript seen but never opened.
    """

    __slots__ = ("path", "harness", "dev", "ino", "size", "mtime", "read_end", "resume", "head_hash", "anchor_hash",
                 "carry_json", "session_id", "cwd", "excluded", "open_turns", "next_check", "bad_lines")

    def __init__(self, path: str, harness: str, dev: int | None = None, ino: int | None = None,
                 size: int | None = None, mtime: float | None = None, read_end: int | None = None,
                 resume: int = 0, head_hash: str | None = None, anchor_hash: str | None = None,
                 carry_json: str = "{}", session_id: str | None = None, cwd: str | None = None,
                 excluded: str | None = None, open_turns: int = 0, next_check: float | None = None,
                 bad_lines: int = 0) -> None:
        self.path, self.harness, self.dev, self.ino, self.size, self.mtime = path, harness, dev, ino, size, mtime
        self.read_end, self.resume, self.head_hash, self.anchor_hash = read_end, resume, head_hash, anchor_hash
        # decoded only for a file that is read again (a no-op pass skips 10,000 of them)
        self.carry_json = carry_json
        self.session_id, self.cwd, self.excluded = session_id, cwd, excluded
        self.open_turns, self.next_check, self.bad_lines = open_turns, next_check, bad_lines

    def _fields(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FileRecord) and self._fields() == other._fields()

    def __repr__(self) -> str:
        return "FileRecord(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__slots__) + ")"

    def carry(self) -> dict[str, Any]:
        import json

        try:
            value = json.loads(self.carry_json or "{}")
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}


class HarnessRow(namedtuple("HarnessRow", "window_start enabled last_pass backlog")):
    """window_start: the backfill window (SPEC §5), older turns are not banked; enabled; last_pass; backlog."""

    __slots__ = ()


class ErrorRow(namedtuple("ErrorRow", "at path message")):
    __slots__ = ()


class Ledger:
    def __init__(self, db: sqlite3.Connection, path: Path):
        self.db = db
        self.path = path

    def close(self) -> None:
        self.db.close()

    # -- transactions --------------------------------------------------
    def write(self) -> Transaction:
        return Transaction(self.db)

    # -- files ---------------------------------------------------------
    def files(self, harness: str, paths: Iterable[str] | None = None) -> dict[str, FileRecord]:
        """The harness's read positions (only those of `paths`, when given: a stop hook's one transcript)."""
        columns = ("SELECT path, harness, dev, ino, size, mtime, read_end, resume, head_hash, anchor_hash,"
                   " carry, session_id, cwd, excluded, open_turns, next_check, bad_lines FROM files WHERE harness=?")
        if paths is None:
            rows = list(self.db.execute(columns, (harness,)))
        else:
            rows = [row for path in paths for row in self.db.execute(columns + " AND path=?", (harness, path))]
        return {row[0]: FileRecord(*row) for row in rows}  # the SELECT lists the fields in order

    def position(self, path: str) -> tuple[int | None, float | None, int | None] | None:
        """(size, mtime, read end) the ledger last saw of a transcript, or None for one it never saw."""
        row: tuple[int | None, float | None, int | None] | None = self.db.execute(
            "SELECT size, mtime, read_end FROM files WHERE path=?", (path,)).fetchone()
        return row

    def file_totals(self, harness: str, kept_out: str) -> tuple[int, int, int, int]:
        """Over the harness's transcripts: (how many are not banked, how many of those because their
        folder is kept out: an `excluded` that starts with `kept_out`, open turns, lines skipped)."""
        row = self.db.execute(
            "SELECT count(nullif(excluded, '')), count(CASE WHEN substr(excluded, 1, length(?1)) = ?1 THEN 1 END),"
            " total(open_turns), total(bad_lines) FROM files WHERE harness=?2", (kept_out, harness)).fetchone()
        return row[0], row[1], int(row[2]), int(row[3])

    def save_file(self, rec: FileRecord) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO files (path, harness, dev, ino, size, mtime, read_end, resume, head_hash,"
            " anchor_hash, carry, session_id, cwd, excluded, open_turns, next_check, bad_lines, updated)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (rec.path, rec.harness, rec.dev, rec.ino, rec.size, rec.mtime, rec.read_end, rec.resume,
             rec.head_hash, rec.anchor_hash, redact_json(rec.carry_json), rec.session_id, rec.cwd and redact(rec.cwd), rec.excluded,
             rec.open_turns, rec.next_check, rec.bad_lines, time.time()),
        )

    def forget_files(self, paths: Iterable[str]) -> None:
        self.db.executemany("DELETE FROM files WHERE path=?", [(p,) for p in paths])

    def reset_positions(self, harness: str) -> None:
        self.db.execute(
            "UPDATE files SET read_end=NULL, resume=0, carry='{}', head_hash=NULL, anchor_hash=NULL,"
            " size=NULL, mtime=NULL, open_turns=0, next_check=NULL"
            " WHERE harness=? AND (excluded IS NULL OR excluded NOT LIKE 'kept out: %')",  # see autobank.KEPT_OUT
            (harness,),
        )

    # -- turns ---------------------------------------------------------
    def turn_status(self, turn_key: str) -> tuple[str, float | None] | None:
        row = self.db.execute("SELECT status, reserved_at FROM turns WHERE turn_key=?", (turn_key,)).fetchone()
        return (row[0], row[1]) if row else None

    def reserve(self, turn_key: str, harness: str, dedupe_id: str | None, owner: str, now: float) -> str:
        """Claim the right to write a turn. Returns "ok", or why not: "done", "busy", "duplicate"."""
        with self.write():
            row = self.db.execute(
                "SELECT status, reserved_at, owner FROM turns WHERE turn_key=?", (turn_key,)
            ).fetchone()
            if row:
                status, reserved_at, holder = row
                if status != "reserved":
                    return "done"
                if (holder != owner and reserved_at is not None and now - reserved_at < RESERVATION_TTL
                        and _holder_alive(holder)):
                    return "busy"
            elif dedupe_id is not None:
                twin = self.db.execute(
                    "SELECT 1 FROM turns WHERE harness=? AND dedupe_id=? AND turn_key!=?",
                    (harness, dedupe_id, turn_key),
                ).fetchone()
                if twin:
                    self.db.execute(
                        "INSERT INTO turns (turn_key, harness, dedupe_id, status, updated) VALUES (?,?,?,?,?)",
                        (turn_key, harness, None, "duplicate", now),
                    )
                    return "duplicate"
            self.db.execute(
                "INSERT OR REPLACE INTO turns (turn_key, harness, dedupe_id, status, owner, reserved_at, updated)"
                " VALUES (?,?,?,?,?,?,?)",
                (turn_key, harness, dedupe_id, "reserved", owner, now, now),
            )
            return "ok"

    def finish(self, turn_key: str, status: str, *, entry: str | None = None, project: str | None = None,
               ended: float | None = None) -> None:
        with self.write():
            self.db.execute(
                "UPDATE turns SET status=?, entry=?, project=?, ended=?, owner=NULL, reserved_at=NULL, updated=?"
                " WHERE turn_key=?",
                (status, entry, project, ended, time.time(), turn_key),
            )

    def record(self, turn_key: str, harness: str, status: str, dedupe_id: str | None = None,
               ended: float | None = None) -> None:
        """Record a turn that is settled without an entry (skipped, dropped), unless already known."""
        with self.write():
            self.db.execute(
                "INSERT OR IGNORE INTO turns (turn_key, harness, dedupe_id, status, ended, updated)"
                " VALUES (?,?,?,?,?,?)",
                (turn_key, harness, dedupe_id, status, ended, time.time()),
            )

    def revision(self, turn_key: str) -> tuple[str | None, str | None]:
        """(entry path, revision) of a banked turn that is rewritten in place."""
        row = self.db.execute("SELECT entry, revision FROM turns WHERE turn_key=? AND status='banked'",
                              (turn_key,)).fetchone()
        return (row[0], row[1]) if row else (None, None)

    def set_revision(self, turn_key: str, revision: str) -> None:
        with self.write():
            self.db.execute("UPDATE turns SET revision=?, updated=? WHERE turn_key=?", (revision, time.time(), turn_key))

    def forget(self, project: str, name: str, turn_key: str | None, entry_id: str | None) -> None:
        """Tombstone a forgotten entry: its turn is never banked again, its file never indexed again."""
        now = time.time()
        with self.write():
            self.db.execute("INSERT OR REPLACE INTO forgotten VALUES (?,?,?,?,?)",
                            (project, name, turn_key or None, entry_id, now))
            if turn_key:
                self.db.execute(
                    "INSERT INTO turns (turn_key, harness, status, entry, project, updated) VALUES (?,?,?,?,?,?)"
                    " ON CONFLICT (turn_key) DO UPDATE SET status='forgotten', entry=NULL, owner=NULL,"
                    " reserved_at=NULL, updated=excluded.updated",
                    (turn_key, turn_key.split(":", 1)[0], "forgotten", None, project, now),
                )

    def counts(self, harness: str) -> dict[str, int]:
        rows = self.db.execute("SELECT status, COUNT(*) FROM turns WHERE harness=? GROUP BY status", (harness,))
        return {status: n for status, n in rows}

    def last_banked(self, harness: str) -> float | None:
        """When the newest turn of this harness was banked (its row's time), or None."""
        row = self.db.execute("SELECT max(updated) FROM turns WHERE harness=? AND status='banked'",
                              (harness,)).fetchone()
        return row[0] if row else None

    # -- harness state -------------------------------------------------
    def harness_row(self, name: str) -> HarnessRow | None:
        row = self.db.execute(
            "SELECT window_start, enabled, last_pass, backlog FROM harnesses WHERE name=?", (name,)
        ).fetchone()
        return HarnessRow(row[0], bool(row[1]), row[2], row[3]) if row else None

    def set_harness(self, name: str, *, window_start: float | None = None, enabled: bool | None = None,
                    last_pass: float | None = None, backlog: int | None = None) -> None:
        with self.write():
            self.db.execute(
                "INSERT OR IGNORE INTO harnesses (name, window_start, enabled) VALUES (?, ?, 1)",
                (name, window_start if window_start is not None else 0.0),
            )
            for column, value in (("window_start", window_start), ("last_pass", last_pass), ("backlog", backlog)):
                if value is not None:
                    self.db.execute(f"UPDATE harnesses SET {column}=? WHERE name=?", (value, name))
            if enabled is not None:
                self.db.execute("UPDATE harnesses SET enabled=? WHERE name=?", (int(enabled), name))

    # -- stop signals --------------------------------------------------
    def note_stop(self, harness: str, session_id: str, at: float) -> None:
        with self.write():
            self.db.execute(
                "INSERT INTO stops VALUES (?,?,?) ON CONFLICT (harness, session_id) DO UPDATE SET at=max(at, excluded.at)",
                (harness, session_id, at),
            )

    def stopped_at(self, harness: str, session_id: str) -> float | None:
        row = self.db.execute(
            "SELECT at FROM stops WHERE harness=? AND session_id=?", (harness, session_id)
        ).fetchone()
        return row[0] if row else None

    # -- injected memory -----------------------------------------------
    def given(self, harness: str, session_id: str) -> dict[str, float]:
        """Every entry the session was given, by the prompt hook or in its brief, with when it first was."""
        rows = self.db.execute(
            "SELECT entry_id, min(at) FROM (SELECT entry_id, at FROM injected WHERE harness=?1 AND session_id=?2"
            " UNION ALL SELECT entry_id, at FROM briefed WHERE harness=?1 AND session_id=?2) GROUP BY entry_id",
            (harness, session_id),
        )
        return dict(rows.fetchall())

    def remember_injected(self, harness: str, session_id: str, ids: Iterable[str], *, in_brief: bool = False) -> None:
        now = time.time()
        with self.write():
            self.db.executemany(
                f"INSERT OR IGNORE INTO {'briefed' if in_brief else 'injected'} VALUES (?,?,?,?)",
                [(harness, session_id, entry_id, now) for entry_id in ids],
            )

    def use_counts(self, *, in_brief: bool = False) -> dict[str, tuple[int, int]]:
        """Per harness: (entries the prompt hook gave its sessions, how many of those the session then
        opened), each (session, entry) once; `in_brief`: the same of what the session-start briefs listed.
        Kept as the pairs are added (`m006_use_counts`), however long the history that records the same is."""
        rows = self.db.execute("SELECT harness, given, opened FROM use_counts WHERE kind=?",
                               ("briefed" if in_brief else "injected",))
        return {harness: (given, opened) for harness, given, opened in rows}

    def note_opened(self, harness: str, session_id: str, entry_ids: Iterable[str], at: float) -> list[str]:
        """Remember that a session opened entries it was given; those not remembered before."""
        new = []
        for entry_id in entry_ids:
            cursor = self.db.execute("INSERT OR IGNORE INTO opened VALUES (?,?,?,?)",
                                     (harness, session_id, entry_id, at))
            if cursor.rowcount:
                new.append(entry_id)
        return new

    # -- session state (state files) -------------------------------------
    def session_state(self, harness: str, session_id: str) -> tuple[str | None, dict[str, Any]]:
        row = self.db.execute(
            "SELECT cwd, state FROM sessions WHERE harness=? AND session_id=?", (harness, session_id)
        ).fetchone()
        if not row:
            return None, {}
        import json

        try:
            return row[0], json.loads(row[1])
        except ValueError:
            return row[0], {}

    def save_session_state(self, harness: str, session_id: str, cwd: str, state: dict[str, Any]) -> None:
        import json

        self.db.execute(
            "INSERT OR REPLACE INTO sessions VALUES (?,?,?,?,?)",
            (harness, session_id, redact(cwd or ""), json.dumps(redact_value(state)), time.time()),
        )

    # -- errors and meta -------------------------------------------------
    def error(self, message: str, harness: str | None = None, path: str | None = None) -> None:
        try:
            with self.write():
                self.db.execute(
                    "INSERT INTO errors (at, harness, path, message) VALUES (?,?,?,?)",
                    (time.time(), harness, path, redact(message)[:2000]),
                )
                self.db.execute(
                    "DELETE FROM errors WHERE id <= (SELECT MAX(id) FROM errors) - ?", (MAX_ERRORS_KEPT,)
                )
        except sqlite3.Error:
            pass

    def errors(self, harness: str | None = None, since: float = 0.0) -> list[ErrorRow]:
        if harness is None:
            rows = self.db.execute("SELECT at, path, message FROM errors WHERE at>=? ORDER BY id", (since,))
        else:
            rows = self.db.execute(
                "SELECT at, path, message FROM errors WHERE harness=? AND at>=? ORDER BY id", (harness, since)
            )
        return [ErrorRow(*row) for row in rows]

    def get_meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        with self.write():
            self.db.execute("INSERT OR REPLACE INTO meta VALUES (?,?)", (key, value))


def open_ledger(locs: Locations) -> Ledger:
    """The one way to open the ledger: creates it, migrates it, and sets it up for several processes."""
    path = locs.ledger_file
    path.parent.mkdir(parents=True, exist_ok=True)
    fresh = not path.exists()
    db = connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    try:
        try:
            db.execute("PRAGMA journal_mode=WAL")
        except sqlite3.OperationalError:
            pass  # another process is switching it; WAL sticks once set
        db.execute("PRAGMA synchronous=NORMAL")
        migrate(db)
    except BaseException:
        db.close()
        raise
    ledger = Ledger(db, path)
    if fresh:  # a new ledger (first run, or a damaged one moved aside): what was forgotten stays forgotten
        restore_tombstones(locs, ledger)
    return ledger


def owner_id() -> str:
    return f"{os.getpid()}@{os.uname().nodename}:{time.monotonic_ns()}"


def _holder_alive(holder: str | None) -> bool:
    """Whether the pass that holds a reservation may still be writing it.

    A pass of this very process has returned (passes are serialised by the pass lock) and a
    process of this machine that is gone (killed, crashed) writes nothing more: their
    reservations are taken over at once instead of after RESERVATION_TTL."""
    pid_text, _, rest = (holder or "").partition("@")
    node = rest.rsplit(":", 1)[0]
    if not pid_text.isdigit() or node != os.uname().nodename:
        return True
    pid = int(pid_text)
    if pid == os.getpid():
        return False
    from .lock import process_gone

    return not process_gone(pid)


# --- tombstones: what `harnesslink forget` took back (SPEC §4) ---------------------------

TOMBSTONES_COPY = "forgotten.jsonl"  # in the agent dir, beside the ledger (never uploaded)
TOMBSTONES_COPY_BYTES = 64 * 1024 * 1024


class Tombstones:
    """Forgotten entries, each in its own project: by `<slug>/<file name>` and by `<slug>/<turn_key>`
    (a copy of the same turn in another project is that project's, and stays)."""

    __slots__ = ("names", "keys")

    def __init__(self, names: set[str], keys: set[str]) -> None:
        self.names = names
        self.keys = keys

    def __bool__(self) -> bool:
        return bool(self.names)

    def covers(self, project: str, name: str, turn_key: str = "") -> bool:
        return f"{project}/{name}" in self.names or (bool(turn_key) and f"{project}/{turn_key}" in self.keys)


def read_only_ledger(locs: Locations) -> Ledger | None:
    """The ledger opened for reading alone (nothing made or migrated), or None when there is none yet."""
    path = str(locs.ledger_file)
    if not os.path.exists(path):
        return None
    return Ledger(connect(path, read_only=True, timeout=2.0), locs.ledger_file)


def tombstones(locs: Locations) -> Tombstones:
    """Read the tombstones (read-only; an absent or unreadable ledger has none)."""
    path = str(locs.ledger_file)
    if not os.path.exists(path):
        return Tombstones(set(), set())
    try:
        db = connect(path, read_only=True, timeout=1.0)
        try:
            rows = db.execute("SELECT project, name, turn_key FROM forgotten").fetchall()
        finally:
            db.close()
    except sqlite3.Error:
        return Tombstones(set(), set())
    return Tombstones({f"{p}/{n}" for p, n, _ in rows}, {f"{p}/{k}" for p, _, k in rows if k})


def keep_tombstone_copy(locs: Locations, rows: Iterable[tuple[str, str, str, str]]) -> None:
    """Append tombstones (project, file name, turn_key, entry id) to `forgotten.jsonl`, so a ledger
    that is lost or replaced gets them back."""
    import json

    lines = "".join(json.dumps({"project": project, "name": name, "turn_key": turn_key, "id": entry_id,
                                "at": time.time()}) + "\n" for project, name, turn_key, entry_id in rows)
    path = os.path.join(str(locs.agent_dir), TOMBSTONES_COPY)
    fd = open_append(path)
    if fd is None:
        raise OSError(f"{path} is not a regular file: the tombstones' copy is not kept")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(lines)
        f.flush()
        os.fsync(f.fileno())


def restore_tombstones(locs: Locations, ledger: Ledger) -> int:
    """Tombstones from `forgotten.jsonl` into a new ledger; how many."""
    import json

    text = read_regular_text(os.path.join(str(locs.agent_dir), TOMBSTONES_COPY), TOMBSTONES_COPY_BYTES)
    if text is None:
        return 0  # none, or not a regular file (a FIFO would hold the pass that makes the ledger)
    rows = []
    for line in text.splitlines():
        try:
            row = json.loads(line)
            rows.append((str(row["project"]), str(row["name"]), str(row.get("turn_key") or ""),
                         str(row.get("id") or "")))
        except (ValueError, KeyError, TypeError):
            continue  # a line cut short by a crash
    with ledger.write():
        for project, name, turn_key, entry_id in rows:
            ledger.forget(project, name, turn_key, entry_id)
    return len(rows)
