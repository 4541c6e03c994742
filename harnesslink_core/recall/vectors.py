"""Entry vectors in the index (SPEC §6): the meaning side of recall.

- `meaning(doc_id, vec, code)`: each entry's vector (`meaning.pack`) and its sign bits, made by `fill` in the
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
    "CREATE TABLE IF NOT EXISTS meaning (doc_id INTEGER PRIMARY KEY, vec BLOB NOT NULL, code BLOB NOT NULL)",
    "CREATE TABLE IF NOT EXISTS meaning_packs (project TEXT PRIMARY KEY, ids BLOB NOT NULL, codes BLOB NOT NULL)",
)
LAYOUT = 2  # of the tables below; another one is dropped and filled again
CODE_BYTES = 16  # 128 sign bits: the first half of the dimensions, where most of the variance is
FILL_BATCH = 256
TEXT_CHARS = 4000  # of an entry's prompt and result: the model reads its first 512 pieces anyway
RESCORE = 48  # closest codes scored exactly
SCAN_LIMIT = 50_000  # the newest entries of a scope scanned by code; older ones are found by their words


def ensure(conn: sqlite3.Connection) -> None:
    """The tables, in an index made before vectors; made again, empty, for another model than the
    shipped one or another layout of these tables (`LAYOUT`): the background fills them again."""
    model = meaning.load()
    stamp = f"{model.name} {LAYOUT}" if model is not None else None
    row = conn.execute("SELECT value FROM meta WHERE key = 'meaning_model'").fetchone()
    if stamp is not None and (row is None or row[0] != stamp):
        with Transaction(conn):
            conn.execute("DROP TABLE IF EXISTS meaning")
            conn.execute("DROP TABLE IF EXISTS meaning_packs")
            for statement in TABLES:
                conn.execute(statement)
            conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('meaning_model', ?)", (stamp,))
    else:
        for statement in TABLES:
            conn.execute(statement)


def entry_text(title: str, prompt: str, result: str) -> str:
    return f"{title}\n{prompt[:TEXT_CHARS]}\n{result[:TEXT_CHARS]}"


def fill(conn: sqlite3.Connection, *, limit: int | None = None, progress=None, newest: bool = False) -> int:
    """Give a vector to every entry that has none (at most `limit`), then pack the projects
    touched. Returns how many were made; 0 when the model cannot be read. `progress(made, due)`
    is told after each batch, `due` being how many had none at the start (`pending`).
    `newest`: only entries newer than every vector (what a pass just indexed): no scan of the
    index for the others, and their codes appended to their packs (a hook's pass does this)."""
    model = meaning.load()
    if model is None:
        return 0
    ensure(conn)
    due = None
    if progress is not None:
        due = pending(conn) or 0
        due = due if limit is None else min(due, limit)
    made = 0
    added: dict[str, list[tuple[int, bytes]]] = {}
    while limit is None or made < limit:
        batch = FILL_BATCH if limit is None else min(FILL_BATCH, limit - made)
        if newest:
            after = conn.execute("SELECT coalesce(max(doc_id), 0) FROM meaning").fetchone()[0]
            rows = conn.execute("SELECT d.id, d.project, d.title, f.prompt, f.result FROM docs d"
                                " JOIN fts f ON f.rowid = d.id WHERE d.id > ? ORDER BY d.id LIMIT ?",
                                (after, batch)).fetchall()
        else:
            rows = conn.execute(
                "SELECT d.id, d.project, d.title, f.prompt, f.result FROM docs d JOIN fts f ON f.rowid = d.id"
                " LEFT JOIN meaning m ON m.doc_id = d.id WHERE m.doc_id IS NULL ORDER BY d.id DESC LIMIT ?",
                (batch,)).fetchall()
        if not rows:
            break
        made_now = []
        for doc_id, project, title, prompt, result in rows:
            vector = model.vector(entry_text(title, prompt or "", result or ""))
            code = _code(vector).to_bytes(CODE_BYTES, "little") if vector else b""
            made_now.append((doc_id, meaning.pack(vector) if vector else b"", code))
            if code:
                added.setdefault(project, []).append((doc_id, code))
        with Transaction(conn):
            conn.executemany("INSERT OR REPLACE INTO meaning(doc_id, vec, code) VALUES (?, ?, ?)", made_now)
        made += len(rows)
        if progress is not None:
            progress(made, due)
    if newest:
        _append(conn, added)
    elif added:
        repack(conn, added)
    return made


def repack(conn: sqlite3.Connection, projects) -> None:
    """Each project's codes in one blob, in the order of their entries (the newest last)."""
    with Transaction(conn):
        for project in projects:
            ids = array("q")
            codes = bytearray()
            for doc_id, code in conn.execute(
                    "SELECT m.doc_id, m.code FROM meaning m JOIN docs d ON d.id = m.doc_id"
                    " WHERE d.project = ? AND length(m.code) > 0 ORDER BY m.doc_id", (project,)):
                ids.append(doc_id)
                codes += code
            conn.execute("INSERT OR REPLACE INTO meaning_packs(project, ids, codes) VALUES (?, ?, ?)",
                         (project, ids.tobytes(), bytes(codes)))


def _append(conn: sqlite3.Connection, added: dict[str, list[tuple[int, bytes]]]) -> None:
    """These codes, newer than any packed, at the end of their projects' packs (a project without
    a pack yet is packed whole)."""
    for project, rows in added.items():
        row = conn.execute("SELECT ids, codes FROM meaning_packs WHERE project = ?", (project,)).fetchone()
        if row is None:
            repack(conn, [project])
            continue
        ids = array("q", row[0])
        ids.extend(doc_id for doc_id, _ in rows)
        with Transaction(conn):
            conn.execute("UPDATE meaning_packs SET ids = ?, codes = ? WHERE project = ?",
                         (ids.tobytes(), row[1] + b"".join(code for _, code in rows), project))


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
    for blob_ids, blob_codes in packs:  # the newest SCAN_LIMIT of each
        ids.frombytes(blob_ids[-SCAN_LIMIT * 8:])
        codes += blob_codes[-SCAN_LIMIT * CODE_BYTES:]
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
