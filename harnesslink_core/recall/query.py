"""Asking the search index (`index.py` keeps it): every read the recall path makes of it.

Each read is one function over an open connection. The one with many options, the full-text
search, is built apart from being run, as sqlite-utils does (`search_sql()` / `search()`): the
SQL can be read, printed and tested without a database. A search gives hits without their text
and without which terms each contains; `with_text` and `mark_matched` add them for the few hits a
caller keeps (SQLite would otherwise read the text of every matching row before keeping the best).

This module is on the prompt hook's path: stdlib only, no dataclasses.
"""

from __future__ import annotations

from ..fastsqlite import sqlite3
from .columns import COLUMNS, scope_token

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the prompt hook's path)
if TYPE_CHECKING:
    from collections.abc import Iterable

    from ..store.scope import Folders

    Terms = Iterable[str | list[str]]  # a term, or a group of alternatives that count as one

# bm25 weights of the index's columns: title, tags, prompt, actions, result, derived keys of title+prompt and of
# actions+result, scope (a filter)
WEIGHTS = (6.0, 1.0, 3.0, 0.5, 2.0, 3.0, 1.0, 0.0)
EVEN_WEIGHTS = (1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0)  # every field alike, as a plain FTS5 over the entry
STRONG_COLUMNS = "{title prompt keys}"  # where a term says what the turn was about

# An entry in force at a moment (`store.trust.TrustState.bounds`): its work had happened (`ts`, `--as-of`) and
# its file was written (its mtime, when it was banked: a backfilled entry is banked long after its work;
# `--known-at`) by then. Two parameters: the latest `ts` and the latest file time (inf: any).
KNOWN_AT = "d.ts <= ? AND d.mtime_ns <= ? * 1e9"

_HIT_COLUMNS = "d.id, d.path, d.project, d.ts, d.title, d.harness, d.source, d.session_id, d.sketch"


class Hit:
    """One search result. A plain class: `@dataclass` costs import time on the prompt hook's path."""

    __slots__ = (
        "also",
        "doc_id",
        "harness",
        "matched",
        "path",
        "project",
        "prompt",
        "result",
        "score",
        "session_id",
        "sketch",
        "source",
        "title",
        "ts",
        "why",
    )

    def __init__(self, path: str, project: str, ts: float, title: str, harness: str, source: str,
                 session_id: str, score: float, prompt: str = "", result: str = "") -> None:
        self.path = path  # relative to the memories root: `<slug>/bank/<file>.md`
        self.project = project
        self.ts = ts
        self.title = title
        self.harness = harness
        self.source = source
        self.session_id = session_id
        self.score = score  # higher is better (negated bm25)
        self.prompt = prompt
        self.result = result
        self.matched: list[str] = []
        self.doc_id = 0
        self.sketch = ""  # content fingerprint
        self.also: list[Hit] = []  # copies of the same content folded into this match
        self.why = ""  # what let it in, or (a pull) where each list ranked it

    def __repr__(self) -> str:
        return f"Hit({self.path!r}, score={self.score:.2f}, matched={self.matched})"

    @property
    def origin(self) -> str:
        return self.harness or self.source or "unknown"

    def copy(self) -> Hit:
        """Another hit with the same fields (the lists copied)."""
        other = Hit(self.path, self.project, self.ts, self.title, self.harness, self.source, self.session_id,
                    self.score, self.prompt, self.result)
        other.matched, other.doc_id, other.sketch = list(self.matched), self.doc_id, self.sketch
        other.also, other.why = list(self.also), self.why
        return other


def _hit(row: tuple, score: float) -> Hit:
    """A hit from a row starting with `_HIT_COLUMNS`."""
    doc_id, path, project, ts, title, harness, source, session, sketch = row[:9]
    hit = Hit(path, project, ts, title, harness, source, session, score)
    hit.doc_id, hit.sketch = doc_id, sketch
    return hit


# --- the full-text query ------------------------------------------------------


def fts_query(terms: Terms) -> str:
    """An FTS5 query matching any of the terms (a group: any of its alternatives), each
    quoted as a phrase: never raw syntax."""
    quoted = ['"' + t.replace('"', '""') + '"' for t in _flat(terms) if t]
    return " OR ".join(quoted)


def _flat(terms: Terms) -> list[str]:
    flat: list[str] = []
    for term in terms:
        for alt in ([term] if isinstance(term, str) else term):
            if alt and alt not in flat:
                flat.append(alt)
    return flat


def label(term: str | list[str]) -> str:
    """What names a term: itself, or a group's first alternative."""
    return term if isinstance(term, str) else term[0]


def scoped_query(terms: Terms, projects: list[str] | None) -> str:
    """`scope:(<tokens>) AND (<terms>)`; only the terms when `projects` is None (everywhere)."""
    query = fts_query(terms)
    if not query or projects is None:
        return query
    return f"scope:({' OR '.join(scope_token(p) for p in projects)}) AND ({query})"


def search_sql(terms: Terms, projects: list[str] | None, *, limit: int = 10, exclude_session: str | None = None,
               exclude_paths: Iterable[str] = (), known_at: tuple[float, float] | None = None,
               weights: tuple[float, ...] = WEIGHTS, rowids: tuple[int | None, int | None] = (None, None),
               by_scope: bool = True) -> tuple[str, list[object]] | None:
    """The `(sql, params)` of `search`, or None when there is nothing to ask (no terms, no projects).

    Entries matching any term, best first by bm25 with these column `weights`, within `projects` (None:
    all), without the session's own and the excluded paths; `known_at`: only the entries in force at that
    moment (`KNOWN_AT`'s two times); `rowids`: only those with `low < rowid <= high` (newer entries have higher rowids).
    `by_scope=False` leaves the projects to the join on `docs` alone: cheaper when they hold most of the
    index, since FTS5 would then merge the scope token's long doclist for nothing."""
    if limit <= 0 or (projects is not None and not projects):
        return None
    query = scoped_query(terms, projects if by_scope else None)
    if not query:
        return None
    where = ["fts MATCH ?"]
    params: list[object] = [query]
    if projects is not None:  # the scope token already does it; this keeps it exact
        where.append(f"d.project IN ({','.join('?' * len(projects))})")
        params += projects
    if exclude_session:
        where.append("d.session_id != ?")
        params.append(exclude_session)
    low, high = rowids
    if low is not None:
        where.append("fts.rowid > ?")
        params.append(low)
    if high is not None:
        where.append("fts.rowid <= ?")
        params.append(high)
    excluded = list(exclude_paths)
    if excluded:
        where.append(f"d.path NOT IN ({','.join('?' * len(excluded))})")
        params += excluded
    if known_at is not None:
        where.append(KNOWN_AT)
        params += list(known_at)
    sql = (
        f"SELECT {_HIT_COLUMNS}, bm25(fts, {', '.join(str(w) for w in weights)}) AS rank"
        f" FROM fts JOIN docs d ON d.id = fts.rowid WHERE {' AND '.join(where)}"
        f" ORDER BY rank LIMIT ?"
    )
    params.append(limit)
    return sql, params


def search(conn: sqlite3.Connection, terms: Terms, projects: list[str] | None, **options) -> list[Hit]:
    """Entries matching any term, best first (`search_sql` says which, and takes the same options):
    hits without their text (`with_text`) nor their matched terms (`mark_matched`)."""
    built = search_sql(terms, projects, **options)
    if built is None:
        return []
    return [_hit(row, -row[9]) for row in conn.execute(*built)]


def hits_sql(ids: list[int], projects: list[str], *, known_at: tuple[float, float] | None = None) -> tuple[str, list[object]]:
    """The `(sql, params)` of `hits_of`: the rows are looked up by id (`+d.project` keeps SQLite from walking
    the project's whole span of `docs_project_ts` instead, 10 ms at 100,000 entries)."""
    known = "" if known_at is None else f" AND {KNOWN_AT}"
    sql = (f"SELECT {_HIT_COLUMNS} FROM docs d JOIN fts f ON f.rowid = d.id"
           f" WHERE d.id IN ({','.join('?' * len(ids))}) AND +d.project IN ({','.join('?' * len(projects))}){known}")
    return sql, [*ids, *projects, *(known_at or ())]


def hits_of(conn: sqlite3.Connection, ids: list[int], projects: list[str], *, exclude_session: str | None = None,
            exclude_paths: Iterable[str] = (), known_at: tuple[float, float] | None = None) -> list[Hit]:
    """These entries as hits (score 0: not found by words; without their text), in the order of `ids`,
    within `projects`, without the session's own and the excluded paths (and, with `known_at`, those
    not in force then)."""
    if not ids or not projects:
        return []
    excluded = set(exclude_paths)
    by_id = {}
    for row in conn.execute(*hits_sql(ids, projects, known_at=known_at)):
        hit = _hit(row, 0.0)
        if (exclude_session and hit.session_id == exclude_session) or hit.path in excluded:
            continue
        by_id[hit.doc_id] = hit
    return [by_id[i] for i in ids if i in by_id]


def with_text(conn: sqlite3.Connection, hits: list[Hit]) -> list[Hit]:
    """These hits with their prompt and result read in (one query); returns them."""
    if hits:
        texts = {rowid: (prompt, result) for rowid, prompt, result in conn.execute(
            f"SELECT rowid, prompt, result FROM fts WHERE rowid IN ({','.join('?' * len(hits))})",
            [hit.doc_id for hit in hits])}
        for hit in hits:
            prompt, result = texts.get(hit.doc_id, ("", ""))
            hit.prompt, hit.result = prompt or "", result or ""
    return hits


def mark_matched(conn: sqlite3.Connection, hits: list[Hit], terms: Terms) -> list[Hit]:
    """Set each hit's `matched`: which terms it contains (a group named by its first); returns them."""
    terms = list(terms)
    if hits:
        found = rows_containing(conn, terms, [hit.doc_id for hit in hits])
        for hit in hits:
            hit.matched = [label(t) for t, rows in zip(terms, found) if hit.doc_id in rows]
    return hits


def rows_containing(conn: sqlite3.Connection, terms: Terms, ids: list[int] | None = None, *,
                    columns: str = "") -> list[set[int]]:
    """For each term (or group), which rows contain it (in `columns`, an FTS5 column filter such as
    `{title prompt}`, when given): of `ids` in the index (FTS5 seeks each rowid of the IN list in the
    term's doclist), or, with `ids` None, of a whole `probe` table. One query per term."""
    sql, among = "SELECT rowid FROM fts WHERE fts MATCH ?", []
    if ids is not None:
        sql, among = f"{sql} AND rowid IN ({','.join('?' * len(ids))})", ids
    out = []
    for term in terms:
        query = fts_query([term])
        if columns and query:
            query = f"{columns} : ({query})"
        out.append({row[0] for row in conn.execute(sql, [query, *among])} if query else set())
    return out


def probe(conn: sqlite3.Connection, ids: list[int], texts: dict[int, tuple[str, str]] | None = None
          ) -> sqlite3.Connection:
    """A throw-away in-memory FTS5 table (same tokenizer) holding only these entries' text.

    Which of a few entries contain which terms is asked there (`rows_containing` without ids): in the
    real index each answer costs a doclist lookup per phrase per entry, and ~0.1 ms each adds up fast
    in a large index; in a table of a few dozen rows it is nothing. Contentless and without column
    sizes, it takes a third of a millisecond to make, against two for a full table. `texts`, when
    given, receives each entry's (prompt, result): read here anyway."""
    mem = sqlite3.connect(":memory:")
    mem.execute(f"CREATE VIRTUAL TABLE fts USING fts5({', '.join(COLUMNS[:-1])},"
                " tokenize = 'porter unicode61 remove_diacritics 2', content = '', columnsize = 0)")
    if ids:
        rows = conn.execute(f"SELECT rowid, {', '.join(COLUMNS[:-1])} FROM fts"
                            f" WHERE rowid IN ({','.join('?' * len(ids))})", ids).fetchall()
        mem.executemany(f"INSERT INTO fts(rowid, {', '.join(COLUMNS[:-1])}) VALUES ({','.join('?' * len(COLUMNS))})",
                        rows)
        if texts is not None:
            texts.update((row[0], (row[3] or "", row[5] or "")) for row in rows)
    return mem


# --- counting -----------------------------------------------------------------


def scope_size(conn: sqlite3.Connection, projects: list[str]) -> int:
    """How many entries these projects have (kept in `projects` by `sync`: counting a big
    project's rows on every prompt would cost milliseconds)."""
    if not projects:
        return 0
    marks = ",".join("?" * len(projects))
    known = dict(conn.execute(f"SELECT slug, entries FROM projects WHERE slug IN ({marks})", projects).fetchall())
    missing = [p for p in projects if p not in known]
    if missing:
        known[""] = conn.execute(f"SELECT count(*) FROM docs WHERE project IN ({','.join('?' * len(missing))})",
                                 missing).fetchone()[0]
    return sum(known.values())


def term_counts(conn: sqlite3.Connection, terms: Terms, projects: list[str], *, cap: int,
                whole_index: bool = False, after: int | None = None) -> list[int]:
    """For each term (or group), in how many entries of `projects` it occurs, counted up to `cap`
    (FTS5 walks only the scope's rows, and stops at `cap`); with `after`, only among the entries
    whose rowid is above it (FTS5 seeks there). With `whole_index` (the projects hold every entry
    of the index) the scope token is left out: the same count, without merging its doclist."""
    scope = "" if whole_index else f"scope:({' OR '.join(scope_token(p) for p in projects)}) AND "
    since = "" if after is None else " AND rowid > ?"
    return [
        conn.execute(f"SELECT count(*) FROM (SELECT 1 FROM fts WHERE fts MATCH ?{since} LIMIT ?)",
                     (f"{scope}({fts_query([term])})", *(() if after is None else (after,)), cap)).fetchone()[0]
        for term in terms
    ]


def scope_rows_after(conn: sqlite3.Connection, projects: list[str], after: int) -> int:
    """How many entries of `projects` have a rowid above `after` (the newest ones)."""
    marks = ",".join("?" * len(projects))
    return conn.execute(f"SELECT count(*) FROM docs WHERE id > ? AND +project IN ({marks})",  # by rowid
                        (after, *projects)).fetchone()[0]


def index_size(conn: sqlite3.Connection) -> int:
    """How many entries the whole index holds (kept in `projects` by `sync`)."""
    return conn.execute("SELECT coalesce(sum(entries), 0) FROM projects").fetchone()[0]


def max_rowid(conn: sqlite3.Connection) -> int:
    return conn.execute("SELECT max(id) FROM docs").fetchone()[0] or 0


def count(conn: sqlite3.Connection) -> int:
    return conn.execute("SELECT count(*) FROM docs").fetchone()[0]


# --- other reads --------------------------------------------------------------


def vocabulary(conn: sqlite3.Connection, keys: list[str]) -> list[tuple[str, int, str, int]]:
    """(key, group, words, concept) for each of these vocabulary keys that the index knows."""
    if not keys:
        return []
    return conn.execute(
        "SELECT k.key, g.grp, g.words, g.concept FROM vocab_keys k JOIN vocab_groups g ON g.grp = k.grp"
        f" WHERE k.key IN ({','.join('?' * len(keys))}) ORDER BY k.rowid", keys).fetchall()


def sketches(conn: sqlite3.Connection, paths: Iterable[str]) -> list[str]:
    """The content fingerprints of these entries (those still indexed)."""
    paths = list(paths)
    if not paths:
        return []
    return [row[0] for row in conn.execute(
        f"SELECT sketch FROM docs WHERE path IN ({','.join('?' * len(paths))}) AND sketch != ''", paths)]


def newest(conn: sqlite3.Connection, projects: list[str], limit: int) -> list[Hit]:
    """The newest entries of these projects, with their result (not their prompt)."""
    if not projects:
        return []
    sql = (
        "SELECT d.path, d.project, d.ts, d.title, d.harness, d.source, d.session_id, fts.result"
        f" FROM docs d JOIN fts ON fts.rowid = d.id WHERE d.project IN ({','.join('?' * len(projects))})"
        " ORDER BY d.ts DESC LIMIT ?"
    )
    return [
        Hit(path, project, ts, title, harness, source, session, 0.0, "", result or "")
        for path, project, ts, title, harness, source, session, result in conn.execute(sql, [*projects, limit])
    ]


def foreign_paths(conn: sqlite3.Connection, folders: Folders) -> set[str]:
    """The entries of the projects in scope that are another folder's, one that only shares the slug
    (`scope.scope_folders`): kept out of every answer. Almost always none, found in one small read."""
    from ..store.scope import is_foreign

    slugs = [slug for slug, wanted in folders.items() if wanted]
    others = [(slug, cwd) for slug, cwd in folders_of(conn, slugs) if is_foreign(cwd, slug, folders)]
    return {path for slug, cwd in others
            for path, in conn.execute("SELECT path FROM docs WHERE project = ? AND cwd = ?", (slug, cwd))}


def folders_of(conn: sqlite3.Connection, slugs: list[str]) -> list[tuple[str, str]]:
    """(slug, cwd) of each folder these projects' entries were banked in."""
    if not slugs:
        return []
    return conn.execute(f"SELECT slug, cwd FROM folders WHERE slug IN ({','.join('?' * len(slugs))})",
                        slugs).fetchall()
