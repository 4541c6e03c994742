"""The session-start hook answers within one deadline of its own whatever lock another process holds, with
the answer its harness accepts; the pass it could not finish in time is done by the next one, exactly once.

Each case (tests/hooks/session_start_waits.py): a pass is due, the session has two finished turns and a
compaction, and another process holds one lock until the hook has answered: the banking lock, SQLite's
write lock of the ledger or of the index, or either database in EXCLUSIVE locking mode (every reader
refused). Before one deadline, each wait took its own bound in turn: the lock's 5 s after a compaction, then
5 s of the ledger's busy timeout at each of its writes, 5 s of the index's at each of its own.
"""

from __future__ import annotations

import pytest

from tests.hooks.session_start_waits import FIRST, HARNESSES, PROMPTS, SOURCES, Holder, Scene

BUDGET = 5.0  # seconds: hooks.SESSION_START_DEADLINE
MARGIN = 1.5  # the interpreter's start before the hook's clock starts, and a loaded 2-core machine
HELD = ["banking lock", "ledger writer", "ledger busy", "index writer", "index busy"]


@pytest.mark.slow
@pytest.mark.parametrize("harness", HARNESSES)
@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("held", HELD)
def test_session_start_answers_within_its_deadline_and_the_next_pass_banks_once(held, source, harness, isolated_home):
    scene = Scene(isolated_home / "world", harness)
    holder = scene.holder(held)
    try:
        answer = scene.hook(source)
    finally:
        holder.release()
    assert answer.code == 0 and answer.err == b"", (answer.code, answer.err)
    assert answer.context(harness) is not None, answer.out
    assert answer.took <= BUDGET + MARGIN, f"{held}, {source}, {harness}: answered in {answer.took:.2f} s"
    scene.next_pass()
    assert scene.banked_titles() == sorted([FIRST, *PROMPTS])


@pytest.mark.parametrize("held", ["banking lock", "ledger writer"])
def test_inside_a_deadline_each_wait_takes_only_what_is_left_and_outside_its_own(held, locs):
    import time

    from harnesslink_core.fastsqlite import Transaction, connect
    from harnesslink_core.store import deadline
    from harnesslink_core.store.ledger import open_ledger
    from harnesslink_core.store.lock import PassLock

    open_ledger(locs).close()
    holder = Holder(locs.agent_dir, held)

    def wait_once(own: float) -> float:
        started = time.monotonic()
        if held == "banking lock":
            lock = PassLock(locs.pass_lock)
            assert not lock.acquire(own)
            lock.close()
        else:
            db = connect(locs.ledger_path, timeout=own, isolation_level=None)
            with pytest.raises(Exception, match="locked"), Transaction(db):
                pass
            db.close()
        return time.monotonic() - started

    try:
        with deadline.within(leaving=1.0):
            assert not deadline.running()  # no deadline to leave time before
        with deadline.within(0.6):
            assert 0.3 < deadline.left(10) <= 0.6
            with deadline.within(leaving=0.4):
                assert deadline.left(10) <= 0.2
            first, second = wait_once(0.4), wait_once(10)  # the second has what the first left: 0.2 s
        alone = wait_once(0.4)
    finally:
        holder.release()
    assert 0.3 <= first < 1.0 and second < 0.6 and first + second < 1.2, (first, second)
    assert alone >= 0.35  # no deadline: the wait's own bound
    assert deadline.left(10) == 10
