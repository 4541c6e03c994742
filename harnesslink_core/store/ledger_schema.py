"""The ledger's schema, as an ordered list of named migrations (`harness-autobank.db`).

`migrate` applies, in list order, each migration not yet recorded in `_migrations`: one transaction per
migration together with the row recording it, rechecked under the write lock (another process may have
applied it meanwhile), and a duplicate name refused. `ledger.open_ledger` is its one caller; a new table
or column is a new function appended here, never an edit of an applied one.
"""

from __future__ import annotations

import time

from ..fastsqlite import Transaction, sqlite3

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: the stop hook's pass opens the ledger
if TYPE_CHECKING:
    from collections.abc import Callable

MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = []
migration = MIGRATIONS.append


def _run_script(db: sqlite3.Connection, script: str) -> None:
    # executescript() would COMMIT the migration's transaction; run statement by statement instead
    for statement in script.split(";\n"):
        if statement.strip():
            db.execute(statement)


@migration
def m001_initial(db: sqlite3.Connection) -> None:
    _run_script(
        db,
        """
        CREATE TABLE files (
            path TEXT PRIMARY KEY,
            harness TEXT NOT NULL,
            dev INTEGER, ino INTEGER, size INTEGER, mtime REAL,
            read_end INTEGER,          -- NULL: seen but never opened (outside the window)
            resume INTEGER NOT NULL DEFAULT 0,
            head_hash TEXT, anchor_hash TEXT,
            carry TEXT NOT NULL DEFAULT '{}',
            session_id TEXT, cwd TEXT, excluded TEXT,
            open_turns INTEGER NOT NULL DEFAULT 0,
            next_check REAL,           -- when an open turn may settle by the quiet rule
            bad_lines INTEGER NOT NULL DEFAULT 0,
            updated REAL
        );
        CREATE TABLE turns (
            turn_key TEXT PRIMARY KEY,
            harness TEXT NOT NULL,
            dedupe_id TEXT,            -- shared by copies of a turn in resumed/forked transcripts
            status TEXT NOT NULL,      -- reserved | banked | skipped | dropped | duplicate
            entry TEXT, project TEXT,
            ended REAL, owner TEXT, reserved_at REAL, updated REAL
        );
        CREATE INDEX turns_dedupe ON turns(harness, dedupe_id) WHERE dedupe_id IS NOT NULL;
        CREATE INDEX turns_status ON turns(harness, status);
        CREATE TABLE harnesses (
            name TEXT PRIMARY KEY,
            window_start REAL NOT NULL,
            enabled INTEGER NOT NULL DEFAULT 1,
            last_pass REAL,
            backlog INTEGER NOT NULL DEFAULT 0
        );
        CREATE TABLE stops (
            harness TEXT NOT NULL, session_id TEXT NOT NULL, at REAL NOT NULL,
            PRIMARY KEY (harness, session_id)
        );
        CREATE TABLE injected (
            harness TEXT NOT NULL, session_id TEXT NOT NULL, entry_id TEXT NOT NULL, at REAL NOT NULL,
            PRIMARY KEY (harness, session_id, entry_id)
        );
        CREATE TABLE sessions (
            harness TEXT NOT NULL, session_id TEXT NOT NULL,
            cwd TEXT, state TEXT NOT NULL DEFAULT '{}', updated REAL,
            PRIMARY KEY (harness, session_id)
        );
        CREATE TABLE errors (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            at REAL NOT NULL, harness TEXT, path TEXT, message TEXT NOT NULL
        );
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
        """
    )


@migration
def m002_turn_revision(db: sqlite3.Connection) -> None:
    # entries rewritten in place (Antigravity's one per conversation) remember what they show
    db.execute("ALTER TABLE turns ADD COLUMN revision TEXT")


@migration
def m003_forgotten(db: sqlite3.Connection) -> None:
    # `harnesslink forget` tombstones: the entry (by project and file name, which is how a copy
    # pulled back from the cloud is recognised) and its turn, whose `turns` row becomes 'forgotten'
    _run_script(
        db,
        """
        CREATE TABLE forgotten (
            project TEXT NOT NULL, name TEXT NOT NULL,
            turn_key TEXT, entry_id TEXT, at REAL NOT NULL,
            PRIMARY KEY (project, name)
        );
        CREATE INDEX forgotten_turn ON forgotten(turn_key) WHERE turn_key IS NOT NULL
        """,
    )


@migration
def m004_opened(db: sqlite3.Connection) -> None:
    # entries a session was given and then opened (memory_get, a read of its file): each pair once
    db.execute("CREATE TABLE opened (harness TEXT NOT NULL, session_id TEXT NOT NULL, entry_id TEXT NOT NULL,"
               " at REAL NOT NULL, PRIMARY KEY (harness, session_id, entry_id))")


@migration
def m005_briefed(db: sqlite3.Connection) -> None:
    # entries a session-start brief listed: given too (a later open counts), but kept apart from
    # `injected`, which stops the prompt hook giving an entry twice: a brief's one line is not the entry
    db.execute("CREATE TABLE briefed (harness TEXT NOT NULL, session_id TEXT NOT NULL, entry_id TEXT NOT NULL,"
               " at REAL NOT NULL, PRIMARY KEY (harness, session_id, entry_id))")


@migration
def m006_use_counts(db: sqlite3.Connection) -> None:
    # per harness, how many (session, entry) pairs were given (`injected`) or listed in a brief (`briefed`),
    # and how many of those were opened: kept by triggers as the rows are added (none is ever deleted), so
    # `harnesslink status` reads a few numbers however many pairs there are
    db.execute("CREATE TABLE use_counts (harness TEXT NOT NULL, kind TEXT NOT NULL, given INTEGER NOT NULL,"
               " opened INTEGER NOT NULL, PRIMARY KEY (harness, kind))")
    same_pair = "harness=new.harness AND session_id=new.session_id AND entry_id=new.entry_id"
    for kind in ("injected", "briefed"):
        db.execute(f"INSERT INTO use_counts SELECT g.harness, '{kind}', count(*), count(o.harness) FROM {kind} g"
                   " LEFT JOIN opened o USING (harness, session_id, entry_id) GROUP BY g.harness")
        db.execute(f"CREATE TRIGGER {kind}_counted AFTER INSERT ON {kind} BEGIN"
                   f" INSERT INTO use_counts VALUES (new.harness, '{kind}', 1,"
                   f" EXISTS (SELECT 1 FROM opened WHERE {same_pair}))"
                   " ON CONFLICT (harness, kind) DO UPDATE SET given=given+1, opened=opened+excluded.opened; END")
        db.execute(f"CREATE TRIGGER opened_counted_{kind} AFTER INSERT ON opened"
                   f" WHEN EXISTS (SELECT 1 FROM {kind} WHERE {same_pair}) BEGIN"
                   f" UPDATE use_counts SET opened=opened+1 WHERE harness=new.harness AND kind='{kind}'; END")


def migrate(db: sqlite3.Connection) -> None:
    names = [m.__name__ for m in MIGRATIONS]
    if len(names) != len(set(names)):
        raise ValueError("duplicate migration name")
    db.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at REAL)")
    applied = {row[0] for row in db.execute("SELECT name FROM _migrations")}
    for fn in MIGRATIONS:
        if fn.__name__ in applied:
            continue
        with Transaction(db):
            # another process may have applied it while we waited for the write lock
            if db.execute("SELECT 1 FROM _migrations WHERE name=?", (fn.__name__,)).fetchone():
                continue
            fn(db)
            db.execute("INSERT INTO _migrations VALUES (?, ?)", (fn.__name__, time.time()))
