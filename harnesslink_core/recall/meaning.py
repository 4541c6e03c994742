"""Meaning vectors (SPEC §6): what a text is about, as a static embedding.

A static model is a table of one vector per word piece: a text's vector is the mean of
its pieces' vectors, normalised. No network, no numpy, no daemon: a tokenizer, a lookup
and a column sum. The table (`data/meaning/model.db`, SQLite, read-only) is distilled
once, at build time, from all-MiniLM-L6-v2 (Apache-2.0) with model2vec
(`scripts/build_meaning_model.py`); `data/meaning/meta.json` names its source and the
hash of its contents.

- `Model.vector(text)`: the text's direction, 256 floats of length 1;
- `code(vector)`: its sign bits as one int, for the Hamming scan (`vectors.nearest`);
- `pack` / `unpack`: a vector as 256 signed bytes, as the index stores it.

The tokenizer is BERT's uncased WordPiece, as the table's source model reads text:
lower case, accents stripped, punctuation split off, each word split greedily into the
longest pieces the vocabulary holds (`##` marks a piece inside a word).

This module is on the prompt hook's path: stdlib only.
"""

from __future__ import annotations

import math
import operator
import os
from array import array

from ..fastsqlite import connect, sqlite3

DIMS = 256
MAX_PIECES = 512  # what the source model reads of a text
MAX_WORD_CHARS = 100  # a longer word is one unknown piece, as in BERT
_BIAS = 128  # stored bytes are the int8 value + 128
# ASCII punctuation stands alone, as in BERT (which counts `_`, `$`, `^`... as punctuation too)
_SPACED = {ord(c): f" {c} " for c in "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"}
_FOLDER = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "meaning")
MODEL_FILE = os.path.join(_FOLDER, "model.db")


class Model:
    """The shipped table, opened read-only; `None` from `load()` when it is missing or damaged."""

    def __init__(self, path: str = MODEL_FILE, *, centred: bool = True) -> None:
        self.conn = connect(path, immutable=True, check_same_thread=False)
        meta = dict(self.conn.execute("SELECT key, value FROM meta"))
        self.name = meta["name"]
        self.centre = array("d", meta["centre"]).tolist() if centred and "centre" in meta else None
        self._pieces: dict[str, tuple[int, ...]] = {}  # word -> its pieces' ids
        self._rows: dict[int, bytes] = {}

    def vector(self, text: str) -> list[float]:
        """The text's direction: the mean of its pieces' vectors, less the common direction,
        of length 1 (an empty list when no piece is known)."""
        ids = self.piece_ids(text)[:MAX_PIECES]
        rows = self._vectors(ids) if ids else []
        if not rows:
            return []
        # each stored byte is value + 128: sum the columns, then take the bias back out
        bias = _BIAS * len(rows)
        unit = _unit([total - bias for total in map(sum, zip(*rows))])
        if self.centre and unit:
            unit = _unit(list(map(float.__sub__, unit, self.centre)))
        return unit

    def piece_ids(self, text: str) -> list[int]:
        words = _words(text)
        unknown = [w for w in dict.fromkeys(words) if w not in self._pieces]
        if unknown:
            self._split(unknown)
        return [i for w in words for i in self._pieces[w]]

    def _split(self, words: list[str]) -> None:
        """Greedy longest-match WordPiece for these words, one query per round of pieces."""
        # word -> (word, where its rest starts, ids so far)
        pending: dict[str, tuple[str, int, list[int]]] = {w: (w, 0, []) for w in words}
        for w in words:
            if len(w) > MAX_WORD_CHARS:
                self._pieces[w] = ()
                del pending[w]
        while pending:
            wanted: dict[str, None] = {}
            for w, (_, start, _ids) in pending.items():
                prefix = "##" if start else ""
                for cut in range(len(w), start, -1):
                    wanted.setdefault(prefix + w[start:cut], None)
            known = self._lookup(list(wanted))
            for w, (_, start, ids) in list(pending.items()):
                prefix = "##" if start else ""
                end = next((e for e in range(len(w), start, -1) if prefix + w[start:e] in known), None)
                if end is None:  # no piece fits: the whole word is unknown (BERT drops it)
                    self._pieces[w] = ()
                    del pending[w]
                    continue
                ids.append(known[prefix + w[start:end]])
                if end == len(w):
                    self._pieces[w] = tuple(ids)
                    del pending[w]
                else:
                    pending[w] = (w, end, ids)

    def _lookup(self, pieces: list[str]) -> dict[str, int]:
        found: dict[str, int] = {}
        for i in range(0, len(pieces), 900):  # under SQLite's variable limit
            chunk = pieces[i:i + 900]
            marks = ",".join("?" * len(chunk))
            found.update(self.conn.execute(f"SELECT piece, id FROM pieces WHERE piece IN ({marks})", chunk))
        return found

    def _vectors(self, ids: list[int]) -> list[bytes]:
        missing = [i for i in dict.fromkeys(ids) if i not in self._rows]
        for start in range(0, len(missing), 900):
            chunk = missing[start:start + 900]
            marks = ",".join("?" * len(chunk))
            self._rows.update(self.conn.execute(f"SELECT id, vec FROM vectors WHERE id IN ({marks})", chunk))
        return [self._rows[i] for i in ids if i in self._rows]


_loaded: Model | None = None
_failed = False


def load() -> Model | None:
    """The shipped model, opened once per process; None when it cannot be read (the caller
    answers lexically)."""
    global _loaded, _failed
    if _loaded is None and not _failed:
        try:
            _loaded = Model()
        except (sqlite3.Error, TypeError, OSError):
            _failed = True
    return _loaded


def _words(text: str) -> list[str]:
    """BERT's basic tokenizer, uncased: lower case, no accents, punctuation alone. No `re`
    here (it costs the prompt hook its import); `unicodedata` only for text beyond ASCII."""
    text = text.lower()
    if not text.isascii():
        import unicodedata

        text = text.encode("utf-8", "replace").decode("utf-8")  # a lone surrogate becomes "?"
        text = "".join(f" {c} " if unicodedata.category(c)[0] in "PS" and not c.isascii() else c
                       for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")
    return text.translate(_SPACED).split()


def _unit(vector: list) -> list[float]:
    norm = math.sqrt(sum(v * v for v in vector))
    return [v / norm for v in vector] if norm else []


def cosine(a: list, b: list) -> float:
    """The cosine of two vectors (unit vectors, or packed ones as `unpack` gives them)."""
    if not a or not b:
        return 0.0
    dot = sum(map(operator.mul, a, b))
    norm = math.sqrt(sum(map(operator.mul, a, a)) * sum(map(operator.mul, b, b)))
    return dot / norm if norm else 0.0


def code(vector: list[float]) -> int:
    """The vector's sign bits, bit i set when component i is positive."""
    bits = 0
    for i, value in enumerate(vector):
        if value > 0:
            bits |= 1 << i
    return bits


def pack(vector: list[float]) -> bytes:
    """The vector scaled into signed bytes (its direction is what counts), stored biased."""
    peak = max(map(abs, vector), default=0) or 1
    return bytes(round(v * 127 / peak) + _BIAS for v in vector)


def unpack(blob: bytes) -> list[int]:
    return [b - _BIAS for b in blob]
