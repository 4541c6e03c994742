"""Secrets never reach the bank: each is replaced by `[redacted:<kind>]` before anything is written."""

from __future__ import annotations

import re

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


def redact(text: str) -> str:
    if not text or not _ANY.search(text):
        return text
    for kind, pattern in PATTERNS:
        text = pattern.sub(lambda m, k=kind: _sub(k, m), text)
    return text
