"""`harnesslink history [--project DIR | --all] [--entry ID] [--since DATE] [-n N] [--json]`: what happened to memory."""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
from collections.abc import Iterable, Iterator

from .. import clock
from ..paths import Locations
from ..store import history
from ..store.scope import Folders, is_foreign, is_safe_slug, scope_folders
from .options import whole_number

WORDS = """events, newest first, one line each (kept in <agent dir>/history.jsonl, redacted, never uploaded):
  banked     the autobank pass wrote a finished turn as an entry
  rewritten  an entry that follows its source (an Antigravity conversation) was written again
  recorded   an agent recorded a learning (memory_bank)
  forgotten  an entry was taken back (`harnesslink forget`, memory_forget), with the criteria that chose it
  superseded a newer entry replaced it (`harnesslink supersede`, memory_bank's supersedes); restored: undone
  confirmed  a person said it holds (`harnesslink confirm`); unconfirmed: taken back
  reviewed   a person kept it as it is in `harnesslink review` (the detail says what it was listed for)
  given      the prompt hook gave the entry to a session (detail brief: the session-start brief listed it)
  opened     that session then used it: memory_get, a read of its file (a Read tool, cat, sed ...), or an
             answer repeating three of its facts that neither the prompt nor the turn's own calls hold
             (detail answer)
actors: autobank:<harness> (the pass), mcp:<harness> (an agent through the memory tools),
  hook:<harness> (the prompt and session-start hooks), cli (you, on the command line).
with --entry, a line per entry first: how many sessions it was given to (and how many briefs listed it),
  how many opened it, and when one last did."""


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "history", help="List what happened to memory: banked, recorded, forgotten, given to and opened by sessions",
        description="Every change to memory and every use of it, newest first: by default this folder's project "
                    "and the projects linked to it.",
        epilog=WORDS, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_scope_arguments(parser)
    parser.add_argument("--entry", help="only this entry: its id (<project>/bank/<file>.md), file name or time id")
    parser.add_argument("--since", help="only from this date on (YYYY-MM-DD or an ISO time, UTC)")
    parser.add_argument("-n", "--limit", type=whole_number(1, 10**9), default=None, help="only the newest N events")
    parser.add_argument("--json", action="store_true", help="print JSON for machines")


def add_scope_arguments(parser: argparse.ArgumentParser) -> None:
    """`--project DIR|SLUG` or `--all`, which `projects` reads (history, review)."""
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument("--project", help="this project instead: a folder path or a slug")
    scope.add_argument("--all", action="store_true", help="every project")


def folders_in_scope(args: argparse.Namespace, locs: Locations) -> Folders | None:
    """The projects in scope, each with the folders whose entries it holds, as recall scopes them
    (`scope.scope_folders`; a slug given: all of its entries); None for every project."""
    if args.all:
        return None
    value = (args.project or "").strip()
    if value and is_safe_slug(value) and value.startswith("--"):
        return {value: None}
    if value.startswith("~"):
        value = str(locs.home) + value[1:]
    return scope_folders(locs, os.path.abspath(value or os.getcwd()))


def projects(args: argparse.Namespace, locs: Locations) -> list[str] | None:
    """The slugs in scope; None for every project."""
    folders = folders_in_scope(args, locs)
    return None if folders is None else list(folders)


def of_folders(locs: Locations, records: Iterable[dict[str, str]], folders: Folders | None
               ) -> Iterator[dict[str, str]]:
    """The records, less those of another folder's entries that only share a slug in scope (`scope.is_foreign`),
    which recall never shows either; an entry no longer in the tree is left out when its slug holds such a
    folder (the index knows the folders a slug's entries were banked in)."""
    from pathlib import Path

    from ..store.entries import read_entry

    restricted = {slug for slug, wanted in (folders or {}).items() if wanted}
    foreign: dict[str, bool] = {}  # entry id -> another folder's
    shared: set[str] | None = None  # the restricted slugs that hold another folder's entries

    def of_another_folder(entry: str) -> bool:
        nonlocal shared
        slug, _, name = entry.partition("/bank/")
        if entry not in foreign:
            path = locs.memories / slug / "bank" / name
            read = read_entry(path, slug) if name and is_safe_slug(slug) and path.is_file() else None
            if read is not None:
                foreign[entry] = is_foreign(read.cwd, slug, folders or {})
            else:
                if shared is None:
                    shared = _sharing_slugs(locs, folders or {})
                foreign[entry] = slug in shared
        return foreign[entry]

    for record in records:
        if not (record["entry"] and record["project"] in restricted and of_another_folder(record["entry"])):
            yield record


def _sharing_slugs(locs: Locations, folders: Folders) -> set[str]:
    """The slugs in scope whose entries were banked in a folder outside it, by the index (none known without one)."""
    from ..recall import index, query

    try:
        conn = index.connect(locs, create=False)
    except index.IndexUnavailable:
        return set()
    try:
        slugs = [slug for slug, wanted in folders.items() if wanted]
        return {slug for slug, cwd in query.folders_of(conn, slugs) if is_foreign(cwd, slug, folders)}
    except index.sqlite3.Error:
        return set()
    finally:
        conn.close()


def run(args: argparse.Namespace, locs: Locations) -> int:
    since = None
    if args.since:
        at = clock.parse_iso(args.since)
        if at is None:
            print(f"harnesslink history: error: --since {args.since!r} is not a date (YYYY-MM-DD or an ISO time)",
                  file=sys.stderr)
            return 2
        since = history.stamp(at)
    folders = folders_in_scope(args, locs)
    scope = None if folders is None else list(folders)

    def chosen() -> Iterator[dict[str, str]]:  # newest first, read from the file's end as they are printed
        records = history.newest(locs, projects=scope, entry=args.entry, since=since)
        return history.by_time(of_folders(locs, records, folders))

    def listed() -> Iterator[dict[str, str]]:
        return itertools.islice(chosen(), args.limit)  # by_time holds a window: the reading stops soon after

    if args.json:
        print_json(scope, listed())
        return 0
    records = listed()
    first = next(records, None)
    if first is None:
        where = "any project" if scope is None else ", ".join(scope) or "this folder"
        print(f"no history for {where}" + (f" matching {args.entry!r}" if args.entry else "")
              + (f" since {args.since}" if since else ""))
        return 0
    if args.entry:  # its lines of use come first: one read of the history for them, one for the records
        for entry, u in sorted(history.usage(chosen()).items()):
            print(use_line(entry, u))
    for record in itertools.chain([first], records):
        print(line(record))
    return 0


def print_json(scope: list[str] | None, records: Iterable[dict[str, str]]) -> None:
    """`json.dumps({"projects", "events", "use"}, indent=2)`, written as the records stream by."""
    use: dict[str, history.Use] = {}
    write = sys.stdout.write
    write('{\n  "projects": ' + _indented(scope) + ',\n  "events": [')
    count = 0
    for record in records:
        write(("," if count else "") + "\n    " + _indented(record, depth=2))
        history.note_use(use, record)
        count += 1
    uses = {entry: u.as_dict() for entry, u in sorted(use.items())}
    write(("\n  ]" if count else "]") + ',\n  "use": ' + _indented(uses) + "\n}\n")


def _indented(value: object, depth: int = 1) -> str:
    if isinstance(value, dict) and value and all(isinstance(v, str) for v in value.values()):  # a record, fast
        inner = "  " * (depth + 1)
        return ("{\n" + ",\n".join(f"{inner}{json.dumps(k)}: {json.dumps(v)}" for k, v in value.items())
                + "\n" + "  " * depth + "}")
    return json.dumps(value, indent=2).replace("\n", "\n" + "  " * depth)


def use_line(entry: str, use: history.Use) -> str:
    given, listed, opened = len(use.given), len(use.listed), len(use.opened)
    last = f", last on {use.last_used[:16].replace('T', ' ')}" if use.last_used else ""
    briefs = f", listed in {listed} brief{'s' * (listed != 1)}" if listed else ""
    return f"{entry}: given to {given} session{'s' * (given != 1)}{briefs}, opened by {opened}{last}"


def line(record: dict[str, str]) -> str:
    when = record["at"][:19].replace("T", " ")
    text = f"{when}  {record['event']:<11}  {record['actor'] or '?':<20}  {record['entry'] or record['project']}"
    if record["session"]:
        text += f"  session {record['session']}"
    if record["detail"]:
        text += f"  ({record['detail']})"
    return text
