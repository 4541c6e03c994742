"""A bounded log file: errors go here, never to a harness. Cheap to import (no `logging`).
Everything written is redacted first (secrets, private spans)."""

from __future__ import annotations

import os
import time

from .paths import Locations
from .safefile import open_append

MAX_BYTES = 1_000_000
KEEP = 3
_fallback = None  # where a line goes when the log file cannot be written (see `fall_back_to`)


def fall_back_to(stream) -> None:
    """Send what cannot be written to the log file (an unusable home) to `stream` instead of losing
    it. The MCP server and the CLI set stderr; the hooks set nothing: a harness shows what a hook
    prints, and a hook prints its answer only."""
    global _fallback
    _fallback = stream


def write(locs: Locations, level: str, message: str, *, exc: BaseException | None = None) -> None:
    """Append one line (and a traceback, if given); to the fallback stream when the log file cannot
    be written. Never raises: logging must not break a hook."""
    text = ""
    try:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        text = f"{stamp} {level.upper()} [{os.getpid()}] {message}\n"
        if exc is not None:
            import traceback

            text += "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        from .redact import redact  # only when something is logged: the prompt hook rarely logs

        text = redact(text)
        path = locs.log_path
        os.makedirs(os.path.dirname(path), exist_ok=True)
        _rotate(path)
        fd = open_append(path)  # a FIFO planted as the log would hold the hook
        if fd is None:
            raise OSError(f"{path} is not a regular file")
        with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as f:
            f.write(text)
    except Exception:  # noqa: BLE001 - a full disk or a read-only home must not surface as a failure
        if _fallback is not None:
            try:
                _fallback.write(text or "harnesslink: an error could not be logged\n")
                _fallback.flush()
            except Exception:  # noqa: BLE001
                pass


def _rotate(path: os.PathLike[str] | str) -> None:
    try:
        if os.path.getsize(path) < MAX_BYTES:
            return
    except OSError:
        return
    for n in range(KEEP - 1, 0, -1):
        older = f"{path}.{n}"
        if os.path.exists(older):
            os.replace(older, f"{path}.{n + 1}")
    os.replace(path, f"{path}.1")


def info(locs: Locations, message: str) -> None:
    write(locs, "info", message)


def warning(locs: Locations, message: str) -> None:
    write(locs, "warning", message)


def error(locs: Locations, message: str, exc: BaseException | None = None) -> None:
    write(locs, "error", message, exc=exc)


def error_anywhere(message: str, exc: BaseException | None = None) -> None:
    """`error` for when even finding the locations may have failed: never raises."""
    try:
        from .paths import locations

        error(locations(), message, exc)
    except BaseException:  # noqa: BLE001
        pass
