"""A connection opened under a hook's deadline (`store.deadline`, `fastsqlite.WithinDeadline`) waits only what is
left of it while it runs, and its own busy timeout again once it is over."""

from __future__ import annotations

import time

from harnesslink_core import fastsqlite
from harnesslink_core.store import deadline


def busy_ms(conn) -> int:
    return conn.execute("PRAGMA busy_timeout").fetchone()[0]


def test_the_busy_timeout_is_the_connections_own_again_after_the_deadline(tmp_path):
    path = str(tmp_path / "x.db")
    with deadline.within(0.3):
        conn = fastsqlite.connect(path, timeout=5.0, isolation_level=None)
        assert busy_ms(conn) <= 300
        time.sleep(0.35)
        assert busy_ms(conn) == 0  # spent: a lock is not waited for
    try:
        assert busy_ms(conn) == 5000
        with deadline.within(1.0):
            assert 800 <= busy_ms(conn) <= 1000
    finally:
        conn.close()
