"""`harnesslink forget`: remove bank entries and make sure their turns never come back."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from ..control import forget
from ..paths import Locations
from ..store.scope import is_safe_slug, project_folders, project_slug
from .options import whole_number


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "forget", help="Remove bank entries (file, index row, MAIN.md and summary lines) and never bank them again",
        description="Every given criterion must hold. --query and --before look in this folder's project unless "
                    "--project or --all says otherwise; entry paths, ids and --session look everywhere.")
    parser.add_argument("entries", nargs="*", help="entry paths, file names, ids (2026-08-28T10-30-00-000Z) or turn keys")
    parser.add_argument("--query", help="the entries these words name, as surely as the prompt hook would inject them "
                                         "(best -k); --loose takes the recall search's best -k, however weak")
    parser.add_argument("--loose", action="store_true", help="with --query: do not ask for the prompt hook's evidence")
    parser.add_argument("-k", type=whole_number(1, 1000), default=5, help="with --query: how many matches (default 5)")
    parser.add_argument("--session", help="every entry of this session id")
    parser.add_argument("--before", help="entries of turns that finished before this date (YYYY-MM-DD or ISO time)")
    parser.add_argument("--project", action="append", help="only this project: a folder path or a slug (repeatable)")
    parser.add_argument("--all", action="store_true", help="look in every project")
    parser.add_argument("--cwd", help="the project folder for --query/--before (default: the current directory)")
    parser.add_argument("--dry-run", action="store_true", help="show what would be forgotten; change nothing")
    parser.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    parser.add_argument("--json", action="store_true", help="print JSON for machines (implies no prompt: needs --yes)")


def _projects(args: argparse.Namespace, locs: Locations) -> list[str] | None:
    if args.project:
        slugs = []
        for value in args.project:
            value = value.strip()
            if value.startswith("~"):
                value = str(locs.home) + value[1:]
            slug = value if is_safe_slug(value) and value.startswith("--") else project_slug(os.path.abspath(value))
            slugs.append(slug)
        return slugs
    if args.all or not (args.query or args.before):
        return None
    own = os.path.abspath(args.cwd or os.getcwd())
    return list(project_folders(locs, own))  # this project: every slug of its repository


def run(args: argparse.Namespace, locs: Locations) -> int:
    projects = _projects(args, locs)
    own = os.path.abspath(args.cwd or os.getcwd())
    folders = project_folders(locs, own) if projects and projects[0] == project_slug(own) else None
    targets = forget.select(locs, ids=args.entries, query=args.query, session=args.session, before=args.before,
                            projects=projects, limit=args.k, folders=folders, loose=args.loose)
    if args.json and (args.dry_run or not targets):
        print(json.dumps({"dry_run": True, "targets": [t.as_dict() for t in targets]}, indent=2))
        return 0 if targets else 1
    if not targets:
        print("nothing to forget: no entry matches" + (" surely enough (--loose takes weaker matches)"
                                                        if args.query and not args.loose else ""))
        return 1
    if not args.json:
        verb = "would forget" if args.dry_run else "will forget"
        print(f"{verb} {len(targets)} {'entry' if len(targets) == 1 else 'entries'}:")
        for t in targets:
            when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(t.ts))
            print(f"  {when} · {t.harness or 'unknown'} · {t.title}\n      {t.rel_path}"
                  + (f"\n      {t.evidence}" if t.evidence else ""))
    if args.dry_run:
        print("dry run: nothing was changed")
        return 0
    if not args.yes:
        if args.json:
            print("error: --json needs --yes (there is no one to ask)", file=sys.stderr)
            return 2
        try:
            answer = input(f"Forget {'it' if len(targets) == 1 else f'these {len(targets)}'}? [y/N] ")
        except EOFError:
            answer = ""
        if answer.strip().lower() not in ("y", "yes"):
            print("nothing forgotten")
            return 1
    why = forget.criteria(ids=args.entries, query=args.query, session=args.session, before=args.before,
                          projects=projects)
    summary = forget.forget(locs, targets, why=why)
    if args.json:
        print(json.dumps(summary.as_dict(), indent=2))
    else:
        print(f"forgot {len(summary.forgotten)} {'entry' if len(summary.forgotten) == 1 else 'entries'}: "
              f"files removed, {summary.index_rows} index rows, {summary.main_lines} MAIN.md lines, "
              f"{summary.summary_lines} summary lines, {summary.checkpoints} state-file checkpoints; "
              f"their turns will not be banked again")
        for t, why in summary.failed:
            print(f"could not remove {t.rel_path}: {why} (it stays out of search and briefs)", file=sys.stderr)
        print(forget.CLOUD_NOTE)
    return 1 if summary.failed else 0
