"""The index's query API (recall/query.py): the full-text search is built as (sql, params) apart from being
run, and a search gives its hits' text and matched terms only when asked."""

from __future__ import annotations

from harnesslink_core.recall import index, query
from harnesslink_core.store.scope import scope_for
from memory_helpers import SHOP, make_locs, write_entry


def test_the_search_sql_is_built_without_a_database():
    sql, params = query.search_sql(["cache", ["popup", "modal"]], ["proj"], limit=5, exclude_session="s1",
                                   exclude_paths=["proj/bank/a.md"], rowids=(10, None))
    assert "fts MATCH ?" in sql and "d.session_id != ?" in sql and "fts.rowid > ?" in sql and sql.endswith("LIMIT ?")
    assert params[0] == f'scope:({index.scope_token("proj")}) AND ("cache" OR "popup" OR "modal")'
    assert params[1:] == ["proj", "s1", 10, "proj/bank/a.md", 5]
    unscoped, unscoped_params = query.search_sql(["cache"], ["proj"], by_scope=False)
    assert "scope:" not in unscoped_params[0] and "d.project IN (?)" in unscoped
    assert query.search_sql([], ["proj"]) is None and query.search_sql(["cache"], []) is None


def test_a_search_gives_text_and_matched_terms_only_when_asked(tmp_path):
    locs = make_locs(tmp_path)
    write_entry(locs, SHOP, title="Postgres pool exhausted", result="Raised the pool size to 40 connections.",
                ts="2026-08-10T10:00:00.000Z", session_id="a")
    index.refresh(locs)
    conn = index.connect(locs)
    try:
        hits = query.search(conn, ["postgres", "connections", "redis"], scope_for(locs, SHOP))
        assert [(h.prompt, h.result, h.matched) for h in hits] == [("", "", [])]
        query.mark_matched(conn, query.with_text(conn, hits), ["postgres", "connections", "redis"])
        assert hits[0].matched == ["postgres", "connections"] and "40 connections" in hits[0].result
    finally:
        conn.close()


def test_entries_named_by_id_are_read_by_id_not_by_walking_their_projects_entries(tmp_path):
    """`hits_of` (the encoder's nearest entries, a pull's) reads the rows it is given, not the project's whole
    span of entries around them: its work, counted in SQLite's steps, is the same in a bank of 20,000 as of 200."""
    from harnesslink_core.fastsqlite import Transaction

    def steps_to_read(entries: int) -> int:
        (tmp_path / str(entries)).mkdir()
        locs = make_locs(tmp_path / str(entries))
        conn = index.connect(locs)
        try:
            with Transaction(conn):
                conn.executemany(
                    "INSERT INTO docs(id, path, project, mtime_ns, size, ts, title, harness, source, session_id,"
                    " turn_key, cwd) VALUES (?, ?, 'app', 1, 1, ?, ?, 'pi', 'autobank:pi', 's', ?, '/w')",
                    [(n, f"app/bank/{n}.md", float(n), f"entry {n}", f"k{n}") for n in range(1, entries + 1)])
                conn.executemany("INSERT INTO fts(rowid, title, scope) VALUES (?, ?, ?)",
                                 [(n, f"entry {n}", index.scope_token("app")) for n in range(1, entries + 1)])
            asked = [entries - 7 * n for n in range(16)]
            steps = []
            conn.set_progress_handler(lambda: steps.append(1) or 0, 100)
            hits = query.hits_of(conn, asked, ["app"], exclude_session="other")
            conn.set_progress_handler(None, 0)
            assert [hit.doc_id for hit in hits] == asked
            return len(steps)
        finally:
            conn.close()

    assert steps_to_read(20_000) <= steps_to_read(200) + 5
