"""The words a developer searches by that a plain word tokenizer breaks: versions (`Node 22`,
`v2.3.1`), numbers with units (`300 MB`), identifiers (`applyDiscount`, `stripe_event_id`) and
file names (`tasks.py`).

FTS5's tokenizer splits `v2.3.1` into `v2 3 1` and `tasks.py` into `tasks py`, and keeps
`applyDiscount` as the single token `applydiscount`. A quoted FTS5 phrase finds the split forms
in order, so the prompt side only has to keep such a token whole and name its other spellings
(`compound_terms`). What the phrase cannot reach is the other spelling of an identifier: the
parts of `applyDiscount` and the joined form of `apply_discount`. The index stores those
(`derived_keys`) in columns of their own.

This module is on the prompt hook's path: no `re` (it imports `enum`; see hooks.py), only at index time.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the prompt hook's path)
if TYPE_CHECKING:
    from collections.abc import Callable

# a run of word characters with inner punctuation: `v2.3.1`, `invoices/tasks.py`, `#123`, `applyDiscount`;
# `raw_tokens` finds what this regular expression finds
RAW_TOKEN = r"[#@]?[^\W_](?:[\w'’.:/@+-]*[^\W_])?|[^\W_]"
_INNER = frozenset("_'’.:/@+-")  # besides letters and digits, inside a raw token
FILE_EXTENSIONS = frozenset("""
py pyi ipynb js mjs cjs ts tsx jsx json jsonl yml yaml toml ini cfg conf env lock md mdx rst txt csv tsv
rs go java kt kts scala rb php c h cc cpp hpp cs swift m mm sh bash zsh fish ps1 sql graphql gql proto
css scss sass less html htm vue svelte xml gradle tf tfvars hcl dockerfile mk cmake nix lua dart ex exs
erl hs ml r jl pl zig wasm so dylib dll exe whl tar gz zip log pem crt key
""".split())
UNITS = frozenset("""
ms s sec secs second seconds m min mins minute minutes h hr hrs hour hours d day days
b kb mb gb tb kib mib gib tib k x px rem em pt fps rps qps rpm hz khz mhz ghz
""".split())
# `<name>.js` that names a runtime or library, not a file
JS_NAMES = frozenset("node next nuxt vue express three d3 chart nest ember backbone socket moment p5 solid deno".split())
# names written in camel case that are one word to their users: never split
BRANDS = frozenset("""
javascript typescript coffeescript github gitlab bitbucket postgresql mysql mariadb mongodb dynamodb
cockroachdb graphql nodejs macos ios ipados watchos tvos iphone ipad ipod youtube wordpress powershell
openai fastapi bigquery linkedin devops sqlite pypi npm pnpm webassembly jquery phpstorm intellij
pycharm webstorm onedrive sharepoint dropbox paypal testflight xcode vscode chatgpt oauth openid
""".split())


def _is_version(word: str) -> bool:
    """`v18`, `2.3.1`, `v2.3`."""
    bare = word[1:] if word.startswith("v") else word
    parts = bare.split(".")
    return (len(parts) > 1 or bare != word) and all(p.isdigit() for p in parts)


def _is_short_number(word: str) -> bool:
    """`22`, `3.12`, `v18`: what names a version right after a name."""
    parts = (word[1:] if word.startswith("v") else word).split(".")
    return len(parts[0]) <= 2 and all(p.isdigit() for p in parts)


def _number_unit(word: str) -> tuple[str, str] | None:
    """(`300`, `mb`) for `300mb`, (`1.5`, `gb`) for `1.5gb`; None for anything else."""
    unit = word.lstrip("0123456789.")
    number = word[:len(word) - len(unit)]
    if unit in UNITS and number and number[0].isdigit() and number[-1].isdigit() and number.count(".") < 2:
        return number, unit
    return None


def _is_camel(word: str) -> bool:
    if word.islower() or word.isupper():
        return False
    return (any((a.islower() or a.isdigit()) and b.isupper() for a, b in zip(word, word[1:]))
            or any(a.isupper() and b.isupper() and c.islower() for a, b, c in zip(word, word[1:], word[2:])))


class Compound:
    """A prompt term kept whole: its label, the other spellings FTS5 should also look for, and how
    many of the prompt's words it stands for (the relevance floor counts words)."""

    __slots__ = ("label", "spellings", "words")

    def __init__(self, label: str, spellings: list[str], words: int = 1) -> None:
        self.label = label
        self.spellings = [s for s in dict.fromkeys(spellings) if s and s != label]
        self.words = words

    def __repr__(self) -> str:
        return f"Compound({self.label!r}, {self.spellings}, {self.words})"


def identifier_parts(word: str) -> list[str]:
    """The lower-case parts of a camelCase or snake_case identifier, [] for anything else."""
    if "_" in word:
        parts = [p.lower() for p in word.split("_") if p]
        return parts if len(parts) > 1 else []
    if not _is_camel(word) or word.lower() in BRANDS:
        return []
    parts = [p.lower() for p in camel_parts(word)]
    return parts if len(parts) > 1 and "".join(parts) == word.lower() else []


def camel_parts(word: str) -> list[str]:
    """What `[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\\d+` finds: `HTTPServer2x` -> HTTP, Server, 2, x."""
    parts, i, n = [], 0, len(word)
    while i < n:
        c = word[i]
        if "A" <= c <= "Z":
            j = i
            while j < n and "A" <= word[j] <= "Z":
                j += 1
            if j < n and "a" <= word[j] <= "z":  # an acronym then a capitalised word: `HTTPServer`
                if j - i > 1:
                    parts.append(word[i:j - 1])
                i = j - 1
                j = i + 1
                while j < n and "a" <= word[j] <= "z":
                    j += 1
            parts.append(word[i:j])
            i = j
        elif "a" <= c <= "z":
            j = i
            while j < n and "a" <= word[j] <= "z":
                j += 1
            parts.append(word[i:j])
            i = j
        elif c.isdigit():
            j = i
            while j < n and word[j].isdigit():
                j += 1
            parts.append(word[i:j])
            i = j
        else:
            i += 1
    return parts


def raw_tokens(text: str) -> list[str]:
    """The raw tokens of `text` (what RAW_TOKEN finds), without `re`."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        start = i
        if c in "#@" and i + 1 < n and text[i + 1].isalnum():
            i += 1
        elif not c.isalnum():
            i += 1
            continue
        end = i + 1  # one past the last letter or digit
        j = i + 1
        while j < n and (text[j].isalnum() or text[j] in _INNER):
            j += 1
            if text[j - 1].isalnum():
                end = j
        out.append(text[start:end])
        i = end
    return out


def classify(raw: str) -> list["str | Compound"]:
    """One raw prompt token as plain words (lower case) and compounds."""
    if raw.startswith("#") and raw[1:].isdigit():
        return [Compound(raw[1:], [])]  # an issue or pull request number, however short: `#87`
    raw = raw.lstrip("#@").replace("’", "'")
    if not raw:
        return []
    if "/" in raw or ":" in raw:  # a path or URL: its parts, the file name kept whole
        return [piece for part in raw.replace(":", "/").split("/") for piece in classify(part)]
    lower = raw.lower()
    if "." in raw:
        stem, _, ext = lower.rpartition(".")
        if ext == "js" and stem in JS_NAMES:  # `Node.js 22` is Node 22, not a file
            return [stem]
        if ext in FILE_EXTENSIONS and stem and not stem.replace(".", "").isdigit():
            return [Compound(lower, [])]
        if _is_version(lower):  # `2.3.1` names one release: as telling as two words
            return [Compound(lower, [lower[1:] if lower.startswith("v") else "v" + lower],
                             words=2 if lower.count(".") > 1 else 1)]
        unit = _number_unit(lower)
        if unit:
            return [Compound(lower, [" ".join(unit)])]
        return [piece for part in raw.split(".") if part for piece in classify(part)]
    if "-" in raw or "+" in raw or "@" in raw:
        return [piece for part in raw.replace("+", "-").replace("@", "-").split("-") if part
                for piece in classify(part)]
    if _is_version(lower):  # `v18`
        return [Compound(lower, [])]
    unit = _number_unit(lower)
    if unit and unit[1] == "s" and len(unit[0]) == 3 and unit[0][0] in "45":
        return [unit[0]]  # "getting 500s": status codes, not seconds
    if unit:
        return [Compound(lower, [" ".join(unit)])]
    parts = identifier_parts(raw)
    if parts:
        return [Compound(lower, [" ".join(parts), "".join(parts)], words=min(2, len(parts)))]
    return [lower]


def prompt_tokens(text: str, is_word=str.isalpha) -> list["str | Compound"]:
    """The prompt's words in order (lower case), with versions, numbers with units, identifiers and
    file names kept whole. A number followed by a unit becomes one (`300mb`); a short number or
    version right after a word for which `is_word` holds is also joined to it, after the word
    (`node`, `node 22`): "Node 22" is what was asked, "node" alone still finds "Node.js"."""
    tokens: list[str | Compound] = []
    for raw in raw_tokens(text):
        for token in classify(raw):
            prev = tokens[-1] if tokens else None
            if isinstance(token, str) and token in UNITS and isinstance(prev, str) and prev.isdigit():
                tokens[-1] = Compound(prev + token, [f"{prev} {token}"])
            else:
                tokens.append(token)
    out: list[str | Compound] = []
    for token in tokens:
        prev = out[-1] if out else None
        number = token if isinstance(token, str) else token.label
        if (isinstance(prev, str) and _is_short_number(number) and prev.isalpha() and is_word(prev)
                and (isinstance(token, str) or _is_version(number))):
            bare = number.lstrip("v")
            if "." in number:  # `2.4.0` names a release whatever word comes before it ("publish 2.4.0")
                out.append(token)
            token = Compound(f"{prev} {number}", [f"{prev} {bare}", f"{prev}{bare}", f"{prev} v{bare}",
                                                  f"{prev} js {bare}"], words=2)
        out.append(token)
    return out


def derived_keys(text: str, is_word: Callable[[str], bool]) -> str:
    """What the index adds for `text`: each identifier's other spelling (`apply discount` for
    `applyDiscount`, `applydiscount` for `apply_discount`), and each version joined to the
    words just before it (`airflow2.10` for "Airflow from 2.7 to 2.10", `expo52` for "Expo SDK
    51 to SDK 52"): what the prompt's "Airflow 2.10" also looks for (`prompt_tokens`), once each.
    `is_word` tells a word that may name a version from filler, as for `prompt_tokens`."""
    import re  # index time only
    from itertools import islice

    patterns = _patterns()
    keys: dict[str, None] = {}
    for word in _identifiers(text, patterns):
        parts = identifier_parts(word)
        if parts:
            keys["".join(parts) if "_" in word else " ".join(parts)] = None
    for match in islice(patterns[2].finditer(text), MAX_VERSION_KEYS):
        number = match.group(0).lower().lstrip("v")
        before = re.findall(r"[^\W_]+", text[max(0, match.start() - 80):match.start()])[-VERSION_REACH:]
        for word in (w.lower() for w in before):
            if word.isalpha() and len(word) > 1 and is_word(word):
                keys[f"{word}{number}"] = None
    return " ".join(keys)


VERSION_REACH = 5  # words before a version that it may belong to
MAX_VERSION_KEYS = 24  # versions joined per text: a log full of numbers adds no more
# What `_identifiers` finds: a word that starts with a letter and holds, past its first character, a `_`,
# a lower-case letter or digit before a capital, or two capitals before a lower-case letter.
_IDENTIFIER = r"\b[A-Za-z]\w*?(?:_|[a-z0-9][A-Z]|[A-Z]{2}[a-z])\w*"
# Where one of those marks is, found by the character it turns on (`_` or a capital: `re` skips every
# other character without trying it; `_IDENTIFIER` tries each word character, 5x slower at index time).
_IDENTIFIER_MARK = r"[_A-Z](?:(?<=_)|(?<=[a-z0-9][A-Z])|(?<=[A-Z][A-Z])(?=[a-z]))"
# `22`, `v18`, `2.10`, `3.4.0`: `(?<![\w.$-])[vV]?\d{1,2}(?:\.\d+){0,2}\b(?!\.\d)`, written to start with
# the character it needs (the same matches, twice as fast)
_SHORT_VERSION = r"[vV\d](?<![\w.$-].)(?:(?<=[vV])\d{1,2}|(?<=\d)\d?)(?:\.\d+){0,2}\b(?!\.\d)"
_PATTERNS: tuple | None = None  # (mark, rest of a word, short version), compiled on first use: index time


def _patterns() -> tuple:
    global _PATTERNS
    if _PATTERNS is None:
        import re

        _PATTERNS = (re.compile(_IDENTIFIER_MARK), re.compile(r"\w*"), re.compile(_SHORT_VERSION))
    return _PATTERNS


def _identifiers(text: str, patterns: tuple) -> list[str]:
    """What `re.findall(_IDENTIFIER, text)` finds: each word holding a mark past its first character."""
    marks, word_rest = patterns[0], patterns[1]
    found: list[str] = []
    done = 0  # where the last word looked at ended
    for mark in marks.finditer(text):
        at = mark.start()
        if at < done:
            continue
        start = at
        while start and (text[start - 1].isalnum() or text[start - 1] == "_"):  # `\w`, as `re` reads it
            start -= 1
        done = end = word_rest.match(text, at).end()
        first = text[start]
        if not ("a" <= first <= "z" or "A" <= first <= "Z"):
            continue
        while mark is not None:  # the mark begins at the `_`, or at the character before the capital
            begins = mark.start() if text[mark.start()] == "_" else mark.start() - 1
            if begins > start:
                found.append(text[start:end])
                break
            mark = marks.search(text, mark.start() + 1, end)
    return found
