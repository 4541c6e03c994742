"""`harnesslink resume`: this project's sessions across harnesses, and continuing one cheaply in any harness.

    harnesslink resume [--cwd DIR] [--harness H] [-n N] [--json]
    harnesslink resume SESSION [--native | --fresh] [--in HARNESS] [--no-launch]

The listing shows each session's native resume command and what resuming it would
replay (sessions.py). From 50,000 tokens on, a fresh session that starts from the
brief and a handoff of this session's state is offered beside it, with its size.
`--fresh` (same harness) and `--in HARNESS` (another one) prepare that handoff
(handoff.py) for the next session start of the target harness in the session's
folder, then start that harness there; `--native` runs the harness's own resume
in the right folder. `--no-launch` prepares and prints the command, starting nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import time

from ..errors import ResumeError
from ..log import error as log_error
from ..paths import Locations
from ..sessions import handoff, handoff_build
from ..sessions.base import BRIEF_THRESHOLD, HARNESSES, Session, find_by_prefix, list_sessions, source
from .options import whole_number

DEFAULT_LIMIT = 10


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "resume", help="List this project's sessions with their resume cost, or continue one in any harness",
        description="Without SESSION: list this folder's recent sessions of every harness, newest first, with the "
                    "native resume command and the estimated replay cost. With SESSION (an id or a unique prefix): "
                    "resume it natively, or hand its state over to a fresh session of the same or another harness.")
    parser.add_argument("session", nargs="?", help="a session id or a unique prefix of one")
    parser.add_argument("--cwd", default=None, help="the project folder to list (default: the current directory)")
    parser.add_argument("--harness", choices=HARNESSES, default=None, help="list only this harness's sessions")
    parser.add_argument("-n", type=whole_number(1, 1000), default=DEFAULT_LIMIT, help=f"how many sessions (default {DEFAULT_LIMIT})")
    parser.add_argument("--json", action="store_true", help="print JSON for machines")
    how = parser.add_mutually_exclusive_group()
    how.add_argument("--native", action="store_true", help="run the harness's own resume in the session's folder")
    how.add_argument("--fresh", action="store_true", help="start a new session of the same harness with the handoff")
    parser.add_argument("--in", dest="target", choices=HARNESSES, default=None,
                        help="start a new session of this harness with the handoff (cross-harness handoff)")
    parser.add_argument("--no-launch", action="store_true", help="prepare everything, print the command, start nothing")


def run(args: argparse.Namespace, locs: Locations) -> int:
    try:
        if args.session is None:
            if args.native or args.fresh or args.target or args.no_launch:
                raise ResumeError("--native, --fresh, --in and --no-launch need a SESSION (an id or a prefix)")
            return list_command(args, locs)
        return resume_command(args, locs)
    except ResumeError as exc:
        print(f"harnesslink resume: {exc}", file=sys.stderr)
        return 2


# --- the listing ---------------------------------------------------------------


def list_command(args: argparse.Namespace, locs: Locations) -> int:
    cwd = os.path.abspath(args.cwd or os.getcwd())
    harnesses = (args.harness,) if args.harness else HARNESSES
    sessions = list_sessions(locs, cwd, harnesses=harnesses, limit=max(1, args.n))
    rows = [describe(locs, s) for s in sessions]
    if args.json:
        json.dump({"cwd": cwd, "threshold": BRIEF_THRESHOLD, "sessions": rows}, sys.stdout, indent=2,
                  ensure_ascii=False)
        print()
        return 0
    if not rows:
        print(f"No sessions of {', '.join(harnesses)} found for {cwd}.")
        return 0
    print(f"Sessions in {cwd}, newest first:\n")
    for row in rows:
        print(_format_row(row))
    return 0


def describe(locs: Locations, session: Session) -> dict:
    """One session as the listing shows it (and as `--json` prints it)."""
    row = {
        "harness": session.harness,
        "session_id": session.session_id,
        "cwd": session.cwd,
        "title": session.title,
        "last_activity": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(session.last_activity)),
        "turns_banked": session.turns_banked,
        "replay_tokens": session.replay_tokens,
        "replay_basis": session.replay.basis,
        "resume_command": handoff_build.native_command(session),
        "resume_argv": source(session.harness).resume_argv(session),
        "run_in": session.cwd,
        "transcript": str(session.path),
        "brief_offered": session.brief_offered,
    }
    if session.brief_offered:
        row["fresh_command"] = f"harnesslink resume {session.session_id} --fresh"
        try:
            text = handoff_build.build(locs, session, session.harness)
            row["fresh_tokens"] = handoff_build.fresh_tokens(locs, session, session.harness, text)
        except Exception as exc:  # noqa: BLE001 - the listing still stands without this one figure
            log_error(locs, f"resume: could not size the handoff of {session.session_id}", exc)
            row["fresh_tokens"] = None
    return row


def _format_row(row: dict) -> str:
    when = row["last_activity"].replace("T", " ").replace("Z", " UTC")
    lines = [f"  {row['harness']}  {row['session_id']}   last active {when}   {row['turns_banked']} turns banked",
             f"    \"{row['title'] or '(no prompt yet)'}\""]
    replay = f"    replay ≈ {row['replay_tokens']:,} tokens"
    if row["brief_offered"]:
        replay += f"  [{BRIEF_THRESHOLD:,}+: a fresh start is cheaper]"
    lines.append(replay)
    lines.append(f"    native: {row['resume_command']}")
    if row["brief_offered"]:
        size = f"≈ {row['fresh_tokens']:,} tokens" if row["fresh_tokens"] is not None else "size unknown, see the log"
        lines.append(f"    fresh:  {row['fresh_command']}   (a new {row['harness']} session with the brief and this "
                     f"session's state: {size})")
    return "\n".join(lines) + "\n"


# --- resuming one session ------------------------------------------------------


def find_session(locs: Locations, prefix: str) -> Session:
    matches = find_by_prefix(locs, prefix)
    exact = [s for s in matches if s.session_id.lower() == prefix.strip().lower()]
    if len(exact) == 1:
        return exact[0]
    if not matches:
        raise ResumeError(f"no session id starts with {prefix!r}; `harnesslink resume` lists this folder's sessions")
    if len(matches) > 1:
        shown = "\n".join(f"  {s.harness}  {s.session_id}  {s.cwd}  \"{s.title}\"" for s in matches[:10])
        more = f"\n  … and {len(matches) - 10} more" if len(matches) > 10 else ""
        raise ResumeError(f"{prefix!r} matches {len(matches)} sessions; give more of the id:\n{shown}{more}")
    return matches[0]


def resume_command(args: argparse.Namespace, locs: Locations) -> int:
    session = find_session(locs, args.session)
    if not os.path.isdir(session.cwd):
        raise ResumeError(f"the folder of {session.harness} session {session.session_id} no longer exists: "
                          f"{session.cwd}\n(its transcript is {session.path})")
    if args.native and args.target and args.target != session.harness:
        raise ResumeError("--native resumes in the session's own harness; use --in alone for a handoff")
    if args.target or args.fresh:
        return hand_over(locs, session, args.target or session.harness, launch=not args.no_launch)
    if args.native:
        return native(session, launch=not args.no_launch)
    return choose(locs, session, launch=not args.no_launch)


def native(session: Session, *, launch: bool) -> int:
    argv = source(session.harness).resume_argv(session)
    command = handoff_build.native_command(session)
    if not launch:
        print(command)
        return 0
    return _launch(session.harness, argv, session.cwd)


def hand_over(locs: Locations, session: Session, target: str, *, launch: bool) -> int:
    executable = _executable(target)
    if executable is None and launch:
        raise ResumeError(_not_installed(target))
    text = prepare(locs, session, target)
    argv = source(target).fresh_argv()
    command = f"cd {shlex.quote(session.cwd)} && {shlex.join(argv)}"
    tokens = -(-len(text) // 4)
    where = "the next session" if target == session.harness else f"the next {target} session"
    print(f"Handoff of {session.harness} session {session.session_id} prepared for {where} started in "
          f"{session.cwd} ({len(text):,} characters, ≈ {tokens:,} tokens; taken once, expires in 24 hours).")
    if executable is None:
        print(f"warning: {_not_installed(target)}", file=sys.stderr)
    if not launch:
        print(f"Run:  {command}")
        return 0
    return _launch(target, argv, session.cwd)


def prepare(locs: Locations, session: Session, target: str) -> str:
    """Bank what the session finished (so the handoff can point at its entries), then save the handoff."""
    from ..control.exclusion import is_excluded

    reason = is_excluded(locs, session.cwd)
    if reason:
        raise ResumeError(f"{session.cwd} is kept out of HarnessLink memory ({reason}), so nothing is handed over; "
                          f"resume it natively: {handoff_build.native_command(session)}")
    try:
        from ..banking.autobank import run_pass

        run_pass(locs, paths=[session.path], harnesses=[session.harness], wait=5.0)
    except Exception as exc:  # noqa: BLE001 - the handoff reads the transcript itself; banking only adds paths
        log_error(locs, f"resume: the pass before the handoff of {session.session_id} failed", exc)
    text = handoff_build.build(locs, session, target)
    if not text:
        raise ResumeError("nothing to hand over: the session has no prompt yet")
    handoff.save(locs.agent_dir, session.cwd, target, text, {
        "harness": session.harness, "session_id": session.session_id, "transcript": str(session.path)})
    return text


def choose(locs: Locations, session: Session, *, launch: bool) -> int:
    """No flag: ask on a terminal, with both costs; otherwise say what each choice would do."""
    text = handoff_build.build(locs, session, session.harness)
    fresh = handoff_build.fresh_tokens(locs, session, session.harness, text)
    default = "f" if session.brief_offered else "n"
    print(f"{session.harness} session {session.session_id} in {session.cwd}\n  \"{session.title}\"")
    print(f"  [n] native resume, replays ≈ {session.replay_tokens:,} tokens: {handoff_build.native_command(session)}")
    print(f"  [f] fresh {session.harness} session with the brief and this session's state: ≈ {fresh:,} tokens "
          f"(harnesslink resume {session.session_id} --fresh)")
    if not (launch and sys.stdin.isatty() and sys.stdout.isatty()):
        print(f"Nothing started. Pass --native or --fresh (or --in HARNESS){'' if launch else ' without --no-launch'}"
              f"; {'fresh' if default == 'f' else 'native'} is the cheaper here.")
        return 0
    answer = input(f"Choice [n/f/q, default {default}]: ").strip().lower() or default
    if answer.startswith("n"):
        return native(session, launch=True)
    if answer.startswith("f"):
        return hand_over(locs, session, session.harness, launch=True)
    return 0


def _executable(harness: str) -> str | None:
    return shutil.which(source(harness).fresh_argv()[0])


def _not_installed(harness: str) -> str:
    return f"{harness} is not installed here (`{source(harness).fresh_argv()[0]}` is not on PATH)"


def _launch(harness: str, argv: list[str], cwd: str) -> int:
    executable = _executable(harness)
    if executable is None:
        raise ResumeError(_not_installed(harness))
    print(f"Starting: cd {shlex.quote(cwd)} && {shlex.join(argv)}", flush=True)
    return subprocess.call([executable, *argv[1:]], cwd=cwd)
