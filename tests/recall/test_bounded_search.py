"""The prompt hook's work stays bounded whatever the bank looks like: prompts whose every word is
everywhere search nothing, and words that common are ranked only among the newest entries.

The thresholds are made small here (the real ones need thousands of entries) by patching them."""

from __future__ import annotations

import pytest

from harnesslink_core.recall import candidates, index, matches, query
from harnesslink_core.store.scope import project_slug
from memory_helpers import at, make_locs, write_entry

CWD = "/home/dev/big"
SLUG = project_slug(CWD)


def indexed(locs, batches: list[list[dict]]):
    """Entries written and indexed batch after batch, so later batches get higher rowids (newer)."""
    conn = index.connect(locs)
    n = 0
    for batch in batches:
        for spec in batch:
            n += 1
            write_entry(locs, CWD, ts=at("2026-08-01T00:00:00.000Z", n * 60), turn_id=f"t{n}", **spec)
        index.sync(conn, locs, [SLUG], force=True)
    return conn


def filler(n: int, words: str) -> list[dict]:
    return [{"title": f"routine chore {i}", "result": f"{words} tidy number {i}"} for i in range(n)]


def test_a_prompt_whose_every_word_is_everywhere_searches_and_injects_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(candidates, "COMMON_CAP", 20)
    locs = make_locs(tmp_path)
    conn = indexed(locs, [filler(120, "deploy cache server")])
    decision = matches.find_matches(conn, "deploy the cache server", [SLUG])
    assert decision.hits == [] and decision.rejected == []
    assert decision.skipped and decision.skipped.startswith("every term is in 20 entries")
    assert decision.terms == ["deploy", "cache", "server"]


def test_words_that_common_are_ranked_only_among_the_newest_entries(tmp_path, monkeypatch):
    monkeypatch.setattr(candidates, "COMMON_CAP", 20)
    monkeypatch.setattr(candidates, "COMMON_WINDOW", 40)
    locs = make_locs(tmp_path)
    old = [{"title": f"widget gizmo failure {i}", "result": "the widget gizmo broke, fixed the gizmo"}
           for i in range(25)]
    new = [{"title": f"widget gizmo outage {i}", "result": "the widget gizmo broke again, restarted"}
           for i in range(25)]
    # 25 + 25 of 300 entries hold both words: over COMMON_CAP, under a fifth of the scope
    conn = indexed(locs, [old, filler(120, "plain"), filler(120, "plain"), new, filler(10, "plain")])
    decision = matches.find_matches(conn, "widget gizmo", [SLUG])
    assert decision.hits, decision
    considered = decision.hits + [hit for hit, _ in decision.rejected]
    newest = query.max_rowid(conn)
    assert all(hit.doc_id > newest - 40 for hit in considered), [hit.title for hit in considered]
    assert all("outage" in hit.title for hit in decision.hits)


@pytest.mark.parametrize("window", [40, 10_000])
def test_a_rare_word_is_searched_in_the_whole_bank(tmp_path, monkeypatch, window):
    monkeypatch.setattr(candidates, "COMMON_CAP", 20)
    monkeypatch.setattr(candidates, "COMMON_WINDOW", window)
    locs = make_locs(tmp_path)
    old = [{"title": "flamegraph of the widget renderer", "result": "the flamegraph showed the widget layout"}]
    conn = indexed(locs, [old, filler(150, "widget")])
    decision = matches.find_matches(conn, "flamegraph widget", [SLUG])
    assert [hit.title for hit in decision.hits] == ["flamegraph of the widget renderer"]


def test_in_a_big_bank_a_word_counted_up_to_the_cap_is_common(tmp_path, monkeypatch):
    """Counting stops at RECOUNT_CAP: a word that reaches it is at least that common, never rare."""
    monkeypatch.setattr(candidates, "COMMON_CAP", 20)
    monkeypatch.setattr(candidates, "COMMON_WINDOW", 40)
    monkeypatch.setattr(candidates, "RECOUNT_CAP", 30)
    locs = make_locs(tmp_path)
    conn = indexed(locs, [filler(150, "deploy cache server"), filler(150, "deploy cache server")])
    decision = matches.find_matches(conn, "deploy the cache server", [SLUG])
    assert decision.hits == [] and decision.skipped and decision.skipped.startswith("every term")
