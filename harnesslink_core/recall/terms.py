"""The prompt's words and terms: the first stage of the prompt hook's search (`matches`).

`prompt_words` reads the prompt's tokens once; every later step takes them. Whether a prompt
is worth a search at all (`skip_reason`) is decided from them, before sqlite3 is even
imported. `prompt_terms` makes the terms the search looks for: each meaningful word (or a
two-word phrase the vocabulary knows, "dark mode"), with its related words from the vocabulary
(`lexicon`: "popup" also finds "modal"); versions, numbers with units, identifiers and file
names are terms of their own with their other spellings (`tokens`: "Node 22" also finds
"node22"; `applyDiscount` also "apply discount").

No `re` on this path: it imports `enum`, and together they cost a sizeable share of a bare
interpreter's start on every prompt.
"""

from __future__ import annotations

from .lexicon import Vocabulary, bare_forms, full, lookup_keys
from .tokens import Compound, prompt_tokens

MAX_TERMS = 16
MAX_ALTERNATIVES = 8  # related words searched per prompt term
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

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the prompt hook's path)
if TYPE_CHECKING:
    Words = list[str | Compound]  # the prompt's tokens (`prompt_words`): words and compounds


def prompt_words(prompt: str) -> Words:
    """The prompt's tokens (`tokens.prompt_tokens`), filler told apart; a long paste is read by its start."""
    return prompt_tokens(prompt[:PROMPT_SCAN_CHARS], is_word=lambda word: not is_filler(word))


def meaningful(token: str | Compound) -> str | None:
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
    return list(_term_words(prompt_words(prompt)))


def meaningful_words(prompt: str) -> int:
    """How many meaningful words the prompt's terms stand for: an identifier or a release
    (`enableGitInfo`, `2.3.1`) says as much as two words."""
    return sum(_term_words(prompt_words(prompt)).values())


def _term_words(words: Words) -> dict[str, int]:
    """The prompt's first `MAX_TERMS` distinct terms, each with how many words it stands for."""
    terms: dict[str, int] = {}
    for token in words:
        term = meaningful(token)
        if term and term not in terms:
            terms[term] = token.words if isinstance(token, Compound) else 1
            if len(terms) >= MAX_TERMS:
                break
    return terms


def is_filler(word: str) -> bool:
    """A stop word, also when inflected: `showing`, `needed`, `adding`."""
    return any(form in STOPWORDS for form in bare_forms(word))


def skip_reason(prompt: str, words: Words | None = None) -> str | None:
    """Why this prompt gets no matches, or None. `words`: its `prompt_words`, when the caller has them."""
    text = prompt.lstrip()
    if not text:
        return "empty prompt"
    if text.startswith("/"):
        return "a /command"
    if text.startswith("!"):
        return "a !shell command"
    if words is None or len(text) != len(prompt):  # judged by what follows any leading blanks
        words = prompt_words(text)
    if sum(_term_words(words).values()) < 2:
        return "fewer than two meaningful terms"
    return None


# --- the terms ----------------------------------------------------------------


class Term:
    """One prompt term: its `label`, then the other words that count as it (`alternatives` holds the
    label first); `words`: how many of the prompt's words it stands for (a phrase or an identifier:
    two); `compound`: the others are the compound's own other spellings ("node22" for "Node 22"),
    not related words; `concept`: the vocabulary marks it as a concept. A plain class: the prompt
    hook's path."""

    __slots__ = ("alternatives", "compound", "concept", "label", "words")

    def __init__(self, words: int, alternatives: list[str], *, compound: bool = False, concept: bool = False) -> None:
        self.label = alternatives[0]
        self.alternatives = alternatives
        self.words = words
        self.compound = compound
        self.concept = concept

    def __repr__(self) -> str:
        return f"Term({self.alternatives!r}, words={self.words})"

    def own(self) -> list[str]:
        """What the prompt itself says: the word, or all of a compound's spellings (no related words)."""
        return list(self.alternatives) if self.compound else self.alternatives[:1]


def prompt_terms(words: Words, vocab: Vocabulary | None = None) -> list[Term]:
    """The prompt's terms (of its `prompt_words`): the word (a vocabulary phrase, a compound) first,
    then related words (compounds: their other spellings). `vocab`: the vocabulary (default: the
    shipped file; the prompt hook passes what the index has for the prompt's words)."""
    vocab = vocab or full()
    terms: list[Term] = []
    seen: set[str] = set()
    i = 0
    while i < len(words) and len(terms) < MAX_TERMS:
        token, after = words[i], (words[i + 1] if i + 1 < len(words) else None)
        pair = f"{token} {after}" if isinstance(token, str) and isinstance(after, str) else ""
        if pair and vocab.is_phrase(pair):  # one term for both words ("rate limiting" is not about rates)
            term, i = Term(2, [pair, *vocab.related(pair)[:MAX_ALTERNATIVES]], concept=vocab.is_concept(pair)), i + 2
        elif isinstance(token, Compound):
            term, i = Term(token.words, [token.label, *token.spellings], compound=True), i + 1
        else:
            word, i = meaningful(token), i + 1
            if word is None:
                continue
            term = Term(1, [word, *vocab.related(word)[:MAX_ALTERNATIVES]], concept=vocab.is_concept(word))
        if term.label not in seen:
            seen.add(term.label)
            terms.append(term)
    return terms


def vocabulary_keys(words: Words) -> list[str]:
    """What to ask the vocabulary about the prompt: its words (in their bare forms) and word pairs."""
    tokens = words[:8 * MAX_TERMS]
    singles = [t for t in tokens if isinstance(t, str) and meaningful(t)]
    pairs = [f"{a} {b}" for a, b in zip(tokens, tokens[1:]) if isinstance(a, str) and isinstance(b, str)]
    return lookup_keys(singles) + list(dict.fromkeys(pairs))
