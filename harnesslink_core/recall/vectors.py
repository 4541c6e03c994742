"""Entry vectors in the index (SPEC §6): the meaning side of recall.

- `meaning(doc_id, vec)`: each entry's vector (`meaning.pack`), made by `fill` in the
  background pass and by `reindex`, never on the prompt's path. An entry without one is
  still found by its words; an index made before vectors answers lexically until filled.
- `meaning_packs(project, ids, codes)`: per project, every vector's sign bits in one blob,
  so that a prompt scans a project's 10,000 entries with a few operations on one big
  integer (`nearest`) instead of 10,000 rows, then scores the closest few exactly.

A pack may lag its project (entries filled since are not scanned until the next fill,
but are still searched by words) and may name entries since deleted (the exact scoring
reads `meaning`, whose rows go with their entry): it is never wrong, only short.

This module is on the prompt hook's path (`nearest`, `vectors_of`): stdlib only.
"""

from __future__ import annotations

from array import array

from ..fastsqlite import Transaction, sqlite3
from . import meaning

TABLES = (
    "CREATE TABLE IF NOT EXISTS meaning (doc_id INTEGER PRIMARY KEY, vec BLOB NOT NULL)",
    "CREATE TABLE IF NOT EXISTS meaning_packs (project TEXT PRIMARY KEY, ids BLOB NOT NULL, codes BLOB NOT NULL)",
)
CODE_BYTES = 16  # 128 sign bits: the first half of the dimensions, where most of the variance is
FILL_BATCH = 256
TEXT_CHARS = 4000  # of an entry's prompt and result: the model reads its first 512 pieces anyway
RESCORE = 48  # closest codes scored exactly
SCAN_LIMIT = 50_000  # the newest entries of a scope scanned by code; older ones are found by their words


def ensure(conn: sqlite3.Connection) -> None:
    """The tables, in an index made before vectors; drop vectors of another model than the shipped one."""
    for statement in TABLES:
        conn.execute(statement)
    model = meaning.load()
    if model is None:
        return
    row = conn.execute("SELECT value FROM meta WHERE key = 'meaning_model'").fetchone()
    if row is None or row[0] != model.name:
        with Transaction(conn):
            conn.execute("DELETE FROM meaning")
            conn.execute("DELETE FROM meaning_packs")
            conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('meaning_model', ?)", (model.name,))


def entry_text(title: str, prompt: str, result: str) -> str:
    return f"{title}\n{prompt[:TEXT_CHARS]}\n{result[:TEXT_CHARS]}"


def fill(conn: sqlite3.Connection, *, limit: int | None = None, progress=None) -> int:
    """Give a vector to every entry that has none (at most `limit`), then pack the projects
    touched. Returns how many were made; 0 when the model cannot be read. `progress(made, due)`
    is told after each batch, `due` being how many had none at the start (`pending`)."""
    model = meaning.load()
    if model is None:
        return 0
    ensure(conn)
    due = None
    if progress is not None:
        due = pending(conn) or 0
        due = due if limit is None else min(due, limit)
    made = 0
    touched: set[str] = set()
    while limit is None or made < limit:
        batch = FILL_BATCH if limit is None else min(FILL_BATCH, limit - made)
        rows = conn.execute(
            "SELECT d.id, d.project, d.title, f.prompt, f.result FROM docs d JOIN fts f ON f.rowid = d.id"
            " LEFT JOIN meaning m ON m.doc_id = d.id WHERE m.doc_id IS NULL ORDER BY d.id DESC LIMIT ?",
            (batch,)).fetchall()
        if not rows:
            break
        packed = []
        for doc_id, project, title, prompt, result in rows:
            vector = model.vector(entry_text(title, prompt or "", result or ""))
            packed.append((doc_id, meaning.pack(vector) if vector else b""))
            touched.add(project)
        with Transaction(conn):
            conn.executemany("INSERT OR REPLACE INTO meaning(doc_id, vec) VALUES (?, ?)", packed)
        made += len(rows)
        if progress is not None:
            progress(made, due)
    if touched:
        repack(conn, touched)
    return made


def repack(conn: sqlite3.Connection, projects) -> None:
    """Each project's codes in one blob, newest entries first."""
    with Transaction(conn):
        for project in projects:
            ids = array("q")
            codes = bytearray()
            for doc_id, blob in conn.execute(
                    "SELECT m.doc_id, m.vec FROM meaning m JOIN docs d ON d.id = m.doc_id"
                    " WHERE d.project = ? AND length(m.vec) > 0 ORDER BY m.doc_id DESC", (project,)):
                ids.append(doc_id)
                codes += _code(meaning.unpack(blob)).to_bytes(CODE_BYTES, "little")
            conn.execute("INSERT OR REPLACE INTO meaning_packs(project, ids, codes) VALUES (?, ?, ?)",
                         (project, ids.tobytes(), bytes(codes)))


def pending(conn: sqlite3.Connection) -> int | None:
    """How many entries have no vector yet (None: the index has no vectors at all yet)."""
    try:
        return conn.execute("SELECT count(*) FROM docs d LEFT JOIN meaning m ON m.doc_id = d.id"
                            " WHERE m.doc_id IS NULL").fetchone()[0]
    except sqlite3.OperationalError:
        return None


def vectors_of(conn: sqlite3.Connection, ids: list[int]) -> dict[int, list[int]]:
    """The stored vectors of these entries (those that have one)."""
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    try:
        rows = conn.execute(f"SELECT doc_id, vec FROM meaning WHERE doc_id IN ({marks})", ids).fetchall()
    except sqlite3.OperationalError:  # an index made before vectors
        return {}
    return {doc_id: meaning.unpack(blob) for doc_id, blob in rows if blob}


def nearest(conn: sqlite3.Connection, vector: list[float], projects: list[str], limit: int = RESCORE
            ) -> list[tuple[int, float]]:
    """The entries in scope whose vectors are closest to `vector`: (doc_id, cosine), best first.
    Codes are compared by Hamming distance, and the closest `limit` scored exactly."""
    if not vector or not projects:
        return []
    marks = ",".join("?" * len(projects))
    try:
        packs = conn.execute(f"SELECT ids, codes FROM meaning_packs WHERE project IN ({marks})", projects).fetchall()
    except sqlite3.OperationalError:
        return []
    ids = array("q")
    codes = bytearray()
    for blob_ids, blob_codes in packs:
        ids.frombytes(blob_ids[:SCAN_LIMIT * 8])
        codes += blob_codes[:SCAN_LIMIT * CODE_BYTES]
    if not ids:
        return []
    closest = [ids[slot] for slot in _closest_slots(_code(vector), bytes(codes), len(ids), limit)]
    stored = vectors_of(conn, closest)
    scored = [(doc_id, meaning.cosine(vector, stored[doc_id])) for doc_id in closest if doc_id in stored]
    return sorted(scored, key=lambda pair: -pair[1])


def _closest_slots(query: int, codes: bytes, n: int, limit: int) -> list[int]:
    """The slots of `codes` (n codes of CODE_BYTES) nearest `query` by Hamming distance: the
    `limit` nearest, and any tied with the last of them.

    XOR over one big int, bytes to their bit counts by a table, then each code's bytes
    summed into its first byte by shifting and adding, each step one operation over every
    code at once; then the distances are counted up to the one that holds `limit` codes."""
    x = int.from_bytes(codes, "little") ^ int.from_bytes(query.to_bytes(CODE_BYTES, "little") * n, "little")
    x = int.from_bytes(x.to_bytes(CODE_BYTES * n, "little").translate(_BIT_COUNTS), "little")
    shift = 8
    while shift < CODE_BYTES * 8:  # byte i gets bytes i..i+2k-1; at most 8 * CODE_BYTES = 128 fits in it
        x += x >> shift
        shift *= 2
    distances = x.to_bytes(CODE_BYTES * n + 1, "little")[:CODE_BYTES * n:CODE_BYTES]
    seen = 0
    for farthest in range(CODE_BYTES * 8 + 1):
        seen += distances.count(farthest)
        if seen >= limit:
            break
    near = distances.translate(bytes(1 if d <= farthest else 0 for d in range(256)))
    slots: list[int] = []
    at = near.find(1)
    while at >= 0 and len(slots) < 2 * limit:
        slots.append(at)
        at = near.find(1, at + 1)
    return slots


def _code(vector: list) -> int:
    return meaning.code(vector[:CODE_BYTES * 8])


_BIT_COUNTS = bytes(bin(i).count("1") for i in range(256))
