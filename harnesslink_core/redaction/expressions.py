"""What is read from a rule's expression, parsed by `re`'s own parser: the characters every match needs
(so a long text skips the rules it cannot hold), the literal strings every match starts with (so a rule is
tried only where one is), and how far past its start the engine may read (so a window is cut there)."""

from __future__ import annotations

import re
from typing import Any

# Where a token starts: not after a letter or digit, but after a JSON escape (`\n`) too. A rule that starts
# with it needs a non-word character before its match, or the start of the text.
BOUNDARY = r"(?:(?<![A-Za-z0-9_])|(?<=\\[nrt]))"
# `BOUNDARY`, written after a rule's first character (so `re` can skip to each place that character is)
BOUNDARY_AFTER_FIRST = r"(?:(?<![A-Za-z0-9_][\s\S])|(?<=\\[nrt][\s\S]))"

# What a rule needs, read from its parsed expression, so a long text skips the rules it cannot hold: every
# match has a character of each needed set (`@` for a URL password, an operator for an assignment). Cheap
# to test (one `in` per character); `NONASCII` stands for any character past ASCII.
NONASCII = "\x80"
_ASCII = tuple(chr(i) for i in range(128))
_WORDISH = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")
_NOT_WORD = frozenset(c.lower() for c in _ASCII if c.lower() not in _WORDISH) | {NONASCII}


def _class_chars(items: list, icase: bool) -> frozenset[str] | None:
    from re import _constants as C  # type: ignore[attr-defined]

    categories = {C.CATEGORY_DIGIT: r"\d", C.CATEGORY_SPACE: r"\s", C.CATEGORY_WORD: r"\w"}
    chars: set[str] = set()
    wide = False
    for op, av in items:
        if op is C.LITERAL:
            chars.add(chr(av))
            wide |= av > 127
        elif op is C.RANGE:
            chars.update(map(chr, range(av[0], min(av[1], 127) + 1)))
            wide |= av[1] > 127
        elif op is C.CATEGORY and av in categories:
            chars.update(c for c in _ASCII if re.match(categories[av], c))
            wide = True
        else:  # a negated class, anything else: no need we can state
            return None
    low = {c.lower() for c in chars}
    if wide or icase and any(c.isalpha() for c in low):
        low.add(NONASCII)  # \w, \d, \s match past ASCII; (?i) letters match e.g. the Kelvin sign
    return frozenset(low)


def _needs_of(seq: Any, icase: bool) -> list[frozenset[str]]:
    from re import _constants as C  # type: ignore[attr-defined]

    out: list[frozenset[str]] = []
    for op, av in seq:
        if op is C.LITERAL:
            c = chr(av)
            out.append(frozenset({c.lower()} | ({NONASCII} if av > 127 or icase and c.isalpha() else set())))
        elif op is C.IN:
            got = _class_chars(av, icase)
            if got is not None:
                out.append(got)
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
            if av[0] >= 1:
                out += _needs_of(av[2], icase)
        elif op is C.SUBPATTERN:
            _, add, remove, sub = av
            out += _needs_of(sub, (icase or bool(add & C.SRE_FLAG_IGNORECASE)) and not remove & C.SRE_FLAG_IGNORECASE)
        elif op is C.ATOMIC_GROUP:
            out += _needs_of(av, icase)
        elif op is C.BRANCH:
            alts = [_needs_of(a, icase) for a in av[1]]
            if all(alts):
                out.append(frozenset().union(*(min(a, key=len) for a in alts)))
        # assertions, anchors, back references: nothing needed
    return out


def needs(source: str) -> tuple[tuple[frozenset[str], bool], ...]:
    from re import _constants as C  # type: ignore[attr-defined]
    from re import _parser

    parsed = _parser.parse(source)
    needs = [(s, False) for s in _needs_of(parsed, bool(parsed.state.flags & C.SRE_FLAG_IGNORECASE))]
    for prefix in (BOUNDARY, "(?i)" + BOUNDARY):
        if source.startswith(prefix):  # not after a letter, digit or `_`: after something else, or at the start
            needs.append((_NOT_WORD, True))
    return tuple(dict.fromkeys(sorted(needs, key=lambda n: len(n[0]))))


def _prefixes(seq: Any) -> tuple[list[str], bool] | None:
    """The literal strings (lower-cased) a parsed sequence starts with, and whether they are all of it; at
    most 16 (past that, the shorter ones so far)."""
    from re import _constants as C  # type: ignore[attr-defined]

    out = [""]
    for op, av in seq:
        if op in (C.AT, C.ASSERT, C.ASSERT_NOT):
            continue  # takes no characters
        whole = True
        if op is C.LITERAL:
            more = [chr(av).lower()]
        elif op is C.IN and all(o is C.LITERAL for o, _ in av) and len(av) <= 6:
            more = sorted({chr(a).lower() for _, a in av})
        elif op in (C.SUBPATTERN, C.BRANCH, C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
            if op is C.SUBPATTERN:
                alts = [av[3]]
            elif op is C.BRANCH:
                alts = av[1]
            else:
                low, high, sub = av
                if low == 0 and high != 1:
                    return out, False
                alts = [sub]
            got = [_prefixes(a) for a in alts]
            if None in got:
                return None if out == [""] else (out, False)
            more = list(dict.fromkeys(p for g in got for p in g[0]))  # type: ignore[index]
            whole = all(g[1] for g in got)  # type: ignore[index]
            if op not in (C.SUBPATTERN, C.BRANCH):
                if av[0] == 0:  # `?`: with it or without
                    if not whole:
                        return out, False
                    more = ["", *more]
                elif av[1] != 1:
                    whole = False  # more of it may follow
        else:
            return out, False
        grown = list(dict.fromkeys(a + b for a in out for b in more))
        if len(grown) > 16:
            return out, False
        out = grown
        if not whole:
            return out, False
    return out, True


def starts(source: str) -> tuple[str, ...] | None:
    from re import _parser  # type: ignore[attr-defined]

    got = _prefixes(_parser.parse(source))
    # one character is too common to look for, unless it is past ASCII (a zero-width space)
    if got is None or any(len(p) < 2 and p.isascii() for p in got[0]):
        return None
    keep = sorted(set(got[0]), key=lambda p: (len(p), p))  # the same order in every process (analysis.json)
    return tuple(p for i, p in enumerate(keep) if not any(p.startswith(q) for q in keep[:i]))


def reach(seq: Any) -> int:
    """The most characters past a match's start the engine may look at: its longest match, with what each
    lookahead may read counted as taken (an upper bound; the engine searches a window that long)."""
    from re import _constants as C  # type: ignore[attr-defined]
    from re import _parser  # type: ignore[attr-defined]

    total = 0
    for op, av in seq:
        if op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
            total += av[1] * reach(av[2])
        elif op is C.SUBPATTERN:
            total += reach(av[3])
        elif op is C.ATOMIC_GROUP:
            total += reach(av)
        elif op is C.BRANCH:
            total += max(reach(a) for a in av[1])
        elif op in (C.ASSERT, C.ASSERT_NOT):
            if av[0] > 0:  # a lookahead reads on from here without taking
                total += reach(av[1])
        else:
            total += _parser.SubPattern(seq.state, [(op, av)]).getwidth()[1]
    return total
