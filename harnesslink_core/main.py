"""`harnesslink <verb>`: parse and dispatch; each verb lives in `commands/`."""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Sequence

from .paths import locations

VERBS = {
    "autobank": "autobank",
    "backfill": "backfill",
    "status": "status",
    "enable": "switch",
    "disable": "switch",
    "recall": "recall",
    "brief": "brief",
    "reindex": "reindex",
}


def _modules() -> dict[str, object]:
    return {name: importlib.import_module(f"harnesslink_core.commands.{name}") for name in dict.fromkeys(VERBS.values())}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="harnesslink", description="Shared memory for coding agents.")
    subparsers = parser.add_subparsers(dest="command", required=True)
    for module in _modules().values():
        module.add_parser(subparsers)  # type: ignore[attr-defined]
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    module = _modules()[VERBS[args.command]]
    return int(module.run(args, locations()))  # type: ignore[attr-defined]


if __name__ == "__main__":
    raise SystemExit(main())
