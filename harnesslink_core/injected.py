"""Which entries a session has already been given, so no prompt gets them twice.

Kept in the ledger's `injected` table, but read and written here over one small
connection: opening the ledger itself (migrations, dataclasses, pathlib) costs
more than the prompt hook's whole search. The first write to a ledger that does
not exist yet goes through `ledger.open_ledger`, which creates it.
"""

from __future__ import annotations

import os
import time

from .fastsqlite import sqlite3  # the C module alone, cheaply (on every prompt)
from .paths import Locations

BUSY_MS = 1000


class Given:
    """What one session was given: read before the search, added to after it, one connection for both."""

    def __init__(self, locs: Locations, harness: str, session_id: str) -> None:
        self.locs, self.harness, self.session_id = locs, harness, session_id
        self._db = None

    def _connect(self):
        if self._db is None and os.path.exists(self.locs.ledger_path):
            self._db = sqlite3.connect(self.locs.ledger_path, timeout=BUSY_MS / 1000, isolation_level=None)
        return self._db

    def ids(self) -> set[str]:
        db = self._connect() if self.session_id else None
        if db is None:
            return set()
        try:
            rows = db.execute("SELECT entry_id FROM injected WHERE harness=? AND session_id=?",
                              (self.harness, self.session_id))
            return {row[0] for row in rows}
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):  # a ledger still being created
                return set()
            raise

    def ready(self) -> bool:
        """Whether the ledger is there to write to (else `add` creates it, which takes longer)."""
        return self._connect() is not None

    def add(self, ids: list[str]) -> None:
        if not self.session_id or not ids:
            return
        rows = [(self.harness, self.session_id, entry_id, time.time()) for entry_id in ids]
        db = self._connect()
        if db is not None:
            try:
                db.execute("PRAGMA synchronous=NORMAL")  # as the ledger runs it (WAL): one sync per checkpoint
                db.execute("BEGIN IMMEDIATE")
                try:
                    db.executemany("INSERT OR IGNORE INTO injected VALUES (?,?,?,?)", rows)
                    db.execute("COMMIT")
                    return
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
            except sqlite3.OperationalError as exc:
                if "no such table" not in str(exc):
                    raise
        from .ledger import open_ledger

        ledger = open_ledger(self.locs)
        try:
            ledger.remember_injected(self.harness, self.session_id, ids)
        finally:
            ledger.close()

    def close(self) -> None:
        """Close the connection (a process about to exit may leave it: see `hooks.process_main`)."""
        if self._db is not None:
            self._db.close()
            self._db = None


def injected_ids(locs: Locations, harness: str, session_id: str) -> set[str]:
    given = Given(locs, harness, session_id)
    try:
        return given.ids()
    finally:
        given.close()
