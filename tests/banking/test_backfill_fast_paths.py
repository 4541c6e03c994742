"""The backfill's fast paths give what the plain ones gave: identifiers and versions
found by the character they turn on are what the regular expressions found, the index columns a pass
makes while its entries sync are the ones a rebuild makes from the files, and a time parsed twice in a
row is not a stale one."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from claude_builder import ClaudeSession
from harnesslink_core.banking import autobank, finish
from harnesslink_core.clock import parse_iso
from harnesslink_core.recall import index, tokens

# what `derived_keys` used before (tokens.py keeps the first as `_IDENTIFIER`, the second in a comment)
SHORT_VERSION = r"(?<![\w.$-])[vV]?\d{1,2}(?:\.\d+){0,2}\b(?!\.\d)"
# letters of each case, digits, `_`, the punctuation the patterns look at, and non-ASCII word characters
TEXT = st.text(alphabet="aZbY_9 0.-$/vVé٣K\nĀxD", max_size=40)


@settings(max_examples=3000, deadline=None)
@given(TEXT)
def test_identifiers_are_what_the_regular_expression_finds(text: str) -> None:
    assert tokens._identifiers(text, tokens._patterns()) == re.findall(tokens._IDENTIFIER, text)


@settings(max_examples=3000, deadline=None)
@given(TEXT)
def test_short_versions_are_where_the_first_expression_found_them(text: str) -> None:
    assert ([m.span() for m in tokens._patterns()[2].finditer(text)]
            == [m.span() for m in re.finditer(SHORT_VERSION, text)])


def _derived_keys_as_before(text: str, is_word) -> str:
    """`derived_keys` as it was written with the two regular expressions."""
    keys: dict[str, None] = {}
    for match in re.finditer(tokens._IDENTIFIER, text):
        word = match.group(0)
        parts = tokens.identifier_parts(word)
        if parts:
            keys["".join(parts) if "_" in word else " ".join(parts)] = None
    for match in list(re.finditer(SHORT_VERSION, text))[:tokens.MAX_VERSION_KEYS]:
        number = match.group(0).lower().lstrip("v")
        before = re.findall(r"[^\W_]+", text[max(0, match.start() - 80):match.start()])[-tokens.VERSION_REACH:]
        for word in (w.lower() for w in before):
            if word.isalpha() and len(word) > 1 and is_word(word):
                keys[f"{word}{number}"] = None
    return " ".join(keys)


WORDS = st.lists(st.sampled_from(["applyDiscount", "HTTPServer", "stripe_event_id", "x_", "_y", "Node", "v22",
                                  "2.10", "3.4.0", "to", "from", "Airflow", "GitHub", "aB", "é_b", "(", ";", "\n",
                                  "ProcessedEvent.id", "v1.2.3.4", "$5", "-7", "SDK"]), max_size=30)


@settings(max_examples=2000, deadline=None)
@given(WORDS, st.sampled_from([" ", "", "."]))
def test_derived_keys_are_what_they_were(words: list[str], glue: str) -> None:
    text = glue.join(words)
    is_word = lambda word: word not in {"from", "to"}
    assert tokens.derived_keys(text, is_word) == _derived_keys_as_before(text, is_word)


def test_a_time_parsed_twice_in_a_row_and_then_another() -> None:
    assert parse_iso("2026-08-28T10:00:00Z") == parse_iso("2026-08-28T10:00:00Z") == 1787911200.0
    assert parse_iso("2026-08-28T10:00:01.500Z") == 1787911201.5
    assert parse_iso("not a time") is None and parse_iso("not a time") is None
    assert parse_iso("2026-08-28T10:00:00Z") == 1787911200.0


def _rows(locs) -> list[tuple]:
    conn = sqlite3.connect(locs.index_path)
    try:
        return conn.execute(
            "SELECT d.path, d.title, d.sketch, f.title, f.tags, f.prompt, f.actions, f.result, f.keys, f.detail_keys"
            " FROM docs d JOIN fts f ON f.rowid = d.id ORDER BY d.path").fetchall()
    finally:
        conn.close()


def test_a_pass_indexes_its_entries_as_a_rebuild_from_their_files_does(locs, isolated_home: Path, monkeypatch) -> None:
    s = ClaudeSession(isolated_home, cwd="/work/shop")
    for n in range(6):
        s.turn(f"Fix applyDiscount for order_{n} in Node 22", f"Changed the ProcessedEvent handler {n}; " + "ok " * 80,
               tools=[("Bash", {"command": f"pytest tests/test_orders.py -k case_{n}"})])
    s.flush()
    calls: list[str] = []
    real_columns, real_refresh = index.computed_columns, finish.refresh_index

    def refresh(self):
        calls.append("refresh")
        try:
            return real_refresh(self)
        finally:
            calls.append("refreshed")

    monkeypatch.setattr(index, "computed_columns", lambda *a: calls.append("columns") or real_columns(*a))
    monkeypatch.setattr(finish, "refresh_index", refresh)
    assert autobank.run_pass(locs).banked == 6
    # every entry came to the refresh with its columns, made while the files synced
    assert calls == ["columns"] * 6 + ["refresh", "refreshed"]
    by_pass = _rows(locs)
    assert len(by_pass) == 6 and all(row[2] and "apply discount" in row[8] for row in by_pass)
    index.rebuild(locs)  # every column made again, from the files
    assert calls.count("columns") == 12
    assert _rows(locs) == by_pass
