"""The entries nearest a prompt by meaning, in a scope of any size: every entry vector of the index held in
memory (numpy) and compared with the prompt's at once.

The rows are held as the index stores them, one byte a value (`meaning.pack`: int8 + BIAS, held as the int8),
with each row's inverse norm beside them: 37 MB at 100,000 entries, a quarter of a float32 matrix, which
holds no more. A search converts CHUNK rows at a time into one float32 buffer kept from search to search and
multiplies them with the prompt's vector there, as fast as one product over a float32 matrix (measured in
benchmarks/reports/2026-12-02-recall-iv.md).

The resident encoder (recall/encoder.py) keeps one `Nearby` for its agent dir's index and answers an
encode request that asks for `nearest` with the scope's best entries (doc id, cosine) beside the prompt's
vector; benchmarks use it in-process. Never imported by a hook (numpy): a hook reads the answer through
`encoder_client.Encoding.nearest`.

The vectors are read once and again only when the index changed (SQLite's `data_version` on a connection
kept open, or another file at the path: a rebuild); a reload due while the vectors are already held runs
after the answer (`reload_if_due`), so that a change never makes a hook's request late.
"""

from __future__ import annotations

import itertools
import os
import sqlite3

from ..fastsqlite import connect
from .encoded import BIAS, CURRENT, model_stamp
from .encoder_client import DIMS

NEIGHBOURS = 10  # the prompt's nearest entries whose mean cosine is its neighbourhood (decide.NEIGHBOURHOOD_PRIOR pads it)
MOST = 32  # the most entries one answer names
CHUNK = 2048  # rows converted to float32 at a time (3 MB: the buffer stays in the caches)
READ_ROWS = 1024  # rows taken from SQLite at a time on a reload: its Python objects never pile up
CURRENT_ROWS = f"FROM docs d JOIN encoded e ON {CURRENT} WHERE typeof(e.vec) = 'blob' AND length(e.vec) = {DIMS}"


class Nearby:
    """The entry vectors of the index at `path`, by doc id: int8 rows sorted by project, and each row's inverse
    norm (0 for a row of zeros, whose cosine is then 0)."""

    def __init__(self, path: str) -> None:
        import numpy

        self.path = path
        self._np = numpy
        self._conn: sqlite3.Connection | None = None
        self._file: tuple[int, int] | None = None
        self._version = -1
        self._buffer = numpy.zeros((0, DIMS), dtype=numpy.float32)
        self._drop()
        self.loaded = False
        self.due = False  # the index changed under an answer given from the vectors held

    def _drop(self) -> None:
        np = self._np
        self.ids = np.zeros(0, dtype=np.int64)
        self.vectors = np.zeros((0, DIMS), dtype=np.int8)
        self.inverse_norms = np.zeros(0, dtype=np.float32)
        self.spans: dict[str, tuple[int, int]] = {}  # each project's rows, start and end

    def nearest(self, vector, projects: list[str], limit: int) -> list[tuple[int, float]]:
        """The `limit` entries of `projects` closest to `vector` (unit length), (doc id, cosine) best first; the
        vectors are read first when none are held yet (a later change waits for `reload_if_due`, unless nothing
        is held to answer from)."""
        np = self._np
        if not self.loaded or not len(self.ids):
            if self.stale():
                self.reload()
        elif self.stale():
            self.due = True
        spans = [self.spans[p] for p in dict.fromkeys(projects) if p in self.spans]
        if not spans or limit <= 0:
            return []
        query = np.asarray(vector, dtype=np.float32)
        firsts = np.cumsum([0] + [end - start for start, end in spans])  # where each span starts in `cosines`
        cosines = np.empty(firsts[-1], dtype=np.float32)
        for (start, end), first in zip(spans, firsts):
            self._cosines(start, end, query, cosines[first:first + end - start])
        limit = min(limit, len(cosines))
        best = np.sort(np.argpartition(-cosines, limit - 1)[:limit])  # ties: in the order of the scope
        best = best[np.argsort(-cosines[best], kind="stable")]
        span = np.searchsorted(firsts, best, side="right") - 1
        rows = np.array([start for start, _ in spans])[span] + best - firsts[span]
        return [(int(self.ids[row]), float(cosines[at])) for row, at in zip(rows, best)]

    def _cosines(self, start: int, end: int, query, out) -> None:
        np = self._np
        buffer = self._chunk_buffer()
        for at in range(start, end, CHUNK):
            size = min(end - at, CHUNK)
            chunk = buffer[:size]
            np.copyto(chunk, self.vectors[at:at + size], casting="unsafe")
            np.dot(chunk, query, out=out[at - start:at - start + size])
        out *= self.inverse_norms[start:end]

    def in_scope(self, projects: list[str]) -> int:
        """How many entry vectors the scope holds."""
        return sum(end - start for start, end in (self.spans[p] for p in dict.fromkeys(projects) if p in self.spans))

    def stale(self) -> bool:
        """Whether the index changed since the vectors were read (or none were)."""
        if not self.loaded:
            return True
        try:
            st = os.stat(self.path)
            if (st.st_dev, st.st_ino) != self._file or self._conn is None:
                return True
            return self._conn.execute("PRAGMA data_version").fetchone()[0] != self._version
        except (OSError, sqlite3.Error):
            return True

    def reload_if_due(self) -> bool:
        """Read the vectors again if an answer found the index changed since they were read: True if so.
        Only then: a fill that writes vectors batch after batch, with no prompt asking, reads nothing."""
        if not self.due:
            return False
        self.due = False
        self.reload()
        return True

    def reload(self) -> None:
        """Read every current entry vector of the index (none when it has no such table, or another model's).
        The vectors held go first, and the rows are read in chunks straight into their place: the process
        never holds two copies, nor every row as a Python object."""
        self.loaded = True
        self._drop()
        try:
            st = os.stat(self.path)
            if self._conn is None or (st.st_dev, st.st_ino) != self._file:
                if self._conn is not None:
                    self._conn.close()
                self._conn = None
                # fastsqlite: the path quoted for its URI, and never a FIFO (whose open would hold the server)
                self._conn = connect(self.path, read_only=True, timeout=1.0, isolation_level=None,
                                     check_same_thread=False)
                self._file = (st.st_dev, st.st_ino)
            conn = self._conn
            conn.execute("BEGIN")  # the count and the rows of one snapshot
            try:
                self._version = conn.execute("PRAGMA data_version").fetchone()[0]
                row = conn.execute("SELECT value FROM meta WHERE key = 'encoder_model'").fetchone()
                if row is not None and row[0] == model_stamp():
                    self._read(conn)
            finally:
                conn.execute("COMMIT")
        except (OSError, sqlite3.Error):
            self._drop()
            if self._conn is not None and self._conn.in_transaction:
                self.close()  # the next reload opens it afresh, not inside a transaction left open

    def _read(self, conn: sqlite3.Connection) -> None:
        np = self._np
        total = conn.execute(f"SELECT count(*) {CURRENT_ROWS}").fetchone()[0]
        ids = np.empty(total, dtype=np.int64)
        stored = np.empty((total, DIMS), dtype=np.uint8)
        spans: dict[str, tuple[int, int]] = {}
        # BINARY whatever the column declares: the rows of one project must be together, apart from every other's
        cursor = conn.execute(f"SELECT d.id, d.project, e.vec {CURRENT_ROWS} ORDER BY d.project COLLATE BINARY")
        done = 0
        while done < total and (rows := cursor.fetchmany(READ_ROWS)):
            rows = rows[:total - done]
            ids[done:done + len(rows)] = [row[0] for row in rows]
            stored[done:done + len(rows)] = np.frombuffer(b"".join(row[2] for row in rows),
                                                          dtype=np.uint8).reshape(len(rows), DIMS)
            for project, group in itertools.groupby(row[1] for row in rows):
                end = done + sum(1 for _ in group)
                spans[project] = (spans.get(project, (done, done))[0], end)
                done = end
        cursor.close()
        stored ^= BIAS  # a stored byte is the int8 value + 128 (mod 256): the value's bits with the top one flipped
        self.ids, self.vectors, self.spans = ids[:done], stored.view(np.int8)[:done], spans
        self.inverse_norms = self._inverse_norms()

    def _inverse_norms(self):
        np = self._np
        norms = np.empty(len(self.vectors), dtype=np.float32)
        buffer = self._chunk_buffer()
        for at in range(0, len(self.vectors), CHUNK):
            chunk = buffer[:min(len(self.vectors) - at, CHUNK)]
            np.copyto(chunk, self.vectors[at:at + len(chunk)], casting="unsafe")
            np.einsum("ij,ij->i", chunk, chunk, out=norms[at:at + len(chunk)])  # exact: 384 × 128² < 2²⁴
        np.sqrt(norms, out=norms)
        inverse = np.zeros_like(norms)
        np.divide(1.0, norms, out=inverse, where=norms > 0)
        return inverse

    def _chunk_buffer(self):
        """The float32 rows a search multiplies, made once (`CHUNK`)."""
        if len(self._buffer) < CHUNK:
            self._buffer = self._np.empty((CHUNK, DIMS), dtype=self._np.float32)
        return self._buffer

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
