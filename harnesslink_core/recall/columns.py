"""What the index's row of an entry holds beside the entry's own text: the full-text columns (`COLUMNS`), the
values computed from the text (`computed_columns`: its fingerprint and identifiers' other spellings), the
shortened step log (`actions_digest`) and the project's token (`scope_token`). Pure: text in, text out; the
writers may compute them while their files sync, and `index` stores them.

On the prompt hook's path: stdlib only, the heavier helpers imported when first used.
"""

from __future__ import annotations

ACTIONS_DIGEST_CHARS = 2000
KEYS_SCAN_CHARS = 8000  # of the result, for identifiers' other spellings (`detail_keys`)

# title, tags, prompt, actions, result, derived keys of title+prompt and of actions+result, scope (a filter)
COLUMNS = ("title", "tags", "prompt", "actions", "result", "keys", "detail_keys", "scope")


def computed_columns(title: str, prompt: str, actions: str, result: str) -> tuple[str, str, str]:
    """What the index computes from an entry's text: its fingerprint (`docs.sketch`) and the derived keys of
    its title and prompt (`keys`) and of its actions and result (`detail_keys`). A writer may make them while
    its files sync, and hand them to `refresh` with the entry."""
    from .fingerprint import sketch
    from .terms import is_filler
    from .tokens import derived_keys

    is_word = lambda word: not is_filler(word)
    return (sketch(prompt, result), derived_keys(f"{title}\n{prompt}", is_word),
            derived_keys(f"{actions_digest(actions)}\n{result[:KEYS_SCAN_CHARS]}", is_word))


def scope_token(slug: str) -> str:
    """The project as one FTS5 token: digits only, so neither the tokenizer (which would split
    `--home-me-web--` into words, and `web` would then match `web-frontend`) nor the porter
    stemmer (which leaves digits alone) can make two projects' tokens meet."""
    try:
        from _blake2 import blake2b  # hashlib itself loads OpenSSL: ~2 ms on the prompt hook's path
    except ImportError:  # not CPython
        from hashlib import blake2b

    return str(int.from_bytes(blake2b(slug.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big"))


def actions_digest(actions: str) -> str:
    """The step log, shortened: each action's tool and the start of its input."""
    lines = []
    total = 0
    for line in actions.splitlines():
        line = line.strip()
        if not line:
            continue
        line = line[:200]
        total += len(line) + 1
        if total > ACTIONS_DIGEST_CHARS:
            break
        lines.append(line)
    return "\n".join(lines)
