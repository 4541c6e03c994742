"""`python uninstall.py`: take out exactly what install added, and nothing else.

Our hook entries and extension files go; a settings file whose remaining
content equals the backup taken before our first change gets the backup's
exact bytes back. The private environment goes too, unless a harness could not
be unwired (its hooks still point at it). The memory tree stays unless --purge.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TextIO

from ..errors import Refused
from ..paths import Locations, locations
from . import environment
from .files import FileChange, apply, backup_path
from .installer import WIRINGS, add_common_arguments, manifest_path, read_manifest


DESCRIPTION = "Remove HarnessLink's hooks from every harness, and its private environment."


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="uninstall.py", description=DESCRIPTION)
    add_arguments(parser)
    return parser


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """uninstall.py's options, for uninstall.py and for `harnesslink uninstall`."""
    add_common_arguments(parser, harness_help="unwire only this harness (repeatable); the environment stays for the others")
    parser.add_argument(
        "--purge",
        action="store_true",
        help="also delete the whole agent dir: memories, ledger, index, config and logs",
    )


def describe(change: FileChange) -> str:
    if change.after is None:
        return f"removed {change.path}"
    if change.drop_backup:
        return f"restored {change.path} to its original bytes"
    return f"removed our hooks from {change.path}"


def main(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None, out: TextIO | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.purge and args.harness:
        parser.error(PURGE_WITH_HARNESS)
    return run(args, env, out)


PURGE_WITH_HARNESS = "--purge removes everything; it cannot be combined with --harness"


def run(args: argparse.Namespace, env: Mapping[str, str] | None = None, out: TextIO | None = None) -> int:
    """Uninstall as `args` (uninstall.py's options) say; `env` stands for os.environ."""
    locs = locations(dict(os.environ if env is None else env))
    stream = out or sys.stdout

    def say(text: str) -> None:
        print(text, file=stream)

    names = [n for n in WIRINGS if not args.harness or n in args.harness]
    planned: list[tuple[str, list[FileChange]]] = []
    refused: list[tuple[str, Refused]] = []
    for name in names:
        try:
            planned.append((name, WIRINGS[name].plan_uninstall(locs)))
        except Refused as e:
            refused.append((name, e))
    whole = not args.harness
    keep_env = bool(refused) or not whole

    say(f"HarnessLink uninstall{' --dry-run: nothing is changed' if args.dry_run else ''}")
    for name, changes in planned:
        if not changes:
            say(f"  {name}: nothing of ours in {WIRINGS[name].target(locs)}")
        for change in changes:
            if args.dry_run:
                say(f"  {name}: would {describe(change)}")
                say(change.diff().rstrip("\n"))
            else:
                apply(replace(change, backup=False))  # taking our part out is no reason for a new backup
                backup = backup_path(Path(os.path.realpath(change.path)))
                kept = (f"; kept {backup.name}, the file as it was before install: it has changed since, so "
                        "its original stays for you to compare (delete it when you like)") if backup.exists() else ""
                say(f"  {name}: {describe(change)}{kept}")
    for name, problem in refused:
        say(f"  {name}: refused, {problem}")
        say(f"    {problem.hint}")

    verb = "would remove" if args.dry_run else "removed"
    if keep_env:
        if whole:
            say(f"  environment: kept {environment.folder(locs)}, because hooks that use it are still wired")
    else:
        present = environment.folder(locs).exists()
        if not args.dry_run:
            environment.remove(locs)
            _remove_created_folders(locs)
            manifest_path(locs).unlink(missing_ok=True)
        say(f"  environment: {verb} {environment.folder(locs)}" if present
            else f"  environment: none at {environment.folder(locs)}")
    if args.purge and not refused:
        present = locs.agent_dir.exists()
        if not args.dry_run:
            shutil.rmtree(locs.agent_dir, ignore_errors=True)
            _remove_if_empty(locs.agent_dir.parent)
        say(f"  agent dir: {verb} {locs.agent_dir} (memories, ledger, index, config, logs)" if present
            else f"  agent dir: none at {locs.agent_dir}, nothing to remove")
    elif whole:
        say(f"  memories: kept in {locs.memories}, with the ledger, index, config and logs beside it: your memory "
            "is yours (uninstall.py --purge deletes the agent dir)")
    return 1 if refused else 0


def _remove_if_empty(folder: Path) -> None:
    """`~/.superpi`, once the agent dir has gone and nothing else of HarnessLink's is in it."""
    try:
        folder.rmdir()
    except OSError:
        pass


def _remove_created_folders(locs: Locations) -> None:
    """Folders install created in other programs' homes, removed if nothing else was put there since."""
    for folder in sorted(read_manifest(locs)["created_folders"], key=len, reverse=True):
        try:
            Path(folder).rmdir()
        except OSError:
            pass  # not empty (the harness wrote there since) or already gone
