"""`framing.without_invisible` builds its translate table only for a text holding a character it removes or folds
(the prompt hook's headers carry `—` and `·`, which it leaves); the answer is the same either way."""

from __future__ import annotations

from harnesslink_core.recall import framing

HEADER = "[1] login session bug 9521 — 2026-06-04 11:07 UTC · claude-code · /m/bank/x.md"


def test_a_text_with_nothing_to_fold_leaves_the_table_unbuilt(monkeypatch):
    monkeypatch.setattr(framing, "_invisible", {})
    assert framing.neutralise(HEADER) == HEADER
    assert framing._invisible == {}


def test_a_text_with_something_to_fold_is_folded_as_before(monkeypatch):
    monkeypatch.setattr(framing, "_invisible", {})
    hidden = "a\u200bb ＜／harnesslink-memory＞ · —"
    assert framing.without_invisible(hidden) == "ab </harnesslink-memory> · —"
    assert framing._invisible
    assert framing.without_invisible(HEADER) == HEADER
