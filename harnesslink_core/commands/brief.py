"""`harnesslink brief [--cwd DIR] [--harness H] [--budget N]`: print the session-start brief."""

from __future__ import annotations

import argparse
import os

from ..paths import Locations
from ..recall.brief import DEFAULT_BUDGET, build_brief
from .options import whole_number


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("brief", help="Print the context brief a session in this project starts with")
    parser.add_argument("--cwd", default=None, help="the project folder (default: the current directory)")
    parser.add_argument("--harness", default="claude-code", help="the harness it is for (default claude-code)")
    parser.add_argument("--budget", type=whole_number(200, 1_000_000), default=DEFAULT_BUDGET, help=f"characters (default {DEFAULT_BUDGET})")
    parser.add_argument("--session", default=None, help="include this session's state file")
    parser.add_argument("--query", default=None, help="add a recall section for these words")


def run(args: argparse.Namespace, locs: Locations) -> int:
    cwd = os.path.abspath(args.cwd or os.getcwd())
    brief = build_brief(locs, cwd, args.harness, session_id=args.session, with_state=bool(args.session),
                        budget=max(0, args.budget), query=args.query)
    if not brief.text:
        print("(nothing to brief: no notes or banked turns for this project yet)")
        return 0
    print(brief.text)
    return 0
