"""Supersession detection (SPEC §11): a newly banked entry that says the subject of an older one
changed is proposed to supersede it; a person decides in `harnesslink review`. Nothing here applies one.

Conservative by construction; when unsure it proposes nothing. A proposal needs all of:

- change wording in the newer entry, not hedged ("moved … from X to Y", "replaced X with Y", "switched from
  X", "migrated off X", "no longer uses X", "instead of X", "renamed X to Y", "X is replaced by Y", "turned
  X off"; not "considered switching", not a question, not "instead of only X");
- X named in the older entry's title or prompt (what it set up), or, when X is one name and the evidence
  is of the strong tier, in what the older did (its result); and the older not itself a move off X (then
  both are about leaving X: two different X's);
- the same subject: a word of the newer entry's title and prompt besides X (sentences that say something
  "stays" or is "still" there left out) in the older's title or prompt;
- the same files touched (an entry of the same project and folder) or, when neither touched any, two
  subject words;
- not a copy of the older (the same turn banked twice, or the same prompt asked again).

Or, with no change wording: a setting the older gave a value (`pool_size: 20`, `TARGET = 15.0`, a key
shaped like a name in code) that the newer gives another, not said to stay, in a file both touched, on
the same subject.

Each proposal says its evidence in words; `strong` marks those with two subject words and shared files
(measured on the labelled sets by benchmarks/supersession.py, never applied). Cheap: entries without change
wording or settings cost two regex passes; the others one FTS5 query for X in their project, a bounded set of candidates.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from ..paths import Locations
from ..recall.lexicon import bare_forms
from ..recall.terms import is_filler
from ..store import trust
from ..store.entries import Entry, read_entry
from ..store.scope import folder_key

MAX_CANDIDATES = 12  # older entries read per change a new entry states
MAX_PROPOSALS = 3  # per new entry
COPY_SIMILARITY = 0.8  # token overlap at which two entries are one turn banked twice
SCAN_CHARS = 6000  # of each section

_WORD = r"[\w.@+/#'-]+"
_STOP = r"(?:to|onto|into|with|by|for|and|but|so|because|in|since|as|now|then|which|while|too|also)\b"
_PHRASE = rf"{_WORD}(?:\s+(?!{_STOP}){_WORD}){{0,3}}"
_VERB = (r"(?:switch|switched|switching|move|moved|moving|migrate|migrated|migrating|change|changed|changing|"
         r"port|ported|porting|convert|converted|converting|swap|swapped|went|go|transition|transitioned|"
         r"raise|raised|lower|lowered|bump|bumped|rewrite|rewrote|rewritten|rebuilt|rebuild)")
CHANGES = [(name, re.compile(pattern, re.I)) for name, pattern in (
    ("from X to Y", rf"\b{_VERB}\b(?:\s+{_WORD}){{0,6}}?\s+from\s+(?P<x>{_PHRASE})\s+(?:over\s+)?to\s+(?P<y>{_PHRASE})"),
    ("replaced X with Y", rf"\breplac(?:e|ed|es|ing)\s+(?P<x>{_PHRASE})\s+(?:with|by)\s+(?P<y>{_PHRASE})"),
    ("swapped X for Y", rf"\bswap(?:ped|ping)?\s+(?:out\s+)?(?P<x>{_PHRASE})\s+for\s+(?P<y>{_PHRASE})"),
    ("switched from X", rf"\b(?:switch\w*|mov(?:e|ed|ing)|migrat\w*)(?:\s+{_WORD}){{0,3}}?\s+(?:away\s+from|off|from)\s+"
                       rf"(?P<x>{_PHRASE})(?:\s+(?:to|onto|for)\s+(?P<y>{_PHRASE}))?"),
    ("no longer uses X", rf"\bno\s+longer\s+(?:uses?|using|needs?|runs?\s+on|depends\s+on|on)\s+(?P<x>{_PHRASE})"),
    ("dropped X in favour of Y", rf"\b(?:drop|dropped|removed?|retired?)\s+(?P<x>{_PHRASE})\s+in\s+favou?r\s+of\s+"
                                 rf"(?P<y>{_PHRASE})"),
    ("Y instead of X", rf"\binstead\s+of\s+(?!only\b|just\b|merely\b|also\b|\w+ing\b)(?P<x>{_PHRASE})"),
    ("renamed X to Y", rf"\brenam(?:e|ed|es|ing)\s+(?P<x>{_PHRASE})\s+(?:to|as)\s+(?P<y>{_PHRASE})"),
    ("turned X off", rf"\b(?:turn(?:ed|s|ing)?|switch(?:ed|es|ing)?)\s+(?P<x>{_PHRASE})\s+off\b"),
    ("disabled X", rf"\b(?:disabled|turned\s+off|switched\s+off)\s+(?P<x>{_PHRASE})"),
    ("X is replaced by Y", rf"(?P<x>{_PHRASE})\s+(?:is|was|has\s+been|got)\s+(?:now\s+)?replaced\s+(?:by|with)\s+"
                           rf"(?P<y>{_PHRASE})"),
)]
# a setting and its value, as a result states it: `pool_size: 20`, `IPHONEOS_DEPLOYMENT_TARGET = 15.0`,
# `retries=3`, `timeout_s is now 90`; the key is shaped like a name in code (a `_`, an inner `.`, a capital
# after a small letter), never a path
_KEY = r"[A-Za-z][A-Za-z0-9]*(?:[_.][A-Za-z0-9]+)+|[a-z]+[A-Z][A-Za-z0-9]*"
_VALUE = r"\"[^\"\n]{1,40}\"|'[^'\n]{1,40}'|[\w.+%-]{1,40}"
_SETTING = re.compile(rf"(?<![\w./-])(?P<key>{_KEY})`?\s*(?:=|:|\s+is\s+now|\s+now|\s+to)\s*`?(?P<value>{_VALUE})")
# said before the change in its sentence, the change did not happen (or is not ours to act on)
_HEDGE = re.compile(r"\b(?:not|never|n't|considered|consider|considering|whether|should|could|would|might|maybe|"
                    r"perhaps|plan|plans|planned|planning|propose|proposed|if|rather|discussed|evaluate|evaluated)\b|n't\b",
                    re.I)
_KEPT = re.compile(r"\b(?:stays?|stayed|still|kept|keeps?|unchanged|untouched|as before)\b", re.I)
_SENTENCE = re.compile(r"(?<=[.!?;:])\s+|\n+")
_STATEMENT = re.compile(r"(?<=[.!?;])\s+|\n+")  # a sentence that may hold `key: value`
_TOKEN = re.compile(r"[a-z0-9][a-z0-9_.+#@/-]*")
_CHANGE_WORDS = frozenset(_VERB[3:-1].split("|")) | {"replace", "replaced", "replacing", "instead", "longer", "favour",
                                                     "favor", "drop", "dropped", "away", "off", "over"}
# A word every pattern of CHANGES starts with (or holds, for "no longer"): a text or sentence without one states no
# change, and costs one search instead of all of them. Case-insensitive like CHANGES, so it never misses what they
# find; the lookahead on the first letters lets the search skip most positions before trying the words.
_TRIGGER_WORDS = sorted(set(_VERB[3:-1].split("|")) | {
    "replac", "swap", "switch", "mov", "migrat", "longer", "drop", "remove", "retire", "instead", "renam", "turn",
    "disabl"})
def _prefix_tree(words: list[str]) -> str:
    """An alternation of words as a tree of their shared prefixes (`mov|mig` -> `m(?:ov|ig)`): the regex
    engine tries alternatives one by one, so each position costs one test per first letter, not per word.
    A word that starts with another is left out: the trigger matches a prefix, so the shorter finds it."""
    heads: dict[str, list[str]] = {}
    for word in sorted(w for w in words if not any(w != o and w.startswith(o) for o in words)):
        heads.setdefault(word[0], []).append(word[1:])
    return "|".join(head + (f"(?:{_prefix_tree(rests)})" if rests != [""] else "") for head, rests in heads.items())


_TRIGGER = re.compile(rf"(?=[{''.join(sorted({w[0] for w in _TRIGGER_WORDS}))}])\b(?:{_prefix_tree(_TRIGGER_WORDS)})",
                      re.IGNORECASE)
# A sentence without "replaced" cannot be "X is replaced by Y", the one pattern that starts at any word (its X
# first): a search for the word spares trying it at each of them.
_REPLACED = re.compile(r"replaced", re.IGNORECASE)
# What every key of `_SETTING` holds: a `_` or `.` before a letter or digit, or a capital after a small letter.
# A text with neither gives no setting; found in one scan for its rare first characters.
_KEY_HINT = re.compile(r"[_.A-Z](?:(?<=[_.])[A-Za-z0-9]|(?<=[a-z][A-Z]))")
_FILE_KEYS = ("file_path", "path", "notebook_path", "filePath", "file", "filename")
_PATCH_FILE = re.compile(r"\*\*\* (?:Update|Add|Delete) File: (\S+)")


class Change:
    """A change an entry states: its wording (`kind`), what it changed from (`x`) and to (`y`)."""

    __slots__ = ("kind", "x", "y", "said")

    def __init__(self, kind: str, x: str, y: str, said: str) -> None:
        self.kind, self.x, self.y, self.said = kind, x, y, said

    @property
    def x_terms(self) -> list[str]:
        return distinctive(self.x)


class Finding:
    """`newer` would supersede `old`: the evidence in words, and whether it is of the strong tier."""

    __slots__ = ("old", "newer", "evidence", "strong")

    def __init__(self, old: str, newer: str, evidence: str, strong: bool) -> None:
        self.old, self.newer, self.evidence, self.strong = old, newer, evidence, strong

    def __repr__(self) -> str:
        return f"Finding({self.old!r} -> {self.newer!r}{', strong' if self.strong else ''}: {self.evidence})"


# --- reading an entry ------------------------------------------------------------------------------------


def changes(text: str) -> list[Change]:
    """The changes a text states, unhedged, each X once."""
    text = text[:SCAN_CHARS]
    if not _TRIGGER.search(text):
        return []
    found: dict[str, Change] = {}
    for sentence in _SENTENCE.split(text):
        if sentence.rstrip().endswith("?") or not _TRIGGER.search(sentence):
            continue
        for kind, pattern in CHANGES:
            if kind == "X is replaced by Y" and not _REPLACED.search(sentence):
                continue
            for match in pattern.finditer(sentence):
                if _HEDGE.search(sentence[:match.start() + 1]) or _HEDGE.search(match.group(0)[:12]):
                    continue
                x = match.group("x")
                if distinctive(x) and x.lower() not in found:
                    found[x.lower()] = Change(kind, x, match.groupdict().get("y") or "", match.group(0).strip())
    return list(found.values())


def distinctive(text: str) -> list[str]:
    """The words of a text that could tell one entry's subject from another's, lower case, in order."""
    words: dict[str, None] = {}
    for token in _TOKEN.findall(text.lower()):
        word = token.strip(".-/'#@")
        if len(word) >= 2 and not (word.isdigit() and len(word) < 3) and not is_filler(word) \
                and word not in _CHANGE_WORDS:
            words.setdefault(word, None)
    return list(words)


def settings(text: str, *, stated_only: bool = False) -> dict[str, dict[str, str]]:
    """The settings a text gives a value (`_SETTING`): key -> value -> the sentence saying it, lower case.
    `stated_only`: leave out questions and the sentences that hedge or say a value stays."""
    found: dict[str, dict[str, str]] = {}
    text = text[:SCAN_CHARS]
    if not _KEY_HINT.search(text):
        return found
    for sentence in _STATEMENT.split(text):
        if stated_only and sentence.rstrip().endswith("?"):
            continue
        for match in _SETTING.finditer(sentence):
            if stated_only and (_HEDGE.search(sentence[:match.start() + 1]) or _KEPT.search(_clause(sentence, match))):
                continue
            value = match.group("value").strip("\"'").rstrip(".,").lower()
            if value and not is_filler(value):
                found.setdefault(match.group("key").lower(), {}).setdefault(value, sentence.strip())
    return found


def _clause(sentence: str, match: re.Match) -> str:
    """The part of the sentence a match sits in, between the commas and brackets around it."""
    start = max(sentence.rfind(c, 0, match.start()) for c in ",()") + 1
    ends = [i for i in (sentence.find(c, match.end()) for c in ",()") if i >= 0]
    return sentence[start:min(ends) if ends else len(sentence)]


def forms(words) -> set[str]:
    return {form for word in words for form in bare_forms(word)}


def subject_text(entry: Entry) -> str:
    """The newer entry's title and prompt, without the sentences that say something stays as it was."""
    sentences = _SENTENCE.split(f"{entry.title}.\n{entry.prompt[:SCAN_CHARS]}")
    return "\n".join(s for s in sentences if not _KEPT.search(s))


def files_of(entry: Entry) -> set[str]:
    """The files an entry's step log touched, relative to its folder when inside it."""
    found: set[str] = set()
    for line in entry.actions.splitlines():
        head, sep, payload = line.partition(": ")
        if not sep or not head.startswith("- "):
            continue
        try:
            value = json.loads(payload)
        except ValueError:
            continue
        if isinstance(value, dict):
            for key in _FILE_KEYS:
                if isinstance(value.get(key), str):
                    found.add(value[key])
            for text in value.values():
                if isinstance(text, str) and "*** " in text:
                    found.update(_PATCH_FILE.findall(text))
    base = folder_key(entry.cwd)
    out = set()
    for path in found:
        path = os.path.normpath(path.strip())
        if base and path.startswith(base + os.sep):
            path = path[len(base) + 1:]
        if path and path != ".":
            out.add(path)
    return out


# --- one pair --------------------------------------------------------------------------------------------


def judge(old: Entry, new: Entry, stated: list[Change] | None = None) -> Finding | None:
    """Whether `new` supersedes `old`, by the rules of the module docstring; None when unsure."""
    if old.project != new.project or not new.ts > old.ts or old.rel_path == new.rel_path:
        return None
    if old.cwd and new.cwd and folder_key(old.cwd) != folder_key(new.cwd):
        return None  # another folder that shares the slug
    if _similarity(old, new) >= COPY_SIMILARITY or _asked_alike(old, new):
        return None  # a copy banked twice, or the same thing asked and done again
    old_subject = forms(distinctive(f"{old.title}\n{old.prompt[:SCAN_CHARS]}"))
    left = forms(term for c in changes(f"{old.title}.\n{old.prompt}\n{old.result}") for term in c.x_terms)
    new_subject = distinctive(subject_text(new))
    old_files, new_files = files_of(old), files_of(new)
    shared_files = sorted(old_files & new_files)
    old_result = forms(distinctive(old.result[:SCAN_CHARS]))
    for change in stated if stated is not None else stated_changes(new):
        named = [t for t in change.x_terms if forms([t]) & old_subject]
        in_result = not named
        if in_result and len(change.x_terms) == 1:  # X one name in what the older did: with strong evidence only
            named = [t for t in change.x_terms if forms([t]) & old_result]
        if not named or forms(named) & left:
            continue  # X is not what the older set up, or the older itself moved off it
        x_forms = forms(change.x_terms)
        subject = [w for w in new_subject if not forms([w]) & x_forms and forms([w]) & old_subject]
        if not subject:
            continue
        if not shared_files and (old_files or new_files or len(subject) < 2):
            continue
        strong = bool(shared_files) and len(subject) >= 2
        if in_result and not strong:
            continue
        files = (f"both touched {', '.join(shared_files[:3])}" + (" …" if len(shared_files) > 3 else "")
                 if shared_files else "neither touched files")
        evidence = (f"the newer says \"{_clip(change.said)}\" ({change.kind}); the older set up "
                    f"{', '.join(named)} ({'what it did' if in_result else 'its title or prompt'}); same subject: {', '.join(subject[:4])}; {files}")
        return Finding(old.rel_path, new.rel_path, evidence, strong)
    return _new_value(old, new, old_subject, new_subject, shared_files)


def _new_value(old: Entry, new: Entry, old_subject: set[str], new_subject: list[str],
               shared_files: list[str]) -> Finding | None:
    """A setting the older gave a value that the newer gives another, in a file both touched, on the
    same subject: `pool_size: 20`, later `pool_size: 50` in the same config file."""
    if not shared_files:
        return None
    before = settings(f"{old.prompt}\n{old.result}")
    subject = [w for w in new_subject if forms([w]) & old_subject]
    if not before or not subject:
        return None
    for key, values in settings(f"{new.prompt}\n{new.result}", stated_only=True).items():
        if key not in before or set(values) & set(before[key]):
            continue  # not the older's setting, or the newer states the older's value too
        value, said = next(iter(values.items()))
        evidence = (f"the newer says \"{_clip(said)}\" (a new value); the older set {key} to "
                    f"{', '.join(sorted(before[key]))}; same subject: {', '.join(subject[:4])}; "
                    f"both touched {', '.join(shared_files[:3])}" + (" …" if len(shared_files) > 3 else ""))
        return Finding(old.rel_path, new.rel_path, evidence, False)
    return None


def stated_changes(entry: Entry) -> list[Change]:
    return changes_in(entry.title, entry.prompt, entry.result)


def changes_in(title: str, prompt: str, result: str) -> list[Change]:
    """The changes an entry of this title, prompt and result states (`stated_changes` without the entry)."""
    return changes(f"{title}.\n{prompt}\n{result}")


def states_a_change(entry: Entry) -> bool:
    return worth_a_look(entry.title, entry.prompt, entry.result)


def worth_a_look(title: str, prompt: str, result: str) -> bool:
    """Whether an entry of this title, prompt and result says something changed, or gives a setting a
    value: worth looking for what it supersedes."""
    return bool(changes_in(title, prompt, result) or settings(f"{prompt}\n{result}", stated_only=True))


def _similarity(a: Entry, b: Entry) -> float:
    ta = set(distinctive(f"{a.title}\n{a.prompt}\n{a.result}"))
    tb = set(distinctive(f"{b.title}\n{b.prompt}\n{b.result}"))
    return len(ta & tb) / len(ta | tb) if ta and tb else 0.0


def _asked_alike(a: Entry, b: Entry) -> bool:
    """The same prompt word for word (case and spacing aside): the same work, whatever its answers say."""
    prompt_a, prompt_b = (" ".join(e.prompt.lower().split()) for e in (a, b))
    return bool(prompt_a) and prompt_a == prompt_b


def _clip(text: str, limit: int = 120) -> str:
    text = " ".join(text.replace('"', "'").split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


# --- a new entry against the bank ------------------------------------------------------------------------


def findings_for(conn, locs: Locations, new: Entry) -> list[Finding]:
    """The older entries of `new`'s project that `new` supersedes, found through the index; [] at once for
    an entry that states no change."""
    from ..recall import query

    stated = stated_changes(new)
    keys = list(settings(f"{new.prompt}\n{new.result}", stated_only=True))
    if not stated and not keys:
        return []
    terms = list(dict.fromkeys([*(t for c in stated for t in c.x_terms), *(t for k in keys for t in distinctive(k))]))
    hits = query.search(conn, terms, [new.project], limit=MAX_CANDIDATES * 2)
    found: list[Finding] = []
    read = 0
    for hit in hits:
        if hit.path == new.rel_path or not hit.ts < new.ts:
            continue
        read += 1
        if read > MAX_CANDIDATES:
            break
        old = read_entry(locs.memories / hit.path.replace("/", os.sep), hit.project)
        finding = judge(old, new, stated) if old is not None else None
        if finding is not None:
            found.append(finding)
            if len(found) >= MAX_PROPOSALS:
                break
    return found


def propose(locs: Locations, paths: list[str | Path], known: dict[str, Entry] | None = None,
            stated: dict[str, bool] | None = None) -> list[Finding]:
    """Run the detector on these newly banked entries and write each new finding as a `proposed` line of
    its project's TRUST.md (and a `proposed` history record); a pair already proposed, decided or rejected
    is not written again. Returns what was written. Never supersedes anything.

    `known`: entries the caller has read (or just written) already, by path; the others are read here.
    `stated`: whether each of some of them states a change (`worth_a_look`), by path, if the caller knows."""
    from ..recall import index
    from ..store import history

    known, stated = known or {}, stated or {}
    entries = []
    for path in map(str, paths):  # a Path's str is its fspath
        entry = known.get(path) or read_entry(Path(path))
        if entry is not None and (stated[path] if path in stated else states_a_change(entry)):
            entries.append(entry)
    if not entries:
        return []
    written: list[Finding] = []
    decided: dict[str, set[tuple[str, str]]] = {}  # by project: the pairs its TRUST.md already names
    with index.open_index(locs) as conn:
        for new in sorted(entries, key=lambda e: e.ts):
            for finding in findings_for(conn, locs, new):
                pairs = decided.setdefault(new.project, trust.decided_or_proposed(locs, new.project))
                if (finding.old, finding.newer) in pairs:
                    continue
                actor = f"autobank:{new.origin.split(':')[-1] or 'unknown'}"
                trust.append_proposal(locs, trust.Proposal(_now(), trust.PROPOSED, finding.old, finding.newer,
                                                           actor, finding.evidence), [new.project])
                history.append(locs, [history.event("proposed", actor, entry=finding.old,
                                                    detail=f"superseded by {finding.newer}: {finding.evidence}")])
                pairs.add((finding.old, finding.newer))
                written.append(finding)
    return written


def _now() -> str:
    from .. import clock

    return clock.iso(clock.now())
