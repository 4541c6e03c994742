"""Meaning vectors: the static model, the entry vectors in the index, and the pull that fuses
words and meaning."""

from __future__ import annotations

import hashlib
import json
import random
import socket
import sqlite3
import subprocess
import sys

import pytest

from harnesslink_core.recall import index, meaning, pull, query, vectors
from harnesslink_core.store.scope import project_slug
from memory_helpers import REPO, SHOP, build_corpus, make_env, make_locs, write_entry

MODEL_DIR = REPO / "harnesslink_core" / "data" / "meaning"


def test_the_model_table_loads_with_no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise OSError("no network in this test")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    model = meaning.Model()
    assert len(model.vector("the login test fails after midnight")) == meaning.DIMS


def test_the_model_table_is_what_its_build_recorded():
    """meta.json's hash is the build script's digest of the vocabulary and the quantised vectors: a
    second distillation (`scripts/build_meaning_model.py --check`) compares against it."""
    meta = json.loads((MODEL_DIR / "meta.json").read_text())
    conn = sqlite3.connect(f"file:{MODEL_DIR / 'model.db'}?mode=ro", uri=True)
    pieces = [p for p, in conn.execute("SELECT piece FROM pieces ORDER BY id")]
    table = b"".join(bytes((b - 128) & 0xFF for b in vec) for vec, in conn.execute("SELECT vec FROM vectors ORDER BY id"))
    digest = hashlib.sha256("\n".join(pieces).encode() + table).hexdigest()
    assert (len(pieces), digest) == (meta["pieces"], meta["sha256"])
    assert meta["licence"] == "Apache-2.0"


def test_a_prompt_vector_needs_no_numpy_and_no_re(tmp_path):
    """What the prompt's side costs: the package, sqlite3 and the table; no numpy, no `re` (the hot path's list)."""
    code = ("import sys\nfrom harnesslink_core.recall import meaning\n"
            "v = meaning.load().vector('why did signing in stop working right after 12am?')\n"
            "assert len(v) == meaning.DIMS\nprint(' '.join(sys.modules))")
    out = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(REPO), "HOME": str(tmp_path),
                              "HARNESSLINK_HOME": str(tmp_path / ".superpi" / "agent")})
    loaded = set(out.stdout.split())
    assert not loaded & {"numpy", "re", "json", "onnxruntime", "torch", "unicodedata"}, loaded


def test_the_tokenizer_splits_words_into_known_pieces():
    model = meaning.Model()
    pieces = model.piece_ids("Refactoring applyDiscount() in café.py")
    names = {i: p for p, i in model.conn.execute("SELECT piece, id FROM pieces")}
    words, word = [], ""
    for piece in (names[i] for i in pieces):
        if piece.startswith("##"):
            word += piece[2:]
        else:
            words.append(word)
            word = piece
    words.append(word)
    # lower case, punctuation alone, accents stripped, as the source model reads text; pieces join back up
    assert [w for w in words if w] == ["refactoring", "applydiscount", "(", ")", "in", "cafe", ".", "py"]


def test_similar_texts_are_closer_than_unrelated_ones():
    model = meaning.Model()
    a = model.vector("the database connection pool was exhausted under heavy traffic")
    b = model.vector("postgres ran out of connections when many requests came in")
    c = model.vector("a recipe for lemon cake with poppy seeds")
    assert meaning.cosine(a, b) > max(0.1, 2 * meaning.cosine(a, c))


def test_the_code_scan_finds_the_nearest_codes():
    rng = random.Random(4)
    codes = [rng.getrandbits(128) for _ in range(3000)]
    blob = b"".join(c.to_bytes(vectors.CODE_BYTES, "little") for c in codes)
    query = rng.getrandbits(128)
    got = vectors._closest_slots(query, blob, len(codes), 20)
    distances = [(c ^ query).bit_count() for c in codes]
    cut = sorted(distances)[19]
    assert sorted(got) == [i for i, d in enumerate(distances) if d <= cut][:40]


def _indexed(tmp_path):
    locs = make_locs(tmp_path)
    build_corpus(locs)
    index.rebuild(locs)
    return locs


def test_every_entry_gets_a_vector_when_indexed(tmp_path):
    locs = _indexed(tmp_path)
    conn = index.connect(locs)
    try:
        assert vectors.pending(conn) == 0
        assert conn.execute("SELECT count(*) FROM meaning").fetchone()[0] == conn.execute(
            "SELECT count(*) FROM docs").fetchone()[0]
    finally:
        conn.close()


def test_a_paraphrase_with_no_shared_word_is_found_through_meaning(tmp_path):
    locs = _indexed(tmp_path)
    paraphrase = "too few sockets for simultaneous visitors"  # the entry: "Postgres errors: too many clients"
    conn = index.connect(locs)
    try:
        by_words = query.search(conn, pull.query_terms(paraphrase), [project_slug(SHOP)], limit=3)
        found = pull.recall(conn, paraphrase, [project_slug(SHOP)], limit=3)
        fused = pull.recall(conn, "postgres ran out of connections when many requests came in", [project_slug(SHOP)],
                            limit=3)
    finally:
        conn.close()
    assert by_words == []  # not one of its meaningful words is in the bank
    assert found and "too many clients" in found[0].title
    assert "meaning cosine" in found[0].why
    assert "too many clients" in fused[0].title


def test_an_index_without_vectors_still_answers(tmp_path):
    """An index made before vectors (or with the tables lost): the pull answers by words, the scan by nothing."""
    locs = _indexed(tmp_path)
    conn = index.connect(locs)
    try:
        conn.execute("DROP TABLE meaning")
        conn.execute("DROP TABLE meaning_packs")
        assert vectors.nearest(conn, meaning.load().vector("postgres"), [project_slug(SHOP)]) == []
        assert vectors.pending(conn) is None
        hits = pull.recall(conn, "postgres too many clients", [project_slug(SHOP)], limit=3, meaning_weight=0)
        assert hits and "too many clients" in hits[0].title
        # the background pass builds them again
        assert vectors.fill(conn) == conn.execute("SELECT count(*) FROM docs").fetchone()[0]
        assert vectors.nearest(conn, meaning.load().vector("postgres"), [project_slug(SHOP)])
    finally:
        conn.close()


def test_a_pull_gives_a_vector_to_what_was_indexed_since_the_last_fill(tmp_path):
    """An entry just indexed (by the pull's own sync) is ranked by meaning too, not by its words alone."""
    locs = _indexed(tmp_path)
    conn = index.connect(locs)
    try:
        conn.execute("DELETE FROM meaning WHERE doc_id = (SELECT max(id) FROM docs)")
        assert vectors.pending(conn) == 1
        pull.recall(conn, "postgres too many clients", [project_slug(SHOP)], limit=3)
        assert vectors.pending(conn) == 0
    finally:
        conn.close()


def test_a_removed_entry_takes_its_vector_with_it(tmp_path):
    locs = _indexed(tmp_path)
    conn = index.connect(locs)
    try:
        doc_id, path = conn.execute("SELECT id, path FROM docs ORDER BY id LIMIT 1").fetchone()
        index.remove(conn, [path])
        assert conn.execute("SELECT count(*) FROM meaning WHERE doc_id = ?", (doc_id,)).fetchone()[0] == 0
        near = vectors.nearest(conn, meaning.load().vector("login session cookie"), [project_slug(SHOP)])
        assert doc_id not in {d for d, _ in near}  # the pack still names it; the exact scoring does not
    finally:
        conn.close()


def test_a_pass_fills_vectors_of_what_it_banked_and_the_scan_finds_them(tmp_path):
    locs = _indexed(tmp_path)
    write_entry(locs, SHOP, title="Kubernetes pods evicted for ephemeral storage",
                result="The node's disk filled with container logs; log rotation now keeps 50 MB per pod.",
                ts="2026-08-30T10:00:00.000Z", session_id="k-1")
    index.refresh(locs)  # what a hook's pass does: the new entry's code goes at the end of its project's pack
    conn = index.connect(locs)
    try:
        assert vectors.pending(conn) == 0
        newest = conn.execute("SELECT max(id) FROM docs").fetchone()[0]
        near = vectors.nearest(conn, meaning.load().vector("pods evicted, node disk full of container logs"),
                               [project_slug(SHOP)])
        assert near[0][0] == newest
        ids = conn.execute("SELECT ids FROM meaning_packs WHERE project = ?", (project_slug(SHOP),)).fetchone()[0]
        assert list(__import__("array").array("q", ids)) == sorted(
            d for d, in conn.execute("SELECT doc_id FROM meaning m JOIN docs d ON d.id = m.doc_id WHERE d.project = ?",
                                     (project_slug(SHOP),)))
    finally:
        conn.close()


def test_the_pull_never_reads_another_project(tmp_path):
    locs = _indexed(tmp_path)
    other = "/home/dev/elsewhere"
    write_entry(locs, other, title="Postgres ran out of connections in the other project",
                result="pool_size raised to 50", session_id="x-1")
    index.refresh(locs)
    conn = index.connect(locs)
    try:
        hits = pull.recall(conn, "postgres ran out of connections", [project_slug(SHOP)], limit=10)
    finally:
        conn.close()
    assert hits and all(h.project == project_slug(SHOP) for h in hits)


@pytest.mark.parametrize("query", ["", "   ", "\ud800 lone surrogate", "x" * 100_000])
def test_the_pull_takes_any_query(tmp_path, query):
    locs = _indexed(tmp_path)
    conn = index.connect(locs)
    try:
        pull.recall(conn, query, [project_slug(SHOP)], limit=5)
    finally:
        conn.close()


def test_memory_search_says_why_each_entry_ranks_where_it_does(tmp_path):
    from harnesslink_core.memory_tools import Session, call

    locs = _indexed(tmp_path)
    env = make_env(tmp_path)
    text = call("memory_search", {"query": "too few sockets for simultaneous visitors"},
                Session(locs, SHOP, "claude-code", "s-now"))
    assert "too many clients" in text and "meaning cosine" in text.split("too many clients", 1)[1].split("\n\n", 1)[0]
    assert env["HOME"] in str(locs.memories)


def test_after_an_upgrade_status_shows_the_vectors_to_build_and_the_background_builds_them(tmp_path):
    """An index made before vectors: `status` says how many are left; a hook's pass builds only a few
    (`FILL_PER_REFRESH`), the background drain the rest."""
    from harnesslink_core.commands import status

    locs = make_locs(tmp_path)
    for n in range(index.FILL_PER_REFRESH + 8):
        write_entry(locs, SHOP, title=f"Entry number {n} about the checkout", result="Nothing much.",
                    ts=f"2026-08-{1 + n % 28:02d}T10:{n % 60:02d}:00.000Z", session_id=f"s-{n}")
    index.rebuild(locs)
    conn = index.connect(locs)
    conn.execute("DROP TABLE meaning")
    conn.execute("DROP TABLE meaning_packs")
    conn.close()
    assert "meaning vectors not built yet" in status.search_line(status.search_index(locs))
    write_entry(locs, SHOP, title="One more entry", result="Banked by a hook's pass.", session_id="s-new")
    index.refresh(locs)  # what a hook's pass does after banking
    line = status.search_line(status.search_index(locs))
    assert f"meaning vectors for {index.FILL_PER_REFRESH} of them, 9 to go" in line, line
    index.fill_vectors(locs)  # what the background drain does
    assert status.search_line(status.search_index(locs)).endswith("each with its meaning vector")
