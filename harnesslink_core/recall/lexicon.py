"""Related developer terms, so a prompt in other words still finds the turn.

A user asks days later in their own words: "popup" for the modal, "graphs" for
the charts, "no internet" for offline, "bill" for cost, "fell over" for a crash.
The vocabulary is data, `data/related.txt`: one group per line of words (or
`multi_word` phrases) that a developer uses for the same thing or the same topic;
a prompt word in a group also searches the others. Phrases of two words are also
recognised in the prompt itself ("profile picture", "dark mode"). A line starting
with `*` names a concept, a thing a project has worked on or has not ("dark mode",
"pagerduty", "read replica"); the others are everyday descriptions ("stuck",
"smaller") and spelling variants.

The prompt hook never parses that file: the index stores it (`table_rows`, at
index time) and a prompt fetches the groups of its own words in one query
(`Vocabulary.from_rows`). `full()` parses the file, for callers without an index.

This module is on the prompt hook's path: no imports.
"""

from __future__ import annotations

import os

DATA_FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "related.txt")


def bare_forms(word: str) -> list[str]:
    """The word and its likely bare forms: enough to find `graphs` under `graph`, `showing` under `show`."""
    keys = [word]
    for suffix, repl in (("ies", "y"), ("es", ""), ("s", ""), ("ing", ""), ("ing", "e"), ("ed", ""), ("ed", "e")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and " " not in word:
            keys.append(word[: -len(suffix)] + repl)
    return keys


def lookup_keys(words: list[str]) -> list[str]:
    """The vocabulary keys to fetch for these prompt words (and two-word phrases)."""
    return list(dict.fromkeys(key for word in words for key in bare_forms(word)))


class Vocabulary:
    """Groups of related words, reached by key: a bare form of a listed word, or a phrase."""

    def __init__(self, keys: dict[str, list[int]], groups: dict[int, list[str]], concepts: set[int]) -> None:
        self.keys = keys
        self.groups = groups
        self.concepts = concepts  # the groups that name a concept

    @classmethod
    def from_rows(cls, rows) -> "Vocabulary":
        """From `query.vocabulary` rows: (key, group, words joined by `|`, 1 for a concept's group)."""
        keys: dict[str, list[int]] = {}
        groups: dict[int, list[str]] = {}
        concepts: set[int] = set()
        for key, grp, words, concept in rows:
            keys.setdefault(key, []).append(grp)
            groups[grp] = words.split("|")
            if concept:
                concepts.add(grp)
        return cls(keys, groups, concepts)

    def _groups_of(self, word: str) -> list[int]:
        found: list[int] = []
        for key in bare_forms(word):
            for n in self.keys.get(key, ()):
                if n not in found:
                    found.append(n)
        return found

    def related(self, word: str) -> list[str]:
        """Other words (or phrases) for `word`, nearest first; [] when the vocabulary has none."""
        out: list[str] = []
        seen = set(bare_forms(word))  # the index stems: `loses` after `lose` would add nothing
        for n in self._groups_of(word):
            for other in self.groups[n]:
                forms = bare_forms(other)
                if seen.isdisjoint(forms):
                    out.append(other)
                    seen.update(forms)
        return out

    def is_phrase(self, words: str) -> bool:
        """Whether these two words, space-separated, are a phrase of the vocabulary."""
        return " " in words and words in self.keys

    def is_concept(self, word: str) -> bool:
        """Whether the word (or phrase) names a concept: a thing a project has worked on or has not."""
        return any(n in self.concepts for n in self._groups_of(word))


def groups() -> list[list[str]]:
    """The shipped groups, phrases with their spaces."""
    return [group for group, _ in _parse()]


def _parse() -> list[tuple[list[str], bool]]:
    """The shipped groups, each with whether it names a concept (its line starts with `*`)."""
    with open(DATA_FILE, encoding="utf-8") as f:
        lines = [line.strip() for line in f.read().splitlines()]
    out = []
    for line in lines:
        if line and not line.startswith("#"):
            concept = line.startswith("*")
            out.append(([w.replace("_", " ") for w in line.lstrip("*").split()], concept))
    return out


def table_rows() -> tuple[list[tuple[str, int]], list[tuple[int, str, int]]]:
    """What the index stores: (key, group) rows and (group, words joined by `|`, concept 1 or 0) rows."""
    keys: list[tuple[str, int]] = []
    rows: list[tuple[int, str, int]] = []
    for n, (group, concept) in enumerate(_parse()):
        rows.append((n, "|".join(group), int(concept)))
        seen: set[str] = set()
        for word in group:
            for key in bare_forms(word):
                if key not in seen:
                    seen.add(key)
                    keys.append((key, n))
    return keys, rows


def data_stamp() -> str:
    """Changes when the shipped vocabulary does (size and mtime of the file)."""
    st = os.stat(DATA_FILE)
    return f"{st.st_size}:{st.st_mtime_ns}"


_FULL: Vocabulary | None = None


def full() -> Vocabulary:
    """The whole shipped vocabulary, parsed from the file (once per process)."""
    global _FULL
    if _FULL is None:
        keys, rows = table_rows()
        by_group = {n: (words, concept) for n, words, concept in rows}
        _FULL = Vocabulary.from_rows((key, n, *by_group[n]) for key, n in keys)
    return _FULL


def related(word: str) -> list[str]:
    return full().related(word)


def is_phrase(words: str) -> bool:
    return full().is_phrase(words)
