"""The prompt's words, as the prompt hook sees them before it opens any database.

Whether a prompt is worth a search at all (`skip_reason`) is decided here, before
sqlite3 is even imported. No `re` on this path: it imports `enum`, and together
they cost a sizeable share of a bare interpreter's start on every prompt.
"""

from __future__ import annotations

from .lexicon import bare_forms
from .tokens import Compound, prompt_tokens

MAX_TERMS = 16
PROMPT_SCAN_CHARS = 4000  # a 1 MB paste is judged by its start

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
move much many us lot lots ever couldnt wouldnt shouldnt wont arent werent hasnt havent hadnt
""".split())

_LAST_TOKENS: tuple[str, list] = ("", [])


def _tokens(prompt: str) -> list["str | Compound"]:
    """The prompt's tokens (`tokens.prompt_tokens`); the last prompt's are kept: a decision reads them thrice."""
    global _LAST_TOKENS
    text = prompt[:PROMPT_SCAN_CHARS]
    if _LAST_TOKENS[0] != text:
        _LAST_TOKENS = (text, prompt_tokens(text, is_word=lambda word: not is_filler(word)))
    return _LAST_TOKENS[1]


def _meaningful(token: "str | Compound") -> str | None:
    """The token as a term (a word, or a compound's label), or None when it says nothing."""
    if isinstance(token, Compound):
        return token.label
    word = token.split("'", 1)[0]
    if len(word) < 2 or word.isdigit() and len(word) < 3 or is_filler(word):
        return None
    return word


def meaningful_terms(prompt: str) -> list[str]:
    """Distinct lower-case words of the prompt that could tell one past turn from another,
    versions, numbers with units, identifiers and file names kept whole (`tokens`)."""
    return list(_term_words(prompt))


def meaningful_words(prompt: str) -> int:
    """How many meaningful words the prompt's terms stand for: an identifier or a release
    (`enableGitInfo`, `2.3.1`) says as much as two words."""
    return sum(_term_words(prompt).values())


def _term_words(prompt: str) -> dict[str, int]:
    """The prompt's first `MAX_TERMS` distinct terms, each with how many words it stands for."""
    terms: dict[str, int] = {}
    for token in _tokens(prompt):
        term = _meaningful(token)
        if term and term not in terms:
            terms[term] = token.words if isinstance(token, Compound) else 1
            if len(terms) >= MAX_TERMS:
                break
    return terms


def is_filler(word: str) -> bool:
    """A stop word, also when inflected: `showing`, `needed`, `adding`."""
    return any(form in STOPWORDS for form in bare_forms(word))


def skip_reason(prompt: str) -> str | None:
    """Why this prompt gets no matches, or None."""
    text = prompt.lstrip()
    if not text:
        return "empty prompt"
    if text.startswith("/"):
        return "a /command"
    if text.startswith("!"):
        return "a !shell command"
    if meaningful_words(text) < 2:
        return "fewer than two meaningful terms"
    return None
