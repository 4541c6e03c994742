"""Which entries a session has already been given, so no prompt gets them twice.

Kept in the ledger's `injected` table, but read and written here with one small
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


def injected_ids(locs: Locations, harness: str, session_id: str) -> set[str]:
    if not session_id or not os.path.exists(locs.ledger_path):
        return set()
    db = sqlite3.connect(locs.ledger_path, timeout=BUSY_MS / 1000, isolation_level=None)
    try:
        rows = db.execute("SELECT entry_id FROM injected WHERE harness=? AND session_id=?", (harness, session_id))
        return {row[0] for row in rows}
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):  # a ledger still being created
            return set()
        raise
    finally:
        db.close()


def remember_injected(locs: Locations, harness: str, session_id: str, ids: list[str], *, close: bool = True) -> None:
    """Record `ids` as given to this session. `close=False` leaves the connection to the end of a
    process that is about to exit (see `hooks.process_main`)."""
    if not session_id or not ids:
        return
    rows = [(harness, session_id, entry_id, time.time()) for entry_id in ids]
    if os.path.exists(locs.ledger_path):
        db = sqlite3.connect(locs.ledger_path, timeout=BUSY_MS / 1000, isolation_level=None)
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
        finally:
            if close:
                db.close()
    from .ledger import open_ledger

    ledger = open_ledger(locs)
    try:
        ledger.remember_injected(harness, session_id, ids)
    finally:
        ledger.close()
