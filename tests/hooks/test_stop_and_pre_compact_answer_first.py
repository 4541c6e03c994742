"""The stop hook answers first, then banks the finished turn in a process the harness neither waits for
nor can kill, exactly once whatever kills it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from contextlib import suppress
from pathlib import Path

import frontmatter
import pytest

from harnesslink_core import main
from harnesslink_core.banking.autobank import PassLock
from memory_helpers import eventually, make_env
from tests.claude_builder import ClaudeSession
from tests.test_faults import KILL_AT, _recovered, _world
from hooks.test_hot_path import CORE, hook_run, startup_modules

ROOT = Path(__file__).resolve().parents[2]
CWD = "/work/app"
LONG = "The migration now runs in one transaction, so a failure leaves the schema as it was before. " * 4
ANSWERED_IN = 3.0  # seconds: the hook's whole process, on a loaded machine (a pass that waits for the lock takes 10)
SEARCHABLE_IN = 1.0  # seconds from the lock's release (at once, when no pass holds it) to `harnesslink recall` finding the turn

# what a pass's SIGKILL leaves behind: the file this test waits for (os.kill is looked up when the pass dies)
MARK_THE_KILL = """
import os, signal
real_kill = os.kill
def kill(pid, sig):
    if pid == os.getpid() and sig == signal.SIGKILL:
        open(os.environ["KILLED_MARKER"], "w").close()
    real_kill(pid, sig)
os.kill = kill
"""
STOP_HOOK = """
from harnesslink_core.hooks import process_main
process_main(["stop", "--harness", "claude-code"])
"""


def stop_hook(env: dict[str, str], payload: dict, argv: list[str] | None = None) -> tuple[subprocess.Popen, bytes, float]:
    """The stop hook as a harness runs it: a process group of its own, its JSON on stdin, its stdout and
    stderr read to their end. The process, what it printed and how long until both pipes closed."""
    started = time.monotonic()
    proc = subprocess.Popen(argv or [sys.executable, str(ROOT / "hooks" / "stop"), "--harness", "claude-code"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            start_new_session=True)
    out, err = proc.communicate(json.dumps(payload).encode(), timeout=60)
    assert proc.returncode == 0 and err == b"", (proc.returncode, err)
    return proc, out, time.monotonic() - started


def finished_turn(home: Path) -> tuple[ClaudeSession, dict]:
    """A turn that only the stop signal settles (no end-of-turn line yet), and the Stop hook's payload."""
    session = ClaudeSession(home, cwd=CWD)
    session.turn("Make the schema migration safe to interrupt", LONG,
                 tools=[("Edit", {"file_path": "db/migrate.py"})], closed=False)
    session.flush()
    return session, {"session_id": session.session_id, "cwd": CWD, "transcript_path": str(session.path),
                     "hook_event_name": "Stop", "last_assistant_message": LONG.strip()}


def held_lock(locs) -> PassLock:
    """Another pass at work: it holds the lock every writer of the bank takes."""
    locs.agent_dir.mkdir(parents=True, exist_ok=True)
    lock = PassLock(locs.pass_lock)
    assert lock.acquire(0)
    return lock


def hook_env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(ROOT))


def turn_keys(locs) -> list[str]:
    return [frontmatter.load(p)["turn_key"] for p in locs.memories.glob("*/bank/*.md")]


def recall_finds(capsys, words: str) -> bool:
    assert main.main(["recall", "--all", "--json", words]) == 0
    return "make-the-schema-migration-safe" in capsys.readouterr().out


def test_the_stop_hook_answers_before_it_imports_the_pass(tmp_path):
    env = make_env(tmp_path)
    _, payload = finished_turn(Path(env["HOME"]))
    answered, after = hook_run(env, "stop", "--harness", "claude-code", payload=payload)
    extra = answered - startup_modules(env)
    assert extra <= CORE, sorted(extra - CORE)
    assert "harnesslink_core.banking.autobank" in after


def test_the_stop_hook_answers_while_another_pass_holds_the_lock_and_banks_once_it_is_free(locs, isolated_home, capsys):
    _, payload = finished_turn(isolated_home)
    lock = held_lock(locs)
    try:
        _, out, took = stop_hook(hook_env(), payload)
        assert out == b"{}"
        assert took < ANSWERED_IN
        assert turn_keys(locs) == []  # the banking waits for the lock, the harness does not
    finally:
        lock.close()
    released = time.monotonic()
    assert eventually(lambda: recall_finds(capsys, "schema migration interrupt"), seconds=10)
    assert time.monotonic() - released < SEARCHABLE_IN


def test_a_harness_that_kills_the_hooks_process_group_after_the_answer_loses_nothing(locs, isolated_home):
    _, payload = finished_turn(isolated_home)
    lock = held_lock(locs)
    try:
        proc, out, took = stop_hook(hook_env(), payload)
        assert out == b"{}" and took < ANSWERED_IN
        with suppress(ProcessLookupError):  # nothing of ours is left in the group to kill
            os.killpg(proc.pid, signal.SIGKILL)
    finally:
        lock.close()
    assert eventually(lambda: len(turn_keys(locs)) == 1, seconds=10)
    time.sleep(0.5)  # a second entry would be written by now
    assert len(turn_keys(locs)) == 1


@pytest.mark.parametrize("point", ["entry", "entry placed", "ledger", "MAIN.md", "summary", "state file", "index"])
def test_the_banking_after_the_answer_killed_at_each_write_point_loses_nothing_and_doubles_nothing(
        point, locs, isolated_home, tmp_path):
    session = _world(isolated_home)
    marker = tmp_path / "killed"
    env = dict(hook_env(), KILLED_MARKER=str(marker))
    # no transcript path: the stop hook's pass reads every transcript, and so reaches every write point
    payload = {"session_id": session.session_id, "cwd": CWD, "hook_event_name": "Stop"}
    _, out, took = stop_hook(env, payload, [sys.executable, "-c", MARK_THE_KILL + KILL_AT + STOP_HOOK, point])
    assert out == b"{}" and took < ANSWERED_IN  # answered before the pass began, and so before it died
    assert eventually(marker.exists, seconds=30), f"the pass after the answer never reached {point}"
    _recovered(locs)
