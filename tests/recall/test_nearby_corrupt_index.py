"""A corrupt or hostile index never costs the resident encoder's search more than the rows it spoils
(recall/nearby.py): a vector stored as text, a schema whose project column sorts without regard to case."""

from __future__ import annotations

import sqlite3

import pytest

np = pytest.importorskip("numpy")

from harnesslink_core.recall import encoded  # noqa: E402
from harnesslink_core.recall.nearby import Nearby  # noqa: E402


def index_file(path, rows: list[tuple[str, object]], project_column: str = "project TEXT NOT NULL") -> list[int]:
    """A bare index holding `rows` (project, stored vector) with the current model's stamp; their doc ids."""
    conn = sqlite3.connect(path)
    try:
        conn.executescript(f"""
            CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
            CREATE TABLE docs (id INTEGER PRIMARY KEY, path TEXT NOT NULL, {project_column},
                               mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL);
            {encoded.TABLE};""")
        conn.execute("INSERT INTO meta VALUES ('encoder_model', ?)", (encoded.model_stamp(),))
        conn.executemany("INSERT INTO docs(id, path, project, mtime_ns, size) VALUES (?, ?, ?, 1, 1)",
                         [(n + 1, f"p/{n}.md", project) for n, (project, _) in enumerate(rows)])
        conn.executemany("INSERT INTO encoded(path, mtime_ns, size, vec) VALUES (?, 1, 1, ?)",
                         [(f"p/{n}.md", vec) for n, (_, vec) in enumerate(rows)])
        conn.commit()
    finally:
        conn.close()
    return [n + 1 for n in range(len(rows))]


def codes(rng, count: int) -> list[bytes]:
    return [row.tobytes() for row in rng.integers(0, 256, size=(count, 384), dtype=np.uint8)]


def test_a_vector_stored_as_text_is_passed_over_and_the_others_answer(tmp_path):
    rng = np.random.default_rng(11)
    good = codes(rng, 6)
    ids = index_file(tmp_path / "index.db", [("app", good[0]), ("app", "x" * 384), ("app", "é" * 384),
                                              *[("app", code) for code in good[1:]]])
    nearby = Nearby(str(tmp_path / "index.db"))
    query = np.frombuffer(good[3], dtype=np.uint8).astype(np.float32) - encoded.BIAS
    found = nearby.nearest(query / np.linalg.norm(query), ["app"], 32)
    assert {doc for doc, _ in found} == {ids[0], *ids[3:]}
    assert found[0][0] == ids[5] and found[0][1] == pytest.approx(1.0, abs=1e-5)
    assert nearby.in_scope(["app"]) == 6


def test_projects_that_a_schema_sorts_as_equal_keep_their_own_entries(tmp_path):
    """`App` and `app` are two projects (two folders on a case-sensitive disk), whatever collation the
    index's column declares: each scope gets its own entries, never the other's."""
    rng = np.random.default_rng(12)
    rows = [(("app", "App")[n % 2], code) for n, code in enumerate(codes(rng, 40))]
    ids = index_file(tmp_path / "index.db", rows, "project TEXT NOT NULL COLLATE NOCASE")
    nearby = Nearby(str(tmp_path / "index.db"))
    query = np.ones(384, dtype=np.float32) / np.sqrt(384)
    for project in ("app", "App"):
        own = {doc for doc, (owner, _) in zip(ids, rows) if owner == project}
        assert {doc for doc, _ in nearby.nearest(query, [project], 32)} == own
        assert nearby.in_scope([project]) == 20


def test_an_agent_folder_whose_path_a_uri_would_cut_is_read(tmp_path):
    """The index is opened by its path, whatever characters a URI gives a meaning to (`?`, `#`, `%`)."""
    rng = np.random.default_rng(13)
    folder = tmp_path / "agent #1 ?50%25"
    folder.mkdir()
    ids = index_file(folder / "index.db", [("app", code) for code in codes(rng, 3)])
    nearby = Nearby(str(folder / "index.db"))
    query = np.ones(384, dtype=np.float32) / np.sqrt(384)
    assert {doc for doc, _ in nearby.nearest(query, ["app"], 8)} == set(ids)


@pytest.mark.parametrize("side", ["", "-wal"])
def test_a_fifo_in_the_index_place_is_never_opened(tmp_path, side):
    """A FIFO holds whoever opens it until a writer comes: the encoder would hang, serving no one, never idle."""
    import os
    import threading

    rng = np.random.default_rng(14)
    path = tmp_path / "index.db"
    index_file(path, [("app", code) for code in codes(rng, 3)])
    if side:
        os.mkfifo(str(path) + side)
    else:
        path.unlink()
        os.mkfifo(path)
    found: list = []
    reader = threading.Thread(target=lambda: found.append(Nearby(str(path)).nearest(np.ones(384) / np.sqrt(384),
                                                                                     ["app"], 8)), daemon=True)
    reader.start()
    reader.join(5)
    try:
        assert found == [[]], "the search waited on the FIFO"
    finally:
        if reader.is_alive():  # let it go: a writer opens the FIFO and closes it at once
            fd = os.open(str(path) + side, os.O_WRONLY | os.O_NONBLOCK)
            os.close(fd)


def test_an_index_swapped_for_one_that_cannot_be_opened_reads_as_none(tmp_path):
    """The vectors held go, and the reload neither raises nor keeps the closed connection of the index that went."""
    import os

    rng = np.random.default_rng(15)
    path = tmp_path / "index.db"
    ids = index_file(path, [("app", code) for code in codes(rng, 3)])
    nearby = Nearby(str(path))
    query = np.ones(384, dtype=np.float32) / np.sqrt(384)
    assert {doc for doc, _ in nearby.nearest(query, ["app"], 8)} == set(ids)
    os.rename(path, tmp_path / "gone.db")
    os.mkdir(path)  # SQLite cannot open a folder
    assert nearby.stale()
    nearby.reload()
    assert nearby.nearest(query, ["app"], 8) == [] and nearby.stale()
    os.rmdir(path)
    os.rename(tmp_path / "gone.db", path)
    nearby.reload()
    assert {doc for doc, _ in nearby.nearest(query, ["app"], 8)} == set(ids)
