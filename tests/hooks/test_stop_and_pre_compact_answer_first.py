"""The stop and pre-compact hooks answer first, then bank in a process the harness neither waits for nor
can kill, exactly once whatever kills it; the brief after a compaction still gives the session's state."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from contextlib import suppress
from pathlib import Path

import frontmatter
import pytest

from harnesslink_core import main
from harnesslink_core.banking import background
from harnesslink_core.banking.autobank import PassLock
from harnesslink_core.store.lock import process_gone
from memory_helpers import eventually, make_env
from tests.claude_builder import ClaudeSession
from tests.test_faults import KILL_AT, _recovered, _world
from hooks.test_hot_path import CORE, hook_run, startup_modules

ROOT = Path(__file__).resolve().parents[2]
CWD = "/work/app"
LONG = "The migration now runs in one transaction, so a failure leaves the schema as it was before. " * 4
ANSWERED_IN = 3.0  # seconds: the hook's whole process, on a loaded machine (a pass that waits for the lock takes 10)
SEARCHABLE_IN = 1.0  # seconds from the lock's release (at once, when no pass holds it) to `harnesslink recall` finding the turn

# what a pass's SIGKILL leaves behind: the file this test waits for, naming the process that is about to die
# (os.kill is looked up when the pass dies)
MARK_THE_KILL = """
import os, signal
real_kill = os.kill
def kill(pid, sig):
    if pid == os.getpid() and sig == signal.SIGKILL:
        with open(os.environ["KILLED_MARKER"] + ".part", "w") as f:
            f.write(str(pid))
        os.rename(os.environ["KILLED_MARKER"] + ".part", os.environ["KILLED_MARKER"])
    real_kill(pid, sig)
os.kill = kill
"""
HOOK_IN_PROCESS = """
from harnesslink_core.hooks import process_main
process_main([sys.argv[2], "--harness", "claude-code"])
"""
BANKING_EVENTS = ["stop", "pre-compact"]


def hook_process(env: dict[str, str], payload: dict, argv: list[str] | None = None, event: str = "stop"
                 ) -> tuple[subprocess.Popen, bytes, float]:
    """A hook as a harness runs it: a process group of its own, its JSON on stdin, its stdout and stderr
    read to their end. The process, what it printed and how long until both pipes closed."""
    started = time.monotonic()
    proc = subprocess.Popen(argv or [sys.executable, str(ROOT / "hooks" / event), "--harness", "claude-code"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            start_new_session=True)
    out, err = proc.communicate(json.dumps(payload).encode(), timeout=60)
    assert proc.returncode == 0 and err == b"", (proc.returncode, err)
    return proc, out, time.monotonic() - started


def finished_turn(home: Path, event: str = "stop") -> tuple[ClaudeSession, dict]:
    """A finished turn and the hook's payload: for the stop hook, one that only its signal settles (no
    end-of-turn line yet); for the pre-compact hook, which has no signal, one its end-of-turn line settles."""
    session = ClaudeSession(home, cwd=CWD)
    session.turn("Make the schema migration safe to interrupt", LONG,
                 tools=[("Edit", {"file_path": "db/migrate.py"})], closed=event != "stop")
    session.flush()
    payload = {"session_id": session.session_id, "cwd": CWD, "transcript_path": str(session.path)}
    if event == "stop":
        return session, {**payload, "hook_event_name": "Stop", "last_assistant_message": LONG.strip()}
    return session, {**payload, "hook_event_name": "PreCompact", "trigger": "auto", "custom_instructions": ""}


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


@pytest.mark.parametrize("event", BANKING_EVENTS)
def test_the_hook_answers_before_it_imports_the_pass(tmp_path, event):
    env = make_env(tmp_path)
    _, payload = finished_turn(Path(env["HOME"]), event)
    answered, after = hook_run(env, event, "--harness", "claude-code", payload=payload)
    extra = answered - startup_modules(env)
    assert extra <= CORE, sorted(extra - CORE)
    assert "harnesslink_core.banking.autobank" in after


@pytest.mark.parametrize("event", BANKING_EVENTS)
def test_the_hook_answers_while_another_pass_holds_the_lock_and_banks_once_it_is_free(
        event, locs, isolated_home, capsys):
    _, payload = finished_turn(isolated_home, event)
    lock = held_lock(locs)
    try:
        _, out, took = hook_process(hook_env(), payload, event=event)
        assert out == b"{}"
        assert took < ANSWERED_IN
        assert turn_keys(locs) == []  # the banking waits for the lock, the harness does not
    finally:
        lock.close()
    released = time.monotonic()
    assert eventually(lambda: recall_finds(capsys, "schema migration interrupt"), seconds=10)
    assert time.monotonic() - released < SEARCHABLE_IN


@pytest.mark.parametrize("event", BANKING_EVENTS)
def test_a_harness_that_kills_the_hooks_process_group_after_the_answer_loses_nothing(event, locs, isolated_home):
    _, payload = finished_turn(isolated_home, event)
    lock = held_lock(locs)
    try:
        proc, out, took = hook_process(hook_env(), payload, event=event)
        assert out == b"{}" and took < ANSWERED_IN
        with suppress(ProcessLookupError):  # nothing of ours is left in the group to kill
            os.killpg(proc.pid, signal.SIGKILL)
    finally:
        lock.close()
    assert eventually(lambda: len(turn_keys(locs)) == 1, seconds=10)
    time.sleep(0.5)  # a second entry would be written by now
    assert len(turn_keys(locs)) == 1


@pytest.mark.parametrize("event", BANKING_EVENTS)
@pytest.mark.parametrize("point", ["entry", "entry placed", "ledger", "MAIN.md", "summary", "state file", "index"])
def test_the_banking_after_the_answer_killed_at_each_write_point_loses_nothing_and_doubles_nothing(
        point, event, locs, isolated_home, tmp_path):
    session = _world(isolated_home)
    marker = tmp_path / "killed"
    env = dict(hook_env(), KILLED_MARKER=str(marker))
    # no transcript path: the hook's pass reads every transcript, and so reaches every write point
    payload = {"session_id": session.session_id, "cwd": CWD, "hook_event_name": "Stop" if event == "stop" else "PreCompact"}
    _, out, took = hook_process(env, payload, [sys.executable, "-c", MARK_THE_KILL + KILL_AT + HOOK_IN_PROCESS, point,
                                               event])
    assert out == b"{}" and took < ANSWERED_IN  # answered before the pass began, and so before it died
    assert eventually(marker.exists, seconds=30), f"the pass after the answer never reached {point}"
    # gone, not only marked: a temporary file of a writer still alive is not the recovering pass's to remove
    assert eventually(lambda: process_gone(int(marker.read_text())), seconds=10)
    _recovered(locs)


def test_the_brief_after_a_compaction_gives_the_state_the_transcript_has_whoever_held_the_lock(locs, isolated_home):
    """The pre-compact hook answers at once, and its pass may still wait for the lock when the compaction
    is over: the session-start hook that follows (`source: compact`) waits for it a moment and reads the
    session's transcript itself, so its brief gives the todos of the turn under way and the compaction."""
    session = ClaudeSession(isolated_home, cwd=CWD)
    session.turn("Plan the release of version two", LONG, tools=[(
        "TodoWrite", {"todos": [{"content": "tag v2", "status": "in_progress", "activeForm": "Tagging v2"}]})],
        closed=False)  # compacted in the middle of the turn, as an automatic compaction is
    session.flush()
    payload = {"session_id": session.session_id, "cwd": CWD, "transcript_path": str(session.path)}
    background.mark_pass(locs)  # a pass ran a moment ago: session start has no pass of its own due
    lock = held_lock(locs)  # the previous turn's stop hook, still at work
    try:
        _, out, took = hook_process(hook_env(), {**payload, "hook_event_name": "PreCompact", "trigger": "auto"},
                                    event="pre-compact")
        assert out == b"{}" and took < ANSWERED_IN
        session.compaction()
        session.flush()
        started = {}
        brief = threading.Thread(target=lambda: started.update(done=subprocess.run(
            [sys.executable, str(ROOT / "hooks" / "session-start"), "--harness", "claude-code"], capture_output=True,
            input=json.dumps({**payload, "hook_event_name": "SessionStart", "source": "compact"}).encode(),
            env=hook_env(), timeout=60)))
        brief.start()
        time.sleep(1.0)  # the compaction's model call is over; the stop hook's pass still holds the lock
    finally:
        lock.close()
    brief.join()
    done = started["done"]
    assert done.returncode == 0 and done.stderr == b""
    context = json.loads(done.stdout).get("hookSpecificOutput", {}).get("additionalContext", "")
    assert "This session's saved state" in context
    assert "tag v2" in context
    assert "Compaction" in context
