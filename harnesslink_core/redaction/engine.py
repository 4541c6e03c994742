"""Where the rules match and what replaces each match. A text up to `LONG` characters runs each rule its
keywords let through (`gates.gated`) over the whole text. A longer one:

- skips each rule it cannot hold by what every match needs (`Rule.needs`: an `@` for a URL password, an
  operator for an assignment; a boundary rule needs a non-word character, or runs at the start only), and
  looks for a rule's keywords only once it matches (`gates.runnable`);
- tries a rule only where one of its literal starts is (`Rule.starts`, `_windowed`), or, for a rule with no
  literal start, in a window around a string each match holds near its start (`Rule.inside`,
  `_matches_near`). The places of every rule's starts are found in one pass (an Aho-Corasick automaton,
  `_find_all`, where a `find` per start would read the text once for each) over a copy lower-cased character
  for character (`_folded`, so non-ASCII text takes this path too), and moved along by each replacement
  (`_moved`) rather than found again. A start found densely (`_dense`) is not gathered: its rule scans the
  text whole, which then costs less than a try at each place.

One rule replaces at most `_MAX_REPLACED` secrets one by one; the rest of their region becomes one label
(`_replace`). The timings these choices rest on, and the commands that measure them, are in
benchmarks/reports/2026-12-02-redact-timings.md."""

from __future__ import annotations

import re
from typing import Any

from . import gates
from . import rules as table

# Past this many places of its strings, a rule is scanned whole rather than tried at each place. Most rules
# start with a look-behind (a boundary), so a scan tries them at every position; a `match` at a place costs
# about what a scan over 16 positions does: past one place in 16 characters, the scan. A search around each
# place costs more.
_DENSE_NEAR = 8192


def _dense(low: str) -> int:
    return max(_DENSE_NEAR, len(low) // 16)


def _most_tried(rule: table.Rule, size: int) -> int:
    """The most places of its `inside` strings at which `_windowed` tries `rule` in a text of `size` characters;
    past that it scans the text, so finding more of them is wasted."""
    if rule.inside[1]:  # type: ignore[index]
        return _DENSE_NEAR  # a search around each place costs more than a match at it
    # a scan of a fast rule costs about what a `match` at one place in every 512 characters does
    return (size >> 9) + 64 if rule.scans_fast else max(_DENSE_NEAR, size // 16)


def _places(start: str, low: str, seen: dict[str, list[int] | None], most: int = 0) -> list[int] | None:
    """Where `start` is in `low` (None: more than `most`, or `_dense`, places); `seen` keeps them for the other
    rules."""
    if start in seen:
        return seen[start]
    got: list[int] | None = []
    dense = most or _dense(low)
    if _counted_dense(start, low, low.count(start, 0, _CHUNK), dense):
        seen[start] = None
        return None
    i = low.find(start)
    while i >= 0:
        got.append(i)  # type: ignore[union-attr]
        if len(got) > dense:  # type: ignore[arg-type]
            got = None
            break
        i = low.find(start, i + 1)
    seen[start] = got
    return got


_CHUNK = 1 << 16


def _counted_dense(start: str, low: str, in_a_chunk: int, most: int) -> bool:
    """Whether `start`, found `in_a_chunk` times in one chunk of `low`, is past `most` places in all of it, when
    `most` is more than is cheap to gather: as dense in every chunk, and counted when it would be less than
    twice as dense (at `str.count` speed; the count leaves out overlapping places, so past `most` it is dense)."""
    expected = in_a_chunk * -(-len(low) // _CHUNK)
    if expected <= most or most <= _DENSE_NEAR:
        return False  # gathered, and found dense once it is
    return expected > 2 * most or low.count(start) > most


def _find_all(strings: list[str], low: str, seen: dict[str, list[int] | None], most: dict[str, int]) -> None:
    """`_places` of each of `strings` into `seen`, in one pass over `low` for many of them (~200 vendored rules
    each have a start or two, and a `find` for each reads the text again). The pass goes a chunk at a time, and
    a string past the places its rules are tried at (`most`, else `_dense`) leaves the automaton (its places are
    None: they scan), so a dense string costs a count, not a place gathered for each."""
    dense_at = _dense(low)
    limit = {s: most.get(s) or dense_at for s in strings}
    for start in dict.fromkeys(strings):
        if len(start) == 1 and start not in seen and low.count(start) > limit[start]:
            seen[start] = None  # a character: counted at memchr speed, not gathered to find it dense
    todo = [s for s in dict.fromkeys(strings) if s not in seen]
    ac = gates.automaton(tuple(todo), dfa=True) if len(todo) > 8 else None
    if ac is None:
        for start in todo:
            _places(start, low, seen, limit[start])
        return
    found: list[list[int]] = [[] for _ in todo]
    live = list(range(len(todo)))
    overlap = max(map(len, todo)) - 1
    chunks = -(-len(low) // _CHUNK)
    judged: set[int] = set()  # as dense as `most` in a chunk, not dense by `_counted_dense`: by its places
    for c0 in range(0, len(low), _CHUNK):
        got = ac.find_matches_as_indexes(low[c0:c0 + _CHUNK + overlap], overlapping=True)
        dense = []
        if not c0 or len(got) > _DENSE_NEAR:
            # counted first, so the places of a string that turns dense are not gathered
            from collections import Counter
            from operator import itemgetter

            for k, n in Counter(map(itemgetter(0), got)).items():
                i = live[k]
                if len(found[i]) + n > limit[todo[i]]:
                    dense.append(i)
                elif i not in judged and n * chunks > limit[todo[i]]:
                    if _counted_dense(todo[i], low, n, limit[todo[i]]):
                        dense.append(i)
                    judged.add(i)
            if dense:
                gone = {live.index(i) for i in dense}
                got = [m for m in got if m[0] not in gone]
        for k, at, _ in got:
            if at < _CHUNK:  # one starting in the overlap is the next chunk's
                found[live[k]].append(c0 + at)
        dense += [i for i in live if len(found[i]) > limit[todo[i]] and i not in dense]
        if dense:
            for i in dense:
                seen[todo[i]] = None
            live = [i for i in live if i not in dense]
            if not live:
                return
            ac = gates.automaton(tuple(todo[i] for i in live), dfa=True)
    for i in live:
        seen[todo[i]] = found[i]


def _moved(seen: dict[str, list[int] | None], edits: list[tuple[int, int, int]],
           low: str) -> dict[str, list[int] | None]:
    """`seen` for the text `edits` (sorted (start, end, new length) of the old text) made, whose folded copy is
    `low`: a place the edits left alone moves by what came before it, one they touched goes, and the text
    around each edit is searched again (for a string the edits made or joined)."""
    from bisect import bisect_left, bisect_right

    out: dict[str, list[int] | None] = {}
    most = _dense(low)
    for start, places in seen.items():
        if places is None:
            continue  # dense: found again if a rule still needs it
        size = len(start)
        # the places between two edits, each run shifted at once (a few edits in a megabyte of places: a copy)
        kept: list[int] = []
        delta = first = 0
        for a, b, n in edits:
            last = bisect_right(places, a - size, first)
            kept += places[first:last] if not delta else [p + delta for p in places[first:last]]
            first = bisect_left(places, b, last)  # those overlapping the edit go
            delta += n - (b - a)
        kept += places[first:] if not delta else [p + delta for p in places[first:]]
        delta = 0
        for a, b, n in edits:
            lo, hi = a + delta - size + 1, a + delta + n + size - 1
            i = low.find(start, max(lo, 0), hi)
            while i >= 0:
                at = bisect_left(kept, i)
                if at == len(kept) or kept[at] != i:
                    kept.insert(at, i)
                i = low.find(start, i + 1, hi)
            delta += n - (b - a)
        out[start] = kept if len(kept) <= most else None
    return out


def _windowed(rule: table.Rule, text: str, low: str, seen: dict[str, list[int] | None],
              edits: list[tuple[int, int, int]]) -> str:
    """`_replace`, for a long text, with `rule` tried only where one of its `starts` is (every match starts
    there, so this finds what a scan finds), or searched only from `lead` before each of its `inside`
    strings; its keywords looked for only once it matches. `edits` as `_replace` fills it."""
    strings, lead, reach = rule.inside  # type: ignore[misc]
    found: list[int] = []
    most = _most_tried(rule, len(low))
    heads = rule.heads if not lead else None
    # the strings found densely last: the places of the rest may already be too many
    for start in sorted(strings, key=lambda s: _places(s, low, seen, most) is None):
        got = _places(start, low, seen, most)
        if got is None and heads is not None:  # dense: where it begins a match, found by its head
            got = _head_places(heads[start], low, most - len(found))
        if got is None:
            break
        found += got
        if len(found) > most:
            got = None
            break
    if got is None:  # dense: one scan costs less than a call per place
        return _replace(rule, text, edits) if any(kw in low for kw in rule.keywords) else text
    if not found:
        return text
    found.sort()
    out: list[str] = []
    last = done = 0
    kind = rule.kind
    for m in (_matches_at(rule.pattern, text, found) if not lead else _matches_near(rule.pattern, text, found, lead, reach)):
        i = m.start()
        if not out and not any(kw in low for kw in rule.keywords):
            return text
        new = _sub(kind, m)
        out += (text[last:i], new)
        last = m.end()
        if new != m.group(0):
            edits.append((i, last, len(new)))
        done += 1
        if done >= _MAX_REPLACED:
            edits.clear()
            return _replace(rule, text, edits)  # that many: as a scan does, with its region
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


def _head_places(head: re.Pattern[str], low: str, most: int) -> list[int] | None:
    """Where `head` (one of `table.Rule.heads`) finds a match may start in `low` (None: more than `most` places)."""
    from itertools import islice

    found = [m.start() for m in islice(head.finditer(low), most + 1)]
    return found if len(found) <= most else None


def _matches_at(pattern: re.Pattern[str], text: str, found: list[int]) -> Any:
    """What `pattern.finditer(text)` finds when every match starts at one of `found` (sorted)."""
    last = 0
    match = pattern.match
    for i in found:
        if i < last:
            continue
        m = match(text, i)
        if m is not None:
            yield m
            last = m.end()


def _matches_near(pattern: re.Pattern[str], text: str, found: list[int], lead: int, reach: int) -> Any:
    """What `pattern.finditer(text)` finds when every match starts at most `lead` before one of `found`
    (sorted): a search from each window, in the text cut `reach` past the window's last start (no match
    starting there reads further, so the cut changes nothing for the matches kept)."""
    n = len(text)
    last = 0
    k = 0
    search = pattern.search
    while k < len(found):
        lo, hi = found[k] - lead, found[k]
        k += 1
        while k < len(found) and found[k] - lead <= hi + 1:
            hi = found[k]
            k += 1
        pos = max(lo, last, 0)
        while pos <= hi:
            m = search(text, pos, min(n, hi + reach + 1))
            if m is None or m.start() > hi:
                break
            yield m
            last = pos = m.end() if m.end() > m.start() else m.end() + 1


def _sub(kind: str, match: re.Match[str]) -> str:
    """The text of one match with its secret replaced by `[redacted:<kind>]` (or left as it is)."""
    if kind == "zero-width":
        return ""
    rule = table.BY_KIND.get(kind) or (table.load() and table.BY_KIND[kind])
    if kind == "secret-assignment" and not table.assignment_ok(match):
        return match.group(0)
    group = rule.group
    if not group:
        named = match.re.groupindex
        for name in ("v", "v1", "v2", "v3", "v4"):
            if name in named and match.group(name) is not None:
                group = named[name]
                break
        else:
            if match.re.groups and rule.source not in table.OURS:  # gitleaks: the first group that matched
                group = next((g for g in range(1, match.re.groups + 1) if match.group(g)), 0)
    secret = match.group(group)
    if rule.source not in table.OURS and table.allowed(rule, match, secret):
        return match.group(0)
    whole = match.group(0)
    base = match.start()
    return whole[:match.start(group) - base] + f"[redacted:{kind}]" + whole[match.end(group) - base:]


# A text longer than this takes the long path: rules it cannot hold skipped by what they need, keywords
# looked for only for the rest, and at most _MAX_REPLACED replacements per rule (see `_replace`).
LONG = 1 << 14
_MAX_REPLACED = 1000


def _replace(rule: table.Rule, text: str, edits: list[tuple[int, int, int]] | None = None) -> str:
    """`rule`'s matches in `text` replaced. After _MAX_REPLACED matches (replaced, or let be as gitleaks' allow
    lists say), the rest of the region they are in (from the next match to the last keyword plus the rule's
    longest match) becomes one label: a text with that many matches of one rule is an attack or a dump, and a
    call per match would cost many times the scan (never what a capped entry keeps: that many matches take more
    than its cap).
    `edits`, when given, gets (start, end, length of what replaced it) for each change (the zero-width rule
    records none)."""
    kind = rule.kind
    if kind == "zero-width":
        return rule.pattern.sub("", text)  # what _sub does, without a call per character
    out: list[str] = []
    last = done = 0
    matches = rule.pattern.finditer(text)
    while (m := next(matches, None)) is not None:
        new = _sub(kind, m)
        out += (text[last:m.start()], new)
        last = m.end()
        if new != m.group(0) and edits is not None:
            edits.append((m.start(), last, len(new)))
        done += 1
        if done == _MAX_REPLACED and (m := next(matches, None)) is not None:
            # No match ends further than the rule's longest match past its keyword; the text after
            # the region is scanned as before.
            low = text.lower()
            end = len(text)
            if len(low) == len(text):
                last_kw = max(low.rfind(kw) for kw in rule.keywords)
                end = max(m.end(), min(end, last_kw + rule.width))
            out += (text[last:m.start()], f"[redacted:{kind}]")
            if edits is not None:
                edits.append((m.start(), end, len(out[-1])))
            last = end
            done = 0
            matches = rule.pattern.finditer(text, end)
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


def _folded(text: str) -> str:
    """`text` lower-cased, character for character (so a place in it is the same place in `text`), with the
    characters `re`'s (?i) matches to an ASCII letter made that letter: İ ı -> i, ſ -> s (K lowers to k)."""
    if text.isascii():
        return text.lower()
    if "\u0130" in text:  # the one character whose lower case is two
        text = text.replace("\u0130", "i")
    low = text.lower()
    for odd, plain in (("\u0131", "i"), ("\u017f", "s")):
        if odd in low:
            low = low.replace(odd, plain)
    return low


def redact_secrets(text: str) -> str:
    """`text` with every secret in it replaced (private spans are hidden before, by the caller)."""
    if not text:
        return text
    rules = table.RULES or table.load()
    if len(text) > LONG:
        return _redact_long(rules, text)
    low = text.lower()
    for i in gates.gated(rules, low):
        rule = rules[i]
        if not any(kw in low for kw in rule.keywords):
            continue  # an earlier rule took the keyword away
        new = _replace(rule, text)
        if new != text:
            text, low = new, new.lower()
    return text


def _redact_long(rules: list[table.Rule], text: str) -> str:
    low = _folded(text)
    seen: dict[str, list[int] | None] = {}
    todo = gates.runnable(rules, text, low)
    windowed = [i for i, at_start in todo if not at_start and rules[i].inside is not None]
    most: dict[str, int] = {}  # the most places of a string a rule that looks for it tries it at
    for k in windowed:
        for s in rules[k].inside[0]:  # type: ignore[index]
            most[s] = max(most.get(s, 0), _most_tried(rules[k], len(low)))
    for i, at_start in todo:
        rule = rules[i]
        edits: list[tuple[int, int, int]] = []
        if not at_start and rule.inside is not None:
            if any(s not in seen for s in rule.inside[0]):  # the rest's starts too, in one pass
                rest = [s for k in windowed if k >= i for s in rules[k].inside[0]]  # type: ignore[index]
                _find_all(rest, low, seen, most)
            new = _windowed(rule, text, low, seen, edits)
        elif not any(kw in low for kw in rule.keywords):
            continue  # an earlier rule took the keyword away
        elif at_start:  # no match can start anywhere else
            m = rule.pattern.match(text)
            head = "" if m is None else _sub(rule.kind, m)
            new = text if m is None else head + text[m.end():]
            if m is not None:
                edits.append((0, m.end(), len(head)))
        else:
            new = _replace(rule, text, edits)
        if new != text:
            text, low = new, _folded(new)
            seen = _moved(seen, edits, low) if edits and len(edits) <= 256 else {}
    return text

