"""What the search index holds, read as a person browses it: the projects, a timeline of
entries, how many entries each day brought from each harness (`harnesslink view`).

Read-only over `index.docs`; the caller brings the index up to date first (`index.sync`).
"""

from __future__ import annotations

from ..fastsqlite import sqlite3
from .query import Hit

DAY = 86_400


class ProjectRow:
    """One project as the index knows it: how many entries, the newest one's time, which harnesses."""

    def __init__(self, slug: str, entries: int, newest: float, harnesses: list[str]) -> None:
        self.slug = slug
        self.entries = entries
        self.newest = newest
        self.harnesses = harnesses


def projects(conn: sqlite3.Connection) -> list[ProjectRow]:
    """Every project with entries, the most recently active first."""
    rows = conn.execute(
        "SELECT project, count(*), max(ts), group_concat(DISTINCT CASE harness WHEN '' THEN source ELSE harness END)"
        " FROM docs GROUP BY project ORDER BY max(ts) DESC"
    ).fetchall()
    return [ProjectRow(slug, n, newest or 0.0, sorted(filter(None, (names or "").split(","))))
            for slug, n, newest, names in rows]


def timeline(conn: sqlite3.Connection, projects: list[str] | None, *, limit: int, offset: int = 0) -> list[Hit]:
    """Entries of these projects (None: all), newest first, without their text."""
    where, params = _in_projects(projects)
    sql = (f"SELECT path, project, ts, title, harness, source, session_id FROM docs{where}"
           " ORDER BY ts DESC, id DESC LIMIT ? OFFSET ?")
    return [Hit(path, project, ts, title, harness, source, session, 0.0)
            for path, project, ts, title, harness, source, session in
            conn.execute(sql, [*params, limit, offset])]


def entry_count(conn: sqlite3.Connection, projects: list[str] | None) -> int:
    where, params = _in_projects(projects)
    return conn.execute(f"SELECT count(*) FROM docs{where}", params).fetchone()[0]


def per_day(conn: sqlite3.Connection, projects: list[str] | None, *, since: float = 0.0
            ) -> list[tuple[int, str, int]]:
    """(UTC day number, harness, entries) for each day since `since` that has entries."""
    where, params = _in_projects(projects)
    where += (" AND" if where else " WHERE") + " ts >= ?"
    sql = (f"SELECT CAST(ts / {DAY} AS INTEGER) AS day, CASE harness WHEN '' THEN source ELSE harness END, count(*)"
           f" FROM docs{where} GROUP BY day, 2 ORDER BY day")
    return [(day, harness or "unknown", n) for day, harness, n in conn.execute(sql, [*params, since])]


def _in_projects(projects: list[str] | None) -> tuple[str, list[object]]:
    if projects is None:
        return "", []
    if not projects:
        return " WHERE 0", []
    return f" WHERE project IN ({','.join('?' * len(projects))})", list(projects)


def folders(conn: sqlite3.Connection, slug: str) -> list[tuple[str, int]]:
    """(folder, entries) of each folder the project's entries were banked in, the busiest first."""
    return conn.execute("SELECT cwd, entries FROM folders WHERE slug = ? ORDER BY entries DESC, cwd",
                        (slug,)).fetchall()


def titles(conn: sqlite3.Connection, paths: set[str]) -> dict[str, str]:
    """{`<slug>/bank/<file>.md`: title} of those of these entries the index holds."""
    if not paths:
        return {}
    marks = ",".join("?" * len(paths))
    return dict(conn.execute(f"SELECT path, title FROM docs WHERE path IN ({marks})", sorted(paths)).fetchall())
