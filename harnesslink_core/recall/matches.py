"""Prompt matches (SPEC §6): up to three past entries that fit the prompt, found stage by stage.

    the prompt's words and terms   `terms.prompt_words`, `terms.prompt_terms` (the vocabulary: the index's)
      -> candidates, features      `candidates.gather`: every read of the index, done here
      -> the decision              `decide.decide`: pure, named features to verdicts with reasons
      -> the framed block          `render`

`find_matches` runs the first three, over the index as it is (`in_index_as_it_is`: missing, locked or
corrupt, the prompt gets nothing and the index is made again in the background); the prompt hook renders
what they chose. Before any of it:
prompts starting with `/` (a command) or `!` (a shell escape) get nothing, nor those with fewer
than two meaningful words (an identifier or a release, `2.3.1`, counts two); only this project
and its linked projects are searched, nothing from the current session, nothing already given
earlier in it (`terms.skip_reason`, the caller's scope, `candidates`). The rules are in `decide`,
how the candidates are found in `candidates`; the whole framed block stays within `budget`
characters.
"""

from __future__ import annotations

import os
import time

from .. import log
from . import candidates
from .decide import MAX_MATCHES, Decision, decide
from .framing import cut, frame, frame_overhead, neutralise, one_line
from .terms import prompt_terms, prompt_words, skip_reason

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the prompt hook's path)
if TYPE_CHECKING:
    from collections.abc import Callable

    from ..paths import Locations
    from .query import Hit
    from .terms import Words

BUDGET = 2000
FIRST_INDEX_ENTRIES = 50  # a bank this small is indexed by the prompt that finds no index (`_first_index`)
QUICK_SYNC = 50  # changes to the bank a prompt indexes before it searches; more are left to the background


def find_matches(
    conn,
    prompt: str,
    projects: list[str],
    *,
    words: Words | None = None,  # the prompt's `terms.prompt_words`, when the caller has them
    session_id: str | None = None,
    already_injected: set[str] = frozenset(),  # type: ignore[assignment]
    hidden: set[str] = frozenset(),  # type: ignore[assignment]  # entries out of scope (query.foreign_paths)
    limit: int = MAX_MATCHES,
    encoding=None,  # the prompt's vector asked of the encoder (`encoder_client.Encoding`), if it was
) -> Decision:
    """What the prompt gets from the index within `projects`, and why (see the module docstring)."""
    words = prompt_words(prompt) if words is None else words
    skipped = skip_reason(prompt, words)
    if skipped or not projects:
        return Decision(skipped=skipped)
    terms = prompt_terms(words, candidates.prompt_vocabulary(conn, words))
    pool = candidates.gather(conn, terms, projects, session_id=session_id,
                             excluded=already_injected | hidden if hidden else already_injected,
                             given=already_injected, limit=limit, prompt=prompt, encoding=encoding)
    return decide(pool, limit)


def in_index_as_it_is(locs: Locations, projects: list[str], search: Callable[..., Decision], notes: list[str],
                      *, dry_run: bool = False) -> Decision | None:
    """`search(conn)` over the index as it is (refreshed quickly first), or None when the index cannot
    answer now: missing, locked or corrupt. A corrupt one is deleted and rebuilt in the background. What
    happened goes into `notes` (what the dry run says); a dry run changes nothing."""
    from . import index

    try:
        conn = index.connect(locs, create=False, busy_ms=50)
    except index.IndexUnavailable as exc:
        first = None if dry_run else _first_index(locs, projects)
        if first is not None:
            return _search_in(locs, first, search, projects, notes, dry_run)
        notes.append(f"no matches: search index unavailable ({exc})")
        if not dry_run:
            if isinstance(exc, index.IndexCorrupt):
                log.error(locs, f"search index unusable, rebuilding in the background: {exc}")
            index.rebuild_in_background(locs)
        return None
    return _search_in(locs, conn, search, projects, notes, dry_run)


def _first_index(locs: Locations, projects: list[str]):
    """No index at all yet (a first prompt after install, or after the tree was pulled onto this machine)
    and a small bank: the index is made here (about 20 ms, once) so this prompt gets its answer; a large
    bank is indexed in the background."""
    from . import index

    if os.path.exists(locs.index_path):
        return None
    total = 0
    for slug in projects:
        try:
            total += len(os.listdir(os.path.join(locs.memories_path, slug, "bank")))
        except OSError:
            continue
    if total > FIRST_INDEX_ENTRIES:
        return None
    try:
        return index.connect(locs, create=True, busy_ms=50)
    except index.IndexUnavailable:
        return None


def _search_in(locs: Locations, conn, search: Callable[..., Decision], projects: list[str], notes: list[str],
               dry_run: bool) -> Decision | None:
    from . import index

    try:
        if not dry_run:
            _sync_quickly(locs, conn, projects, notes)
        return search(conn)
    except index.sqlite3.OperationalError as exc:
        notes.append(f"no matches: search index busy ({exc})")
        log.error(locs, f"search index busy: {exc}")
        return None
    except index.sqlite3.DatabaseError as exc:
        notes.append(f"no matches: search index corrupt ({exc})")
        log.error(locs, f"search index corrupt, rebuilding in the background: {exc}")
        if not dry_run:
            conn.close()
            index.delete_index_files(locs)
            index.rebuild_in_background(locs)
        return None
    finally:
        conn.close()


def _sync_quickly(locs: Locations, conn, projects: list[str], notes: list[str]) -> None:
    """Index what changed since the last look, unless that is a lot: then a background job does it."""
    from . import index

    try:
        index.sync(conn, locs, projects, max_changes=QUICK_SYNC)
    except index.IndexBehind as exc:
        notes.append(f"index behind ({exc}); refreshing in the background")
        index.rebuild_in_background(locs, full=False)
    except index.sqlite3.OperationalError as exc:  # locked by a writer: search it as it is
        notes.append(f"index not refreshed ({exc})")


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
