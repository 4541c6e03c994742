"""Prompt matches (SPEC §6): up to three past entries that fit the prompt.

Rules, in the order they apply:
- prompts starting with `/` (a command) or `!` (a shell escape) get nothing;
- fewer than two meaningful terms get nothing;
- only this project and its linked projects; nothing from the current session;
  nothing already injected earlier in this session;
- a relevance floor: an entry must contain at least two of the prompt's terms
  (a quarter of them for long prompts, at most four), and score at least
  `RELATIVE_FLOOR` of the best match (bm25 scores have no absolute scale:
  they shrink as a term spreads over more of the bank);
- the whole framed block stays within `budget` characters.
"""

from __future__ import annotations

import re
import time

from .framing import cut, frame, frame_overhead, neutralise, one_line
from .index import Hit, distinctive_terms, max_rowid, search

MAX_MATCHES = 3
BUDGET = 2000
MIN_MATCHED_TERMS = 2
MAX_REQUIRED_TERMS = 4
RELATIVE_FLOOR = 0.3
MAX_TERMS = 16
PROMPT_SCAN_CHARS = 4000  # a 1 MB paste is judged by its start
CANDIDATES = 8
RECENT_WINDOW = 25_000  # entries searched first; older ones only when these give too few matches

# Words that say nothing about which past turn is relevant: English function
# words plus the filler of requests to a coding agent.
STOPWORDS = frozenset("""
a about above after again against all also am an and any are aren as at be because been before being
below between both but by can cannot could couldn did didn do does doesn doing don down during each
few for from further had hadn has hasn have haven having he her here hers herself him himself his how
i if in into is isn it its itself just let lets me more most mustn my myself no nor not now of off on
once only or other our ours ourselves out over own same shan she should shouldn so some such than that
the their theirs them themselves then there these they this those through to too under until up very
was wasn we were weren what when where which while who whom why will with won would wouldn you your
yours yourself yourselves ok okay yes yeah please thanks thank hi hello hey sure right well really
want wanted need needs needed like would could might must shall get got getting go going gone make
made making take took use using used do done try tried trying see seen look looking know think thing
things stuff something anything everything one two also again still maybe perhaps actually basically
help can't cant dont didnt doesnt isnt wasnt im ive youre thats whats lets it's i'm let's
now then first next last new old same other another way time way good bad better best
tell show give put keep say said says ask asked
per via fix fixed fixing issue issues problem problems bug bugs change changes changed update updated
code file files work works working worked run running ran check checked add added remove
""".split())

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)


def meaningful_terms(prompt: str) -> list[str]:
    """Distinct lower-case words of the prompt that could tell one past turn from another."""
    terms: list[str] = []
    seen: set[str] = set()
    for match in _WORD.finditer(prompt[:PROMPT_SCAN_CHARS]):
        word = match.group(0).lower().replace("’", "'")
        if "'" in word:
            word = word.split("'", 1)[0]
        if len(word) < 2 or word in STOPWORDS or word in seen or word.isdigit() and len(word) < 3:
            continue
        seen.add(word)
        terms.append(word)
        if len(terms) >= MAX_TERMS:
            break
    return terms


def skip_reason(prompt: str) -> str | None:
    """Why this prompt gets no matches, or None."""
    text = prompt.lstrip()
    if not text:
        return "empty prompt"
    if text.startswith("/"):
        return "a /command"
    if text.startswith("!"):
        return "a !shell command"
    if len(meaningful_terms(text)) < 2:
        return "fewer than two meaningful terms"
    return None


class Decision:
    """What the prompt hook decided, and why (for `--dry-run`)."""

    def __init__(self) -> None:
        self.terms: list[str] = []
        self.hits: list[Hit] = []
        self.rejected: list[tuple[Hit, str]] = []
        self.skipped: str | None = None

    def __repr__(self) -> str:
        return f"Decision(terms={self.terms}, hits={self.hits}, rejected={self.rejected}, skipped={self.skipped!r})"


def find_matches(
    conn,
    prompt: str,
    projects: list[str],
    *,
    session_id: str | None = None,
    already_injected: set[str] = frozenset(),  # type: ignore[assignment]
    limit: int = MAX_MATCHES,
) -> Decision:
    decision = Decision()
    decision.skipped = skip_reason(prompt)
    if decision.skipped:
        return decision
    decision.terms = distinctive_terms(conn, meaningful_terms(prompt))
    # Newest entries first: ranking cost grows with the number of matching rows, and
    # recent turns are the likelier help. The rest is searched only if that is not enough.
    newest = max_rowid(conn)
    split = newest - RECENT_WINDOW if newest > 2 * RECENT_WINDOW else None
    candidates = _candidates(conn, decision.terms, projects, session_id, already_injected, (split, None))
    if split is not None and _qualifying(candidates, decision.terms) < limit:
        older = _candidates(conn, decision.terms, projects, session_id, already_injected, (None, split))
        candidates = sorted(candidates + older, key=lambda h: -h.score)[:CANDIDATES]
    required = required_terms(len(decision.terms))
    best = 0.0
    for hit in candidates:
        if len(hit.matched) < required:
            decision.rejected.append((hit, f"{len(hit.matched)} matching term(s), {required} required"))
            continue
        best = best or hit.score
        if hit.score < RELATIVE_FLOOR * best:
            decision.rejected.append((hit, f"score under {RELATIVE_FLOOR:.0%} of the best match"))
        elif len(decision.hits) >= limit:
            decision.rejected.append((hit, "beyond the first three"))
        else:
            decision.hits.append(hit)
    return decision


def _candidates(conn, terms, projects, session_id, already_injected, rowids) -> list[Hit]:
    return search(conn, terms, projects, limit=CANDIDATES, exclude_session=session_id or None,
                  exclude_paths=already_injected, rowids=rowids)


def _qualifying(hits: list[Hit], terms: list[str]) -> int:
    required = required_terms(len(terms))
    return sum(1 for h in hits if len(h.matched) >= required)


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
    prompt = " ".join(hit.prompt.split())
    if prompt and prompt.lower() != " ".join(hit.title.split()).lower():
        lines.append(neutralise("asked: " + one_line(prompt, 200)))
    used = sum(len(line) + 1 for line in lines)
    remaining = limit - used - len("result: ")
    if hit.result and remaining > 60:
        lines.append("result: " + neutralise(excerpt(hit.result, terms, remaining)))
    return "\n".join(lines)


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
