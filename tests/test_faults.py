"""Faults at every write point: the hooks answer, the CLI says one line, nothing is lost or doubled.

For each write point (entry, MAIN.md, summary, state file, ledger, index, log) and each fault (a
full disk, a permission error, a read-only file system, a corrupt or locked database, a SIGKILL):
the hooks exit cleanly with output their harness accepts; the CLI prints one line on stderr and
exits non-zero, with no traceback; once the fault is gone the next pass banks every turn exactly
once and no file is left half-written. Real ENOSPC and read-only faults use a small tmpfs when the
test may mount one (root); the others are injected where the error would arise.
"""

from __future__ import annotations

import errno
import io
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from harnesslink_core import hooks, log, main
from harnesslink_core.banking import autobank, background
from harnesslink_core.paths import locations
from harnesslink_core.recall import index, query
from harnesslink_core.store import durable, ledger, projectfiles
from tests.claude_builder import ClaudeSession

ROOT = Path(__file__).resolve().parent.parent
CWD = "/work/app"
LONG = "The change is done and the tests pass; here is what was found and why it works now. " * 4
TURNS = 3


@pytest.fixture(autouse=True)
def no_background_jobs(monkeypatch):
    """A detached pass or rebuild would run without the injected fault and race the test."""
    monkeypatch.setattr(background, "spawn_background_pass", lambda locs: None)
    monkeypatch.setattr(index, "rebuild_in_background", lambda locs, full=True: False)


def _world(home: Path) -> ClaudeSession:
    """Three turns: two of them two days ago (a summary is due), one with todos (a state file)."""
    past = ClaudeSession(home, cwd=CWD, session_id="sess-past", start=datetime.now(timezone.utc) - timedelta(days=2))
    past.turn("Fix the login bug in the auth module", LONG, tools=[("Bash", {"command": "pytest tests/test_login.py"})])
    past.turn("Plan the release of version two", LONG, tools=[(
        "TodoWrite", {"todos": [{"content": "tag v2", "status": "pending", "activeForm": "Tagging v2"}]})])
    past.flush()
    now = ClaudeSession(home, cwd=CWD, session_id="sess-now")
    now.turn("Speed up the slow build", LONG, tools=[("Bash", {"command": "make -j8"})])
    now.flush()
    return now


def _world_after_a_first_pass(locs, home: Path) -> ClaudeSession:
    """One turn banked already (the ledger, index and project files exist), then `_world`."""
    first = ClaudeSession(home, cwd=CWD, session_id="sess-first")
    first.turn("Set up the project", LONG, tools=[("Bash", {"command": "npm init"})])
    first.flush()
    assert autobank.run_pass(locs).banked == 1
    return _world(home)


def _hooks_answer(session: ClaudeSession) -> None:
    payload = {"session_id": session.session_id, "cwd": CWD, "transcript_path": str(session.path),
               "prompt": "why was the login test failing before?", "last_assistant_message": LONG.strip()}
    for harness in ("claude-code", "codex", "pi"):
        for event in ("session-start", "user-prompt-submit", "stop", "pre-compact"):
            answer = hooks.run([event, "--harness", harness], stdin=io.StringIO(json.dumps(payload))).answer
            if harness == "pi":
                assert set(answer) == {"additionalContext"} and isinstance(answer["additionalContext"], str)
            elif answer:
                assert set(answer) == {"hookSpecificOutput"}, answer
                assert answer["hookSpecificOutput"]["hookEventName"] == hooks.EVENTS[event]
            json.dumps(answer)


def _hook_processes_answer(session: ClaudeSession) -> None:
    """The real hook executables, as a harness runs them: exit 0, one JSON object on stdout."""
    payload = json.dumps({"session_id": session.session_id, "cwd": CWD, "transcript_path": str(session.path),
                          "prompt": "why was the login test failing before?"})
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for event in ("session-start", "user-prompt-submit", "stop"):
        done = subprocess.run([sys.executable, str(ROOT / "hooks" / event), "--harness", "claude-code"],
                              input=payload, capture_output=True, text=True, env=env, timeout=60)
        assert done.returncode == 0 and isinstance(json.loads(done.stdout), dict), (event, done.stdout, done.stderr)
        assert done.stderr == ""


def _cli_fails_in_one_line(capsys, argv: list[str], *, stdin: str = "") -> str:
    sys.stdin = io.StringIO(stdin)
    try:
        code = main.main(argv)
    finally:
        sys.stdin = sys.__stdin__
    out = capsys.readouterr()
    assert code != 0, (argv, out.out, out.err)
    assert "Traceback" not in out.err + out.out
    lines = out.err.splitlines()
    assert len(lines) == 1 and "error" in lines[0], out.err
    return lines[0]


def _recovered(locs, *, turns: int = TURNS) -> None:
    """After the fault: one more pass, then every turn once and every file whole."""
    # waits for a background pass a hook process may have started
    now = time.time() + 3600
    report = autobank.run_pass(locs, now=now, wait=30)
    assert report.failure is None and not report.locked, report
    entries = sorted(locs.memories.glob("*/bank/*.md"))
    keys = [re.search(r"^turn_key: (.*)$", p.read_text(), re.M).group(1) for p in entries]
    assert len(keys) == turns and len(set(keys)) == turns, [p.name for p in entries]
    for p in entries:
        text = p.read_text()
        assert text.startswith("---\n") and "\n## Result\n" in text and text.endswith("\n")
    project = entries[0].parent.parent
    main_md = (project / "MAIN.md").read_text()
    assert main_md.count(projectfiles.START) == 1 and main_md.count(projectfiles.END) == 1
    assert all(f"(bank/{p.name})" in main_md for p in entries)
    # a summary for each day before the pass's own, whole: the past session's day (its two turns), and
    # yesterday too when the pass runs within an hour of midnight (its `now` is an hour ahead, the session
    # an hour behind; an earlier pass may have summed up that day before its last turn was banked)
    today = time.strftime("%Y-%m-%d", time.gmtime(now))
    past_days = sorted({p.name[:10] for p in entries if p.name[:10] < today})
    summaries = {s.stem: s.read_text() for s in (project / "summaries").glob("*.md")}
    assert sorted(summaries) == past_days
    assert summaries[past_days[0]].count("\n- ") == 2
    assert all(0 < text.count("\n- ") <= sum(p.name.startswith(day) for p in entries) for day, text in summaries.items())
    states = list((project / "state").glob("*.md"))
    assert any("tag v2" in s.read_text() for s in states)
    assert not list(locs.memories.rglob("*.tmp")) and not list(locs.memories.rglob(".*"))
    conn = index.connect(locs)
    try:
        index.sync(conn, locs, None)
        assert query.count(conn) == turns
    finally:
        conn.close()


# --- injected: every write point x a full disk / a permission error ------------------------


def _oserror(err: int, target: str) -> OSError:
    return OSError(err, os.strerror(err), target)


def _sqlite_error(err: int) -> sqlite3.OperationalError:
    return sqlite3.OperationalError("database or disk is full" if err == errno.ENOSPC
                                    else "attempt to write a readonly database")


def _inject(mp: pytest.MonkeyPatch, point: str, err: int) -> None:
    real_replace, real_link, real_fsync = os.replace, os.link, os.fsync

    def failing(real, when):
        def call(*args, **kwargs):
            if when(*args):
                raise _oserror(err, str(args[-1]))
            return real(*args, **kwargs)
        return call

    if point == "entry":  # the entry's bytes are written, then syncing them fails (by one syncfs, then each file)
        mp.setattr(durable, "_SYNCFS", [lambda fd: -1])
        mp.setattr(durable, "_dirty_bytes", lambda: 0)  # whatever else this machine writes: the batch tries syncfs
        mp.setattr(durable, "_file_system", lambda device: "ext4")
        mp.setattr(os, "fsync", failing(real_fsync, lambda fd: True))
    elif point == "MAIN.md":
        mp.setattr(os, "replace", failing(real_replace, lambda src, dst: str(dst).endswith("MAIN.md")))
    elif point == "summary":
        mp.setattr(os, "link", failing(real_link, lambda src, dst: "/summaries/" in str(dst)))
    elif point == "state file":
        mp.setattr(os, "replace", failing(real_replace, lambda src, dst: "/state/" in str(dst)))
    elif point == "ledger":  # entries are written, marking them banked fails
        def finish(self, *a, **k):
            raise _sqlite_error(err)
        mp.setattr(ledger.Ledger, "finish", finish)
    elif point == "index":
        def insert(*a, **k):
            raise _sqlite_error(err)
        mp.setattr(index, "_insert_doc", insert)
    elif point == "log":
        def rotate(path):
            raise _oserror(err, str(path))
        mp.setattr(log, "_rotate", rotate)


POINTS = ["entry", "MAIN.md", "summary", "state file", "ledger", "index", "log"]


@pytest.mark.parametrize("err", [errno.ENOSPC, errno.EACCES], ids=["ENOSPC", "EACCES"])
@pytest.mark.parametrize("point", POINTS)
def test_injected_fault_at_each_write_point(point, err, locs, isolated_home, capsys):
    session = _world(isolated_home)
    mp = pytest.MonkeyPatch()
    _inject(mp, point, err)
    try:
        _hooks_answer(session)
        if point == "log":  # nothing else failed: the log is best effort, the work is done
            assert main.main(["autobank"]) == 0
        else:
            line = _cli_fails_in_one_line(capsys, ["autobank"])
            assert ("space" in line) if err == errno.ENOSPC else ("permission" in line or "read" in line)
            _cli_fails_in_one_line(capsys, ["backfill", "--days", "30"])
    finally:
        mp.undo()
    _recovered(locs)


# --- real faults on a small file system ----------------------------------------------------


@pytest.fixture
def tiny_fs(tmp_path, monkeypatch):
    """The agent dir on a 4 MB tmpfs (root only; skipped where mounting is not allowed)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root; the injected faults cover this")
    mnt = tmp_path / "tiny"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mnt)], capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here; the injected faults cover this")
    monkeypatch.setenv("HARNESSLINK_HOME", str(mnt / "agent"))
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], check=False)


def _fill(folder: Path) -> Path:
    filler = folder / "filler"
    chunk = b"\0" * 65536
    with open(filler, "wb", buffering=0) as f:  # unbuffered: nothing left to flush (and fail) on close
        try:
            while True:
                f.write(chunk)
                f.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    return filler


def test_real_full_disk(tiny_fs, isolated_home, capsys):
    locs = locations()
    session = _world_after_a_first_pass(locs, isolated_home)
    filler = _fill(tiny_fs)
    try:
        _hooks_answer(session)
        _hook_processes_answer(session)
        line = _cli_fails_in_one_line(capsys, ["backfill", "--days", "30"])
        assert "space" in line or "full" in line, line
        _cli_fails_in_one_line(capsys, ["autobank"])
    finally:
        filler.unlink()
    _recovered(locs, turns=TURNS + 1)


def test_real_read_only_file_system(tiny_fs, isolated_home, capsys):
    locs = locations()
    session = _world_after_a_first_pass(locs, isolated_home)
    subprocess.run(["mount", "-o", "remount,ro", str(tiny_fs)], check=True)
    try:
        _hooks_answer(session)
        line = _cli_fails_in_one_line(capsys, ["autobank"])
        assert "read-only" in line or "readonly" in line or "permission" in line, line
        _cli_fails_in_one_line(capsys, ["forget", "--session", "sess-first", "--yes"])
    finally:
        subprocess.run(["mount", "-o", "remount,rw", str(tiny_fs)], check=True)
    _recovered(locs, turns=TURNS + 1)


# --- databases: corrupt, locked -------------------------------------------------------------


def test_corrupt_ledger(locs, isolated_home, capsys):
    session = _world_after_a_first_pass(locs, isolated_home)
    for suffix in ("-wal", "-shm"):
        Path(str(locs.ledger_file) + suffix).unlink(missing_ok=True)
    locs.ledger_file.write_bytes(b"this is not a database at all" * 100)
    _hooks_answer(session)
    _hook_processes_answer(session)
    line = _cli_fails_in_one_line(capsys, ["autobank"])
    assert "ledger" in line and "damaged" in line, line
    _cli_fails_in_one_line(capsys, ["status"])
    locs.ledger_file.rename(str(locs.ledger_file) + ".damaged")  # what the error line says to do
    _recovered(locs, turns=TURNS + 1)


def test_a_corrupt_index_is_made_again_by_the_next_recall(locs, isolated_home, capsys):
    session = _world(isolated_home)
    autobank.run_pass(locs)
    for suffix in ("-wal", "-shm"):
        Path(str(locs.index_file) + suffix).unlink(missing_ok=True)
    locs.index_file.write_bytes(b"garbage" * 1000)
    _hooks_answer(session)
    # the index is a cache of the Markdown: recall deletes the unreadable one, makes it again and answers
    assert main.main(["recall", "login", "bug", "--cwd", CWD]) == 0
    out = capsys.readouterr()
    assert "Traceback" not in out.err + out.out and "login" in out.out.lower(), out
    assert main.main(["reindex"]) == 0
    _recovered(locs)


def test_locked_ledger(locs, isolated_home, capsys, monkeypatch):
    session = _world(isolated_home)
    ledger.open_ledger(locs).close()
    monkeypatch.setattr(ledger, "BUSY_TIMEOUT_MS", 100)
    holder = sqlite3.connect(locs.ledger_file, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        _hooks_answer(session)
        line = _cli_fails_in_one_line(capsys, ["autobank"])
        assert "locked" in line, line
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    _recovered(locs)


def test_locked_index(locs, isolated_home, capsys, monkeypatch):
    session = _world(isolated_home)
    index.connect(locs).close()
    real_connect = index.connect
    monkeypatch.setattr(index, "connect", lambda locs, create=True, busy_ms=5000: real_connect(
        locs, create=create, busy_ms=min(busy_ms, 100)))
    holder = sqlite3.connect(locs.index_file, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        _hooks_answer(session)
        line = _cli_fails_in_one_line(capsys, ["autobank"])
        assert "locked" in line or "busy" in line, line
        _cli_fails_in_one_line(capsys, ["recall", "login", "bug", "--cwd", CWD])
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    _recovered(locs)


# --- SIGKILL at each write point ------------------------------------------------------------

# the patches that SIGKILL a pass at one write point (sys.argv[1]), before the code that runs the pass
KILL_AT = """
import os, signal, sys
from harnesslink_core.banking import autobank
from harnesslink_core.store import bank, durable, ledger, projectfiles, state
from harnesslink_core.paths import locations

point = sys.argv[1]
die = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)
real_fsync, real_replace = os.fsync, os.replace
if point == "entry":  # bytes written to the temporary file, not yet in place
    os.fsync = die
    durable._SYNCFS[:] = [die]  # a batch's one syncfs
    durable._dirty_bytes = lambda: 0
    durable._file_system = lambda device: "ext4"
elif point == "entry placed":  # in place, not yet marked banked
    durable.fsync_dir = die
    durable.fsync_dirs = die
elif point == "ledger":
    ledger.Ledger.finish = die
elif point in ("MAIN.md", "state file"):
    marker = "MAIN.md" if point == "MAIN.md" else "/state/"
    def replace(src, dst, *a, **k):
        if marker in str(dst):
            die()
        return real_replace(src, dst, *a, **k)
    os.replace = replace
elif point == "summary":
    real_link = os.link
    def link(src, dst, *a, **k):
        if "/summaries/" in str(dst):
            die()
        return real_link(src, dst, *a, **k)
    os.link = link
elif point == "index":
    from harnesslink_core.recall import index
    index._insert_doc = die
"""
KILLER = KILL_AT + """
autobank.run_pass(locations())
print("not killed")
"""


@pytest.mark.parametrize("point", ["entry", "entry placed", "ledger", "MAIN.md", "summary", "state file", "index"])
def test_sigkill_at_each_write_point(point, locs, isolated_home):
    session = _world(isolated_home)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", KILLER, point], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == -signal.SIGKILL, (done.stdout, done.stderr)
    _hook_processes_answer(session)
    _hooks_answer(session)
    _recovered(locs)
