"""Nothing lost, nothing twice: racing passes, passes killed mid-write, reservations taken over."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path

import frontmatter
import pytest

from harnesslink_core.banking.autobank import drain, run_pass
from harnesslink_core.store import bank, durable
from harnesslink_core.store.ledger import RESERVATION_TTL, open_ledger
from tests.claude_builder import ClaudeSession

ROOT = Path(__file__).resolve().parents[2]
LONG = "A substantive answer that explains what was done and why. " * 5


def keys_on_disk(locs) -> Counter:
    return Counter(frontmatter.load(p)["turn_key"] for p in locs.memories.glob("*/bank/*.md"))


def make_sessions(home: Path, sessions: int, turns: int) -> int:
    start = datetime.now(timezone.utc) - timedelta(hours=2)
    for n in range(sessions):
        s = ClaudeSession(home, cwd=f"/work/project{n % 3}", start=start)
        for k in range(turns):
            s.turn(f"session {n} turn {k}: refactor module {k}", LONG, tools=[("Edit", {"file": f"m{k}.py"})])
        s.flush()
    return sessions * turns


def pass_process(env: dict[str, str], loops: int) -> subprocess.Popen:
    code = (
        "import sys\n"
        "from harnesslink_core.banking.autobank import run_pass\n"
        "from harnesslink_core.paths import locations\n"
        f"for _ in range({loops}):\n"
        "    run_pass(locations(), wait=0.05)\n"
    )
    return subprocess.Popen([sys.executable, "-c", code], env=env, cwd=ROOT)


def test_four_processes_racing_over_growing_transcripts_bank_each_turn_once(locs, isolated_home: Path) -> None:
    env = dict(os.environ)
    start = datetime.now(timezone.utc) - timedelta(hours=1)
    sessions = [ClaudeSession(isolated_home, cwd="/work/race", start=start) for _ in range(3)]
    racers = [pass_process(env, 40) for _ in range(4)]
    written = 0
    for k in range(30):  # the transcripts keep growing while the passes race
        for s in sessions:
            s.turn(f"turn {k} in {s.session_id[:6]}", LONG, tools=[("Bash", {"command": f"make step{k}"})])
            s.flush()
            written += 1
        time.sleep(0.01)
    for p in racers:
        assert p.wait(timeout=120) == 0
    drain(locs)
    on_disk = keys_on_disk(locs)
    assert len(on_disk) == written
    assert max(on_disk.values()) == 1


# A pass in its own process, made to pause at one point of its write path (the k-th time it gets
# there) and say so, so the test can SIGKILL it exactly there.
PAUSING_PASS = """
import os, sys, time
from harnesslink_core.banking import autobank
from harnesslink_core.store import bank, durable, ledger
target, at = sys.argv[1], int(sys.argv[2])
calls = 0
def pausing(original):
    def wrapper(*args, **kwargs):
        global calls
        calls += 1
        if calls == at:
            if target == "link":  # the temporary file is written, the entry is not in place yet
                real_link = os.link
                def link(*a, **k):
                    print("PAUSED", flush=True); time.sleep(60); return real_link(*a, **k)
                os.link = link
            else:
                print("PAUSED", flush=True); time.sleep(60)
        return original(*args, **kwargs)
    return wrapper
if target == "finish":  # the entry is written, the ledger does not know yet
    ledger.Ledger.finish = pausing(ledger.Ledger.finish)
elif target == "reserve":  # inside the reservation's write transaction
    original = ledger.Ledger.reserve
    def reserve(self, *a, **k):
        global calls
        calls += 1
        if calls == at:
            with self.write():
                self.db.execute("UPDATE turns SET updated=updated")
                print("PAUSED", flush=True); time.sleep(60)
        return original(self, *a, **k)
    ledger.Ledger.reserve = reserve
else:
    durable.write = pausing(durable.write)
from harnesslink_core.paths import locations
autobank.run_pass(locations())
"""


@pytest.mark.parametrize("where", ["link", "finish", "reserve"])
def test_pass_killed_mid_write_loses_nothing_after_takeover(locs, isolated_home: Path, where: str) -> None:
    total = make_sessions(isolated_home, sessions=4, turns=10)
    for at in (3, 7, 2):  # kill three passes in a row, each at another turn
        proc = subprocess.Popen([sys.executable, "-c", PAUSING_PASS, where, str(at)], cwd=ROOT,
                                stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "PAUSED"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    ledger = open_ledger(locs)
    reserved_before = ledger.counts("claude-code").get("reserved", 0)
    ledger.close()
    if where != "reserve":
        assert reserved_before >= 1  # the kill left a reservation behind
    # before ten minutes nobody takes the stranded turns over; after, a later pass does
    run_pass(locs)
    later = time.time() + RESERVATION_TTL + 1
    for _ in range(5):
        run_pass(locs, now=later)
    on_disk = keys_on_disk(locs)
    assert sum(on_disk.values()) == total
    assert max(on_disk.values()) == 1
    ledger = open_ledger(locs)
    assert ledger.counts("claude-code") == {"banked": total}
    ledger.close()


def test_reservation_of_a_dead_pass_waits_ten_minutes_then_is_taken_over(locs, isolated_home: Path) -> None:
    s = ClaudeSession(isolated_home)
    s.turn("index the docs", LONG, tools=[("Bash", {"command": "make docs"})])
    s.flush()
    from harnesslink_core.harnesses.claude_code import reader as claude_code

    (turn,) = claude_code.read(s.path, 0, {}, 10**9).turns
    ledger = open_ledger(locs)
    assert ledger.reserve(turn.key, "claude-code", turn.dedupe_id, "dead-pass", time.time()) == "ok"
    ledger.close()
    assert run_pass(locs).banked == 0  # the reservation is young: its owner may still be writing
    assert run_pass(locs, now=time.time() + RESERVATION_TTL + 1).banked == 1
    assert sum(keys_on_disk(locs).values()) == 1


def test_entry_written_by_a_pass_that_died_before_recording_it_is_not_written_again(locs, isolated_home: Path) -> None:
    s = ClaudeSession(isolated_home, cwd="/work/app")
    s.turn("index the docs", LONG, tools=[("Bash", {"command": "make docs"})])
    s.flush()
    from harnesslink_core.harnesses.claude_code import reader as claude_code

    (turn,) = claude_code.read(s.path, 0, {}, 10**9).turns
    ledger = open_ledger(locs)
    ledger.reserve(turn.key, "claude-code", turn.dedupe_id, "dead-pass", time.time())
    ledger.close()
    written = durable.write(locs.memories / "--work-app--" / "bank", bank.render(turn))  # then it was killed
    report = run_pass(locs, now=time.time() + RESERVATION_TTL + 1)
    assert report.banked == 1
    assert list(locs.memories.glob("*/bank/*.md")) == [written]


def test_two_turns_finishing_in_the_same_millisecond_never_collide(locs, tmp_path: Path) -> None:
    from harnesslink_core.model import Turn

    made = []
    for n in range(3):
        turn = Turn(harness="codex", session_id=f"s{n}", turn_id="t", cwd="/x", prompt="Same title", offset=0,
                    started=1.0, ended=1_780_000_000.123, result=LONG)
        made.append(durable.write(tmp_path, bank.render(turn)))
    assert len(set(made)) == 3
    assert made[0].name == "2026-05-28T20-26-40-123Z--same-title.md"
