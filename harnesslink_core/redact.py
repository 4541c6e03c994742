"""Nothing secret or private is written anywhere we persist: the bank, the ledger (read
positions' carried session facts, session state, error rows), state files, logs and the CLI's
error lines all pass through `redact` (or `redact_value` for JSON-able data) first.

- `<private>…</private>` spans become `[private]`; an unclosed tag hides everything to the end
  of the text it is in (a prompt, one tool input, an answer).
- Secrets are replaced by `[redacted:<kind>]`.
"""

from __future__ import annotations

import re
from typing import Any

# A secret-looking name: one of its _ . - separated parts is a secret word (so `author` or
# `max_tokens` are not, `DB_PASSWORD`, `apiKey` and `github.token` are).
_SECRET_NAME = (
    r"(?:[A-Za-z0-9]+[_.-])*"
    r"(?:SECRET|TOKEN|PASSWORD|PASSWD|API[_-]?KEY|ACCESS[_-]?KEY|PRIVATE[_-]?KEY|CREDENTIALS?|AUTH[_-]?TOKEN|CLIENT[_-]?SECRET)"
    r"(?:[_.-][A-Za-z0-9]+)*"
)

# Order matters: whole blocks and structured tokens first, generic assignments last.
PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("private-key", re.compile(
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)",
        re.S)),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|APKA)[A-Z0-9]{16}\b")),
    ("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})")),
    ("gitlab-token", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}")),
    ("slack-token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("slack-webhook", re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+")),
    ("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}")),
    ("openai-key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}")),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("stripe-key", re.compile(r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}")),
    ("bearer-token", re.compile(r"(?i)(\bauthorization\s*[:=]\s*[\"']?\s*bearer\s+|\bbearer\s+)([A-Za-z0-9._~+/=-]{12,})")),
    ("url-password", re.compile(r"(\b[a-z][a-z0-9+.-]*://[^\s:/@\"']+:)([^\s@/\"']+)(@)", re.I)),
    ("aws-secret-key", re.compile(r"(?i)(aws_?secret_?access_?key[\"']?\s*[:=]\s*[\"']?)([A-Za-z0-9/+=]{40})")),
    ("cli-secret", re.compile(r"(?i)(--(?:password|passwd|token|api-key|apikey|secret|client-secret)(?:=|\s+))([^\s\"']{4,})")),
    ("secret-assignment", re.compile(
        r"(?i)(?<![A-Za-z0-9_])(" + _SECRET_NAME + r")(?![A-Za-z0-9])([\"']?\s*[:=]\s*)"
        r"(?!bearer\b|basic\b|\d+\b|true\b|false\b|null\b|none\b)"
        r"(\"[^\"\n]{4,}\"|'[^'\n]{4,}'|[^\s\"',;}{)\]]{4,})")),
]

_WHOLE = {"private-key", "jwt", "aws-access-key", "github-token", "gitlab-token", "slack-token",
          "slack-webhook", "anthropic-key", "openai-key", "google-api-key", "stripe-key"}


def _sub(kind: str, match: re.Match[str]) -> str:
    label = f"[redacted:{kind}]"
    if kind in _WHOLE:
        return label
    if kind == "url-password":
        return match.group(1) + label + match.group(3)
    if kind in ("bearer-token", "aws-secret-key", "cli-secret"):
        return match.group(1) + label
    # secret-assignment: keep the name, drop the value; already-redacted values stay as they are
    value = match.group(3)
    if "[redacted:" in value:
        return match.group(0)
    quote = value[0] if value[0] in "\"'" else ""
    return match.group(1) + match.group(2) + quote + label + quote


# One scan that finds whether any pattern could match; most text has no secret at all, and
# trying every pattern on every prompt, tool input and answer is most of a backfill's regex time.
# Case-insensitive for all: a superset of what the patterns match, which is all a filter needs.
_ANY = re.compile("|".join(f"(?:{p.pattern.replace('(?i)', '')})" for _, p in PATTERNS), re.S | re.I)


PRIVATE = "[private]"
_PRIVATE_OPEN = re.compile(r"<private\s*>", re.I)
_PRIVATE_SPAN = re.compile(r"<private\s*>.*?(?:</private\s*>|\Z)", re.S | re.I)


def hide_private(text: str) -> str:
    """`<private>…</private>` -> `[private]`; an unclosed tag hides the rest of the text."""
    if not text or not _PRIVATE_OPEN.search(text):
        return text
    return _PRIVATE_SPAN.sub(PRIVATE, text)


def redact(text: str) -> str:
    text = hide_private(text)
    if not text or not _ANY.search(text):
        return text
    for kind, pattern in PATTERNS:
        text = pattern.sub(lambda m, k=kind: _sub(k, m), text)
    return text


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
    if not text or (not _PRIVATE_OPEN.search(text) and not _ANY.search(text)):
        return text
    import json

    try:
        return json.dumps(redact_value(json.loads(text)))
    except ValueError:
        return redact(text)
