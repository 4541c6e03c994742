"""What decides which rules run on a text, before any of them is tried: the keyword gate (a rule runs only
when one of its keywords is in the lower-cased text; one automaton pass finds them all once a process redacts
many texts) and, for a long text, the rules it cannot hold skipped by what every match needs."""

from __future__ import annotations

from typing import Any

from . import rules as table
from .expressions import NONASCII

_AUTOMATA: dict[tuple[str, ...], Any] = {}
_AHOCORASICK: Any = None  # the `ahocorasick_rs` module once looked for; False when it is not installed


def automaton(strings: tuple[str, ...], dfa: bool = False) -> Any:
    """An Aho-Corasick automaton over `strings` (None without the `ahocorasick_rs` package); `dfa`: one slower
    to build and faster to scan, for a long text."""
    global _AHOCORASICK
    got = _AUTOMATA.get(strings)
    if got is None:
        if _AHOCORASICK is None:
            try:
                import ahocorasick_rs as _AHOCORASICK
            except ImportError:  # looked for once: a failed import costs more than what it would save
                _AHOCORASICK = False
        if _AHOCORASICK is False:
            return None
        if len(_AUTOMATA) > 64:
            _AUTOMATA.clear()
        kind = _AHOCORASICK.Implementation.DFA if dfa else None
        got = _AUTOMATA[strings] = _AHOCORASICK.AhoCorasick(strings, implementation=kind)
    return got


GATED_ALONE = 64  # texts gated one keyword at a time before the automaton is worth its import and build
_gate_calls = 0


def gated(rules: list[table.Rule], low: str) -> list[int]:
    """Indexes of the rules whose keywords occur in `low` (a lower-cased text), in rule order. One pass of an
    automaton over the ~250 keywords instead of an `in` each, once a process has gated enough texts to pay for
    loading it (a hook redacts a few dozen)."""
    global _gate_calls
    _gate_calls += 1
    ac = automaton(table.KEYWORD_STRINGS) if _gate_calls > GATED_ALONE else None
    if ac is not None:
        found = {i for k, _, _ in ac.find_matches_as_indexes(low, overlapping=True) for i in table.KEYWORDS[k][1]}
        return sorted(found)
    found = set()
    if len(low) > 4096:
        chars = set(low)
        for (kw, idx), kc in zip(table.KEYWORDS, table.KEYWORD_CHARS):
            if kc <= chars and kw in low:
                found.update(idx)
    else:
        for kw, idx in table.KEYWORDS:
            if kw in low:
                found.update(idx)
    return sorted(found)


def runnable(rules: list[table.Rule], text: str, low: str) -> list[tuple[int, bool]]:
    """For a long text: (index, only at the start) of each rule whose needs the text meets and one of
    whose keywords it holds, in rule order."""
    present = {c for c in _alphabet() if c in low}
    if not text.isascii():
        present.add(NONASCII)
    out: list[tuple[int, bool]] = []
    seen: dict[str, bool] = {}
    for i, rule in enumerate(rules):
        at_start = False
        for chars, or_start in rule.needs:
            if chars.isdisjoint(present):
                if not or_start:
                    break
                at_start = True
        else:
            if rule.inside is not None and not at_start:
                out.append((i, False))  # its keywords are looked for once it matches (the engine's windows)
                continue
            for kw in rule.keywords:
                found = seen.get(kw)
                if found is None:
                    found = seen[kw] = not _ALPHABET.intersection(kw).difference(present) and kw in low
                if found:
                    out.append((i, at_start))
                    break
    return out


_ALPHABET: frozenset[str] | None = None


def _alphabet() -> frozenset[str]:
    global _ALPHABET
    if _ALPHABET is None:
        _ALPHABET = frozenset().union(*(chars for rule in table.load() for chars, _ in rule.needs)) - {NONASCII}
    return _ALPHABET
