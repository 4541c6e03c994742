"""`harnesslink backfill` ends once what it banked is searchable by its words; the meaning vectors follow in a
detached job, which `harnesslink status` counts down (made in the command itself only when such a job
already runs)."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from harnesslink_core.main import main
from harnesslink_core.recall import index
from tests.claude_builder import ClaudeSession

SESSIONS, TURNS = 6, 4


def write_sessions(home: Path) -> None:
    for i in range(SESSIONS):
        session = ClaudeSession(home, cwd=f"/work/app{i % 2}")
        for j in range(TURNS):
            session.turn(f"Fix the flaky login test, part {i}.{j}", "Moved the cookie expiry check after the refresh. " * 20,
                         tools=[("Bash", {"command": "pytest -q tests/test_login.py"})])
        session.flush()


def counts(locs) -> tuple[int, int, int]:
    """(entries, found by a word of theirs, with a meaning vector) in the index."""
    conn = sqlite3.connect(f"file:{locs.index_path}?mode=ro", uri=True)
    try:
        docs = conn.execute("SELECT count(*) FROM docs").fetchone()[0]
        found = conn.execute("SELECT count(*) FROM fts WHERE fts MATCH 'cookie'").fetchone()[0]
        try:
            vectors = conn.execute("SELECT count(*) FROM meaning").fetchone()[0]
        except sqlite3.OperationalError:
            vectors = 0
        return docs, found, vectors
    finally:
        conn.close()


def wait_until_gone(marker: Path, limit: float = 120.0) -> None:
    end = time.monotonic() + limit
    while marker.exists():
        assert time.monotonic() < end, f"the detached job never ended ({marker})"
        time.sleep(0.05)


@pytest.fixture
def filled_here(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How often this process filled the meaning vectors itself."""
    calls: list[int] = []
    fill = index.fill_vectors

    def counting(*args, **kwargs):
        calls.append(1)
        return fill(*args, **kwargs)

    monkeypatch.setattr(index, "fill_vectors", counting)
    return calls


def test_backfill_leaves_the_meaning_vectors_to_a_detached_job(locs, isolated_home: Path, filled_here, capsys) -> None:
    write_sessions(isolated_home)
    assert main(["backfill", "--days", "30"]) == 0
    assert "banked 24," in capsys.readouterr().out
    docs, found, _ = counts(locs)
    assert docs == SESSIONS * TURNS and found == docs, "searchable by its words when the command ends"
    assert filled_here == [], "the vectors are not made inside the command"
    wait_until_gone(Path(locs.index_path + ".rebuilding"))
    assert counts(locs) == (docs, docs, docs), "every entry has its vector once the detached job is done"

