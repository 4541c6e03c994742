"""Which entries a session has already been given, so no prompt gets them twice.

Kept in the ledger's `injected` table, but read and written here over one small
connection: opening the ledger itself (migrations, dataclasses, pathlib) costs
more than the prompt hook's whole search. The first write to a ledger that does
not exist yet goes through `ledger.open_ledger`, which creates it.
"""

from __future__ import annotations

import os
import time

from ..fastsqlite import Transaction, connect, sqlite3, usable  # the C module alone, cheaply (on every prompt)
from ..paths import Locations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the prompt hook's path)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeVar

    Read = TypeVar("Read")

BUSY_MS = 1000


class Given:
    """What one session was given: read before the search, added to after it.

    The read goes through a read-only connection closed at once: the prompt hook forks once its
    answer is out (`hooks.process_main`), and SQLite must not carry a connection across a fork; the
    child would share the parent's lock bookkeeping without its locks, and a reader elsewhere could
    then checkpoint and delete the WAL under the child's write. A read-only close costs nothing
    (no checkpoint). The write opens its own connection, in whichever process makes it."""

    def __init__(self, locs: Locations, harness: str, session_id: str) -> None:
        self.locs, self.harness, self.session_id = locs, harness, session_id
        self._db: sqlite3.Connection | None = None

    def ids(self) -> set[str]:
        if not self.session_id or not self.ready():
            return set()
        db = connect(self.locs.ledger_path, read_only=True, timeout=BUSY_MS / 1000)
        try:
            rows = db.execute("SELECT entry_id FROM injected WHERE harness=? AND session_id=?",
                              (self.harness, self.session_id))
            return {row[0] for row in rows}
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):  # a ledger still being created
                return set()
            raise
        finally:
            db.close()

    def ready(self) -> bool:
        """Whether the ledger is there to write to (else `add` creates it, which takes longer; one that is
        not a regular file is never opened, and `add` fails on it)."""
        return usable(self.locs.ledger_path)

    def add(self, ids: list[str], *, in_brief: bool = False) -> None:
        """Remember that the session was given `ids`: by the prompt hook, or listed in its brief
        (`briefed`: a later open counts, but the prompt hook may still give the entry itself)."""
        if not self.session_id or not ids:
            return
        table = "briefed" if in_brief else "injected"
        rows = [(self.harness, self.session_id, entry_id, time.time()) for entry_id in ids]
        if self.ready():
            if self._db is None:
                self._db = connect(self.locs.ledger_path, timeout=BUSY_MS / 1000, isolation_level=None)
            db = self._db
            try:
                db.execute("PRAGMA synchronous=NORMAL")  # as the ledger runs it (WAL): one sync per checkpoint
                with Transaction(db):
                    db.executemany(f"INSERT OR IGNORE INTO {table} VALUES (?,?,?,?)", rows)
                self._record(ids, in_brief)
                return
            except sqlite3.OperationalError as exc:
                if "no such table" not in str(exc):
                    raise
        from ..store.ledger import open_ledger

        ledger = open_ledger(self.locs)
        try:
            ledger.remember_injected(self.harness, self.session_id, ids, in_brief=in_brief)
        finally:
            ledger.close()
        self._record(ids, in_brief)

    def _record(self, ids: list[str], in_brief: bool) -> None:
        """The history's `given` records, once the ledger has them (after the answer: see `hooks.prompt_context`);
        what a brief listed says so in its detail."""
        from . import history

        history.append(self.locs, [history.event("given", f"hook:{self.harness}", entry=entry_id,
                                                 session=self.session_id, detail=history.BRIEF if in_brief else "")
                                   for entry_id in ids])

    def close(self) -> None:
        """Close the writing connection (a process about to exit may leave it: see `hooks.process_main`)."""
        if self._db is not None:
            self._db.close()
            self._db = None


def injected_ids(locs: Locations, harness: str, session_id: str) -> set[str]:
    given = Given(locs, harness, session_id)
    try:
        return given.ids()
    finally:
        given.close()


def opened_log(locs: Locations) -> dict[tuple[str, str, str], float]:
    """(harness, session id, entry id) -> when that session opened an entry it was given (the pass
    records it: memory_get, a read of its file); read-only, {} when nothing was ever opened."""
    return _reading(locs, lambda db: {(h, s, e): at for h, s, e, at in
                                      db.execute("SELECT harness, session_id, entry_id, at FROM opened")}, {})


def given_log(locs: Locations, *, limit: int = 5000) -> list[tuple[str, str, str, float]]:
    """(harness, session id, entry id, when) of what the prompt hook gave each session, newest first;
    read-only (`harnesslink view`), [] when nothing was ever given."""
    return _reading(locs, lambda db: db.execute("SELECT harness, session_id, entry_id, at FROM injected"
                                                " ORDER BY at DESC LIMIT ?", (limit,)).fetchall(), [])


def use_counts(locs: Locations) -> dict[str, tuple[int, int]]:
    """entry id -> (sessions the prompt hook gave it to, sessions that then opened it); read-only, {}
    when nothing was ever given (the pull's prior: `recall.pull`)."""
    def counts(db: sqlite3.Connection) -> dict[str, tuple[int, int]]:
        given = dict(db.execute("SELECT entry_id, count(*) FROM injected GROUP BY entry_id"))
        opened = dict(db.execute("SELECT entry_id, count(*) FROM opened GROUP BY entry_id"))
        return {entry: (given.get(entry, 0), opened.get(entry, 0)) for entry in given.keys() | opened.keys()}

    return _reading(locs, counts, {})


def _reading(locs: Locations, read: Callable[[sqlite3.Connection], Read], nothing: Read) -> Read:
    """`read(db)` over a read-only connection to the ledger; `nothing` when there is no ledger yet, or it is
    still being created. NotARegularFile when it is not a regular file (never opened)."""
    if not os.path.exists(locs.ledger_path):
        return nothing
    db = connect(locs.ledger_path, read_only=True, timeout=BUSY_MS / 1000)
    try:
        return read(db)
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return nothing
        raise
    finally:
        db.close()
