"""Prompt matches (SPEC §6): up to three past entries that fit the prompt.

Rules, in the order they apply:
- prompts starting with `/` (a command) or `!` (a shell escape) get nothing;
- fewer than two meaningful words get nothing (an identifier or a release, `2.3.1`, counts two);
- only this project and its linked projects; nothing from the current session;
  nothing already given earlier in this session, nor a copy of it (`fingerprint`);
- a relevance floor: an entry must contain at least two of the prompt's terms
  (a quarter of them for long prompts, at most four), and score at least
  `RELATIVE_FLOOR` of the best match (bm25 scores have no absolute scale:
  they shrink as a term spreads over more of the bank);
- copies of one answer (same or nearly the same content) take one slot, which
  names the others (`Hit.also`);
- the whole framed block stays within `budget` characters.

What counts as a term: each meaningful word of the prompt (or a two-word phrase
the vocabulary knows, "dark mode") together with its related words from the
vocabulary (`lexicon`, stored in the index: "popup" also finds "modal"); an entry
containing any of them contains the term. Versions, numbers with units,
identifiers and file names are terms of their own with their other spellings
(`tokens`: "Node 22" also finds "node22" and, through the index's keys, "Node.js version
22"; `applyDiscount` also "apply discount").
How often each term occurs in the projects in scope decides how much it says
(idf): a term in more than `COMMON_SHARE` of the entries is not searched for
(unless nothing better is left) but still counts when an entry has it.

The floor, per entry: each matched term counts 1 when it is in the title or the
prompt, `WEAK_MATCH` when only in the steps or the result; the matched terms must
also carry `MIN_COVERAGE` of what the prompt's terms say together (by idf), so
two common words cannot stand for a prompt whose specific words are elsewhere.
Candidates are ranked by the idf of their matched terms, bm25 breaking ties.

A concept the project never mentions counts against the coverage, as much as a word in
no entry says: a prompt word that the vocabulary marks as a concept ("dark mode", "read
replica", "pagerduty") of which no entry in scope holds the word or a related one names
work this project has not done, so an entry that matches the prompt's other words is
probably about something else. Other words in no entry do not count: everyday words
("stuck", "smaller") and words the vocabulary does not know ("wishlist", "falling"),
since people say things their bank never says, and a small bank lacks most of them.

A clear winner passes the floor anyway: the candidate that stands `CLEAR_WINNER`
times above every other answer matching more than one term (by bm25, its copies
aside) and contains `CLEAR_WINNER_OWN_WORDS` of the prompt's own words (an identifier
such as `CAPTURE_RETRY_MAX` stands for two; related words are not enough: "websocket
live chat widget" reaches a Tailwind entry by production/component, and "apple watch
companion app" an iOS build by "app").

A rare word passes it too: the best candidate by bm25 whose title or prompt holds a
word of the prompt's own that at most `RARE_ENTRIES` entries in scope contain ("what did
we conclude about dramatiq"), when its matches carry half of what the prompt says.

Tried and left out (benchmarks/queries*.json): one rare word for any candidate, or
one anywhere in the entry (never-done prompts got entries through "installer", "set",
"data": words a small bank happens to use once); a vocabulary phrase the bank lacks
giving way to its words ("rate limiting" found shipping rates); counting every prompt
word the bank never uses against the coverage (paraphrases use such words as often as
never-done prompts do), or counting identifiers and versions the bank never uses; an
absent concept weighing more than a word in no entry; reading a phrase the scope never
uses as its two words when the scope uses both (each traded recall for quiet about one
for one on the development sets).
"""

from __future__ import annotations

import math
import time

from .fingerprint import SketchIndex
from .framing import cut, frame, frame_overhead, neutralise, one_line
from .lexicon import Vocabulary, full, lookup_keys
from .query import (
    STRONG_COLUMNS,
    Hit,
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
)
from .terms import (
    MAX_TERMS,
    _meaningful,
    _tokens,
    skip_reason,
)
from .tokens import Compound

MAX_MATCHES = 3
BUDGET = 2000
MIN_MATCHED_TERMS = 2
MAX_REQUIRED_TERMS = 4
RELATIVE_FLOOR = 0.3
MAX_ALTERNATIVES = 8  # related words searched per prompt term
COMMON_SHARE = 0.2
COMMON_CAP = 400  # counting stops here; a term this common is searched without its related words
RECOUNT_CAP = 4000  # how far a term at COMMON_CAP is counted further, to learn whether it is under COMMON_SHARE
WEAK_MATCH = 0.5  # a term found only in the steps or the result
MIN_COVERAGE = 0.5  # share of what the prompt's terms say (by rarity) the entry must contain
SELECTIVE_SCOPE = 4  # the scope token filters the FTS5 query when the scope is under 1/4 of the index
CLEAR_WINNER = 2.5  # bm25 times the next answer's that lets in a match whose terms are only in the result or steps
# (1.5 let in never-done prompts at 1.7-2.2x on the fourth set: "iceberg tables instead of parquet", "apple pay")
CLEAR_WINNER_OWN_WORDS = 2  # the prompt's own words (not related ones) a clear winner must contain
RARE_ENTRIES = 2  # a prompt word in this many entries of the scope or fewer names one piece of work
CANDIDATES = 24  # ranked again by matched terms' rarity; bm25 alone favours long word-rich entries
RECENT_WINDOW = 25_000  # entries searched first; older ones only when these give too few matches
COMMON_WINDOW = 5_000  # the newest entries searched when every word searched is in COMMON_CAP entries or more

class Term(list):
    """One prompt term: its label first, then the other words that count as it; `words` is how
    many of the prompt's words it stands for (a phrase or an identifier: two); `compound`: the
    others are the compound's own other spellings ("node22" for "Node 22"), not related words;
    `concept`: the vocabulary marks it as a concept."""

    def __init__(self, words: int, alternatives: list[str], *, compound: bool = False, concept: bool = False) -> None:
        super().__init__(alternatives)
        self.words = words
        self.compound = compound
        self.concept = concept

    def own(self) -> list[str]:
        """What the prompt itself says: the word, or all of a compound's spellings (no related words)."""
        return list(self) if self.compound else self[:1]


def prompt_terms(prompt: str, vocab: Vocabulary | None = None) -> list[Term]:
    """The prompt's terms, each a list: the word (a vocabulary phrase, a compound) first, then
    related words (compounds: their other spellings). `vocab`: the vocabulary (default: the
    shipped file; the prompt hook passes what the index has for the prompt's words)."""
    vocab = vocab or full()
    tokens = _tokens(prompt)
    terms: list[Term] = []
    seen: set[str] = set()
    i = 0
    while i < len(tokens) and len(terms) < MAX_TERMS:
        token, after = tokens[i], (tokens[i + 1] if i + 1 < len(tokens) else None)
        pair = f"{token} {after}" if isinstance(token, str) and isinstance(after, str) else ""
        if pair and vocab.is_phrase(pair):  # one term for both words ("rate limiting" is not about rates)
            term, i = Term(2, [pair, *vocab.related(pair)[:MAX_ALTERNATIVES]], concept=vocab.is_concept(pair)), i + 2
        elif isinstance(token, Compound):
            term, i = Term(token.words, [token.label, *token.spellings], compound=True), i + 1
        else:
            word, i = _meaningful(token), i + 1
            if word is None:
                continue
            term = Term(1, [word, *vocab.related(word)[:MAX_ALTERNATIVES]], concept=vocab.is_concept(word))
        if term[0] not in seen:
            seen.add(term[0])
            terms.append(term)
    return terms


def prompt_vocabulary(conn, prompt: str) -> Vocabulary:
    """What the index's vocabulary says about the prompt's words and word pairs (one query)."""
    tokens = _tokens(prompt)[:8 * MAX_TERMS]
    words = [t for t in tokens if isinstance(t, str) and _meaningful(t)]
    pairs = [f"{a} {b}" for a, b in zip(tokens, tokens[1:]) if isinstance(a, str) and isinstance(b, str)]
    return Vocabulary.from_rows(vocabulary(conn, lookup_keys(words) + list(dict.fromkeys(pairs))))


class Decision:
    """What the prompt hook decided, and why (for `--dry-run`)."""

    def __init__(self) -> None:
        self.terms: list[str] = []
        self.hits: list[Hit] = []
        self.rejected: list[tuple[Hit, str]] = []
        self.skipped: str | None = None

    def __repr__(self) -> str:
        return f"Decision(terms={self.terms}, hits={self.hits}, rejected={self.rejected}, skipped={self.skipped!r})"

    def given(self) -> list[str]:
        """Every entry this decision gives the session: the matches and the copies folded into them."""
        return [h.path for hit in self.hits for h in (hit, *hit.also)]

    def explain(self) -> list[str]:
        """One line per candidate: chosen (and why, when not by the ordinary floor), folded, or not chosen."""
        lines = []
        for hit in self.hits:
            why = f"  ({hit.why})" if hit.why else ""
            lines.append(f"chosen: {hit.path}  score {hit.score:.2f}  matched: {', '.join(hit.matched)}{why}")
        for hit, why in self.rejected:
            lines.append(f"not chosen: {hit.path}  score {hit.score:.2f}  ({why})")
        return lines


def find_matches(
    conn,
    prompt: str,
    projects: list[str],
    *,
    session_id: str | None = None,
    already_injected: set[str] = frozenset(),  # type: ignore[assignment]
    hidden: set[str] = frozenset(),  # type: ignore[assignment]  # entries out of scope (index.foreign_paths)
    limit: int = MAX_MATCHES,
) -> Decision:
    decision = Decision()
    decision.skipped = skip_reason(prompt)
    if decision.skipped or not projects:
        return decision
    weighed = _Weighed(conn, prompt_terms(prompt, prompt_vocabulary(conn, prompt)), projects)
    decision.terms = [t[0] for t in weighed.found]
    if not weighed.searched:
        if weighed.found:
            decision.skipped = (f"every term is in {COMMON_CAP} entries and {COMMON_SHARE:.0%} of the scope or "
                                "more: nothing tells one entry from another")
        return decision
    required = required_terms(len(weighed.found))
    # Newest entries first: ranking cost grows with the number of matching rows, and
    # recent turns are the likelier help. The rest is searched only if that is not enough,
    # and never for words that common: every word searched in COMMON_CAP entries or more
    # would have FTS5 rank thousands of rows, so only the newest COMMON_WINDOW are.
    common_only = all(weighed.counts[t[0]] >= COMMON_CAP for t in weighed.searched)
    window = COMMON_WINDOW if common_only else RECENT_WINDOW
    newest = max_rowid(conn)
    split = newest - window if newest > 2 * window else None
    excluded = already_injected | hidden if hidden else already_injected
    candidates = _candidates(conn, weighed, projects, session_id, excluded, (split, None))
    judged = _judge(weighed, candidates, required)
    if (split is not None and not common_only
            and sum(1 for verdict in judged.values() if verdict is None) < limit):
        older = _candidates(conn, weighed, projects, session_id, excluded, (None, split))
        judged.update(_judge(weighed, older, required))
        candidates += older
    # Rank by what the matched terms say (rarer terms say more), bm25 breaking ties.
    candidates.sort(key=lambda h: (-weighed.weight(h), -h.score))
    families = _families(candidates)
    leaders = sorted((max(f, key=lambda h: h.score) for f in families), key=lambda h: -h.score)  # by bm25
    _accept_clear_winner(conn, weighed, leaders, judged)
    _accept_rare_word(conn, weighed, leaders, judged)
    given = SketchIndex(sketches(conn, already_injected))  # what this session was given, to recognise its copies
    best = 0.0
    for family in families:
        hit = next((h for h in family if judged[h.doc_id] is None), family[0])
        verdict = judged[hit.doc_id]
        if verdict is None and given.near(hit.sketch) is not None:
            verdict = "same content as an entry already given in this session"
        elif verdict is None:
            best = best or weighed.weight(hit)
            if weighed.weight(hit) < RELATIVE_FLOOR * best:
                verdict = f"under {RELATIVE_FLOOR:.0%} of the best match"
            elif len(decision.hits) >= limit:
                verdict = "beyond the first three"
        copies = [h for h in family if h is not hit]
        if verdict is None:
            hit.also = copies
            decision.hits.append(hit)
            verdict = "folded into it"
        else:
            decision.rejected.append((hit, verdict))
        for copy in copies:
            decision.rejected.append((copy, f"same content as {hit.path}: {verdict}"))
    return decision


def _families(ranked: list[Hit]) -> list[list[Hit]]:
    """The candidates grouped by content (copies of one answer together), in rank order."""
    families: list[list[Hit]] = []
    heads = SketchIndex()
    for hit in ranked:
        family = heads.near(hit.sketch)
        if family is None:
            families.append([hit])
            heads.add(hit.sketch, families[-1])
        else:
            family.append(hit)
    return families


def _accept_clear_winner(conn, weighed: "_Weighed", tops: list[Hit], judged: dict[int, str | None]) -> None:
    """Let in the candidate that the floor rejected only because its terms are in the result or
    steps, when it stands far above every other answer that matches more than one term (by bm25,
    copies of it aside) and contains more than one of the prompt's own words (not only related
    ones). A prompt about work never done has no such candidate: what it shares with the bank is
    one word here and there, or a related word that is everywhere. `tops`: the best of each
    family of copies, by bm25."""
    if not tops or tops[0].doc_id not in weighed.short_of_evidence or weighed.word_count(tops[0].matched) < 2:
        return
    top = tops[0]
    runner_up = next((h.score for h in tops[1:] if weighed.word_count(h.matched) > 1), 0.0)
    if top.score < CLEAR_WINNER * runner_up:
        return
    own = [weighed.term(label).own() for label in top.matched]
    literal = [label for label, rows in zip(top.matched, rows_containing(conn, own, [top.doc_id])) if rows]
    if weighed.word_count(literal) < CLEAR_WINNER_OWN_WORDS:
        return
    judged[top.doc_id] = None
    ratio = f"{top.score / runner_up:.1f}× the next" if runner_up else "no other match"
    top.why = f"clear winner: bm25 {top.score:.1f}, {ratio}; has {', '.join(literal)} in the result or steps"


def _accept_rare_word(conn, weighed: "_Weighed", tops: list[Hit], judged: dict[int, str | None]) -> None:
    """Let in the best candidate by bm25 (`tops`, as for the clear winner) when the floor rejected
    it only for evidence and its title or prompt holds a word of the prompt's own that at most
    `RARE_ENTRIES` entries in scope contain: "what did we conclude about dramatiq", "the idna
    advisory". One such word names the work better than two common ones."""
    if not tops or judged[tops[0].doc_id] is None or tops[0].doc_id not in weighed.short_of_evidence:
        return
    top = tops[0]
    rare = [t for t in weighed.found if t[0] in top.matched and weighed.counts[t[0]] <= RARE_ENTRIES]
    if not rare:
        return
    own = [t.own() for t in rare]
    words = [t[0] for t, rows in zip(rare, rows_containing(conn, own, [top.doc_id], columns=STRONG_COLUMNS)) if rows]
    if words:
        judged[top.doc_id] = None
        entries = weighed.counts[words[0]]
        top.why = f"rare word: {', '.join(words)} in {entries} {'entry' if entries == 1 else 'entries'}, first by bm25"


class _Weighed:
    """The prompt's terms as the projects in scope see them.

    found: the terms that occur in scope; searched: those worth asking FTS5 for (without
    the common ones unless fewer than two would be left); per term, which entries contain
    it (anywhere, and in the title or prompt) and how often it occurs in scope."""

    def __init__(self, conn, terms: list[Term], projects: list[str]) -> None:
        self.conn = conn
        self.size = scope_size(conn, projects)
        self.found: list[Term] = []
        self.absent: list[Term] = []  # concepts that no entry in scope mentions
        self._absent_weight = 0.0
        self.searched: list[list[str]] = []
        self.counts: dict[str, int] = {}
        self._idf: dict[str, float] = {}
        self.rows: dict[str, set[int]] = {}
        self.strong: dict[str, set[int]] = {}
        self.words = {t[0]: t.words for t in terms}
        self.short_of_evidence: set[int] = set()  # rejected only for where their terms are
        self.cap = max(2, min(int(self.size * COMMON_SHARE) + 1, COMMON_CAP))
        if not terms or not self.size:
            return
        self.whole_index = self.size >= index_size(conn)
        counts = term_counts(conn, terms, projects, cap=self.cap, whole_index=self.whole_index)
        self.found = [t for t, n in zip(terms, counts) if n]
        # with no other word for it, a concept's absence is only its word's (paraphrases lack words)
        self.absent = [t for t, n in zip(terms, counts) if not n and t.concept and len(t) > 1]
        self.counts = {t[0]: n for t, n in zip(terms, counts) if n}
        self.searched = [t for t in self.found if not self.is_common(t[0])]
        if len(self.searched) < 2:
            # The two least common terms. Counting stopped at COMMON_CAP in a big scope: count those
            # further, up to COMMON_SHARE of the scope, to tell them apart. A term in COMMON_CAP entries
            # and COMMON_SHARE of the scope or more is never searched (FTS5 would rank thousands of rows
            # for it), and when every term is that common, nothing tells one entry from another:
            # nothing is searched (nor injected).
            share_cap = min(RECOUNT_CAP, int(self.size * COMMON_SHARE) + 1)
            order = {label: n / self.size for label, n in self.counts.items()}  # shares of the scope
            capped = [t for t in self.found if self.counts[t[0]] >= COMMON_CAP and COMMON_CAP < share_cap]
            if capped:
                order.update(self._recount(capped, projects, share_cap))
            telling = [t for t in self.found
                       if order[t[0]] < COMMON_SHARE or self.counts[t[0]] < COMMON_CAP]
            self.searched = sorted(telling, key=lambda t: order[t[0]])[:2]
            # a term in COMMON_CAP entries or more is searched without its related words: they
            # would only widen what FTS5 must score (hundreds more rows) for the least telling term
            self.searched = [t[:1] if self.counts[t[0]] >= COMMON_CAP else t for t in self.searched]
        self._idf = {label: math.log((self.size + 1) / (n + 0.5)) for label, n in self.counts.items()}
        # an absent concept says as much as a word in no entry
        self._absent_weight = math.log((self.size + 1) / 0.5) * sum(t.words for t in self.absent)

    def _recount(self, capped: list[list[str]], projects: list[str], share_cap: int) -> dict[str, float]:
        """The share of the scope holding each of these terms, counted as they would be searched (the
        word alone, without its related words), up to `share_cap` entries. In a large index the newest
        COMMON_WINDOW entries are looked at first: a term under COMMON_SHARE there is taken at that
        share, and only the others are counted in the whole scope, so that no bank makes this slow."""
        shares: dict[str, float] = {}
        newest = max_rowid(self.conn)
        if newest > 2 * COMMON_WINDOW:
            after = newest - COMMON_WINDOW
            in_scope = max(1, scope_rows_after(self.conn, projects, after))
            counts = term_counts(self.conn, [t[:1] for t in capped], projects, cap=COMMON_WINDOW,
                                 whole_index=self.whole_index, after=after)
            shares = {t[0]: n / in_scope for t, n in zip(capped, counts) if n / in_scope < COMMON_SHARE}
        rest = [t for t in capped if t[0] not in shares]
        counts = term_counts(self.conn, [t[:1] for t in rest], projects, cap=share_cap, whole_index=self.whole_index)
        # a count that reached `share_cap` is at least that common: the cap stops counting, not the term
        shares.update((t[0], n / self.size if n < share_cap else 1.0) for t, n in zip(rest, counts))
        return shares

    def mark(self, hits: list[Hit]) -> None:
        """Set each hit's matched terms, and note which are in its title or prompt."""
        if not hits:
            return
        texts: dict[int, tuple[str, str]] = {}
        mem = probe(self.conn, [hit.doc_id for hit in hits], texts)
        try:
            labels = [t[0] for t in self.found]
            for label, rows in zip(labels, rows_containing(mem, self.found)):
                self.rows.setdefault(label, set()).update(rows)
            for label, rows in zip(labels, rows_containing(mem, self.found, columns=STRONG_COLUMNS)):
                self.strong.setdefault(label, set()).update(rows)
        finally:
            mem.close()
        for hit in hits:
            hit.matched = [label for label in labels if hit.doc_id in self.rows[label]]
            hit.prompt, hit.result = texts.get(hit.doc_id, ("", ""))

    def term(self, label: str) -> Term:
        return next(t for t in self.found if t[0] == label)

    def word_count(self, labels: list[str]) -> int:
        """How many of the prompt's words these terms stand for (an identifier: two)."""
        return sum(self.words[label] for label in labels)

    def is_common(self, label: str) -> bool:
        return self.counts.get(label, 0) >= self.cap

    def weight(self, hit: Hit) -> float:
        """What the terms the entry contains say: rarer terms say more (idf)."""
        return sum(self._idf.get(label, 0.0) for label in hit.matched)

    def coverage(self, hit: Hit) -> float:
        """The share of what the prompt's terms say that the entry's matched terms carry."""
        total = sum(self._idf.values()) + self._absent_weight
        return self.weight(hit) / total if total > 0 else 0.0


def _judge(weighed: _Weighed, hits: list[Hit], required: int) -> dict[int, str | None]:
    """Why each hit is rejected, or None when it passes the floor: enough evidence, where a
    term found in the title or prompt counts 1, one found only in the steps or result
    `WEAK_MATCH`, and the matched terms
    carry at least `MIN_COVERAGE` of what the prompt's terms say."""
    weighed.mark(hits)
    verdicts: dict[int, str | None] = {}
    for hit in hits:
        evidence = 0.0
        for label in hit.matched:
            evidence += weighed.words[label] * (1.0 if hit.doc_id in weighed.strong[label] else WEAK_MATCH)
        coverage = weighed.coverage(hit)
        if evidence < required:
            verdicts[hit.doc_id] = f"{len(hit.matched)} matching term(s) ({evidence:g}), {required} required"
            if coverage >= MIN_COVERAGE:
                weighed.short_of_evidence.add(hit.doc_id)
        elif coverage < MIN_COVERAGE:
            verdicts[hit.doc_id] = f"covers {int(coverage * 100)}% of the prompt's terms, {MIN_COVERAGE:.0%} required"
            if weighed.absent:
                verdicts[hit.doc_id] += f"; never mentioned in this project: {', '.join(t[0] for t in weighed.absent)}"
        else:
            verdicts[hit.doc_id] = None
    return verdicts


def _candidates(conn, weighed: _Weighed, projects, session_id, already_injected, rowids) -> list[Hit]:
    # hits without their text: `mark` reads theirs
    return search(conn, weighed.searched, projects, limit=CANDIDATES, exclude_session=session_id or None,
                  exclude_paths=already_injected, rowids=rowids,
                  by_scope=weighed.size * SELECTIVE_SCOPE < max(max_rowid(conn), 1))


def required_terms(n_terms: int) -> int:
    return min(MAX_REQUIRED_TERMS, max(MIN_MATCHED_TERMS, -(-n_terms // 4)))


def render(hits: list[Hit], terms: list[str], memories_root: str, budget: int = BUDGET) -> str:
    """The framed block for these matches, at most `budget` characters ("" if none)."""
    if not hits:
        return ""
    overhead = frame_overhead("matches") + 2
    room = budget - overhead
    parts: list[str] = []
    for n, hit in enumerate(hits):
        share = room // (len(hits) - n) - 2
        part = _render_one(n + 1, hit, terms, memories_root, share)
        if len(part) > share:
            part = part[:share]  # only if even the header does not fit
        parts.append(part)
        room -= len(part) + 2
    block = frame("matches", "\n\n".join(parts))
    return block if len(block) <= budget else ""


def _render_one(n: int, hit: Hit, terms: list[str], memories_root: str, limit: int) -> str:
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(hit.ts)) if hit.ts else "undated"
    path = f"{memories_root.rstrip('/')}/{hit.path}"
    header = neutralise(f"[{n}] {one_line(hit.title, 120)} — {when} · {hit.origin} · {path}")
    lines = [header]
    if hit.also:
        lines.append(neutralise(also_line(hit.also)))
    prompt = " ".join(hit.prompt.split())
    if prompt and prompt.lower() != " ".join(hit.title.split()).lower():
        lines.append(neutralise("asked: " + one_line(prompt, 200)))
    used = sum(len(line) + 1 for line in lines)
    remaining = limit - used - len("result: ")
    if hit.result and remaining > 60:
        lines.append("result: " + neutralise(excerpt(hit.result, terms, remaining)))
    return "\n".join(lines)


def also_line(copies: list[Hit]) -> str:
    """`also in codex, pi · 2026-11-20, 2026-11-21`: where else the same content was banked."""
    harnesses = dict.fromkeys(copy.origin for copy in copies)
    days = dict.fromkeys(time.strftime("%Y-%m-%d", time.gmtime(copy.ts)) for copy in sorted(copies, key=lambda c: c.ts)
                         if copy.ts)
    return f"also in {', '.join(harnesses)}" + (f" · {', '.join(days)}" if days else "")


def excerpt(text: str, terms: list[str], limit: int) -> str:
    """About `limit` characters of `text`, starting near the first matched term."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    lower = flat.lower()
    first = min(
        (pos for pos in (lower.find(_stem_probe(t)) for t in terms) if pos >= 0),
        default=0,
    )
    start = 0 if first < limit // 3 else flat.rfind(" ", 0, first - limit // 6) + 1
    if start <= 0:
        return cut(flat, limit)
    return "…" + cut(flat[start:], limit - 1)


def _stem_probe(term: str) -> str:
    return term if len(term) <= 5 else term[: max(5, len(term) - 3)]
