"""The prompt hook's candidates and their features: every read of the index that the decision
(`decide`, pure) needs is made here, before it.

1. `prompt_vocabulary`: what the index's vocabulary says of the prompt's words (one query), from
   which `terms.prompt_terms` makes the prompt's terms.
2. `weigh`: what the scope says of each term: in how many of its entries it occurs, counted up to
   a cap, hence how much it says (idf); which terms occur at all (`found`), which concepts no entry
   mentions (`absent`), and which terms are worth asking FTS5 for (`searched`): a term in more than
   `COMMON_SHARE` of the entries is not searched for (unless nothing better is left) but still
   counts when an entry has it.
3. `gather`: FTS5's best `CANDIDATES` by bm25, the newest `RECENT_WINDOW` entries first: ranking
   cost grows with the number of matching rows, and recent turns are the likelier help. The older
   entries are searched only when too few of these pass the floor (`decide.floor`), and never for
   words that common: when every word searched is in `COMMON_CAP` entries or more, FTS5 would rank
   thousands of rows, so only the newest `COMMON_WINDOW` are. Each candidate's features are read
   from a throw-away table of the candidates' text (`query.probe`): which terms it contains, and
   which of those in its title, prompt or keys; for the window's best by bm25, when the floor
   rejects it only for evidence (the one the clear-winner and rare-word rules may still let in),
   which of its terms it contains in the prompt's own words (no related word), and how close its
   meaning is to the prompt's. Last, what this session was given already (its content
   fingerprints), to recognise copies of it.
4. With the encoder's answer: the scope's entries nearest the prompt by meaning, whatever its size (the
   encoder holds the index's vectors, recall/nearby.py), the `NEAREST` the words did not find added as
   candidates, their cosines kept as the prompt's neighbourhood (`Pool.nearby`), and each candidate's cosine.
"""

from __future__ import annotations

import math

from . import decide
from .decide import Candidate, Pool
from .encoder_client import NEAREST_ASKED  # noqa: F401 - where the benchmarks read how many the hook asks for
from .fingerprint import SketchIndex
from .lexicon import Vocabulary
from .query import (
    STRONG_COLUMNS,
    hits_of,
    index_size,
    max_rowid,
    probe,
    rows_containing,
    scope_rows_after,
    scope_size,
    search,
    sketches,
    term_counts,
    vocabulary,
    with_text,
)
from .terms import vocabulary_keys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the prompt hook's path)
if TYPE_CHECKING:
    from .query import Hit
    from .terms import Term, Words

COMMON_SHARE = 0.2
COMMON_CAP = 400  # counting stops here; a term this common is searched without its related words
RECOUNT_CAP = 4000  # how far a term at COMMON_CAP is counted further, to learn whether it is under COMMON_SHARE
SELECTIVE_SCOPE = 4  # the scope token filters the FTS5 query when the scope is under 1/4 of the index
CANDIDATES = 24  # ranked again by matched terms' rarity; bm25 alone favours long word-rich entries
RECENT_WINDOW = 25_000  # entries searched first; older ones only when these give too few matches
NEAREST = 3  # the entries nearest the prompt by the encoder's vectors that the words did not find, added as candidates
COMMON_WINDOW = 5_000  # the newest entries searched when every word searched is in COMMON_CAP entries or more


def prompt_vocabulary(conn, words: Words) -> Vocabulary:
    """What the index's vocabulary says about the prompt's words and word pairs (one query)."""
    return Vocabulary.from_rows(vocabulary(conn, vocabulary_keys(words)))


class Weighed:
    """The prompt's terms as the projects in scope see them (`weigh`).

    `size`: the scope's entries; `found`: the terms that occur in scope, `counts` and `idf` of each by
    label; `absent`: the concepts no entry in scope mentions; `searched`: what FTS5 is asked for (a
    term, or only its word when that is common); `words`: how many prompt words each term stands for."""

    __slots__ = ("absent", "absent_weight", "cap", "counts", "found", "idf", "newest", "searched", "size",
                 "whole_index", "words")

    def __init__(self, size: int, terms: list[Term]) -> None:
        self.size = size
        self.newest = 0  # the highest rowid: the newest entry
        self.found: list[Term] = []
        self.absent: list[Term] = []
        self.absent_weight = 0.0  # an absent concept says as much as a word in no entry
        self.searched: list[list[str]] = []
        self.counts: dict[str, int] = {}
        self.idf: dict[str, float] = {}
        self.words = {t.label: t.words for t in terms}
        self.cap = max(2, min(int(size * COMMON_SHARE) + 1, COMMON_CAP))
        self.whole_index = False

    def is_common(self, label: str) -> bool:
        return self.counts.get(label, 0) >= self.cap

    def weight(self, labels: list[str]) -> float:
        """What these terms say: rarer terms say more (idf)."""
        return sum(self.idf.get(label, 0.0) for label in labels)

    def total(self) -> float:
        """What the prompt's terms say together, an absent concept counted as a word in no entry."""
        return sum(self.idf.values()) + self.absent_weight


def weigh(conn, terms: list[Term], projects: list[str]) -> Weighed:
    """The prompt's terms as the projects in scope see them: see the module docstring."""
    size = scope_size(conn, projects)
    weighed = Weighed(size, terms)
    if not terms or not size:
        return weighed
    weighed.newest = max_rowid(conn)
    weighed.whole_index = size >= index_size(conn)
    counts = term_counts(conn, [t.alternatives for t in terms], projects, cap=weighed.cap,
                         whole_index=weighed.whole_index)
    weighed.found = [t for t, n in zip(terms, counts) if n]
    # with no other word for it, a concept's absence is only its word's (paraphrases lack words)
    weighed.absent = [t for t, n in zip(terms, counts) if not n and t.concept and len(t.alternatives) > 1]
    weighed.counts = {t.label: n for t, n in zip(terms, counts) if n}
    searched = [t for t in weighed.found if not weighed.is_common(t.label)]
    if len(searched) < 2:
        # The two least common terms. Counting stopped at COMMON_CAP in a big scope: count those
        # further, up to COMMON_SHARE of the scope, to tell them apart. A term in COMMON_CAP entries
        # and COMMON_SHARE of the scope or more is never searched (FTS5 would rank thousands of rows
        # for it), and when every term is that common, nothing tells one entry from another:
        # nothing is searched (nor injected).
        share_cap = min(RECOUNT_CAP, int(size * COMMON_SHARE) + 1)
        order = {label: n / size for label, n in weighed.counts.items()}  # shares of the scope
        capped = [t for t in weighed.found if weighed.counts[t.label] >= COMMON_CAP and COMMON_CAP < share_cap]
        if capped:
            order.update(_recount(conn, weighed, capped, projects, share_cap))
        telling = [t for t in weighed.found
                   if order[t.label] < COMMON_SHARE or weighed.counts[t.label] < COMMON_CAP]
        searched = sorted(telling, key=lambda t: order[t.label])[:2]
        # a term in COMMON_CAP entries or more is searched without its related words: they
        # would only widen what FTS5 must score (hundreds more rows) for the least telling term
        weighed.searched = [t.alternatives[:1] if weighed.counts[t.label] >= COMMON_CAP else t.alternatives
                            for t in searched]
    else:
        weighed.searched = [t.alternatives for t in searched]
    weighed.idf = {label: math.log((size + 1) / (n + 0.5)) for label, n in weighed.counts.items()}
    weighed.absent_weight = math.log((size + 1) / 0.5) * sum(t.words for t in weighed.absent)
    return weighed


def _recount(conn, weighed: Weighed, capped: list[Term], projects: list[str], share_cap: int) -> dict[str, float]:
    """The share of the scope holding each of these terms, counted as they would be searched (the
    word alone, without its related words), up to `share_cap` entries. In a large index the newest
    COMMON_WINDOW entries are looked at first: a term under COMMON_SHARE there is taken at that
    share, and only the others are counted in the whole scope, so that no bank makes this slow."""
    shares: dict[str, float] = {}
    if weighed.newest > 2 * COMMON_WINDOW:
        after = weighed.newest - COMMON_WINDOW
        in_scope = max(1, scope_rows_after(conn, projects, after))
        counts = term_counts(conn, [t.alternatives[:1] for t in capped], projects, cap=COMMON_WINDOW,
                             whole_index=weighed.whole_index, after=after)
        shares = {t.label: n / in_scope for t, n in zip(capped, counts) if n / in_scope < COMMON_SHARE}
    rest = [t for t in capped if t.label not in shares]
    counts = term_counts(conn, [t.alternatives[:1] for t in rest], projects, cap=share_cap,
                         whole_index=weighed.whole_index)
    # a count that reached `share_cap` is at least that common: the cap stops counting, not the term
    shares.update((t.label, n / weighed.size if n < share_cap else 1.0) for t, n in zip(rest, counts))
    return shares


def gather(conn, terms: list[Term], projects: list[str], *, session_id: str | None = None,
           excluded: set[str] = frozenset(),  # type: ignore[assignment]
           given: set[str] = frozenset(),  # type: ignore[assignment]
           limit: int = decide.MAX_MATCHES, prompt: str = "", encoding=None) -> Pool:
    """The candidates for these terms within `projects` with their features, without the session's own
    entries and the `excluded` paths; `given`: what this session was given already; `limit`: how many
    the decision may take (fewer than that passing the floor among the newest entries: the older ones
    are searched too); `prompt`: its text, whose meaning the candidate the rules past the floor look at
    is compared with; `encoding`: the prompt's vector asked of the encoder, waited for only when a
    candidate has an encoder vector to compare it with."""
    weighed = weigh(conn, terms, projects)
    pool = Pool([t.label for t in weighed.found], weighed.counts, weighed.idf, [t.label for t in weighed.absent])
    pool.projects = projects
    if not weighed.searched:
        if weighed.found:
            pool.skipped = (f"every term is in {COMMON_CAP} entries and {COMMON_SHARE:.0%} of the scope or "
                            "more: nothing tells one entry from another")
        elif encoding is not None:
            pool.candidates = _nearest(conn, weighed, [], pool, encoding, session_id, excluded)
            _encoder_cosines(conn, pool.candidates, encoding)
        return pool
    required = decide.required_terms(len(weighed.found))
    common_only = all(weighed.counts[words[0]] >= COMMON_CAP for words in weighed.searched)
    span = COMMON_WINDOW if common_only else RECENT_WINDOW  # the newest entries, searched first
    split = weighed.newest - span if weighed.newest > 2 * span else None
    by_scope = weighed.size * SELECTIVE_SCOPE < max(weighed.newest, 1)

    def window(rowids: tuple[int | None, int | None]) -> list[Candidate]:
        hits = search(conn, weighed.searched, projects, limit=CANDIDATES, exclude_session=session_id or None,
                      exclude_paths=excluded, rowids=rowids, by_scope=by_scope)
        return _features(conn, weighed, hits, required, prompt)

    found = window((split, None))
    if (split is not None and not common_only
            and sum(1 for c in found if decide.floor(c, required, pool.absent) is None) < limit):
        found += window((None, split))
    if encoding is not None:
        found += _nearest(conn, weighed, found, pool, encoding, session_id, excluded)
    pool.candidates = found
    if found and encoding is not None:
        _encoder_cosines(conn, found, encoding)
    if found and given:
        pool.given = SketchIndex(sketches(conn, given))
    return pool


def _features(conn, weighed: Weighed, hits: list[Hit], required: int, prompt: str) -> list[Candidate]:
    """These hits as candidates: their text and matched terms read from a `probe` of them."""
    if not hits:
        return []
    texts: dict[int, tuple[str, str]] = {}
    mem = probe(conn, [hit.doc_id for hit in hits], texts)
    try:
        terms = [t.alternatives for t in weighed.found]
        labels = [t.label for t in weighed.found]
        total = weighed.total()
        anywhere = dict(zip(labels, rows_containing(mem, terms)))
        strong = dict(zip(labels, rows_containing(mem, terms, columns=STRONG_COLUMNS)))
        found = []
        for hit in hits:
            hit.matched = [label for label in labels if hit.doc_id in anywhere[label]]
            hit.prompt, hit.result = texts.get(hit.doc_id, ("", ""))
            weight = weighed.weight(hit.matched)
            found.append(Candidate(hit, {label for label in hit.matched if hit.doc_id in strong[label]},
                                   weighed.words, weight, weight / total if total > 0 else 0.0))
        best = max(hit.score for hit in hits)
        for candidate in found:
            if candidate.hit.score == best and decide.short_of_evidence(candidate, required):
                _own_words(mem, candidate, weighed)
                candidate.similarity = _similarity(conn, prompt, candidate.hit.doc_id)
    finally:
        mem.close()
    return found


def _nearest(conn, weighed: Weighed, found: list[Candidate], pool: Pool, encoding,
             session_id: str | None, excluded: set[str]) -> list[Candidate]:
    """The entries closest in meaning to the prompt that the words did not find, as candidates with no matched
    term (a paraphrase that shares no word with its entry), whatever the scope's size: the encoder answers
    them from the index's vectors it holds (recall/nearby.py). Their cosines are the prompt's neighbourhood
    (`Pool.nearby`), which the judge reads the best cosine against. Waits for the encoder's answer only when
    the index has its vectors."""
    if not _may_answer(encoding):
        return []
    from . import encoded

    if not encoded.any_made(conn):
        return []
    near = encoding.nearest()
    if near is None:
        return []
    pool.nearby = [cosine for _, cosine in near]
    pool.in_scope = encoding.in_scope
    have = {c.hit.doc_id for c in found}
    ids = [doc_id for doc_id, _ in near if doc_id not in have]
    hits = with_text(conn, hits_of(conn, ids, pool.projects, exclude_session=session_id or None,
                                   exclude_paths=excluded)[:NEAREST])
    for hit in hits:
        hit.matched = []
    return [Candidate(hit, set(), weighed.words, 0.0, 0.0) for hit in hits]


def _encoder_cosines(conn, found: list[Candidate], encoding) -> None:
    """Each candidate's cosine with the prompt by the encoder's vectors (`Candidate.encoded`), when the
    encoder answered in time and the candidate has one (`encoded.fill` made it in the background)."""
    if not _may_answer(encoding):  # no encoder at the socket: the entries' vectors are not read for nothing
        return
    from . import encoded

    stored = encoded.vectors_of(conn, [c.hit.doc_id for c in found])
    answer = encoding.vectors() if stored else None
    if not answer:
        return
    for c in found:
        if c.hit.doc_id in stored:
            c.encoded = encoded.cosine(answer[0], stored[c.hit.doc_id])


def _may_answer(encoding) -> bool:
    """Whether the encoder may still answer (`Encoding.may_answer`; an answer already in hand, as the benchmarks
    and tests pass, always may)."""
    return getattr(encoding, "may_answer", True)


def _own_words(mem, candidate: Candidate, weighed: Weighed) -> None:
    """Which of the candidate's matched terms it contains in the prompt's own words (`Term.own`), anywhere
    and in its title, prompt or keys. A term whose own words are all its words needs no query."""
    by_label = {t.label: t for t in weighed.found}
    doc_id = candidate.hit.doc_id
    own = set(candidate.hit.matched)
    own_strong = set(candidate.strong)
    asked = [by_label[label] for label in candidate.hit.matched
             if by_label[label].own() != by_label[label].alternatives]
    if asked:
        words = [t.own() for t in asked]
        for term, rows, strong_rows in zip(asked, rows_containing(mem, words),
                                           rows_containing(mem, words, columns=STRONG_COLUMNS)):
            if doc_id not in rows:
                own.discard(term.label)
            if doc_id not in strong_rows:
                own_strong.discard(term.label)
    candidate.own = [label for label in candidate.hit.matched if label in own]
    candidate.own_strong = [label for label in candidate.hit.matched if label in own_strong]


def _similarity(conn, prompt: str, doc_id: int) -> float | None:
    """The cosine of the prompt's and the entry's meaning vectors; None when either has none (the model
    is missing, the entry not filled yet, no piece of the prompt known). About 2 ms, and only for the
    one candidate the rules past the floor look at."""
    from . import meaning, vectors

    model = meaning.load() if prompt else None
    stored = vectors.vectors_of(conn, [doc_id]).get(doc_id) if model is not None else None
    vector = model.vector(prompt) if stored else None
    return meaning.cosine(vector, stored) if vector else None
