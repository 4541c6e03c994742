"""Time in one place: ISO strings as the transcripts and bank entries spell them.

`datetime` is imported when a time is first formatted or parsed: a pass with nothing new to
bank (most stop hooks) does neither.
"""

from __future__ import annotations

import time

MAX_SECONDS = 1e10  # year 2286: anything later is garbage, not a time


def now() -> float:
    return time.time()


def iso(ts: float) -> str:
    """`2026-08-28T10:30:00.000Z`: UTC with milliseconds, as the bank entries spell it."""
    datetime, timezone = _datetime()

    try:
        dt = datetime.fromtimestamp(ts, tz=timezone.utc)
    except (OverflowError, OSError, ValueError):  # a garbage time from a transcript
        dt = datetime.fromtimestamp(0, tz=timezone.utc)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def parse_iso(value: object) -> float | None:
    """Seconds since the epoch from an ISO string or a number (seconds or milliseconds)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        seconds = value / 1000.0 if value > 1e11 else float(value)
        return seconds if 0 <= seconds < MAX_SECONDS else None
    if not isinstance(value, str) or not value:
        return None
    global _last_parsed
    if value == _last_parsed[0]:
        return _last_parsed[1]
    parsed = _parse_iso_text(value)
    _last_parsed = (value, parsed)
    return parsed


# The last string parsed and its value: a reader often asks for one line's time twice in a row
# (Codex's session facts, then its turn); `fromisoformat` and `timestamp` cost ~1 us each time.
_last_parsed: tuple[str, float | None] = ("", None)


def _datetime():
    """`datetime.datetime` and `datetime.timezone`, imported on first use. Kept: an import statement run at each
    call costs more than the parse (a backfill parses ~8,000 times)."""
    global _DATETIME
    if _DATETIME is None:
        from datetime import datetime, timezone

        _DATETIME = (datetime, timezone)
    return _DATETIME


_DATETIME = None


def _parse_iso_text(value: str) -> float | None:
    datetime, timezone = _datetime()

    text = value.strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    try:
        seconds = dt.timestamp()
    except (OverflowError, OSError, ValueError):
        return None
    return seconds if 0 <= seconds < MAX_SECONDS else None


def file_safe(iso_ts: str) -> str:
    """`2026-08-28T10:30:00.000Z` -> `2026-08-28T10-30-00-000Z`."""
    return iso_ts.replace(":", "-").replace(".", "-")
