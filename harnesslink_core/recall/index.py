"""The local search index, `memory-index.db`: SQLite FTS5 over the bank entries.

The Markdown tree is the source of truth; the index is a cache of it that can
be thrown away and rebuilt at any time (`harnesslink reindex`).

- `docs` holds one row per entry (its path relative to the memories root,
  project, time, title, harness, session) and the file's mtime and size.
- `fts` (FTS5, porter stemming) holds the searchable text, split into title,
  tags, prompt, a digest of the actions and the result, weighted in that spirit;
  `keys` and `detail_keys`: the other spelling of each identifier in the title and
  prompt, and in the actions and result (`tokens.derived_keys`: `apply discount`
  for `applyDiscount`); and `scope`: one opaque token naming the entry's project. Every search is
  `scope:(<project> OR <linked>) AND (<terms>)`, so FTS5 only walks and scores
  the rows of the projects in scope, however large the rest of the index is.
- `docs.sketch` is the entry's content fingerprint (`fingerprint.sketch`): copies of
  one answer are shown and given once.
- `vocab_keys` / `vocab_groups` hold the related-terms vocabulary (`lexicon`,
  shipped as `data/related.txt`), so that a prompt looks up only its own words in
  one query instead of parsing the vocabulary; reloaded when the file changes.
- `projects` remembers each `bank/` folder's mtime: checking whether a
  project changed costs one stat. Adding, removing or replacing an entry (all
  our writes are rename-into-place) changes that mtime. A folder modified in
  the last two seconds is not trusted to be finished, because a second write
  in the same clock tick would leave the mtime unchanged ("racy git" problem);
  it is scanned again on the next check.

Writers take SQLite's write lock without waiting long: the prompt hook would
rather search a slightly stale index than block. A corrupt index is deleted
and rebuilt from the Markdown.

This module is on the prompt hook's path: stdlib only (no pathlib), entries parsed lazily.
"""

from __future__ import annotations

import os
import sys
import time

from ..errors import IndexBehind, IndexCorrupt, IndexUnavailable
from ..fastsqlite import NotARegularFile, Transaction, connect as connect_file, sqlite3  # the C module alone
from ..paths import Locations
from ..safefile import tree_folder
from .columns import COLUMNS, actions_digest, computed_columns, scope_token  # scope_token, computed_columns: index's too

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the prompt hook's path)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from ..store.entries import Entry

    # `<slug>/bank/<file>.md` -> (size in bytes, the entry, its `computed_columns` if the writer made them)
    Written = dict[str, tuple[int, Entry, tuple[str, str, str] | None]]

# 4: `keys`, `detail_keys`, `docs.sketch`, the vocabulary; 5: name+version keys; 6: 32-hash sketches;
# 7: which vocabulary groups name a concept; 8: sketches of content words. An index of another version is
# rebuilt.
SCHEMA_VERSION = 9
RACY_SECONDS = 2.0
REBUILD_MARKER_STALE = 600.0  # a rebuild marker older than this is taken over
FILL_PER_REFRESH = 32  # vectors one refresh makes (what a hook's pass banked); a backlog is the background's

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS docs (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    project TEXT NOT NULL,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    ts REAL NOT NULL,
    title TEXT NOT NULL,
    harness TEXT NOT NULL,
    source TEXT NOT NULL,
    session_id TEXT NOT NULL,
    turn_key TEXT NOT NULL,
    cwd TEXT NOT NULL,
    sketch TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS docs_project_ts ON docs(project, ts);
CREATE TABLE IF NOT EXISTS projects (
    slug TEXT PRIMARY KEY,
    dir_mtime_ns INTEGER NOT NULL,
    entries INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS folders (
    slug TEXT NOT NULL,
    cwd TEXT NOT NULL,
    entries INTEGER NOT NULL,
    PRIMARY KEY (slug, cwd)
);
CREATE TABLE IF NOT EXISTS vocab_keys (key TEXT NOT NULL, grp INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS vocab_keys_key ON vocab_keys(key);
CREATE TABLE IF NOT EXISTS vocab_groups (grp INTEGER PRIMARY KEY, words TEXT NOT NULL, concept INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
    {", ".join(COLUMNS)},
    tokenize = 'porter unicode61 remove_diacritics 2'
);
"""


# --- opening ------------------------------------------------------------------


def connect(locs: Locations, *, create: bool = True, busy_ms: int = 5000) -> sqlite3.Connection:
    """An open, current-schema index. Raises IndexUnavailable when it cannot be had
    (with `create=False`: when it does not exist yet)."""
    path = locs.index_path
    exists = os.path.exists(path)
    if not exists and not create:
        raise IndexUnavailable("no index yet")
    try:
        if not exists:
            os.makedirs(os.path.dirname(path), exist_ok=True)
        conn = connect_file(path, timeout=busy_ms / 1000, isolation_level=None)
    except NotARegularFile as exc:
        raise IndexUnavailable(str(exc)) from exc
    except (sqlite3.Error, OSError) as exc:
        raise IndexUnavailable(f"cannot open {path}: {exc}") from exc
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version != SCHEMA_VERSION:
            if not create:
                raise IndexUnavailable(f"index schema {version}, want {SCHEMA_VERSION}")
            _create_schema(conn, fresh=version != 0)
    except sqlite3.OperationalError as exc:
        conn.close()
        raise IndexUnavailable(f"index busy: {exc}") from exc
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise IndexCorrupt(f"index unreadable: {exc}") from exc
    return conn


class open_index:
    """`with open_index(locs) as conn`: the index, made if missing, deleted and made again if corrupt
    (the Markdown is the truth), closed after. Raises IndexUnavailable when it cannot be had.
    A class, not `contextlib`: this module is on the prompt hook's path."""

    def __init__(self, locs: Locations, *, busy_ms: int = 5000) -> None:
        self.locs = locs
        self.busy_ms = busy_ms

    def __enter__(self) -> sqlite3.Connection:
        try:
            self.conn = connect(self.locs, busy_ms=self.busy_ms)
        except IndexCorrupt:
            delete_index_files(self.locs)
            self.conn = connect(self.locs, busy_ms=self.busy_ms)
        return self.conn

    def __exit__(self, *exc: object) -> None:
        self.conn.close()


def _create_schema(conn: sqlite3.Connection, *, fresh: bool) -> None:
    conn.execute("PRAGMA journal_mode=WAL")
    with Transaction(conn):
        if fresh:  # an older schema: drop it, the Markdown rebuilds it
            for table in ("fts", "docs", "projects", "folders", "vocab_keys", "vocab_groups", "meta"):
                conn.execute(f"DROP TABLE IF EXISTS {table}")
        for statement in _SCHEMA.split(";"):
            if statement.strip():
                conn.execute(statement)
        _load_vocabulary(conn)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def _load_vocabulary(conn: sqlite3.Connection) -> None:
    """Store the shipped related-terms vocabulary (inside the caller's transaction)."""
    from . import lexicon

    keys, groups = lexicon.table_rows()
    conn.execute("DELETE FROM vocab_keys")
    conn.execute("DELETE FROM vocab_groups")
    conn.executemany("INSERT INTO vocab_keys(key, grp) VALUES (?, ?)", keys)
    conn.executemany("INSERT INTO vocab_groups(grp, words, concept) VALUES (?, ?, ?)", groups)
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('vocabulary', ?)", (lexicon.data_stamp(),))


def _refresh_vocabulary(conn: sqlite3.Connection) -> None:
    """Reload the vocabulary when the shipped file changed (an upgrade). Not on the prompt's path."""
    from . import lexicon

    row = conn.execute("SELECT value FROM meta WHERE key = 'vocabulary'").fetchone()
    if row is not None and row[0] == lexicon.data_stamp():
        return
    with Transaction(conn):
        _load_vocabulary(conn)


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def delete_index_files(locs: Locations) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        try:
            os.unlink(locs.index_path + suffix)
        except FileNotFoundError:
            pass


# --- keeping it current -------------------------------------------------------


def refresh(locs: Locations, projects: Iterable[str] | None = None, written: Written | None = None) -> int:
    """Bring the index up to date with the Markdown for these project slugs
    (None: every project, and forget projects that are gone). Cheap when nothing
    changed: one stat per project. Returns how many entries were (re)indexed or
    dropped. Called by the autobank pass after it banks, with the entries it wrote
    (`written`: their size, parsed content and maybe `computed_columns`, by
    `<slug>/bank/<file>.md`): an entry of that size on disk is indexed from them,
    any other is read from its file."""
    with open_index(locs) as conn:
        # each commit not synced, only the checkpoint (as the ledger runs): the Markdown is the truth, and what a
        # crash loses of the last commits the next refresh indexes again; a pass commits several
        conn.execute("PRAGMA synchronous=NORMAL")
        _refresh_vocabulary(conn)
        changed = sync(conn, locs, projects, written=written)
        _fill_vectors(conn, limit=FILL_PER_REFRESH, newest=True)
        return changed


def fill_vectors(locs: Locations, *, progress=None) -> int:
    """Vectors for every entry that has none (after an upgrade, a backfill, a large pass): the
    background's work (`autobank --drain`, the detached refresh), never a hook's. One process at a time
    (`_fill_lock`): another that finds a fill running leaves the vectors to it and returns 0."""
    lock = _fill_lock(locs)
    if lock is False:
        return 0
    try:
        try:
            conn = connect(locs)
        except IndexUnavailable:
            return 0
        try:
            return _fill_vectors(conn, progress=progress) + _fill_encoded(conn, locs, progress)
        finally:
            conn.close()
    finally:
        if lock is not None:
            os.close(lock)


def _fill_lock(locs: Locations) -> int | bool | None:
    """The lock a fill holds (its descriptor); False when another process fills (the detached job after a
    large backfill fills for minutes, and every background drain started meanwhile ends with a fill of the
    same newest entries); None where there is no flock."""
    try:
        import fcntl

        fd = os.open(locs.index_path + ".filling", os.O_CREAT | os.O_WRONLY | os.O_NOFOLLOW, 0o644)
    except (ImportError, OSError):
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return False
    return fd


def _fill_vectors(conn: sqlite3.Connection, *, limit: int | None = None, progress=None, newest: bool = False) -> int:
    """Vectors for the entries that have none; the index answers by words without them."""
    from . import vectors

    try:
        return vectors.fill(conn, limit=limit, progress=progress, newest=newest)
    except sqlite3.OperationalError:  # busy: the next pass fills them
        return 0


def _fill_encoded(conn: sqlite3.Connection, locs: Locations, progress=None) -> int:
    """The encoder's vectors for the entries that have none (the encoder started for it), in the
    background only: a hook's answer never waits for the model."""
    from . import encoded

    try:
        return encoded.fill(conn, locs, progress=progress)
    except sqlite3.OperationalError:  # busy: the next background pass fills them
        return 0


def sync(conn: sqlite3.Connection, locs: Locations, projects: Iterable[str] | None = None,
         *, force: bool = False, max_changes: int | None = None, written: Written | None = None,
         indexed: Callable[[], None] | None = None) -> int:
    """Like `refresh`, on an open connection. With `max_changes`, raise IndexBehind
    instead of indexing more entries than that in one project; `indexed()` is told of each
    entry read from disk."""
    from ..store.scope import all_projects, is_safe_slug

    if projects is None:
        slugs = all_projects(locs)
        known = [row[0] for row in conn.execute("SELECT slug FROM projects")]
        slugs += [s for s in known if s not in slugs]
        known_docs = [row[0] for row in conn.execute("SELECT DISTINCT project FROM docs")]
        slugs += [s for s in known_docs if s not in slugs]
    else:
        slugs = [s for s in dict.fromkeys(projects) if is_safe_slug(s)]
    changed = 0
    for slug in slugs:
        changed += _sync_project(conn, locs, slug, force=force, max_changes=max_changes, written=written,
                                 indexed=indexed)
    return changed


def _sync_project(conn: sqlite3.Connection, locs: Locations, slug: str, *, force: bool,
                  max_changes: int | None = None, written: Written | None = None,
                  indexed: Callable[[], None] | None = None) -> int:
    bank = tree_folder(locs.memories_path, slug, "bank")  # a linked project or bank folder is not walked
    try:
        dir_mtime = os.stat(bank).st_mtime_ns if bank is not None else None
    except OSError:
        dir_mtime = None
    row = conn.execute("SELECT dir_mtime_ns FROM projects WHERE slug = ?", (slug,)).fetchone()
    if not force and row is not None and dir_mtime is not None and row[0] == dir_mtime:
        return 0
    if not force and row is None and dir_mtime is None:
        return 0

    on_disk: dict[str, tuple[str, int, int]] = {}
    if bank is not None and dir_mtime is not None:
        listed = _entry_files(bank, slug)
        if listed is None:
            dir_mtime = None
        else:
            on_disk = listed

    if max_changes is not None:
        todo = _changes(_known(conn, slug), on_disk)
        if len(todo[0]) + len(todo[1]) > max_changes:
            raise IndexBehind(f"{slug}: {len(todo[0]) + len(todo[1])} entries to index")

    with Transaction(conn):
        known = _known(conn, slug)
        gone, fresh = _changes(known, on_disk)
        forgotten = _forgotten(locs) if fresh else None
        changed = 0
        for doc_id in gone:
            _delete_doc(conn, doc_id)
            changed += 1
        for path in fresh:
            file, mtime, size = on_disk[path]
            if path in known:
                _delete_doc(conn, known[path][0])
            held = written.get(path) if written else None
            if held is not None and held[0] != size:
                held = None  # changed since it was written: read it
            if _insert_doc(conn, file, slug, path, mtime, size, forgotten, *(held[1:] if held else ())):
                changed += 1
            if indexed is not None:
                indexed()
        if changed or dir_mtime is None:  # which folders the project's entries are of (`foreign_paths`)
            conn.execute("DELETE FROM folders WHERE slug = ?", (slug,))
            conn.execute("INSERT INTO folders(slug, cwd, entries) SELECT project, cwd, count(*) FROM docs"
                         " WHERE project = ? GROUP BY cwd", (slug,))
        if dir_mtime is None:
            conn.execute("DELETE FROM projects WHERE slug = ?", (slug,))
        else:
            racy = time.time() - dir_mtime / 1e9 < RACY_SECONDS
            conn.execute(
                "INSERT OR REPLACE INTO projects(slug, dir_mtime_ns, entries)"
                " VALUES (?, ?, (SELECT count(*) FROM docs WHERE project = ?))",
                (slug, -1 if racy else dir_mtime, slug),
            )
    return changed


def _entry_files(bank: str, slug: str) -> dict[str, tuple[str, int, int]] | None:
    """A bank folder's entries by index path: (file, mtime_ns, size); None when it cannot be listed."""
    on_disk: dict[str, tuple[str, int, int]] = {}
    try:
        with os.scandir(bank) as it:
            for item in it:
                if not item.name.endswith(".md") or item.name.startswith(".") or item.is_symlink():
                    continue  # a link may lead out of the tree: never indexed
                try:
                    st = item.stat()
                except OSError:
                    continue
                if item.is_file():
                    on_disk[f"{slug}/bank/{item.name}"] = (item.path, st.st_mtime_ns, st.st_size)
    except OSError:
        return None
    return on_disk


def _known(conn: sqlite3.Connection, slug: str) -> dict[str, tuple[int, int, int]]:
    return {
        path: (doc_id, mtime, size)
        for doc_id, path, mtime, size in conn.execute(
            "SELECT id, path, mtime_ns, size FROM docs WHERE project = ?", (slug,)
        )
    }


def _changes(known: dict[str, tuple[int, int, int]], on_disk: dict[str, tuple[str, int, int]]
             ) -> tuple[list[int], list[str]]:
    """(ids of entries gone from disk, paths new or changed on disk)."""
    gone = [doc_id for path, (doc_id, _, _) in known.items() if path not in on_disk]
    fresh = [
        path for path, (_, mtime, size) in on_disk.items()
        if path not in known or known[path][1:] != (mtime, size)
    ]
    return gone, fresh


def remove(conn: sqlite3.Connection, rel_paths: Iterable[str]) -> int:
    """Drop these entries' rows (`<slug>/bank/<file>.md`); how many there were."""
    removed = 0
    with Transaction(conn):
        for rel in rel_paths:
            row = conn.execute("SELECT id FROM docs WHERE path = ?", (rel,)).fetchone()
            if row:
                _delete_doc(conn, row[0])
                removed += 1
    return removed


def _delete_doc(conn: sqlite3.Connection, doc_id: int) -> None:
    conn.execute("DELETE FROM docs WHERE id = ?", (doc_id,))
    conn.execute("DELETE FROM fts WHERE rowid = ?", (doc_id,))
    try:
        conn.execute("DELETE FROM meaning WHERE doc_id = ?", (doc_id,))
    except sqlite3.OperationalError:  # an index made before vectors: it has none to delete
        pass


def _forgotten(locs: Locations):
    from ..store.ledger import tombstones

    return tombstones(locs)


def _insert_doc(conn: sqlite3.Connection, file: str, slug: str, rel: str, mtime: int, size: int,
                forgotten=None, entry: Entry | None = None, computed: tuple[str, str, str] | None = None) -> bool:
    """Index one entry: `entry` if the caller has it parsed already, else read from `file`; `computed`: its
    `computed_columns`, if the caller made them already."""
    if entry is None:
        from pathlib import Path

        from ..store.entries import read_entry

        entry = read_entry(Path(file), slug)
    if entry is None:
        return False
    if forgotten and forgotten.covers(slug, os.path.basename(file), entry.turn_key):
        return False  # forgotten, and back in the tree (a cloud pull): never searchable again
    actions = actions_digest(entry.actions)
    sketch, keys, detail_keys = computed or computed_columns(entry.title, entry.prompt, entry.actions, entry.result)
    cur = conn.execute(
        "INSERT INTO docs(path, project, mtime_ns, size, ts, title, harness, source, session_id, turn_key, cwd,"
        " sketch) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
        (rel, slug, mtime, size, entry.ts, entry.title, entry.harness, entry.source,
         entry.session_id, entry.turn_key, entry.cwd, sketch),
    )
    conn.execute(
        f"INSERT INTO fts(rowid, {', '.join(COLUMNS)}) VALUES (?,?,?,?,?,?,?,?,?)",
        (cur.lastrowid, entry.title, " ".join(entry.tags), entry.prompt, actions, entry.result, keys, detail_keys,
         scope_token(slug)),
    )
    return True


def rebuild(locs: Locations, *, progress: Callable[[str, int, int], None] | None = None) -> int:
    """Rebuild the whole index from the Markdown (`harnesslink reindex`), vectors included.

    `progress(stage, done, total)` is told how far each stage has come: "entries" read from
    disk, then "vectors" made (when the model can be read)."""
    try:
        conn = connect(locs)
        conn.execute("PRAGMA quick_check").fetchone()
    except IndexCorrupt:
        delete_index_files(locs)
        conn = connect(locs)
    except sqlite3.DatabaseError:
        conn.close()
        delete_index_files(locs)
        conn = connect(locs)
    try:
        with Transaction(conn):
            conn.execute("DELETE FROM docs")
            conn.execute("DELETE FROM fts")
            conn.execute("DELETE FROM projects")
            conn.execute("DELETE FROM folders")
            conn.execute("DROP TABLE IF EXISTS meaning")
            conn.execute("DROP TABLE IF EXISTS meaning_packs")
            _load_vocabulary(conn)
        indexed = made = encoded = None
        if progress is not None:
            indexed = _counting(progress, "entries", _entry_count(locs))
            made = lambda done, total: progress("vectors", done, total)  # noqa: E731
            encoded = lambda done, total: progress("encoder vectors", done, total)  # noqa: E731
        count = sync(conn, locs, None, force=True, indexed=indexed)
        conn.execute("INSERT INTO fts(fts) VALUES('optimize')")
        _fill_vectors(conn, progress=made)
        _fill_encoded(conn, locs, encoded)
        return count
    finally:
        conn.close()


def _entry_count(locs: Locations) -> int:
    """How many entries the tree holds: what a rebuild reads."""
    from ..store.scope import all_projects

    banks = ((slug, tree_folder(locs.memories_path, slug, "bank")) for slug in all_projects(locs))
    return sum(len(_entry_files(bank, slug) or ()) for slug, bank in banks if bank is not None)


def _counting(progress: Callable[[str, int, int], None], stage: str, total: int) -> Callable[[], None]:
    """`progress(stage, n, total)` after each of n calls."""
    done = 0

    def one() -> None:
        nonlocal done
        done += 1
        progress(stage, done, total)

    return one


def rebuild_in_background(locs: Locations, *, full: bool = True) -> bool:
    """Start a detached rebuild (or, with `full=False`, a refresh of every project)
    unless one is already running. Never waits."""
    import subprocess

    marker = locs.index_path + ".rebuilding"
    try:
        os.makedirs(locs.agent_path, exist_ok=True)
        try:
            fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            if time.time() - os.stat(marker).st_mtime < REBUILD_MARKER_STALE:
                return False
            _unlink(marker)
            fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        os.close(fd)
        env = dict(locs.env)
        package_root = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH", "")) if p)
        subprocess.Popen(
            [sys.executable, "-m", "harnesslink_core.recall.index", "rebuild" if full else "refresh", marker],
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True, close_fds=True,
        )
        return True
    except (OSError, ValueError):
        return False


def _main(argv: list[str]) -> int:
    """`python -m harnesslink_core.recall.index rebuild [marker]`: the detached rebuild."""
    from ..paths import locations

    if not argv or argv[0] not in ("rebuild", "refresh"):
        return 2
    marker = argv[1] if len(argv) > 1 else None
    locs = locations()
    alive = _still_running(marker)
    try:
        if argv[0] == "rebuild":
            rebuild(locs, progress=lambda stage, done, total: alive())
        else:
            refresh(locs, None)
            fill_vectors(locs, progress=lambda done, due: alive())
    except Exception as exc:  # noqa: BLE001 - a background job: log and exit
        from .. import log

        log.error(locs, "background index rebuild failed", exc)
        return 1
    finally:
        if marker is not None:
            _unlink(marker)
    return 0


def _still_running(marker: str | None) -> Callable[[], None]:
    """Called as the job makes progress: its marker's time moves on, so a job filling for longer than
    REBUILD_MARKER_STALE is not taken for a dead one (a second job would write the index beside it)."""
    def touch() -> None:
        try:
            if marker is not None:
                os.utime(marker)
        except OSError:
            pass

    return touch


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
