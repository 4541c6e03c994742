"""`harnesslink <verb>`: parse and dispatch; each verb lives in `commands/`.

An expected failure (a full disk, a permission, a locked or corrupt database, a pass that holds
the lock) is one line on stderr and a non-zero exit; the traceback goes to the log. Whatever a verb
prints, on either stream (its error lines, argparse's, a value the user typed echoed back), passes
through `redact` on its way out (`RedactedStream`).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

from .paths import locations

TYPE_CHECKING = False  # `harnesslink mcp` starts without argparse (and typing)
if TYPE_CHECKING:
    import argparse

VERBS = {
    "autobank": "autobank",
    "install": "install",
    "uninstall": "install",
    "backfill": "backfill",
    "status": "status",
    "enable": "switch",
    "disable": "switch",
    "recall": "recall",
    "brief": "brief",
    "reindex": "reindex",
    "forget": "forget",
    "mcp": "mcp",
    "mcp-call": "mcp",
    "resume": "resume",
    "view": "view",
    "supersede": "trust",
    "confirm": "trust",
    "history": "history",
    "review": "review",
    "encoder": "encoder",
    "doctor": "doctor",
}


def _modules(verb: str | None = None) -> dict[str, object]:
    """The verbs' modules: every one, or only `verb`'s (a verb imports only what it runs)."""
    names = [VERBS[verb]] if verb in VERBS else dict.fromkeys(VERBS.values())
    return {name: importlib.import_module(f"harnesslink_core.commands.{name}") for name in names}


def build_parser(verb: str | None = None) -> argparse.ArgumentParser:
    """Every verb's parser; with a known `verb`, only its module's (the same subcommand, its help and errors)."""
    from .commands.options import Parser

    parser = Parser(prog="harnesslink", description="Shared memory for coding agents.")
    subparsers = parser.add_subparsers(dest="command", required=True)
    for module in _modules(verb).values():
        module.add_parser(subparsers)  # type: ignore[attr-defined]
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    if words[:1] == ["mcp"]:  # answers before argparse and the other verbs are imported
        from .mcp_server import fast_path

        served = fast_path(words)
        if served is not None:
            return served
    streams = sys.stdout, sys.stderr
    redacted = RedactedStream(sys.stdout), RedactedStream(sys.stderr, eager=True)
    sys.stdout, sys.stderr = redacted
    try:
        return _parse_and_run(words)
    finally:
        sys.stdout, sys.stderr = streams
        try:
            for stream in redacted:
                stream.pass_on()
        except BrokenPipeError:
            _quiet_stdout()


def _parse_and_run(words: list[str]) -> int:
    args = build_parser(words[0] if words else None).parse_args(words)
    module = _modules(args.command)[VERBS[args.command]]
    locs = locations()
    try:
        return int(module.run(args, locs))  # type: ignore[attr-defined]
    except KeyboardInterrupt:
        print("harnesslink: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `harnesslink status --json | head`: the reader had enough, nothing failed
        _quiet_stdout()
        return 0
    except Exception as exc:  # noqa: BLE001 - the user gets one line, the log gets the traceback
        from . import errors, log

        line = errors.describe(exc, locs)
        log.error(locs, f"harnesslink {args.command}: {line}", exc)
        print(f"harnesslink {args.command}: error: {line}", file=sys.stderr)
        return 1


class RedactedStream:
    """A text stream that writes what it is given to `stream` with its secrets redacted.

    Text is held until a line ends, so a token is never redacted in two halves; on a pipe or a file,
    until HOLD characters are held (Python's own buffer holds as much there), so a long listing is
    redacted in a few calls, not one per line. `eager` (stderr, a terminal) passes each line on as it ends.
    `flush` passes on whatever is held: a prompt, a progress bar's draw."""

    HOLD = 64 * 1024

    def __init__(self, stream, *, eager: bool = False) -> None:
        self._stream = stream
        self._held: list[str] = []
        self._size = 0
        self._eager = eager or _is_terminal(stream)

    def write(self, text: str) -> int:
        self._held.append(text)
        self._size += len(text)
        if self._size >= self.HOLD or (self._eager and "\n" in text):
            self.pass_on(whole_lines=True)
        return len(text)

    def flush(self) -> None:
        self.pass_on()
        self._stream.flush()

    def pass_on(self, *, whole_lines: bool = False) -> None:
        """Redact and write what is held (only up to its last line's end, with `whole_lines`)."""
        text = "".join(self._held)
        cut = text.rfind("\n") + 1 if whole_lines else len(text)
        if not cut:
            return
        self._held = [text[cut:]] if cut < len(text) else []
        self._size = len(text) - cut
        from .redact import redact

        self._stream.write(redact(text[:cut]))

    def __getattr__(self, name: str):  # fileno, isatty, encoding, buffer ...: the stream's own
        return getattr(self._stream, name)


def _is_terminal(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # a closed or stand-in stream
        return False


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush into the closed pipe says nothing."""
    import os

    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    raise SystemExit(main())
