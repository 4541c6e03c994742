"""A backfill's read-ahead child (banking/readahead.py): the same bank as one process makes, whatever
becomes of the child, and a child that holds nothing of its parent's.

Each pass runs in a process of its own, as a backfill does: a child is forked only while no other thread
runs, and the test runner's process may have some."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import frontmatter
import pytest

from harnesslink_core.banking import autobank, read, readahead
from harnesslink_core.store.ledger import RESERVATION_TTL, open_ledger
from tests.claude_builder import ClaudeSession
from tests.test_all_harnesses import install_generated

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the read-ahead forks only on Linux")
ROOT = Path(__file__).resolve().parents[2]
LONG = "Changed the handler and explained why, with the test that shows it. " * 4

BACKFILL = r"""
import json, os, signal, sys, threading
from harnesslink_core.banking import autobank, read, readahead
from harnesslink_core.store.ledger import RESERVATION_TTL, open_ledger
from harnesslink_core.paths import locations

mode, parent, done, taken = sys.argv[1], os.getpid(), [0], []
real_take, real_fresh = readahead.ReadAhead.take, read.read_fresh

def take(self, key):
    result = real_take(self, key)
    if result is not None:
        taken.append(key)
    return result

def read_fresh(self, harness, path, window):
    if os.getpid() != parent:  # in the child
        done[0] += 1
        if mode == "kill" and done[0] == 4:
            os.kill(os.getpid(), signal.SIGKILL)
        if mode == "fail" and "claude" in path:
            raise RuntimeError("a reader's bug")
    return real_fresh(self, harness, path, window)

readahead.ReadAhead.take, read.read_fresh = take, read_fresh
if mode == "alone":
    readahead.MIN_JOBS = 10**9
if mode == "broken":
    def warm(detect):
        raise RuntimeError("a bug of ours before the fork")
    read.warm = warm
locs = locations()
autobank.widen_window(locs, 4000)
report = autobank.drain(locs)
children = []
try:
    os.waitpid(-1, os.WNOHANG)
    children.append("unreaped")
except ChildProcessError:
    pass
print(json.dumps({"banked": report.banked, "skipped": report.skipped, "errors": report.errors, "taken": taken,
                  "threads": threading.active_count(), "children": children}))
"""


def run(code: str, *args: str, home: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARNESSLINK")}
    env.update(HOME=str(home), PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", code, *args], env=env, cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def make_world(home: Path) -> None:
    """Transcripts the real CLIs wrote (four harnesses) and a dozen more Claude Code sessions."""
    install_generated(home)
    for n in range(12):
        s = ClaudeSession(home, cwd=f"/work/app{n % 3}")
        for k in range(4):
            s.turn(f"session {n}: fix parse_order case {k} in src/orders_{k}.py", LONG,
                   tools=[("Edit", {"file_path": f"src/orders_{k}.py"})])
        s.flush()


def bank_files(locs) -> dict[str, str]:
    return {str(p.relative_to(locs.memories)): p.read_text() for p in sorted(locs.memories.glob("*/bank/*.md"))}


def keys_on_disk(locs) -> Counter:
    return Counter(frontmatter.load(p)["turn_key"] for p in locs.memories.glob("*/bank/*.md"))


def rows(path: str, *queries: str) -> list[tuple]:
    conn = sqlite3.connect(path)
    try:
        return [row for query in queries for row in conn.execute(query).fetchall()]
    finally:
        conn.close()


def ledger_rows(locs) -> list[tuple]:
    return rows(str(locs.ledger_file),
                "SELECT path, read_end, resume, carry, head_hash, anchor_hash, session_id, cwd, excluded, open_turns,"
                " bad_lines FROM files ORDER BY path",
                "SELECT turn_key, status, entry, project, ended FROM turns ORDER BY turn_key",
                "SELECT harness, session_id, cwd, state FROM sessions ORDER BY 1, 2")


def index_rows(locs) -> list[tuple]:
    return rows(locs.index_path,
                "SELECT d.path, d.title, d.sketch, f.prompt, f.keys, f.detail_keys FROM docs d"
                " JOIN fts f ON f.rowid = d.id ORDER BY d.path",
                "SELECT key, grp FROM vocab_keys ORDER BY key, grp",
                "SELECT * FROM folders ORDER BY 1, 2")


def forget_everything_but_the_transcripts(locs) -> None:
    shutil.rmtree(locs.memories)
    for db in (str(locs.ledger_file), locs.index_path):
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(db + suffix):
                os.unlink(db + suffix)


def test_a_backfill_with_its_read_ahead_banks_what_one_process_banks(locs, isolated_home) -> None:
    make_world(isolated_home)
    alone = run(BACKFILL, "alone", home=isolated_home)
    assert not alone["taken"] and alone["banked"] > 40
    by_one, ledger_by_one, index_by_one = bank_files(locs), ledger_rows(locs), index_rows(locs)
    forget_everything_but_the_transcripts(locs)
    ahead = run(BACKFILL, "ahead", home=isolated_home)
    # most transcripts came from the child, and the index it made
    assert len(ahead["taken"]) >= readahead.MIN_JOBS and read.MAKE_INDEX in ahead["taken"]
    assert [ahead[k] for k in ("banked", "skipped", "errors")] == [alone[k] for k in ("banked", "skipped", "errors")]
    assert bank_files(locs) == by_one
    assert ledger_rows(locs) == ledger_by_one
    assert index_rows(locs) == index_by_one
    # no child left unreaped, and the sync threads let go: a later pass in this process may fork again
    assert ahead["children"] == [] and ahead["threads"] == 1


def test_a_child_killed_midway_costs_nothing_but_time(locs, isolated_home) -> None:
    make_world(isolated_home)
    report = run(BACKFILL, "kill", home=isolated_home)
    assert 0 < len(report["taken"]) < 4  # the child's first three, then the pass read the rest itself
    keys = keys_on_disk(locs)
    assert report["banked"] == len(keys) > 40 and set(keys.values()) == {1} and report["errors"] == 0


def test_a_transcript_the_child_cannot_read_is_read_by_the_pass(locs, isolated_home) -> None:
    make_world(isolated_home)
    report = run(BACKFILL, "fail", home=isolated_home)
    assert report["taken"] and not any("claude" in path for path in report["taken"])
    keys = keys_on_disk(locs)
    assert report["banked"] == len(keys) > 40 and set(keys.values()) == {1} and report["errors"] == 0


def test_a_read_ahead_that_cannot_start_leaves_the_pass_to_read_everything(locs, isolated_home) -> None:
    make_world(isolated_home)
    report = run(BACKFILL, "broken", home=isolated_home)
    assert report["taken"] == [] and report["errors"] == 1  # said in the log and the ledger's errors
    keys = keys_on_disk(locs)
    assert report["banked"] == len(keys) > 40 and set(keys.values()) == {1}


CHILD_HOLDS = r"""
import fcntl, json, os, sqlite3, subprocess, sys, time
from harnesslink_core.banking import readahead

folder = sys.argv[1]
fd = os.open(os.path.join(folder, "autobank.lock"), os.O_RDWR | os.O_CREAT)
fcntl.flock(fd, fcntl.LOCK_EX)
db = sqlite3.connect(os.path.join(folder, "ledger.db"))
db.execute("CREATE TABLE t (x)")
go = os.path.join(folder, "go")

def slow_job():
    while not os.path.exists(go):
        time.sleep(0.01)
    return sorted(int(n) for n in os.listdir("/proc/self/fd")), [os.readlink(f"/proc/self/fd/{n}") for n in (0, 1, 2)]

ahead = readahead.ReadAhead.start([(f"job{n}", slow_job) for n in range(readahead.MIN_JOBS)])
os.close(fd)  # the parent lets go of the lock while its child is still alive
probe = "import fcntl, os, sys; fcntl.flock(os.open(sys.argv[1], os.O_RDWR), fcntl.LOCK_EX | fcntl.LOCK_NB)"
free = subprocess.run([sys.executable, "-c", probe, os.path.join(folder, "autobank.lock")]).returncode == 0
open(go, "w").close()
fds, streams = ahead.take("job0")
ahead.close()
print(json.dumps({"free": free, "fds": fds, "streams": streams}))
"""


def test_the_child_holds_no_lock_and_no_database_of_its_parent(tmp_path: Path) -> None:
    out = run(CHILD_HOLDS, str(tmp_path), home=tmp_path)
    assert out["free"]  # another process took the lock the parent let go, while the child lived
    assert out["fds"][:3] == [0, 1, 2] and len(out["fds"]) <= 5  # and its pipe (and the listing's own)
    assert out["streams"] == [os.devnull] * 3  # not the stdout a hook's harness waits to see closed


THREADS = r"""
import json, threading
from harnesslink_core.banking import readahead

jobs = [(f"job{n}", lambda n=n: n * n) for n in range(readahead.MIN_JOBS)]
stop = threading.Event()
thread = threading.Thread(target=stop.wait)
thread.start()
with_thread = readahead.ReadAhead.start(jobs)
stop.set()
thread.join()
ahead = readahead.ReadAhead.start(jobs)
got = [ahead.take("job3"), ahead.take("job1"), ahead.take("not a job"), ahead.take(f"job{len(jobs) - 1}")]
ahead.close()
few = readahead.ReadAhead.start(jobs[:readahead.MIN_JOBS - 1])
print(json.dumps({"with_thread": with_thread is None, "got": got, "few": few is None}))
"""


def test_a_child_only_while_no_other_thread_runs_and_for_enough_jobs(tmp_path: Path) -> None:
    out = run(THREADS, home=tmp_path)
    assert out["with_thread"] and out["few"]
    last = readahead.MIN_JOBS - 1
    assert out["got"] == [9, None, None, last * last]  # job0..job2 passed over, dropped on the way


DRAIN = r"""
from harnesslink_core.banking import autobank
from harnesslink_core.paths import locations
autobank.drain(locations(), wait=5)
"""


def test_backfills_killed_and_racing_while_their_children_read_bank_each_turn_once(locs, isolated_home) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARNESSLINK")}
    env.update(HOME=str(isolated_home), PYTHONPATH=str(ROOT))
    total = 0
    for round_, delay in enumerate((0.06, 0.09, 0.12, 0.15, 0.05, 0.2, 0.08, 0.11)):  # killed at another point
        for n in range(12):  # new transcripts each round: each backfill has a child reading them
            s = ClaudeSession(isolated_home, cwd=f"/work/race{n % 2}")
            for k in range(4):
                s.turn(f"round {round_} session {n} turn {k}: tidy the importer", LONG * 3,
                       tools=[("Bash", {"command": f"make t{k}"})])
                total += 1
            s.flush()
        doomed = subprocess.Popen([sys.executable, "-c", DRAIN], env=env, cwd=ROOT)
        racer = subprocess.Popen([sys.executable, "-c", DRAIN], env=env, cwd=ROOT)
        time.sleep(delay)
        doomed.kill()
        doomed.wait()
        assert racer.wait(timeout=120) == 0
    later = time.time() + RESERVATION_TTL + 1  # what a killed pass reserved is taken over after ten minutes
    for _ in range(3):
        autobank.run_pass(locs, now=later, budget=autobank.DRAIN_BUDGET)
    keys = keys_on_disk(locs)
    assert sum(keys.values()) == total and max(keys.values()) == 1
    ledger = open_ledger(locs)
    try:
        assert ledger.counts("claude-code") == {"banked": total}
    finally:
        ledger.close()
