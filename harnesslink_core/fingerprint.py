"""Content fingerprints: whether two bank entries say the same thing (issue 10).

The same work is often banked more than once: asked in two harnesses, asked again, read from a
resumed transcript. A fingerprint is a bottom-k sketch of the entry's word pairs (the result; the
prompt too when the result is short, so that "Done." does not make every terse turn one), stored
per entry at index time. Two sketches estimate how much of their word pairs the entries share
(Jaccard); at `NEAR_DUPLICATE` or above they are one answer, shown once and given once per session.

Comparing needs no hashing, only string slices: this runs on the prompt hook's path.
"""

from __future__ import annotations

SKETCH_SIZE = 32  # hashes kept per entry (8 hex digits each)
MIN_RESULT_WORDS = 12  # a shorter result is fingerprinted together with its prompt
# Estimated share of word pairs in common. Reworded copies share 0.5 to 1 of their word pairs,
# distinct entries under 0.1 (the labelled sets' corpora); 32 hashes estimate 0.5 within about
# ±0.09, so 0.4 folds such a copy nine times in ten and a distinct entry practically never
# (16 hashes at 0.5 folded it half the time).
NEAR_DUPLICATE = 0.4
SKETCH_CHARS = 4000  # of the result: copies agree from the start, and a long tool dump costs no more

_WORDS = r"[^\W_]+"  # compiled on first use: index time


def sketch(prompt: str, result: str) -> str:
    """The entry's fingerprint: its `SKETCH_SIZE` smallest word-pair hashes, as hex ("" if no words)."""
    import re  # index time only (`re` imports `enum`: not on the prompt hook's path)
    from zlib import crc32

    words = re.findall(_WORDS, result[:SKETCH_CHARS].lower())
    if len(words) < MIN_RESULT_WORDS:
        words = re.findall(_WORDS, prompt.lower()) + words
    pairs = {f"{a} {b}" for a, b in zip(words, words[1:])} or set(words)
    hashes = sorted({crc32(pair.encode("utf-8", "surrogatepass")) for pair in pairs})[:SKETCH_SIZE]
    return "".join(f"{h:08x}" for h in hashes)


def resemblance(a: str, b: str) -> float:
    """Estimated share of word pairs two fingerprinted entries have in common (0 when either is unknown)."""
    if not a or not b:
        return 0.0
    if a == b:
        return 1.0
    mine = {a[i:i + 8] for i in range(0, len(a), 8)}
    theirs = {b[i:i + 8] for i in range(0, len(b), 8)}
    # the bottom-k of the union: a fair sample of it (k: the longer sketch's size, which is
    # SKETCH_SIZE unless both entries have fewer word pairs, or an index from before it changed)
    union = sorted(mine | theirs)[:min(SKETCH_SIZE, max(len(mine), len(theirs)))]
    return sum(1 for h in union if h in mine and h in theirs) / len(union)


def same_content(a: str, b: str) -> bool:
    return resemblance(a, b) >= NEAR_DUPLICATE


class SketchIndex:
    """Fingerprints to test a new one against, quickly: two resemble each other at NEAR_DUPLICATE
    only if they share that share of their hashes, which one set intersection tells; only those
    are compared in full. A session given hundreds of entries costs a set operation per entry."""

    def __init__(self, sketches=()) -> None:
        self._items: list[tuple[str, frozenset[str], object]] = []
        for sketch in sketches:
            self.add(sketch, sketch)

    def add(self, sketch: str, item: object) -> None:
        if sketch:
            self._items.append((sketch, _hashes(sketch), item))

    def near(self, sketch: str):
        """The first added item whose fingerprint has the same content as `sketch`, or None."""
        if not sketch:
            return None
        mine = _hashes(sketch)
        for other, theirs, item in self._items:
            # a resemblance of NEAR_DUPLICATE needs that share of the union's bottom-k in common
            if (len(mine & theirs) >= NEAR_DUPLICATE * min(SKETCH_SIZE, max(len(mine), len(theirs)))
                    and same_content(other, sketch)):
                return item
        return None


def _hashes(sketch: str) -> frozenset[str]:
    return frozenset(sketch[i:i + 8] for i in range(0, len(sketch), 8))
