"""`harnesslink recall <query> [--cwd DIR] [--all] [--as-of DATE] [--known-at DATE] [--json] [-k N]`: search
the bank; `--as-of` by the time the work happened, `--known-at` by the time memory recorded it (SPEC §11)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from ..paths import Locations
from ..recall.ask import ask
from ..recall.pull import query_terms
from ..store import trust
from ..store.scope import scope_folders
from .options import whole_number


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("recall", help="Search banked turns of this project (and its linked projects)")
    parser.add_argument("query", nargs="+", help="words to look for (plain words: no search syntax)")
    parser.add_argument("--cwd", default=None, help="the project folder (default: the current directory)")
    parser.add_argument("--all", action="store_true", help="search every project, not just this one")
    parser.add_argument("--as-of", type=_moment, metavar="DATE",
                        help="answer with what was current then, by the time the work happened (YYYY-MM-DD, to the "
                             "end of that day UTC, or an ISO time): work done later is left out, an entry whose "
                             "superseding work came later is current")
    parser.add_argument("--known-at", type=_moment, metavar="DATE",
                        help="answer with what memory held then, by the time it recorded each entry and "
                             "supersession (a backfilled turn is recorded long after its work)")
    parser.add_argument("--json", action="store_true", help="print JSON for machines")
    parser.add_argument("-k", type=whole_number(1, 1000), default=5, help="how many matches (default 5)")


def _moment(text: str) -> float:
    try:
        return trust.as_of_time(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def run(args: argparse.Namespace, locs: Locations) -> int:
    query = " ".join(args.query)
    terms = query_terms(query)
    cwd = os.path.abspath(args.cwd or os.getcwd())
    folders = None if args.all else scope_folders(locs, cwd)
    projects = None if folders is None else list(folders)
    hits, state = ask(locs, query, folders, limit=max(1, args.k), as_of=args.as_of,
                      known_at=args.known_at)
    as_of, known_at = (None if at is None else time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at))
                       for at in (args.as_of, args.known_at))
    if args.json:
        rows = [
            {
                "path": str(locs.memories / h.path), "project": h.project, "title": h.title,
                "ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(h.ts)), "harness": h.origin,
                "session_id": h.session_id, "score": round(h.score, 4), "matched": h.matched, "why": h.why,
                **_trust_fields(state, h.path), "result": h.result[:500],
            }
            for h in hits
        ]
        json.dump({"query": query, "terms": terms, "projects": projects, "as_of": as_of, "known_at": known_at,
                   "matches": rows},
                  sys.stdout, indent=2)
        print()
        return 0
    if not hits:
        scope = "any project" if args.all else ", ".join(projects or []) or "this project"
        print(f"no matches for {query!r} in {scope}" + (f" as of {as_of}" if as_of else "")
              + (f" known at {known_at}" if known_at else ""))
        return 1
    if as_of:
        print(f"as of {as_of}: what was current then, by the time the work happened")
    if known_at:
        print(f"known at {known_at}: what memory held then (entries recorded later are left out)")
    for n, h in enumerate(hits, 1):
        when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(h.ts))
        print(f"{n}. {h.title}  [{when} · {h.origin} · {h.why}]")
        print(f"   {locs.memories / h.path}")
        result = " ".join(h.result.split())
        if result:
            print(f"   {result[:200]}{'…' if len(result) > 200 else ''}")
    return 0


def _trust_fields(state: trust.TrustState, path: str) -> dict[str, object]:
    newer = state.superseded_by(path)
    return {"trust": state.of(path), "superseded_by": state.newer_name(path),
            "superseded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(newer[1])) if newer else None}
