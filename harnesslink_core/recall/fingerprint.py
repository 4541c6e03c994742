"""Content fingerprints: whether two bank entries say the same thing (SPEC §6, prompt matches).

The same work is often banked more than once: asked in two harnesses, asked again, read from a
resumed transcript. Another agent words the same answer its own way: its sentences, order and
lists differ, its facts (files, identifiers, numbers, causes) do not. So a fingerprint is a
bottom-k sketch of the entry's content words (the result's, with the prompt's when the result is
short, so that "Done." does not make every terse turn one), stored per entry at index time. Two
sketches estimate how much of their content words the entries share (Jaccard); at
`NEAR_DUPLICATE` or above they are one answer, shown once and given once per session.

Comparing needs no hashing, only string slices: this runs on the prompt hook's path.
"""

from __future__ import annotations

SKETCH_SIZE = 32  # hashes kept per entry (8 hex digits each)
MIN_RESULT_WORDS = 12  # a shorter result is fingerprinted together with its prompt
# Estimated share of content words in common. On the labelled sets' real-prose entries, distinct
# answers in one project share at most 0.18; the same answer reworded shares 0.59-1.0, and
# written afresh by another agent (own wording, order and lists, same facts) 0.38-0.79. Word
# pairs told those last copies from distinct answers no better than chance (0.05-0.42).
NEAR_DUPLICATE = 0.3
SKETCH_CHARS = 4000  # of the result: copies agree from the start, and a long tool dump costs no more
MIN_CONTENT_CHARS = 3  # shorter words ("a", "of", "is") say nothing of the content

_WORDS = r"[^\W_]+"  # compiled on first use: index time


def sketch(prompt: str, result: str) -> str:
    """The entry's fingerprint: its `SKETCH_SIZE` smallest content-word hashes, as hex ("" if no words)."""
    import re  # index time only (`re` imports `enum`: not on the prompt hook's path)
    from zlib import crc32

    from .terms import STOPWORDS

    words = re.findall(_WORDS, result[:SKETCH_CHARS].lower())
    if len(words) < MIN_RESULT_WORDS:
        words = re.findall(_WORDS, prompt.lower()) + words
    content = {w for w in words if len(w) >= MIN_CONTENT_CHARS and w not in STOPWORDS} or set(words)
    hashes = sorted({crc32(word.encode("utf-8", "surrogatepass")) for word in content})[:SKETCH_SIZE]
    return "".join(f"{h:08x}" for h in hashes)


def resemblance(a: str, b: str) -> float:
    """Estimated share of content words two fingerprinted entries have in common (0 when either is unknown)."""
    if not a or not b:
        return 0.0
    if a == b:
        return 1.0
    return _share(_hashes(a), _hashes(b))


def _share(mine: frozenset[str], theirs: frozenset[str]) -> float:
    """`resemblance` of two fingerprints' hashes."""
    # the bottom-k of the union: a fair sample of it (all of it when both entries have fewer words)
    union = sorted(mine | theirs)[:SKETCH_SIZE]
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
        return self._near(sketch, _hashes(sketch)) if sketch else None

    def near_or_add(self, sketch: str, item: object):
        """`near(sketch)`; when that is None, `item` is added under `sketch` (hashed once for both)."""
        if not sketch:
            return None
        mine = _hashes(sketch)
        found = self._near(sketch, mine)
        if found is None:
            self._items.append((sketch, mine, item))
        return found

    def _near(self, sketch: str, mine: frozenset[str]):
        for other, theirs, item in self._items:
            # a resemblance of NEAR_DUPLICATE needs that share of the union's bottom-k in common
            if (len(mine & theirs) >= NEAR_DUPLICATE * min(SKETCH_SIZE, max(len(mine), len(theirs)))
                    and (other == sketch or _share(mine, theirs) >= NEAR_DUPLICATE)):  # `same_content`, hashed once
                return item
        return None


def _hashes(sketch: str) -> frozenset[str]:
    return frozenset(sketch[i:i + 8] for i in range(0, len(sketch), 8))
