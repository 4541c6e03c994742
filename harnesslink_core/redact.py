"""Nothing secret or private is written anywhere we persist: the bank, the ledger (read
positions' carried session facts, session state, error rows), state files, logs and the CLI's
error lines all pass through `redact` (or `redact_value` for JSON-able data) first.

- `<private>…</private>` spans (attributes allowed: `<private reason="x">`) become `[private]`; an
  unclosed tag hides everything to the end of the text it is in (a prompt, one tool input, an answer).
- Secrets are replaced by `[redacted:<kind>]`: the whole token, or, where a rule names the secret part
  (an assignment, a URL's password, a header), that part only, so `DB_PASS=x` keeps `DB_PASS=`.

This module is the face callers import; the work is in `redaction/`: `rules.py` (our rule table and
gitleaks' vendored rules), `gates.py` (which rules a text lets run), `engine.py` (where they match, and
the replacing), `expressions.py` (what is read from a rule's parsed expression).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from .redaction.engine import redact_secrets
from .redaction.rules import OWN_KINDS

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["MEMO_LONGEST", "MEMO_MOST", "OWN_KINDS", "PRIVATE", "Memo", "hide_private", "redact", "redact_json",
           "redact_value"]

PRIVATE = "[private]"
_PRIVATE_SPAN = re.compile(r"<private(?:\s[^<>]{0,1024})?>(?:(?!</private\s{0,16}>)[\s\S]){0,10000000}(?:</private\s{0,16}>)?",
                           re.I)


_PRIVATE_TAG = re.compile(r"<private(?:\s[^<>]{0,1024})?>", re.I)
_PRIVATE_END = re.compile(r"</private\s{0,16}>", re.I)
_PRIVATE_MAX = 10000000  # the longest span _PRIVATE_SPAN takes


def hide_private(text: str) -> str:
    """`<private>…</private>` -> `[private]`; an unclosed tag hides the rest of the text.

    What `_PRIVATE_SPAN.sub(PRIVATE, text)` does, without its test for the closing tag at every character
    of the span (slow for a span of the whole text, `"<private>" * n`)."""
    if not text or "<" not in text:  # (no lower-cased copy: `İ` * n is slow to lower)
        return text
    out: list[str] = []
    pos = 0
    while (tag := _PRIVATE_TAG.search(text, pos)) is not None:
        body = tag.end()
        close = _PRIVATE_END.search(text, body)
        if close is not None and close.start() - body <= _PRIVATE_MAX:
            end = close.end()
        else:
            end = min(len(text), body + _PRIVATE_MAX)
        out += (text[pos:tag.start()], PRIVATE)
        pos = end
    out.append(text[pos:])
    return "".join(out)


MEMO_LONGEST = 512  # texts up to this long are remembered: the ones that repeat (a cwd, a tool input's keys)
MEMO_MOST = 8192  # texts remembered at once: a pass over many transcripts starts over when it has this many


class Memo:
    """Short texts redacted once and looked up when redacted again, for as long as its owner keeps it: one
    autobank pass owns one, and hands it to what renders its entries (every entry of a project redacts its
    cwd and its tool names, a turn's checkpoint its prompt). The rules do not change within a pass."""

    __slots__ = ("done",)

    def __init__(self) -> None:
        self.done: dict[object, dict[str, str]] = {}

    def of(self, redacting: Callable[[str], str]) -> Callable[[str], str]:
        """`redacting` (`redact`, as its caller imported it), its results for short texts remembered."""
        memo = self.done.setdefault(redacting, {})

        def remembered(text: str) -> str:
            if not text or len(text) > MEMO_LONGEST:
                return redacting(text)
            done = memo.get(text)
            if done is None:
                if len(memo) >= MEMO_MOST:
                    memo.clear()
                done = memo[text] = redacting(text)
            return done

        return remembered


def redact(text: str) -> str:
    """`text` with every secret and private span in it replaced (see the module docstring)."""
    return redact_secrets(hide_private(text))


def redact_value(value: Any) -> Any:
    """A JSON-able value with every string in it redacted (dict keys too)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact(k) if isinstance(k, str) else k: redact_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_value(v) for v in value]
    return value


def redact_json(text: str) -> str:
    """A JSON document with every string in it redacted; unchanged (same object) when clean."""
    if not text or redact(text) == text:
        return text
    import json

    try:
        return json.dumps(redact_value(json.loads(text)))
    except ValueError:
        return redact(text)


def __getattr__(name: str) -> Any:
    if name == "PATTERNS":  # every rule as (kind, compiled expression), in the order `redact` tries them
        from .redaction.rules import load

        return [(rule.kind, rule.pattern) for rule in load()]
    raise AttributeError(name)
