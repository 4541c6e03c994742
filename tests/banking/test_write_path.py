"""The write path under attack (SPEC §5): a huge or slow transcript holds no other session hostage,
and a turn that could not be written is banked by the very next pass."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from harnesslink_core.banking import autobank, background
from harnesslink_core.banking.autobank import StopSignal, run_pass
from harnesslink_core.harnesses.base import MAX_LINE
from tests.claude_builder import ClaudeSession

ROOT = Path(__file__).resolve().parents[2]
LONG = "The change is done and the tests pass; here is what was found and why it works now. " * 4


@pytest.fixture(autouse=True)
def no_background_jobs(monkeypatch):
    monkeypatch.setattr(background, "spawn_background_pass", lambda locs: None)


# One pass in a child process: its own peak RSS (wait4) and the pass's time and bytes read.
PASS = """
import json, sys, time
from harnesslink_core.banking import autobank
from harnesslink_core.paths import locations
t = time.perf_counter()
r = autobank.run_pass(locations())
print(json.dumps({"seconds": time.perf_counter() - t, "banked": r.banked, "bytes_read": r.bytes_read}))
"""


def child_pass(env: dict[str, str]) -> dict:
    with open(os.devnull, "wb") as null:
        r_out, w_out = os.pipe()
        pid = os.posix_spawn(sys.executable, [sys.executable, "-c", PASS], env,
                             file_actions=[(os.POSIX_SPAWN_DUP2, w_out, 1), (os.POSIX_SPAWN_DUP2, null.fileno(), 2)])
        os.close(w_out)
        with os.fdopen(r_out) as out:
            text = out.read()
        _, status, usage = os.wait4(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, text
    result = json.loads(text.strip().splitlines()[-1])
    result["rss_mb"] = usage.ru_maxrss / 1024  # kilobytes on Linux
    return result


def grow(path: Path, n: int) -> None:
    with open(path, "ab") as f:
        chunk = b"x" * (1024 * 1024)
        for _ in range(n // len(chunk)):
            f.write(chunk)


def test_a_growing_line_past_the_cap_is_scanned_once_and_never_held(isolated_home, locs):
    s = ClaudeSession(isolated_home, cwd="/work/app")
    s.turn("Fix the flaky login test", LONG, tools=[("Bash", {"command": "pytest -x"})])
    s.flush()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    assert child_pass(env)["banked"] == 1
    with open(s.path, "ab") as f:  # a tool result the harness is still writing, no newline yet
        f.write(b'{"type":"user","message":{"role":"user","content":"')
    grow(s.path, 8 * 1024 * 1024)
    baseline = child_pass(env)  # a partial line under the cap: read, and waited for
    grow(s.path, MAX_LINE)  # past the cap
    first = child_pass(env)
    later = []
    for _ in range(3):
        grow(s.path, 4 * 1024 * 1024)
        later.append(child_pass(env))
    # never held whole: no pass holds more than a few MB above what a pass with an 8 MB line holds
    for r in [first, *later]:
        assert r["rss_mb"] < baseline["rss_mb"] + 24, (baseline, first, later)
    # remembered where it started: a later pass scans only what was added, not the whole line again
    for r in later:
        assert r["seconds"] < max(0.5, first["seconds"] / 2), (first, later)
    # the line ends and the session goes on: the next turn is banked, the giant line skipped
    with open(s.path, "ab") as f:
        f.write(b'"}}\n')
    s.turn("Now speed up the build", LONG, tools=[("Bash", {"command": "make -j8"})])
    s.flush()
    done = child_pass(env)
    assert done["banked"] == 1, done
    assert done["rss_mb"] < baseline["rss_mb"] + 24, done


SLOW_PASS = """
import sys, time
from harnesslink_core.banking import autobank
from harnesslink_core.harnesses.claude_code import reader as claude_code
from harnesslink_core.paths import locations
slow = sys.argv[1]
real_read = claude_code.read
def read(path, *a, **k):
    if str(path) == slow:  # one turn's slow work: a huge transcript, a slow disk
        print("READING", flush=True)
        time.sleep(30)
    return real_read(path, *a, **k)
claude_code.read = read
autobank.run_pass(locations())
"""


def test_a_slow_turn_in_one_project_does_not_keep_another_projects_stop_hook_from_banking(isolated_home, locs):
    slow = ClaudeSession(isolated_home, cwd="/work/slow")
    slow.turn("Import the whole data set", LONG, tools=[("Bash", {"command": "make import"})])
    slow.flush()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-c", SLOW_PASS, str(slow.path)], env=env, stdout=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stdout.readline().strip() == "READING"
        quick = ClaudeSession(isolated_home, cwd="/work/quick")
        quick.turn("Rename the config flag", LONG, tools=[("Edit", {"path": "config.py"})])
        quick.flush()
        started = time.monotonic()
        report = run_pass(locs, paths=[quick.path], harnesses=["claude-code"],
                          stop=StopSignal("claude-code", quick.session_id, str(quick.path), time.time()))
        took = time.monotonic() - started
        assert not report.locked and report.banked == 1, report
        assert took < autobank.STOP_WAIT / 2, took
        assert len(list(locs.memories.glob("*work-quick*/bank/*.md"))) == 1
    finally:
        proc.kill()
        proc.wait()


def _fail_entry_writes(monkeypatch, err: int) -> None:
    real_fsync = os.fsync

    def fsync(fd):
        raise OSError(err, os.strerror(err))

    monkeypatch.setattr(os, "fsync", fsync)
    return real_fsync


@pytest.mark.parametrize("err", [errno.EROFS, errno.EACCES], ids=["EROFS", "EACCES"])
def test_a_turn_not_written_for_a_read_only_tree_is_banked_by_the_next_pass(isolated_home, locs, err):
    s = ClaudeSession(isolated_home, cwd="/work/app")
    s.turn("Fix the login bug", LONG, tools=[("Bash", {"command": "pytest"})])
    s.flush()
    mp = pytest.MonkeyPatch()
    _fail_entry_writes(mp, err)
    try:
        failed = run_pass(locs)
    finally:
        mp.undo()
    assert failed.banked == 0 and failed.failure, failed
    assert run_pass(locs).banked == 1  # the next pass, not a minute later
    assert len(list(locs.memories.glob("*/bank/*.md"))) == 1
    assert run_pass(locs).banked == 0


def test_a_real_read_only_remount_then_writable_again_banks_on_the_next_pass(isolated_home, locs, tmp_path):
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root; the injected fault covers this")
    s = ClaudeSession(isolated_home, cwd="/work/app")
    s.turn("Set up the project", LONG, tools=[("Bash", {"command": "npm init"})])
    s.flush()
    assert run_pass(locs).banked == 1
    memories = locs.memories
    held = tmp_path / "held"
    memories.rename(held)
    memories.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(memories)], capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        subprocess.run(["cp", "-a", f"{held}/.", str(memories)], check=True)
        later = ClaudeSession(isolated_home, cwd="/work/app", session_id="sess-later",
                              start=datetime.now(timezone.utc) - timedelta(minutes=30))
        later.turn("Speed up the slow build", LONG, tools=[("Bash", {"command": "make -j8"})])
        later.flush()
        subprocess.run(["mount", "-o", "remount,ro", str(memories)], check=True)
        try:
            report = run_pass(locs)
            assert report.banked == 0 and report.failure, report
        finally:
            subprocess.run(["mount", "-o", "remount,rw", str(memories)], check=True)
        assert run_pass(locs).banked == 1
        assert len(list(memories.glob("*/bank/*.md"))) == 2
    finally:
        subprocess.run(["umount", "-l", str(memories)], check=False)


def _many_turns(home, turns: int = 24) -> None:
    for n in range(turns // 4):
        s = ClaudeSession(home, cwd=f"/work/app{n % 2}")
        for k in range(4):
            s.turn(f"session {n}: fix case {k} of the parser", LONG, tools=[("Bash", {"command": f"pytest -k {k}"})])
        s.flush()


def test_a_large_batch_synced_by_one_syncfs_is_banked_without_an_fsync_per_entry(isolated_home, locs, monkeypatch):
    from harnesslink_core.store import durable

    _many_turns(isolated_home)
    calls, per_file = [], []
    monkeypatch.setattr(durable, "_SYNCFS", [lambda fd: calls.append(fd) or os.sync() or 0])
    monkeypatch.setattr(durable, "_dirty_bytes", lambda: 0)
    monkeypatch.setattr(durable, "_file_system", lambda device: "ext4")
    real_sync = durable._sync
    monkeypatch.setattr(durable, "_sync", lambda path: per_file.append(path) or real_sync(path))
    report = run_pass(locs)
    assert report.banked == 24 and report.errors == 0
    assert len(calls) == 2 and per_file == []  # the staged files, then the folders they were linked into
    assert len(list(locs.memories.glob("*/bank/*.md"))) == 24


def test_a_syncfs_that_fails_makes_each_entry_sync_and_fail_on_its_own(isolated_home, locs, monkeypatch):
    from harnesslink_core.store import durable

    _many_turns(isolated_home)
    monkeypatch.setattr(durable, "_SYNCFS", [lambda fd: -1])  # an EIO in writeback, somewhere on the file system
    monkeypatch.setattr(durable, "_dirty_bytes", lambda: 0)
    monkeypatch.setattr(durable, "_file_system", lambda device: "ext4")
    mp = pytest.MonkeyPatch()
    _fail_entry_writes(mp, errno.EIO)  # ... and it was these entries'
    try:
        failed = run_pass(locs)
    finally:
        mp.undo()
    assert failed.banked == 0 and failed.failure, failed
    assert not list(locs.memories.glob("*/bank/*.md"))
    assert run_pass(locs).banked == 24  # the next pass, each entry fsync'd after the failed syncfs
    assert len(list(locs.memories.glob("*/bank/*.md"))) == 24


def test_entries_whose_folder_did_not_sync_are_counted_by_the_next_pass_once(isolated_home, locs, monkeypatch):
    from harnesslink_core.store import durable

    _many_turns(isolated_home)
    real = durable.fsync_dirs
    failing = pytest.MonkeyPatch()
    failing.setattr(durable, "fsync_dirs", lambda folders, writeback=None, made=(): (real(folders, writeback, made), {
        folder: OSError(errno.EIO, "I/O error", str(folder)) for folder in folders})[1])
    try:
        first = run_pass(locs)
    finally:
        failing.undo()
    assert first.banked == 0 and first.failure, first  # placed, not yet sure to stay: not counted
    assert len(list(locs.memories.glob("*/bank/*.md"))) == 24
    again = run_pass(locs)
    assert again.banked == 24 and again.errors == 0  # found where they were placed, counted now
    assert len(list(locs.memories.glob("*/bank/*.md"))) == 24
    assert run_pass(locs).banked == 0
