"""`harnesslink backfill --days N [--harness H]`: widen the window and drain it in the foreground."""

from __future__ import annotations

import argparse
import sys

from ..banking import autobank
from ..paths import Locations
from ..recall import index
from . import progress
from .autobank import failed, summary
from .options import number


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("backfill", help="Bank every turn of the last N days (re-reads every transcript once)")
    parser.add_argument("--days", type=number(0, 36500), default=30, help="how far back (default 30)")
    parser.add_argument("--harness", action="append", help="only this harness (repeatable)")


def run(args: argparse.Namespace, locs: Locations) -> int:
    if args.days <= 0:
        print("error: --days must be positive", file=sys.stderr)
        return 2
    names = autobank.widen_window(locs, args.days, args.harness)
    if not names:
        print("nothing to backfill: no enabled harness matches (see config.yml cloud.autobank)")
        return 1
    with progress.Bars() as bars:
        report = autobank.drain(locs, harnesses=names, progress=_bar(bars, locs, names))
        fill_meaning(locs, bars)
    print(f"backfill of {', '.join(names)} over {args.days:g} days: {summary(report)}")
    for line in left_out(report, args.days):
        print(line)
    return 1 if report.locked else failed(report, "backfill")


def fill_meaning(locs: Locations, bars: progress.Bars) -> None:
    """The meaning vectors of what the drain banked, once the index answers by its words: made by a detached
    job (`index.rebuild_in_background`, which the resident encoder's vectors follow), so the command ends
    when the words are searchable; `harnesslink status` counts what is left. Where that job cannot start
    (one already runs, the agent dir takes no marker), made here, with their own bar, as before."""
    if index.rebuild_in_background(locs, full=False):
        if bars.shown:
            bars.close()
            print("meaning vectors: being made in the background (`harnesslink status` shows how many are left)",
                  file=sys.stderr)
        return
    index.fill_vectors(locs, progress=(lambda done, due: bars.report("vectors", done, due)) if bars.shown else None)


def _bar(bars: progress.Bars, locs: Locations, names: list[str]):
    """The drain's report after each pass, as bytes read of those the ledger says are waiting
    (None, and no bar, off a terminal or with nothing to read)."""
    waiting = autobank.unread_bytes(locs, names) if bars.shown else 0
    if not waiting:
        return None
    bars.report("transcripts", 0, waiting, unit="B")

    def report(total: autobank.PassReport, passes: int) -> None:
        # no backlog left: what was read is all there was (a transcript's unfinished last line stays unread)
        estimate = waiting if total.backlog else total.bytes_read
        bars.report("transcripts", total.bytes_read, estimate, unit="B", note=f"{total.banked} banked")

    return report


def left_out(report: autobank.PassReport, days: float) -> list[str]:
    """Why turns were not banked, in words, and what would bank them."""
    import math
    import time

    lines = []
    if report.before_window or report.old_files:
        parts = []
        if report.before_window:
            parts.append(f"{report.before_window} turns ended before it")
        if report.old_files:
            parts.append(f"{report.old_files} transcripts were last written before it (not opened)")
        line = f"outside the {days:g}-day window, by each turn's own time: {' and '.join(parts)}"
        if report.oldest:
            wider = math.ceil((time.time() - report.oldest) / 86400) + 1
            line += f"; `harnesslink backfill --days {wider}` would include them"
        lines.append(line)
    if report.dropped:
        lines.append(f"dropped: {report.dropped} turns never finished (no answer came) and were given up after 7 days")
    if report.backlog:
        lines.append(f"backlog: {report.backlog} transcripts still have unread bytes; the next pass reads them")
    return lines
