"""`python install.py`: the private environment, the wiring of every harness found, autobank, backfill.

Everything is planned before anything is written: a harness whose file we
must not touch is refused (with a hint) before the environment is made, and
`--dry-run` prints the plan as diffs and stops there.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from ..errors import Refused
from ..paths import Locations, locations
from ..safefile import read_regular_text
from . import environment
from .base import wirings
from .files import FileChange, apply, atomic_write, backup_path

WIRINGS = wirings()

BACKFILL_DAYS = 30


@dataclass
class Plan:
    name: str
    why: str  # why this harness is wired: detected by…, or asked for
    changes: list[FileChange] = field(default_factory=list)
    refused: Refused | None = None


def add_common_arguments(parser: argparse.ArgumentParser, *, harness_help: str) -> None:
    """--dry-run and --harness, the same for install.py and uninstall.py."""
    parser.add_argument("--dry-run", action="store_true", help="show the diff of every file it would change; change nothing")
    parser.add_argument("--harness", action="append", choices=list(WIRINGS), help=harness_help)


DESCRIPTION = "Wire HarnessLink's memory hooks into Claude Code, Codex, pi and omp."


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="install.py", description=DESCRIPTION)
    add_arguments(parser)
    return parser


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """install.py's options, for install.py and for `harnesslink install`."""
    add_common_arguments(parser, harness_help="wire only this harness, even when it was not detected (repeatable)")
    parser.add_argument(
        "--no-venv",
        action="store_true",
        help="run the hooks with this Python instead of a private environment (development, tests)",
    )
    parser.add_argument("--no-backfill", action="store_true", help="do not start the first backfill")
    parser.add_argument("--no-mcp", action="store_true",
                        help="wire the hooks only, not the memory tools (MCP server / native tools); "
                             "takes out tools an earlier install wired")


def choose(locs: Locations, asked: Sequence[str] | None) -> tuple[list[Plan], list[str]]:
    """The harnesses to wire, and a line for each one skipped."""
    if asked:
        return [Plan(name, "asked for") for name in WIRINGS if name in asked], []
    plans, skipped = [], []
    for name, wiring in WIRINGS.items():
        why = wiring.detect(locs)
        if why:
            plans.append(Plan(name, why))
        else:
            skipped.append(f"{name}: skipped, not found here (use --harness {name} to wire it anyway)")
    return plans, skipped


def plan(locs: Locations, plans: list[Plan], hook_exe: Path, tools: bool = True) -> None:
    for p in plans:
        try:
            p.changes = WIRINGS[p.name].plan_install(locs, hook_exe, tools)
        except Refused as e:
            p.refused = e


def missing_folders(path: Path) -> list[Path]:
    """The folders above `path` that do not exist yet, innermost first."""
    missing = []
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    return missing


MANIFEST_BYTES = 1024 * 1024


def manifest_path(locs: Locations) -> Path:
    return locs.agent_dir / "install.json"


def read_manifest(locs: Locations) -> dict[str, list[str]]:
    text = read_regular_text(str(manifest_path(locs)), MANIFEST_BYTES)  # never a FIFO's: it would hold install
    try:
        value = json.loads(text) if text is not None else None
    except ValueError:
        return {"created_folders": []}
    folders = value.get("created_folders") if isinstance(value, dict) else None
    return {"created_folders": [str(f) for f in folders] if isinstance(folders, list) else []}


def record_created(locs: Locations, folders: list[Path]) -> None:
    """Remember folders we created in other programs' homes, so uninstall can remove them if left empty."""
    manifest = read_manifest(locs)
    known = set(manifest["created_folders"])
    new = [str(f) for f in folders if str(f) not in known]
    if not new:
        return
    manifest["created_folders"] += new
    atomic_write(manifest_path(locs), (json.dumps(manifest, indent=2) + "\n").encode("utf-8"))


def describe(change: FileChange) -> str:
    if change.after is None:
        return f"removed {change.path}"
    if change.before is None:
        return f"created {change.path}"
    backup = backup_path(change.path)
    kept = f" (original kept as {backup.name})" if change.backup else ""
    return f"updated {change.path}{kept}"


def turn_on_autobank(env: environment.Environment, names: list[str], base: Mapping[str, str]) -> str:
    result = subprocess.run(
        [str(env.python), "-m", "harnesslink_core.wiring.autobank_setting", *names],
        capture_output=True,
        text=True,
        env=environment.variables(env, environment.CODE_ROOT, base),
    )
    if result.returncode != 0:
        return (f"cloud.autobank (which harnesses are banked, locally): NOT written "
                f"({(result.stderr.strip().splitlines() or ['unknown error'])[-1]})")
    return (f"cloud.autobank: {result.stdout.strip()} (the harnesses whose turns are banked into the local memory "
            "tree; the key's name is the one the HarnessLink service shares in config.yml)")


def start_backfill(locs: Locations, env: environment.Environment, base: Mapping[str, str]) -> str:
    if not env.cli.exists():
        return f"backfill: not started ({env.cli} is missing)"
    locs.log_file.parent.mkdir(parents=True, exist_ok=True)
    with open(locs.log_file, "ab") as log:
        subprocess.Popen(
            [str(env.cli), "backfill", "--days", str(BACKFILL_DAYS)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            cwd=locs.agent_dir,
            env=environment.variables(env, environment.CODE_ROOT, base),
            start_new_session=True,  # detached: install returns now, the backfill goes on
        )
    return f"backfill: started in the background (last {BACKFILL_DAYS} days); progress in {locs.log_file}"


def main(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None, out: TextIO | None = None) -> int:
    return run(build_parser().parse_args(argv), env, out)


def run(args: argparse.Namespace, env: Mapping[str, str] | None = None, out: TextIO | None = None) -> int:
    """Install as `args` (install.py's options) say; `env` stands for os.environ."""
    base_env = dict(os.environ if env is None else env)
    locs = locations(base_env)
    say = _printer(out or sys.stdout)

    plans, skipped = choose(locs, args.harness)
    plan(locs, plans, environment.hook_executable(locs), tools=not args.no_mcp)
    wired = [p for p in plans if p.refused is None]
    refused = [p for p in plans if p.refused is not None]

    if args.dry_run:
        say("HarnessLink install --dry-run: nothing is changed")
        say(f"  environment: would {'make' if not environment.is_venv(environment.folder(locs)) else 'refresh'} "
            f"{environment.folder(locs)}{' (wrappers, --no-venv)' if args.no_venv else ''}")
        for p in wired:
            if not p.changes:
                say(f"  {p.name}: already wired ({WIRINGS[p.name].target(locs)})")
            for change in p.changes:
                say(f"  {p.name}: would change {change.path} ({p.why})")
                say(change.diff().rstrip("\n"))
        _report_problems(say, refused, skipped)
        if wired:
            say(f"  cloud.autobank: would turn on {', '.join(p.name for p in wired)} (the harnesses whose turns are "
                "banked into the local memory tree; the key's name is the one the HarnessLink service shares)")
            if not args.no_backfill:
                say(f"  backfill: would start `harnesslink backfill --days {BACKFILL_DAYS}` in the background")
        return 1 if refused else 0

    if not wired:
        say("HarnessLink install: nothing to wire")
        _report_problems(say, refused, skipped)
        if not plans:
            say("hint: none of Claude Code, Codex, pi or omp was found; name one with --harness")
        return 1

    try:
        if args.no_venv:
            env_ = environment.write_wrappers(locs, environment.CODE_ROOT)
        else:
            with environment.package_source() as source:
                env_ = environment.create_venv(locs, source)
    except environment.EnvironmentFailed as e:
        say(f"HarnessLink install failed: {e}")
        say(e.hint)
        say("nothing was wired")
        return 1

    say("HarnessLink install")
    say(f"  environment: {env_.folder}{' (wrappers, --no-venv)' if args.no_venv else ''}")
    created: list[Path] = []
    for p in wired:
        for change in p.changes:
            created += missing_folders(change.path)
            apply(change)
        if p.changes:
            say(f"  {p.name}: wired ({p.why}); " + "; ".join(describe(c) for c in p.changes))
        else:
            say(f"  {p.name}: already wired, nothing changed ({WIRINGS[p.name].target(locs)})")
    record_created(locs, created)
    _report_problems(say, refused, skipped)

    say("  " + turn_on_autobank(env_, [p.name for p in wired], base_env))
    if not args.no_backfill:
        say("  " + start_backfill(locs, env_, base_env))

    todo = [f"{p.name}: {note}" for p in wired for note in WIRINGS[p.name].notes(locs, bool(p.changes))]
    if todo:
        say("")
        say("Still to do / good to know:")
        for line in todo:
            say(f"  - {line}")
    say("")
    say(f"Preview what a prompt would receive: {env_.hook_exe} user-prompt-submit --harness <id> --dry-run --prompt '...'")
    return 1 if refused else 0


def _printer(out: TextIO) -> Callable[[str], None]:
    return lambda text: print(text, file=out)


def _report_problems(say: Callable[[str], None], refused: list[Plan], skipped: list[str]) -> None:
    for p in refused:
        assert p.refused is not None
        say(f"  {p.name}: refused, {p.refused}")
        say(f"    {p.refused.hint}")
    for line in skipped:
        say(f"  {line}")
