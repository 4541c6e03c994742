"""The prompt hook's decision: which candidates the prompt gets, and why. Pure: a `Pool` of
`Candidate`s with their features in (`candidates.gather` made every read of the index already), a
`Decision` out; nothing is read, and its inputs are left as they were.

Rules, in the order they apply:
- the floor, per entry: each matched term counts 1 when it is in the title, prompt or keys,
  `WEAK_MATCH` when only in the steps or the result (a phrase or an identifier counts its two
  words); the entry needs `required_terms` of that evidence (two, a quarter of a long prompt's
  terms, at most four), and its matched terms must carry `MIN_COVERAGE` of what the prompt's terms
  say together (by idf), so two common words cannot stand for a prompt whose specific words are
  elsewhere. A concept the project never mentions counts against the coverage as much as a word
  in no entry says (`candidates.weigh`);
- a clear winner passes the floor anyway: the best candidate by bm25, rejected by the floor only for
  evidence, that stands `CLEAR_WINNER` times above every other answer matching more than one word
  (by bm25, its copies aside) and contains `CLEAR_WINNER_OWN_WORDS` of the prompt's own words (an
  identifier such as `CAPTURE_RETRY_MAX` stands for two; related words are not enough: "websocket
  live chat widget" reaches a Tailwind entry by production/component, and "apple watch companion
  app" an iOS build by "app");
- a rare word passes it too: that same best candidate by bm25 when its title or prompt holds a word
  of the prompt's own that at most `RARE_ENTRIES` entries in scope contain ("what did we conclude
  about dramatiq"), when its matches carry half of what the prompt says, and when the entry means
  something close to the prompt (the cosine of their meaning vectors at least `RARE_WORD_MEANING`,
  when both have one): a word that happens to be rare in a small bank names nothing by itself;
- candidates are ranked by the idf of their matched terms, bm25 breaking ties; copies of one answer
  (same or nearly the same content, `fingerprint`) take one slot, which names the others
  (`Hit.also`); nothing already given in this session, nor a copy of it;
- an entry must carry at least `RELATIVE_FLOOR` of the best match's idf (bm25 scores have no absolute
  scale: they shrink as a term spreads over more of the bank); at most `MAX_MATCHES`.

Tried and left out (benchmarks/queries*.json): one rare word for any candidate, or one anywhere in
the entry (never-done prompts got entries through "installer", "set", "data": words a small bank
happens to use once); a vocabulary phrase the bank lacks giving way to its words ("rate limiting"
found shipping rates); counting every prompt word the bank never uses against the coverage
(paraphrases use such words as often as never-done prompts do), or counting identifiers and
versions the bank never uses; an absent concept weighing more than a word in no entry; reading a
phrase the scope never uses as its two words when the scope uses both (each traded recall for quiet
about one for one on the development sets).
"""

from __future__ import annotations

from .fingerprint import SketchIndex

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the prompt hook's path)
if TYPE_CHECKING:
    from .query import Hit

MAX_MATCHES = 3
MIN_MATCHED_TERMS = 2
MAX_REQUIRED_TERMS = 4
RELATIVE_FLOOR = 0.3
WEAK_MATCH = 0.5  # a term found only in the steps or the result
MIN_COVERAGE = 0.5  # share of what the prompt's terms say (by rarity) the entry must contain
CLEAR_WINNER = 2.5  # bm25 times the next answer's that lets in a match whose terms are only in the result or steps
# (1.5 let in never-done prompts at 1.7-2.2x on the fourth set: "iceberg tables instead of parquet", "apple pay")
CLEAR_WINNER_OWN_WORDS = 2  # the prompt's own words (not related ones) a clear winner must contain
RARE_ENTRIES = 2  # a prompt word in this many entries of the scope or fewer names one piece of work
# The judge by meaning, when the encoder answered and candidates have its vectors (`judge_by_meaning`):
# fitted on the development sets, each at its own size, in banks of one to five entries and among 1,000 entries
# of real work per project (benchmarks/meaning_fit.py --fit on its dump and benchmarks/bank_sizes.py's: each set's
# hit@3 plus never-done quiet, summed)
MEANING_THRESHOLD = 0.46  # what the best candidate's judge (its score plus its margin) must reach
MEANING_MARGIN = 0.25  # the weight of the best cosine's margin over the runner-up's in the judge
WORDS_CHOSE = 0.3  # added to the cosine of a candidate the words chose (`decide_by_words`)
RUNNER_UP_PRIOR = 0.1  # the runner-up's cosine when there is none (a bank of one or two entries)
# The prompt's neighbourhood: a large bank holds more entries fairly close to any prompt, so the best cosine of a
# prompt about work never done rises with the bank's size; the judge reads the best cosine against the mean of
# the scope's nearest entries after the best (CSLS-style local scaling), so one threshold holds at every size.
MEANING_LOCAL = 0.5  # the weight of the neighbourhood's mean (over NEIGHBOURHOOD_PRIOR) taken off the judge
NEIGHBOURS = 10  # the nearest entries after the best whose mean cosine is the neighbourhood
NEIGHBOURHOOD_PRIOR = 0.1  # the cosine of a neighbour a small bank does not have
MEANING_NEAR = 0.2  # how far under the best score another candidate may be and still be given
RARE_WORD_MEANING = 0.15  # the cosine a rare word's entry needs (on the development sets: the rare-word
# entries that answered were at 0.20 and over but one; those that did not, at 0.17 and under)


class Candidate:
    """One entry FTS5 found for the prompt, with what the decision reads of it (`candidates.gather`
    reads it all in).

    `hit`: the entry (its matched terms, text, bm25 `score` and fingerprint); `strong`: the matched
    terms it has in its title, prompt or keys; `term_words`: how many prompt words each of the
    prompt's terms stands for (a phrase or an identifier: two), and `words` its matched terms;
    `weight`: what they say (idf); `coverage`: the share of what the prompt's terms say together;
    `own`, `own_strong`: the matched terms it contains in the prompt's own words (no related word),
    anywhere and in its title, prompt or keys; `similarity`: the cosine of the prompt's and the entry's
    meaning vectors: these three read only for the best by bm25 when the floor rejects it only for
    evidence (the rules past the floor look at no other), None otherwise (and `similarity` None when
    either has no vector)."""

    __slots__ = ("coverage", "encoded", "hit", "own", "own_strong", "similarity", "strong", "term_words", "weight",
                 "words")

    def __init__(self, hit: Hit, strong: set[str], term_words: dict[str, int], weight: float, coverage: float,
                 *, own: list[str] | None = None, own_strong: list[str] | None = None,
                 similarity: float | None = None) -> None:
        self.hit = hit
        self.strong = strong
        self.term_words = term_words
        self.words = sum(term_words[label] for label in hit.matched)
        self.weight = weight
        self.coverage = coverage
        self.own = own
        self.own_strong = own_strong
        self.similarity = similarity
        self.encoded: float | None = None  # the cosine by the encoder's vectors, when both have one

    def __repr__(self) -> str:
        return f"Candidate({self.hit.path!r}, score={self.hit.score:.2f}, matched={self.hit.matched})"


class Pool:
    """What the decision decides on: the prompt's terms found in scope (`terms`, by label; the entries
    holding each, `counts`, and what each says, `idf`; the concepts no entry mentions, `absent`), the
    `candidates` with their features, newest window first, and `given`: the fingerprints of what this
    session was given already. `skipped`: why nothing was searched, when so."""

    __slots__ = ("absent", "candidates", "counts", "given", "idf", "in_scope", "nearby", "projects", "skipped",
                 "terms")

    def __init__(self, terms: list[str], counts: dict[str, int], idf: dict[str, float], absent: list[str]) -> None:
        self.terms = terms
        self.counts = counts
        self.idf = idf
        self.absent = absent
        self.candidates: list[Candidate] = []
        self.given = SketchIndex()
        self.skipped: str | None = None
        self.projects: list[str] = []
        self.nearby: list[float] | None = None  # the cosines of the scope's entries nearest the prompt, best first
        self.in_scope = 0  # the entry vectors the scope holds (the encoder's count)


def required_terms(n_terms: int) -> int:
    return min(MAX_REQUIRED_TERMS, max(MIN_MATCHED_TERMS, -(-n_terms // 4)))


def evidence(c: Candidate) -> float:
    """What the candidate's matched terms count for the floor: 1 a prompt word in its title, prompt or
    keys, `WEAK_MATCH` one only in its steps or result."""
    total = 0.0
    for label in c.hit.matched:
        total += c.term_words[label] * (1.0 if label in c.strong else WEAK_MATCH)
    return total


def floor(c: Candidate, required: int, absent: list[str]) -> str | None:
    """Why the floor rejects the candidate, or None when it passes: enough evidence, and its matched
    terms carry at least `MIN_COVERAGE` of what the prompt's terms say. `absent`: the concepts no
    entry in scope mentions."""
    found = evidence(c)
    if found < required:
        return f"{len(c.hit.matched)} matching term(s) ({found:g}), {required} required"
    if c.coverage < MIN_COVERAGE:
        why = f"covers {int(c.coverage * 100)}% of the prompt's terms, {MIN_COVERAGE:.0%} required"
        return why + (f"; never mentioned in this project: {', '.join(absent)}" if absent else "")
    return None


def short_of_evidence(c: Candidate, required: int) -> bool:
    """The floor rejects the candidate only for where its terms are: what the clear-winner and
    rare-word rules may still let in."""
    return evidence(c) < required and c.coverage >= MIN_COVERAGE


class Decision:
    """What the prompt hook decided, and why (for `--dry-run`): the `hits` it gives (each with `why`
    when a rule let it in past the floor, and `also`: the copies folded into it) and the `rejected`
    candidates with the reason; `features` of every candidate by entry id, `notes` on the rules that
    looked at one (by entry id), `required` evidence."""

    def __init__(self, terms: list[str] | None = None, skipped: str | None = None) -> None:
        self.terms: list[str] = terms or []
        self.hits: list[Hit] = []
        self.rejected: list[tuple[Hit, str]] = []
        self.skipped = skipped
        self.features: dict[int, Candidate] = {}
        self.notes: dict[int, list[str]] = {}
        self.required = 0
        self.limit = MAX_MATCHES
        self.counts: dict[str, int] = {}  # entries in scope holding each term
        self.idf: dict[str, float] = {}
        self.absent: list[str] = []
        self.judge: tuple[float, float, float, float] | None = None  # best cosine, runner-up's, neighbourhood, judge

    def __repr__(self) -> str:
        return f"Decision(terms={self.terms}, hits={self.hits}, rejected={self.rejected}, skipped={self.skipped!r})"

    def given(self) -> list[str]:
        """Every entry this decision gives the session: the matches and the copies folded into them."""
        return [h.path for hit in self.hits for h in (hit, *hit.also)]

    def why_quiet(self) -> str:
        """Why nothing was given ("" when something was): why nothing was searched, or what the best
        candidate was refused for."""
        if self.hits:
            return ""
        if self.skipped:
            return self.skipped
        return self.rejected[0][1] if self.rejected else "no entry in scope matches the prompt's terms"

    def rules(self) -> list[str]:
        """The thresholds this decision applied (nothing when nothing was judged)."""
        if not self.features:
            return []
        if self.judge is not None:
            best, runner, around, judge = self.judge
            return [f"judged by meaning (the encoder's cosine): score = cosine + {WORDS_CHOSE:g} if the words chose "
                    f"it; judge = the best's score + {MEANING_MARGIN:g} x (its cosine {best:.2f} - the runner-up's "
                    f"{runner:.2f}) - {MEANING_LOCAL:g} x (the neighbourhood's {around:.2f} - {NEIGHBOURHOOD_PRIOR:g}) "
                    f"= {judge:.2f}, threshold {MEANING_THRESHOLD:g}; each match within {MEANING_NEAR:g} "
                    f"of the best score, at most {self.limit}; a candidate without an encoder vector keeps the words' "
                    "verdict"]
        terms = ", ".join(f"{label} {self.counts[label]} (idf {self.idf[label]:.2f})" for label in self.terms)
        absent = f"; never mentioned in this project: {', '.join(self.absent)}" if self.absent else ""
        floor = (f"floor: evidence >= {self.required} (a prompt word counts 1 in the title, prompt or keys, "
                 f"{WEAK_MATCH:g} only in the steps or result) and coverage >= {MIN_COVERAGE:.0%} of what the "
                 f"prompt's terms say (idf); then idf >= {RELATIVE_FLOOR:.0%} of the best match's; "
                 f"at most {self.limit}")
        past = (f"past the floor, for the best by bm25 rejected only for evidence: a clear winner (bm25 >= "
                f"{CLEAR_WINNER:g}x the next answer matching more than one word, with >= {CLEAR_WINNER_OWN_WORDS} "
                f"of the prompt's own words) or a rare word (one of the prompt's own words, in <= {RARE_ENTRIES} "
                "entries of the scope, in its title or prompt)")
        return [f"entries in scope per term: {terms}{absent}", floor, past]

    def explain(self) -> list[str]:
        """One line per candidate: chosen (and why, when not by the ordinary floor), folded, or not
        chosen, with its features and what each rule said of it."""
        lines = []
        for hit in self.hits:
            why = f"  ({hit.why})" if hit.why else ""
            lines.append(f"chosen: {hit.path}  score {hit.score:.2f}  matched: {', '.join(hit.matched)}{why}"
                         f"{self._features_of(hit)}")
        for hit, why in self.rejected:
            lines.append(f"not chosen: {hit.path}  score {hit.score:.2f}  ({why}){self._features_of(hit)}")
        return lines

    def _features_of(self, hit: Hit) -> str:
        c = self.features.get(hit.doc_id)
        if c is None:
            return ""
        weak = [label for label in hit.matched if label not in c.strong]
        strong = [label for label in hit.matched if label in c.strong]
        where = f"title/prompt: {', '.join(strong) or '-'}; steps/result: {', '.join(weak) or '-'}"
        parts = [f"evidence {evidence(c):g}/{self.required} ({where})", f"coverage {int(c.coverage * 100)}%",
                 f"idf {c.weight:.2f}"]
        if c.encoded is not None:
            parts.append(f"encoder cosine {c.encoded:.2f}")
        if c.similarity is not None:
            parts.append(f"static cosine {c.similarity:.2f}")
        parts += self.notes.get(hit.doc_id, [])
        return "  — " + "; ".join(parts)


def decide(pool: Pool, limit: int = MAX_MATCHES) -> Decision:
    """Which of the pool's candidates the prompt gets (at most `limit`), and why each other is left out: by
    meaning when the encoder answered and candidates have its vectors (`judge_by_meaning`, which reads what
    the words chose as one feature), by the words otherwise."""
    by_words = decide_by_words(pool, limit)
    if any(c.encoded is not None for c in pool.candidates):
        return judge_by_meaning(pool, by_words)
    return by_words


def decide_by_words(pool: Pool, limit: int = MAX_MATCHES) -> Decision:
    """The decision by the words and the static vectors (the rules of the module docstring)."""
    decision = Decision(pool.terms, pool.skipped)
    if pool.skipped or not pool.candidates:
        return decision
    decision.required = required = required_terms(len(pool.terms))
    decision.limit = limit
    decision.features = {c.hit.doc_id: c for c in pool.candidates}
    decision.counts, decision.idf, decision.absent = pool.counts, pool.idf, pool.absent
    verdicts = {c.hit.doc_id: floor(c, required, pool.absent) for c in pool.candidates}
    # Rank by what the matched terms say (rarer terms say more), bm25 breaking ties.
    ranked = sorted(pool.candidates, key=lambda c: (-c.weight, -c.hit.score))
    families = _families(ranked)
    leaders = sorted((max(f, key=lambda c: c.hit.score) for f in families), key=lambda c: -c.hit.score)  # by bm25
    why: dict[int, str] = {}
    if leaders and verdicts[leaders[0].hit.doc_id] is not None and short_of_evidence(leaders[0], required):
        top = leaders[0]
        notes = decision.notes.setdefault(top.hit.doc_id, [])
        let_in = _clear_winner(top, leaders[1:], notes) or _rare_word(top, pool.counts, notes)
        if let_in:
            verdicts[top.hit.doc_id] = None
            why[top.hit.doc_id] = let_in
    best = 0.0
    for family in families:
        c = next((c for c in family if verdicts[c.hit.doc_id] is None), family[0])
        verdict = verdicts[c.hit.doc_id]
        if verdict is None and pool.given.near(c.hit.sketch) is not None:
            verdict = "same content as an entry already given in this session"
        elif verdict is None:
            best = best or c.weight
            if c.weight < RELATIVE_FLOOR * best:
                verdict = f"under {RELATIVE_FLOOR:.0%} of the best match"
            elif len(decision.hits) >= limit:
                verdict = "beyond the first three"
            if best:
                decision.notes.setdefault(c.hit.doc_id, []).append(f"{c.weight / best:.0%} of the best match's idf")
        _settle(decision, c, family, verdict, why.get(c.hit.doc_id, ""))
    return decision


def _settle(decision: Decision, c: Candidate, family: list[Candidate], verdict: str | None, why: str) -> None:
    """`c` given, the other copies of its content named beside it, when `verdict` is None; refused with
    its copies otherwise (each copy says which entry it went with, and why)."""
    copies = [other.hit for other in family if other is not c]
    if verdict is None:
        chosen = c.hit.copy()
        chosen.also, chosen.why = copies, why
        decision.hits.append(chosen)
        verdict = "folded into it"
    else:
        decision.rejected.append((c.hit, verdict))
    for copy in copies:
        decision.rejected.append((copy, f"same content as {c.hit.path}: {verdict}"))


def judge_by_meaning(pool: Pool, by_words: Decision) -> Decision:
    """The decision when the encoder answered. Each candidate's score is its cosine with the prompt, plus
    `WORDS_CHOSE` when the words chose it (`by_words`); the best's judge is its score plus `MEANING_MARGIN`
    times its cosine's margin over the runner-up's (another content's; `RUNNER_UP_PRIOR` when there is none),
    less `MEANING_LOCAL` times the prompt's `neighbourhood` over its prior, against one threshold at every
    bank size; a match is given only within `MEANING_NEAR` of the best score. A candidate without
    an encoder vector yet (banked since the last fill) keeps what the words said of it."""
    decision = Decision(pool.terms, pool.skipped)
    decision.required, decision.limit, decision.features = by_words.required, by_words.limit, by_words.features
    decision.counts, decision.idf, decision.absent = by_words.counts, by_words.idf, by_words.absent
    decision.notes = by_words.notes
    chose = {h.doc_id for hit in by_words.hits for h in (hit, *hit.also)}
    said = {hit.doc_id: why for hit, why in by_words.rejected}

    def scored(c: Candidate) -> float:
        return (c.encoded or 0.0) + WORDS_CHOSE * (c.hit.doc_id in chose)

    ranked = sorted(pool.candidates, key=lambda c: (c.encoded is None, -scored(c), -c.hit.score))
    families = _families(ranked)
    cosines = sorted((f[0].encoded for f in families if f[0].encoded is not None), reverse=True)
    top = families[0][0]
    runner = cosines[1] if len(cosines) > 1 else min(cosines[0], RUNNER_UP_PRIOR)
    around = neighbourhood(pool.nearby)
    judge = (scored(top) + MEANING_MARGIN * ((top.encoded or 0.0) - runner)
             - MEANING_LOCAL * (around - NEIGHBOURHOOD_PRIOR))
    decision.judge = (top.encoded or 0.0, runner, around, judge)
    for family in families:
        c = family[0]
        if c.encoded is None:
            verdict = None if c.hit.doc_id in chose else said.get(c.hit.doc_id, "not chosen by the words")
        elif judge < MEANING_THRESHOLD:
            verdict = (f"by meaning, nothing here answers the prompt: judge {judge:.2f} (cosine {top.encoded:.2f}, "
                       f"runner-up {runner:.2f}, neighbourhood {around:.2f}"
                       f"{', chosen by the words' if top.hit.doc_id in chose else ''}) under {MEANING_THRESHOLD:g}")
        elif scored(c) < scored(top) - MEANING_NEAR:
            verdict = f"score {scored(c):.2f}, more than {MEANING_NEAR:g} under the best's {scored(top):.2f}"
        else:
            verdict = None
        if verdict is None and pool.given.near(c.hit.sketch) is not None:
            verdict = "same content as an entry already given in this session"
        elif verdict is None and len(decision.hits) >= decision.limit:
            verdict = "beyond the first three"
        words = ", chosen by the words" if c.hit.doc_id in chose else ""
        _settle(decision, c, family, verdict,
                f"by meaning: cosine {c.encoded:.2f}{words}" if c.encoded is not None else "by the words")
    return decision


def neighbourhood(nearby: list[float] | None) -> float:
    """The mean cosine of the scope's `NEIGHBOURS` entries nearest the prompt after the best (`nearby`: the
    encoder's cosines, best first), a neighbour the bank does not have counted at `NEIGHBOURHOOD_PRIOR`
    (none known: the prior alone)."""
    around = list((nearby or [])[1:1 + NEIGHBOURS])
    return (sum(around) + NEIGHBOURHOOD_PRIOR * (NEIGHBOURS - len(around))) / NEIGHBOURS


def _families(ranked: list[Candidate]) -> list[list[Candidate]]:
    """The candidates grouped by content (copies of one answer together), in rank order."""
    families: list[list[Candidate]] = []
    heads = SketchIndex()
    for c in ranked:
        alone = [c]
        family = heads.near_or_add(c.hit.sketch, alone)
        if family is None:
            families.append(alone)
        else:
            family.append(c)
    return families


def _clear_winner(top: Candidate, others: list[Candidate], notes: list[str]) -> str:
    """Why the floor's reject `top` (the best by bm25, short only of evidence) is let in as a clear winner,
    or "": it stands far above every other answer that matches more than one word (by bm25, copies of
    it aside; `others`: the best of each other family, by bm25) and contains more than one of the
    prompt's own words (not only related ones). A prompt about work never done has no such candidate:
    what it shares with the bank is one word here and there, or a related word that is everywhere."""
    if top.words < 2:
        notes.append("clear winner: no, its terms stand for one word")
        return ""
    runner_up = next((c.hit.score for c in others if c.words > 1), 0.0)
    ratio = f"{top.hit.score / runner_up:.1f}× the next" if runner_up else "no other match"
    if top.hit.score < CLEAR_WINNER * runner_up:
        notes.append(f"clear winner: no, bm25 {ratio} ({CLEAR_WINNER:g}× needed)")
        return ""
    literal = top.own or []
    if sum(top.term_words[label] for label in literal) < CLEAR_WINNER_OWN_WORDS:
        notes.append(f"clear winner: no, {ratio} but the prompt's own words only: {', '.join(literal) or '-'}")
        return ""
    return f"clear winner: bm25 {top.hit.score:.1f}, {ratio}; has {', '.join(literal)} in the result or steps"


def _rare_word(top: Candidate, counts: dict[str, int], notes: list[str]) -> str:
    """Why `top` (as for the clear winner) is let in for a rare word, or "": its title or prompt holds a
    word of the prompt's own that at most `RARE_ENTRIES` entries in scope contain: "what did we conclude
    about dramatiq", "the idna advisory". One such word names the work better than two common ones."""
    rare = [label for label in top.hit.matched if counts[label] <= RARE_ENTRIES]
    words = [label for label in rare if label in (top.own_strong or ())]
    if not words:
        notes.append(f"rare word: no ({', '.join(rare) or 'no matched term'} in <= {RARE_ENTRIES} entries"
                     + (", not in its title or prompt)" if rare else ")"))
        return ""
    entries = counts[words[0]]
    if top.similarity is not None and top.similarity < RARE_WORD_MEANING:
        notes.append(f"rare word: no, {', '.join(words)} in {entries} but it means something else "
                     f"(cosine {top.similarity:.2f}, {RARE_WORD_MEANING:g} needed)")
        return ""
    meant = f", cosine {top.similarity:.2f}" if top.similarity is not None else ""
    return (f"rare word: {', '.join(words)} in {entries} {'entry' if entries == 1 else 'entries'}, first by bm25"
            f"{meant}")
