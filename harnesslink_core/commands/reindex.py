"""`harnesslink reindex`: rebuild the search index from the Markdown tree."""

from __future__ import annotations

import argparse
import time

from ..paths import Locations
from ..recall import index
from . import progress


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    subparsers.add_parser("reindex", help="Rebuild the search index (memory-index.db) from the bank entries")


def run(args: argparse.Namespace, locs: Locations) -> int:
    started = time.monotonic()
    with progress.Bars() as bars:
        count = index.rebuild(locs, progress=bars.report if bars.shown else None)
    print(f"indexed {count} entries in {time.monotonic() - started:.1f} s ({locs.index_file})")
    return 0
