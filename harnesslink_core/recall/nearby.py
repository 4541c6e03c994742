"""The entries nearest a prompt by meaning, in a scope of any size: every entry vector of the index held in
memory (numpy) and compared with the prompt's at once.

The resident encoder (recall/encoder.py) keeps one `Nearby` for its agent dir's index and answers an
encode request that asks for `nearest` with the scope's best entries (doc id, cosine) beside the prompt's
vector; benchmarks use it in-process. Never imported by a hook (numpy): a hook reads the answer through
`encoder_client.Encoding.nearest`.

The vectors are read once and again only when the index changed (SQLite's `data_version` on a connection
kept open, or another file at the path: a rebuild); a reload due while the vectors are already held runs
after the answer (`reload_if_due`), so that a change never makes a hook's request late.
"""

from __future__ import annotations

import os
import sqlite3

from .encoded import BIAS, CURRENT, model_stamp

NEIGHBOURS = 10  # the prompt's nearest entries whose mean cosine is its neighbourhood (decide.NEIGHBOURHOOD_PRIOR pads it)
MOST = 32  # the most entries one answer names


class Nearby:
    """The entry vectors of the index at `path`, by doc id, as unit rows of a float32 matrix sorted by project."""

    def __init__(self, path: str) -> None:
        import numpy

        self.path = path
        self._np = numpy
        self._conn: sqlite3.Connection | None = None
        self._file: tuple[int, int] | None = None
        self._version = -1
        self.ids = self._np.zeros(0, dtype=self._np.int64)
        self.matrix = self._np.zeros((0, 0), dtype=self._np.float32)
        self.codes: dict[str, int] = {}  # project -> its span's number
        self.spans: list[tuple[int, int]] = []  # each project's rows, start and end (rows are sorted by project)
        self.loaded = False
        self.due = False  # the index changed under an answer given from the vectors held

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
        spans = [self.spans[self.codes[p]] for p in dict.fromkeys(projects) if p in self.codes]
        if not spans or limit <= 0:
            return []
        query = np.asarray(vector, dtype=np.float32)
        if len(spans) == len(self.codes):
            ids, cosines = self.ids, self.matrix @ query
        else:  # each project's rows are together: only the scope's are read
            ids = np.concatenate([self.ids[start:end] for start, end in spans])
            cosines = np.concatenate([self.matrix[start:end] @ query for start, end in spans])
        limit = min(limit, len(cosines))
        best = np.argpartition(-cosines, limit - 1)[:limit]
        best = best[np.argsort(-cosines[best], kind="stable")]
        return [(int(ids[i]), float(cosines[i])) for i in best]

    def in_scope(self, projects: list[str]) -> int:
        """How many entry vectors the scope holds."""
        return sum(end - start for start, end in (self.spans[self.codes[p]] for p in dict.fromkeys(projects)
                                                   if p in self.codes))

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
        """Read every current entry vector of the index (none when it has no such table, or another model's)."""
        self.loaded = True
        try:
            st = os.stat(self.path)
            if self._conn is None or (st.st_dev, st.st_ino) != self._file:
                if self._conn is not None:
                    self._conn.close()
                self._conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=1.0,
                                             isolation_level=None, check_same_thread=False)
                self._file = (st.st_dev, st.st_ino)
            conn = self._conn
            self._version = conn.execute("PRAGMA data_version").fetchone()[0]
            row = conn.execute("SELECT value FROM meta WHERE key = 'encoder_model'").fetchone()
            rows = (conn.execute(f"SELECT d.id, d.project, e.vec FROM docs d JOIN encoded e ON {CURRENT}").fetchall()
                    if row is not None and row[0] == model_stamp() else [])
        except (OSError, sqlite3.Error):
            rows = []
        self._fill(rows)

    def _fill(self, rows: list[tuple[int, str, bytes]]) -> None:
        np = self._np
        rows = sorted((row for row in rows if len(row[2]) == len(rows[0][2])), key=lambda row: row[1]) if rows else []
        self.codes, self.spans = {}, []
        for n, (_, project, _) in enumerate(rows):
            if project not in self.codes:
                self.codes[project] = len(self.spans)
                self.spans.append((n, n))
            self.spans[-1] = (self.spans[-1][0], n + 1)
        self.ids = np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))
        if not rows:
            self.matrix = np.zeros((0, 0), dtype=np.float32)
            return
        raw = np.frombuffer(b"".join(row[2] for row in rows), dtype=np.uint8).reshape(len(rows), -1)
        matrix = raw.astype(np.float32)
        matrix -= BIAS
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        matrix /= norms
        self.matrix = matrix

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
