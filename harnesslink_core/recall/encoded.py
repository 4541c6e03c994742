"""Entry vectors from the resident encoder (recall/encoder.py), in the index beside the static ones
(`vectors`): the transformer side of meaning.

- `encoded(path, mtime_ns, size, vec)`: an entry's vector (384 floats as signed bytes, `meaning.pack`),
  keyed by the entry's file as it was when encoded, so a rebuilt index keeps them (its doc ids change,
  the files do not) and a file that changed is encoded again; `meta.encoder_model` names the model
  that made them, and another model empties the table.
- `fill`: made in the background only (`index.fill_vectors`: the drain pass, backfill, reindex, the
  detached refresh), in batches the encoder answers between the hooks' requests, and only while it
  answers; never inside a hook's answer.
- `vectors_of`, `cosine`: the prompt hook's read of the candidates' vectors and its comparison (on that path:
  no `array`, which brings `collections`, hence no `meaning` at import).

An index without this table, or with only some entries encoded, answers as before, by the words and
the static vectors.
"""

from __future__ import annotations

import math

from ..fastsqlite import Transaction, sqlite3
from . import encoder_client

TABLE = ("CREATE TABLE IF NOT EXISTS encoded (path TEXT PRIMARY KEY, mtime_ns INTEGER NOT NULL,"
         " size INTEGER NOT NULL, vec BLOB NOT NULL)")
BATCH = 16  # entries read and written together
REQUEST = 1  # entries per request: a prompt asked meanwhile waits behind one entry, not a batch
BATCH_MS = 60_000  # what one request may take (a busy machine, the model's first run)
CURRENT = "e.path = d.path AND e.mtime_ns = d.mtime_ns AND e.size = d.size"
BIAS = 128  # a stored byte is the int8 value + 128 (`meaning.pack`)


def model_stamp() -> str:
    """The hash of the model the encoder runs (a server of another model is never asked)."""
    return encoder_client.stamp().rsplit("/", 1)[-1]


def ensure(conn: sqlite3.Connection) -> None:
    """The table, emptied when its vectors are another model's."""
    stamp = model_stamp()
    row = conn.execute("SELECT value FROM meta WHERE key = 'encoder_model'").fetchone()
    with Transaction(conn):
        conn.execute(TABLE)
        if row is None or row[0] != stamp:
            conn.execute("DELETE FROM encoded")
            conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('encoder_model', ?)", (stamp,))


def fill(conn: sqlite3.Connection, locs, *, limit: int | None = None, progress=None,
         start: bool | None = None) -> int:
    """Encode the entries without a current vector, newest first (at most `limit`), while the encoder
    answers; `start`: spawn it first when there is work and it is not up, then wait for it (by default
    when `starts_on_demand`). Returns how many were made. `progress(made, due)` after each batch."""
    ensure(conn)
    with Transaction(conn):
        conn.execute("DELETE FROM encoded WHERE path NOT IN (SELECT path FROM docs)")
    due = pending(conn) or 0
    due = due if limit is None else min(due, limit)
    if not due or not _ready(locs, starts_on_demand(locs) if start is None else start):
        return 0
    made = 0
    below = 1 << 62  # each batch reads on from where the last one ended, not from the newest entry again (which
    # walked past every entry encoded so far: 11,413 entries all encoded took 156 ms to find none); an entry
    # indexed meanwhile, above where this fill started, is the next fill's
    while made < due:
        rows = conn.execute(
            "SELECT d.id, d.path, d.mtime_ns, d.size, d.title, f.prompt, f.result FROM docs d JOIN fts f ON f.rowid = d.id"
            f" WHERE d.id < ? AND NOT EXISTS (SELECT 1 FROM encoded e WHERE {CURRENT}) ORDER BY d.id DESC LIMIT ?",
            (below, min(BATCH, due - made))).fetchall()
        if not rows:
            break
        below = rows[-1][0]
        from .meaning import pack
        from .vectors import entry_text

        found = _encode(locs, [entry_text(title, prompt or "", result or "") for *_, title, prompt, result in rows])
        if found is None:  # gone or busy: the next background pass goes on
            break
        with Transaction(conn):
            conn.executemany("INSERT OR REPLACE INTO encoded(path, mtime_ns, size, vec) VALUES (?, ?, ?, ?)",
                             [(path, mtime, size, pack(vector))
                              for (_, path, mtime, size, *_), vector in zip(rows, found)])
        made += len(rows)
        if progress is not None:
            progress(made, due)
    return made


def _encode(locs, texts: list[str]) -> list[list[float]] | None:
    """The texts' vectors, asked `REQUEST` at a time so that a hook's request is served between them (the server
    answers one request after another: behind 16 texts, a prompt missed its deadline 61 times in 66 during a fill,
    benchmarks/prompt_during_fill.py); None if any went unanswered."""
    found: list[list[float]] = []
    for start in range(0, len(texts), REQUEST):
        vectors = encoder_client.encode(locs, texts[start:start + REQUEST], BATCH_MS)
        if vectors is None:
            return None
        found += vectors
    return found


def starts_on_demand(locs) -> bool:
    """Whether this process may start the encoder unasked: it runs from the private environment install.py
    made, where the encoder's runtime is installed with the package (`.[encoder]`). Run from anywhere else (a
    checkout, a test, CI), the encoder is started by `harnesslink encoder start` only, and used once up."""
    import os
    import sys

    private = os.path.join(locs.agent_path, "venv")
    try:
        return os.path.samefile(sys.prefix, private)
    except OSError:
        return False


def _ready(locs, start: bool, wait_s: float = 30.0) -> bool:
    """Whether the encoder answers (started and waited for, with `start`)."""
    import time

    if encoder_client.status(locs) is not None:
        return True
    if not start or not encoder_client.ensure_started(locs):
        return False
    end = time.monotonic() + wait_s
    while time.monotonic() < end:
        if encoder_client.status(locs, 200) is not None:
            return True
        time.sleep(0.1)
    return False


def pending(conn: sqlite3.Connection) -> int | None:
    """How many entries have no current vector (None: the index has no such table yet)."""
    try:
        return conn.execute("SELECT count(*) FROM docs d WHERE NOT EXISTS"
                            f" (SELECT 1 FROM encoded e WHERE {CURRENT})").fetchone()[0]
    except sqlite3.OperationalError:
        return None


def any_made(conn: sqlite3.Connection) -> bool:
    """Whether the index holds any entry vector of this model (the encoder has served this machine)."""
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'encoder_model'").fetchone()
        return (row is not None and row[0] == model_stamp()
                and conn.execute("SELECT EXISTS (SELECT 1 FROM encoded)").fetchone()[0] == 1)
    except sqlite3.OperationalError:
        return False


def vectors_of(conn: sqlite3.Connection, ids: list[int]) -> dict[int, list[int]]:
    """The current vectors of these entries (by doc id; those that have one, of this model)."""
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'encoder_model'").fetchone()
        if row is None or row[0] != model_stamp():
            return {}
        rows = conn.execute(f"SELECT d.id, e.vec FROM docs d JOIN encoded e ON {CURRENT}"
                            f" WHERE d.id IN ({marks})", ids).fetchall()
    except sqlite3.OperationalError:  # an index made before these vectors
        return {}
    return {doc_id: [b - BIAS for b in blob] for doc_id, blob in rows}


def cosine(vector: list[float], stored: list[int]) -> float:
    """The cosine of the prompt's vector (unit length) and an entry's stored one."""
    dot = sum(a * b for a, b in zip(vector, stored))
    norm = math.sqrt(sum(b * b for b in stored))
    return dot / norm if norm else 0.0

