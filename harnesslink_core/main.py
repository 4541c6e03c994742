"""`harnesslink <verb>`: parse and dispatch; each verb lives in `commands/`.

An expected failure (a full disk, a permission, a locked or corrupt database, a pass that holds
the lock) is one line on stderr and a non-zero exit; the traceback goes to the log.
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
}


def _modules() -> dict[str, object]:
    return {name: importlib.import_module(f"harnesslink_core.commands.{name}") for name in dict.fromkeys(VERBS.values())}


def build_parser() -> argparse.ArgumentParser:
    import argparse

    parser = argparse.ArgumentParser(prog="harnesslink", description="Shared memory for coding agents.")
    subparsers = parser.add_subparsers(dest="command", required=True)
    for module in _modules().values():
        module.add_parser(subparsers)  # type: ignore[attr-defined]
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    if words[:1] == ["mcp"]:  # answers before argparse and the other verbs are imported
        from .mcp_server import fast_path

        served = fast_path(words)
        if served is not None:
            return served
    args = build_parser().parse_args(argv)
    module = _modules()[VERBS[args.command]]
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


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush into the closed pipe says nothing."""
    import os

    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    raise SystemExit(main())
