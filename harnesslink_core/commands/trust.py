"""`harnesslink supersede OLD NEW [--undo]` and `harnesslink confirm ID [--undo]`: say which entries
still hold (SPEC §11). Ids as `memory_get` takes them: the path `harnesslink recall` prints,
`<project>/bank/<file>.md` (after `--`: a project slug starts with `--`), a file name, a time id;
both entries in this project's scope (its own, its repository's other slugs, its linked projects), and OLD
(the confirmed entry) its own: a linked project's trust state is that project's to change."""

from __future__ import annotations

import argparse
import os

from ..control import supersede
from ..paths import Locations

ACTOR = "cli"


IDS = ("Ids: the path `harnesslink recall` prints, a file name, a time id (2026-08-28T10-30-00-000Z), or "
       "<project>/bank/<file>.md as memory_search shows it, after `--` (a project's name starts with `--`).")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "supersede", help="Mark an entry as superseded by a newer one: it is no longer given to sessions",
        description="OLD is no longer pushed to sessions; a search still shows it, marked `superseded by NEW` "
                    "and ranked below the current entries. The change is a line in OLD's project's TRUST.md.",
        epilog=IDS)
    parser.add_argument("old", help="the entry that no longer holds (id, file name or <project>/bank/<file>.md)")
    parser.add_argument("new", help="the newer entry that replaces it")
    _common(parser, "take the supersession back: OLD is current again")
    parser = subparsers.add_parser("confirm", help="Say an entry still holds (a person's word, shown when it is pulled)",
                                   epilog=IDS)
    parser.add_argument("entry", help="the entry (id, file name or <project>/bank/<file>.md)")
    _common(parser, "take the confirmation back")


def _common(parser: argparse.ArgumentParser, undo: str) -> None:
    parser.add_argument("--undo", action="store_true", help=undo)
    parser.add_argument("--cwd", default=None, help="the project folder (default: the current directory)")


def run(args: argparse.Namespace, locs: Locations) -> int:
    cwd = os.path.abspath(args.cwd or os.getcwd())
    if args.command == "supersede":
        old = supersede.resolve(locs, cwd, args.old)
        new = supersede.resolve(locs, cwd, args.new)
        change = supersede.supersede(locs, cwd, old, new, actor=ACTOR, undo=args.undo)
    else:
        change = supersede.confirm(locs, cwd, supersede.resolve(locs, cwd, args.entry), actor=ACTOR,
                                   undo=args.undo)
    print(change.message)
    return 0
