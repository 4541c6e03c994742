"""`harnesslink autobank`: one incremental pass (or, with --drain, passes until the backlog is gone)."""

from __future__ import annotations

import argparse
import sys

from ..banking import autobank
from ..paths import Locations
from ..recall import index


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("autobank", help="Bank what is new in every enabled harness's transcripts")
    parser.add_argument("--drain", action="store_true", help="keep passing until no backlog is left")
    parser.add_argument("--harness", action="append", help="only this harness (repeatable)")
    parser.add_argument("--quiet", action="store_true", help="print nothing")


def run(args: argparse.Namespace, locs: Locations) -> int:
    if args.drain:  # the background pass: it also gives vectors to what has none
        report = autobank.drain(locs, harnesses=args.harness)
        index.fill_vectors(locs)
    else:
        report = autobank.run_pass(locs, harnesses=args.harness)
    if not args.quiet:
        print(summary(report))
    return failed(report, "autobank")


def failed(report: autobank.PassReport, verb: str) -> int:
    """1, with one line on stderr, when a write failed (the next pass retries it); else 0."""
    if report.failure is None:
        return 0
    print(f"harnesslink {verb}: error: {report.failure} (nothing is lost: the next pass retries; details in the log)",
          file=sys.stderr)
    return 1


def summary(report: autobank.PassReport) -> str:
    if report.locked:
        return "another pass is running; nothing done"
    if report.disabled:
        return "memory.autoBank is false in config.yml; nothing banked"
    text = (f"banked {report.banked}, skipped {report.skipped}, dropped {report.dropped}, "
            f"duplicates {report.duplicates}; read {report.bytes_read / 1e6:.1f} MB")
    if report.excluded:
        text += f"; {report.excluded} turns of projects kept out"
    if report.backlog:
        text += f"; {report.backlog} transcripts left for the next pass"
    if report.open_turns:
        text += f"; {report.open_turns} turns not finished yet"
    if report.errors:
        text += f"; {report.errors} errors (see the log)"
    return text
