"""The ledger's schema and migrations."""

from __future__ import annotations

import sqlite3

import pytest

from harnesslink_core.store import ledger as ledger_mod
from harnesslink_core.store import ledger_schema
from harnesslink_core.store.ledger import MIGRATIONS, FileRecord, HarnessRow, migrate, open_ledger


def test_migrate_blank_creates_the_schema() -> None:
    db = sqlite3.connect(":memory:", isolation_level=None)
    migrate(db)
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"files", "turns", "harnesses", "stops", "injected", "sessions", "errors", "meta", "_migrations"} <= tables
    assert [r[0] for r in db.execute("SELECT name FROM _migrations")] == [m.__name__ for m in MIGRATIONS]
    columns = [r[1] for r in db.execute("PRAGMA table_info(turns)")]
    assert columns[:4] == ["turn_key", "harness", "dedupe_id", "status"]


def test_migrate_twice_applies_each_migration_once() -> None:
    db = sqlite3.connect(":memory:", isolation_level=None)
    migrate(db)
    migrate(db)
    assert db.execute("SELECT COUNT(*) FROM _migrations").fetchone()[0] == len(MIGRATIONS)


def test_failing_migration_rolls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    def m999_broken(db: sqlite3.Connection) -> None:
        db.execute("CREATE TABLE half_done (x)")
        raise RuntimeError("boom")

    monkeypatch.setattr(ledger_schema, "MIGRATIONS", MIGRATIONS + [m999_broken])
    db = sqlite3.connect(":memory:", isolation_level=None)
    with pytest.raises(RuntimeError):
        ledger_schema.migrate(db)
    names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert "half_done" not in names
    assert db.execute("SELECT COUNT(*) FROM _migrations WHERE name='m999_broken'").fetchone()[0] == 0


def test_duplicate_migration_names_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ledger_schema, "MIGRATIONS", MIGRATIONS + [MIGRATIONS[0]])
    with pytest.raises(ValueError):
        ledger_schema.migrate(sqlite3.connect(":memory:", isolation_level=None))


def test_reservations(locs) -> None:
    led = open_ledger(locs)
    assert led.reserve("k1", "codex", None, "a", 1000.0) == "ok"
    assert led.reserve("k1", "codex", None, "b", 1100.0) == "busy"
    assert led.reserve("k1", "codex", None, "b", 1000.0 + ledger_mod.RESERVATION_TTL + 1) == "ok"
    led.finish("k1", "banked", entry="/x.md")
    assert led.reserve("k1", "codex", None, "c", 99999.0) == "done"
    assert led.reserve("k2", "claude-code", "uuid-1", "a", 1.0) == "ok"
    assert led.reserve("k3", "claude-code", "uuid-1", "a", 1.0) == "duplicate"
    led.close()


def test_what_a_session_was_given_is_remembered_per_session(locs) -> None:
    led = open_ledger(locs)
    led.remember_injected("codex", "s1", ["a", "b"])
    led.remember_injected("codex", "s1", ["b", "c"])
    assert set(led.given("codex", "s1")) == {"a", "b", "c"}
    assert set(led.given("codex", "s2")) == set()
    led.remember_injected("codex", "s2", ["d"], in_brief=True)  # listed in its brief: given too
    assert set(led.given("codex", "s2")) == {"d"}
    led.close()


def test_a_file_record_names_only_what_it_knows(locs) -> None:
    led = open_ledger(locs)
    seen = FileRecord(path="/t/rollout.jsonl", harness="codex", dev=1, ino=2, size=300, mtime=1000.0)
    led.save_file(seen)
    assert led.files("codex") == {"/t/rollout.jsonl": seen}
    assert (seen.read_end, seen.resume, seen.carry_json, seen.open_turns, seen.bad_lines) == (None, 0, "{}", 0, 0)
    led.close()


def test_harness_row_is_read_by_name(locs) -> None:
    led = open_ledger(locs)
    assert led.harness_row("codex") is None
    led.set_harness("codex", window_start=100.0, enabled=True)
    led.set_harness("codex", last_pass=200.0, backlog=3)
    assert led.harness_row("codex") == HarnessRow(window_start=100.0, enabled=True, last_pass=200.0, backlog=3)
    led.set_harness("codex", enabled=False)
    assert led.harness_row("codex").enabled is False
    led.close()
