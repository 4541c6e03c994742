"""Recall on request (SPEC §7): `memory_search` and `harnesslink recall`.

A pull never abstains: the agent or the user asked. Three lists bring the candidates:
- the entries found by the query's meaningful words, the fields weighted (title first);
- the entries found by every word of it over the whole entry, every field alike (what a
  plain full-text search does: it finds what a weighting or a stopword list would miss);
- the entries nearest in meaning by the static vectors (`vectors.nearest`), which find the
  paraphrase that shares no word with its entry; meaning alone brings an entry only when
  it is close (`MEANING_ALONE`).
They are fused by score, not by rank: each list's bm25 taken as a share of its best, plus
a weight times the entry's cosine with the query: the resident encoder's when it answered (`encoding`,
asked by `ask`) and the entries have its vectors (`encoded`), with `MEANING_WEIGHT`; the static vectors'
otherwise, with `STATIC_MEANING_WEIGHT` (their cosines spread differently). Each weight was fitted
leave-one-set-out on the development sets (`benchmarks/pull.py --tune`, `--static`).

Callers only format: `recall(conn, query, projects, limit)` gives the hits, each with
`why`, which names the evidence: each list's bm25 and the cosine, and whose.

Use is a prior: an entry sessions opened after it was given rises a little, one given to many
sessions and opened by none sinks a little (`use_prior`).

Given the scope's trust state (`store.trust.state`), a superseded entry is ranked below every
current one and its `why` starts `superseded by <entry> (<date>)`; a state taken at a moment
(`as_of` the time the work happened, `known_at` a record time) answers with what was current then:
entries not yet in force are left out, and one superseded only later is current.
"""

from __future__ import annotations

import re
import sqlite3

from . import encoded, meaning, vectors
from .query import EVEN_WEIGHTS, Hit, hits_of, mark_matched, search, with_text
from .terms import meaningful_terms

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..store.trust import TrustState

POOL = 30  # taken from each list before fusing
# the cosine's weight against each list's bm25 share (at most 1 each), fitted leave-one-set-out on the
# development sets (benchmarks/pull.py --tune, and --static): each held-out set's best weight was the same
MEANING_WEIGHT = 25.0  # the encoder's cosine
STATIC_MEANING_WEIGHT = 6.0  # the static vectors' cosine (the encoder absent, late, or the entry not encoded yet)
PLAIN_WEIGHT = 1.0
QUERY_CHARS = 2000
FILL_ON_PULL = 64  # entries without a vector a pull gives one first (~0.5 ms each)
MEANING_ALONE = 0.2  # the cosine an entry no word found needs to be returned at all
# the use prior: an entry sessions opened rises (up to USED_LIFT for USED_FULL sessions); one given to
# IGNORED_AFTER sessions and opened by none sinks. It moves an entry among its neighbours, never past
# an entry far better; nothing is dropped for being unused.
USED_LIFT = 0.25
USED_FULL = 3
IGNORED_AFTER = 5
IGNORED_SINK = 0.75


def query_terms(query: str) -> list[str]:
    """The query's meaningful words; all its words if none is meaningful."""
    return meaningful_terms(query) or every_word(query)[:16]


def every_word(query: str) -> list[str]:
    """Every word of the query, as a plain full-text search takes them (at most 32)."""
    return list(dict.fromkeys(w.lower() for w in re.findall(r"\w+", query)))[:32]


def recall(conn, query: str, projects: list[str] | None, *, limit: int = 5, exclude_paths=(),
           trust: TrustState | None = None, use: Mapping[str, tuple[int, int]] | None = None,
           meaning_weight: float | None = None, min_alone: float | None = None,
           plain_weight: float = PLAIN_WEIGHT, encoding=None) -> list[Hit]:
    """The entries that best answer `query` within `projects` (None: every project), best first; the
    current ones before the superseded ones, by `trust`, and `use` ((given, opened) sessions per entry,
    `store.injected.use_counts`) as a prior; `encoding`: the query's vector asked of the encoder
    (`encoder_client.Encoding`), if it was; `meaning_weight`: the cosine's weight whoever's it is (by default
    the one fitted for the encoder's or the static vectors'; 0: by the words alone)."""
    query = query[:QUERY_CHARS]
    min_alone = MEANING_ALONE if min_alone is None else min_alone
    excluded = set(exclude_paths)
    pool = max(POOL, limit)
    terms = query_terms(query)
    known_at = trust.bounds if trust is not None else None
    lexical = mark_matched(conn, search(conn, terms, projects, limit=pool, exclude_paths=excluded,
                                        known_at=known_at), terms) if terms else []
    words = every_word(query)
    plain = search(conn, words, projects, limit=pool, exclude_paths=excluded, weights=EVEN_WEIGHTS,
                   known_at=known_at) if words and plain_weight > 0 else []
    model = meaning.load() if meaning_weight != 0 else None
    vector = model.vector(query) if model is not None else []
    if vector:
        _fill_newest(conn)
    scope = projects if projects is not None else [row[0] for row in conn.execute("SELECT DISTINCT project FROM docs")]
    near = vectors.nearest(conn, vector, scope, pool) if vector else []
    by_id = {hit.doc_id: hit for hit in (*plain, *lexical)}
    missing = [doc_id for doc_id, _ in near if doc_id not in by_id]
    for hit in hits_of(conn, missing, scope, exclude_paths=excluded, known_at=known_at):
        by_id[hit.doc_id] = hit
    cosines, whose = _cosines(conn, list(by_id), vector, dict(near), encoding) if meaning_weight != 0 else ({}, "")
    if meaning_weight is None:
        meaning_weight = MEANING_WEIGHT if whose == "encoder" else STATIC_MEANING_WEIGHT
    fused: dict[int, float] = {}
    reasons: dict[int, list[str]] = {}
    for found, weight, label in ((lexical, 1.0, "words"), (plain, plain_weight, "every word")):
        top = max((hit.score for hit in found), default=0.0)
        for hit in found:
            fused[hit.doc_id] = fused.get(hit.doc_id, 0.0) + weight * (hit.score / top if top > 0 else 0.0)
            matched = f": {', '.join(hit.matched)}" if label == "words" and hit.matched else ""
            reasons.setdefault(hit.doc_id, []).append(f"{label} bm25 {hit.score:.1f}{matched}")
    for doc_id in by_id:
        cosine = cosines.get(doc_id)
        if cosine is None:
            continue
        if doc_id not in fused and cosine < min_alone:
            continue  # meaning alone brings only what is close: a pull may rank, but not invent a link
        fused[doc_id] = fused.get(doc_id, 0.0) + meaning_weight * cosine
        reasons.setdefault(doc_id, []).append(f"meaning cosine {cosine:.2f} ({whose})")
    if use:
        for doc_id in fused.keys() & by_id.keys():
            factor, reason = use_prior(*use.get(by_id[doc_id].path, (0, 0)))
            if reason:
                fused[doc_id] *= factor
                reasons[doc_id].append(reason)
    superseded = trust.superseded if trust is not None else {}
    ranked = sorted((doc_id for doc_id in fused if doc_id in by_id),
                    key=lambda d: (by_id[d].path in superseded, -fused[d]))[:limit]
    hits = with_text(conn, [by_id[doc_id] for doc_id in ranked])
    for hit in hits:
        label = trust.label(hit.path) if trust is not None else ""
        hit.why = "; ".join(([label] if label else []) + reasons[hit.doc_id])
    return hits


def _cosines(conn, ids: list[int], vector: list[float], near: dict[int, float], encoding) -> tuple[dict[int, float], str]:
    """Each candidate's cosine with the query, and whose: the encoder's when it answered and the entries
    have its vectors, the static vectors' otherwise (`near` has those of the nearest already)."""
    stored = encoded.vectors_of(conn, ids) if encoding is not None else {}
    answer = encoding.vectors() if stored else None
    if answer:
        return {doc_id: encoded.cosine(answer[0], v) for doc_id, v in stored.items()}, "encoder"
    if not vector:
        return {}, ""
    others = vectors.vectors_of(conn, [doc_id for doc_id in ids if doc_id not in near])
    return {**near, **{doc_id: meaning.cosine(vector, v) for doc_id, v in others.items()}}, "static"


def _fill_newest(conn) -> None:
    """Vectors for the entries indexed since the last fill (the caller's sync may have just indexed them),
    so that a new entry is not ranked by its words alone against older ones ranked by meaning too."""
    try:
        vectors.fill(conn, limit=FILL_ON_PULL, newest=True)
    except sqlite3.OperationalError:  # busy: the background fills them
        pass


def use_prior(given: int, opened: int) -> tuple[float, str]:
    """What an entry's use does to its fused score, and why: (factor, reason), reason "" for none."""
    if opened:
        return 1 + USED_LIFT * min(opened, USED_FULL) / USED_FULL, f"opened by {opened} session{'s' * (opened > 1)}"
    if given >= IGNORED_AFTER:
        return IGNORED_SINK, f"given to {given} sessions, opened by none"
    return 1.0, ""
