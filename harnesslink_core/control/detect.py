"""Supersession detection (SPEC §11, issue 21): a newly banked entry that says the subject of an older one
changed is proposed to supersede it; a person decides in `harnesslink review`. Nothing here applies one.

Conservative by construction; when unsure it proposes nothing. A proposal needs all of:

- change wording in the newer entry, not hedged ("moved … from X to Y", "replaced X with Y", "switched from
  X", "migrated off X", "no longer uses X", "instead of X"; not "considered switching", not a question, not
  "instead of only X");
- X named in the older entry's title or prompt (what it set up), and the older not itself a move off X
  (then both are about leaving X: two different X's);
- the same subject: a word of the newer entry's title and prompt besides X (sentences that say something
  "stays" or is "still" there left out) in the older's title or prompt;
- the same files touched (an entry of the same project and folder) or, when neither touched any, two
  subject words;
- not a copy of the older (the same turn banked twice).

Each proposal says its evidence in words; `strong` marks those with two subject words and shared files
(measured on the labelled sets by benchmarks/supersession.py, never applied). Cheap: entries without change
wording cost one regex pass; the others one FTS5 query for X in their project, a bounded set of candidates.
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
)]
# said before the change in its sentence, the change did not happen (or is not ours to act on)
_HEDGE = re.compile(r"\b(?:not|never|n't|considered|consider|considering|whether|should|could|would|might|maybe|"
                    r"perhaps|plan|plans|planned|planning|propose|proposed|if|rather|discussed|evaluate|evaluated)\b|n't\b",
                    re.I)
_KEPT = re.compile(r"\b(?:stays?|stayed|still|kept|keeps?|unchanged|untouched|as before)\b", re.I)
_SENTENCE = re.compile(r"(?<=[.!?;:])\s+|\n+")
_TOKEN = re.compile(r"[a-z0-9][a-z0-9_.+#@/-]*")
_CHANGE_WORDS = frozenset(_VERB[3:-1].split("|")) | {"replace", "replaced", "replacing", "instead", "longer", "favour",
                                                     "favor", "drop", "dropped", "away", "off", "over"}
# A word every pattern of CHANGES starts with (or holds, for "no longer"): a text or sentence without one states no
# change, and costs one search instead of all of them. Case-insensitive like CHANGES, so it never misses what they
# find; the lookahead on the first letters lets the search skip most positions before trying the words.
_TRIGGER_WORDS = sorted(set(_VERB[3:-1].split("|")) | {
    "replac", "swap", "switch", "mov", "migrat", "longer", "drop", "remove", "retire", "instead"})
_TRIGGER = re.compile(rf"(?=[{''.join(sorted({w[0] for w in _TRIGGER_WORDS}))}])\b(?:{'|'.join(_TRIGGER_WORDS)})",
                      re.IGNORECASE)
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
    if _similarity(old, new) >= COPY_SIMILARITY:
        return None  # a copy banked twice
    old_subject = forms(distinctive(f"{old.title}\n{old.prompt[:SCAN_CHARS]}"))
    left = forms(term for c in changes(f"{old.title}.\n{old.prompt}\n{old.result}") for term in c.x_terms)
    new_subject = distinctive(subject_text(new))
    old_files, new_files = files_of(old), files_of(new)
    shared_files = sorted(old_files & new_files)
    for change in stated if stated is not None else stated_changes(new):
        named = [t for t in change.x_terms if forms([t]) & old_subject]
        if not named or forms(named) & left:
            continue  # X is not what the older set up, or the older itself moved off it
        x_forms = forms(change.x_terms)
        subject = [w for w in new_subject if not forms([w]) & x_forms and forms([w]) & old_subject]
        if not subject:
            continue
        if not shared_files and (old_files or new_files or len(subject) < 2):
            continue
        strong = bool(shared_files) and len(subject) >= 2
        files = (f"both touched {', '.join(shared_files[:3])}" + (" …" if len(shared_files) > 3 else "")
                 if shared_files else "neither touched files")
        evidence = (f"the newer says \"{_clip(change.said)}\" ({change.kind}); the older set up "
                    f"{', '.join(named)} (its title or prompt); same subject: {', '.join(subject[:4])}; {files}")
        return Finding(old.rel_path, new.rel_path, evidence, strong)
    return None


def stated_changes(entry: Entry) -> list[Change]:
    return changes_in(entry.title, entry.prompt, entry.result)


def changes_in(title: str, prompt: str, result: str) -> list[Change]:
    """The changes an entry of this title, prompt and result states (`stated_changes` without the entry)."""
    return changes(f"{title}.\n{prompt}\n{result}")


def _similarity(a: Entry, b: Entry) -> float:
    ta = set(distinctive(f"{a.title}\n{a.prompt}\n{a.result}"))
    tb = set(distinctive(f"{b.title}\n{b.prompt}\n{b.result}"))
    return len(ta & tb) / len(ta | tb) if ta and tb else 0.0


def _clip(text: str, limit: int = 120) -> str:
    text = " ".join(text.replace('"', "'").split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


# --- a new entry against the bank ------------------------------------------------------------------------


def findings_for(conn, locs: Locations, new: Entry) -> list[Finding]:
    """The older entries of `new`'s project that `new` supersedes, found through the index; [] at once for
    an entry that states no change."""
    from ..recall import index

    stated = stated_changes(new)
    if not stated:
        return []
    terms = list(dict.fromkeys(t for c in stated for t in c.x_terms))
    hits = index.search(conn, terms, [new.project], limit=MAX_CANDIDATES * 2, with_text=False, with_matched=False)
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
            stated: dict[str, list[Change]] | None = None) -> list[Finding]:
    """Run the detector on these newly banked entries and write each new finding as a `proposed` line of
    its project's TRUST.md (and a `proposed` history record); a pair already proposed, decided or rejected
    is not written again. Returns what was written. Never supersedes anything.

    `known`: entries the caller has read (or just written) already, by path; the others are read here.
    `stated`: the changes some of them state (`stated_changes`), by path, if the caller has them already."""
    from ..recall import index
    from ..store import history

    known, stated = known or {}, stated or {}
    entries = []
    for path in map(os.fspath, paths):
        entry = known.get(path) or read_entry(Path(path))
        if entry is not None and (stated[path] if path in stated else stated_changes(entry)):
            entries.append(entry)
    if not entries:
        return []
    written: list[Finding] = []
    known: dict[str, set[tuple[str, str]]] = {}
    with index.open_index(locs) as conn:
        for new in sorted(entries, key=lambda e: e.ts):
            for finding in findings_for(conn, locs, new):
                pairs = known.setdefault(new.project, trust.decided_or_proposed(locs, new.project))
                if (finding.old, finding.newer) in pairs:
                    continue
                actor = f"autobank:{new.origin.split(':')[-1] or 'unknown'}"
                trust.append_proposal(locs, trust.Proposal(_now(), trust.PROPOSED, finding.old, finding.newer,
                                                           actor, finding.evidence))
                history.append(locs, [history.event("proposed", actor, entry=finding.old,
                                                    detail=f"superseded by {finding.newer}: {finding.evidence}")])
                pairs.add((finding.old, finding.newer))
                written.append(finding)
    return written


def _now() -> str:
    from .. import clock

    return clock.iso(clock.now())
