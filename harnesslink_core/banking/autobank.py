"""The autobank pass (SPEC §5): read new transcript bytes, settle turns, bank each exactly once.

A pass is five stages, one module each, run by `_Pass` here:

1. `plan`: which transcripts of each enabled harness changed (one stat each; nothing is opened);
2. `read`: a transcript's new bytes into turns, from where the last read left its first unsettled turn
   (the transcripts never read before by the read-ahead's child, `readahead.py`, while the pass writes);
3. `settle`: which turns are finished (SPEC §4), and each banked turn's entry rendered;
4. `commit`: a batch of settled transcripts into the bank (`store.commit.commit_entries`), and where
   each read ended into the ledger;
5. `finish`: the touched projects' state files, MAIN.md, summaries and search index, and the
   supersessions their new entries may bring.

Every writer of the bank holds the pass lock (`store.lock`); a hook that finds it taken does not wait
(except a stop signal, briefly). The pass holds it only for short steps: planning, and then, a batch of
transcripts at a time, committing their settled turns and saving their read positions; reading and
settling a transcript (one turn's slow work) happen without it, so a slow or huge transcript never keeps
another session's stop hook waiting.

A pass with nothing new to read (most stop hooks) imports no reader and no stage past the plan, nor
yaml, json, re, dataclasses or typing: the stop hook's whole process costs a small multiple of a bare start.
"""

from __future__ import annotations

import sys
import time

from .. import clock, config, log
from ..errors import LockLost
from ..store.ledger import open_ledger
from ..store.lock import PassLock
from . import background, finish, plan
from .pass_state import COMMIT_WAIT, PassReport, PassState, StopSignal
from .plan import KEPT_OUT, unread_bytes  # noqa: F401 - the pass's own names, for its callers (status, backfill)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the stop hook's path)
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from ..paths import Locations
    from .pass_state import FileWork

DEFAULT_BUDGET = 8 * 1024 * 1024  # bytes of new transcript per harness per pass
# A drain's passes (backfill) take more each: every pass ends with each touched project's state files,
# MAIN.md, summaries and index (~0.1 s for a few projects) and a pause; memory grows with what one holds.
DRAIN_BUDGET = 64 * 1024 * 1024
STOP_WAIT = 10.0  # a stop signal waits this long for the lock
STOP_RETRIES = 20  # ... and re-reads a transcript that lags behind the hook this often
STOP_RETRY_DELAY = 0.1
BATCH_TURNS = 256  # entries written (and synced together) under one hold of the lock (~0.2 s for 256)
DRAIN_PAUSE = 0.05  # between drained passes, so a stop hook waiting for the lock gets it


def run_pass(
    locs: Locations,
    *,
    paths: list[Path] | None = None,
    stop: StopSignal | None = None,
    harnesses: list[str] | None = None,
    budget: int = DEFAULT_BUDGET,
    wait: float = 0.0,
    now: float | None = None,
    detect: bool = False,
) -> PassReport:
    """One incremental pass. Never raises for a transcript's fault; returns at once if another pass
    holds the lock.

    With `detect` (the background pass, a backfill) it proposes supersessions for the entries it and the
    hooks' passes placed (`control.detect`); a hook's pass only notes what it placed for the next one.

    With a stop signal it waits (up to STOP_WAIT seconds) for the lock instead: the harness
    waits for its Stop hook anyway, and the turn should be in the bank when the CLI exits.
    """
    if stop is not None:
        wait = max(wait, STOP_WAIT)
    locs.agent_dir.mkdir(parents=True, exist_ok=True)
    ledger = open_ledger(locs)
    try:
        if stop is not None:
            ledger.note_stop(stop.harness, stop.session_id, stop.at)
        lock = PassLock(locs.pass_lock)
        try:
            if not lock.acquire(wait):
                return PassReport(locked=True)
            report = PassReport()
            for _ in range(STOP_RETRIES):
                report = _Pass(locs, ledger, budget, now if now is not None else clock.now(), lock,
                               max(wait, COMMIT_WAIT), detect).run(harnesses=harnesses, paths=paths, stop=stop)
                if not report.stop_waiting or report.locked:
                    break
                # the harness said the turn ended, but its transcript lags behind: give it a moment
                lock.release()
                time.sleep(STOP_RETRY_DELAY)
                if not lock.acquire(wait):
                    break
            return report
        finally:
            lock.close()
    finally:
        ledger.close()


def widen_window(locs: Locations, days: float, harnesses: list[str] | None = None) -> list[str]:
    """`backfill --days N`: bank turns from the last N days and re-read every transcript once."""
    names = plan.enabled(locs, harnesses)
    ledger = open_ledger(locs)
    try:
        start = clock.now() - days * 86400
        for name in names:
            row = ledger.harness_row(name)
            window = min(row.window_start, start) if row else start
            with ledger.write():
                ledger.set_harness(name, window_start=window, enabled=True)
                ledger.reset_positions(name)
    finally:
        ledger.close()
    return names


def drain(locs: Locations, *, harnesses: list[str] | None = None, wait: float = 600.0,
          progress: Callable[[PassReport, int], None] | None = None, max_passes: int = 100_000,
          budget: int = DRAIN_BUDGET) -> PassReport:
    """Run passes until no backlog is left; the totals of all of them."""
    total = PassReport()
    for n in range(max_passes):
        report = run_pass(locs, harnesses=harnesses, wait=wait, budget=budget, detect=True)
        if report.locked:
            total.locked = True
            break
        for name in ("banked", "skipped", "dropped", "duplicates", "excluded", "bytes_read", "errors", "before_window"):
            setattr(total, name, getattr(total, name) + getattr(report, name))
        total.old_files = max(total.old_files, report.old_files)  # every pass sees the same old files again
        if report.oldest is not None and (total.oldest is None or report.oldest < total.oldest):
            total.oldest = report.oldest
        total.touched |= report.touched
        total.failure = report.failure or total.failure
        total.entries += report.entries
        total.backlog, total.open_turns, total.disabled = report.backlog, report.open_turns, report.disabled
        if progress:
            progress(total, n + 1)
        if report.backlog == 0 or report.disabled or report.bytes_read == 0:
            break
        time.sleep(DRAIN_PAUSE)
    return total


class _Pass(PassState):
    """One pass: its stages run in order (see the module docstring)."""

    def run(self, *, harnesses: list[str] | None, paths: list[Path] | None, stop: StopSignal | None) -> PassReport:
        switches = config.switches(self.locs)
        if switches.problem:
            log.warning(self.locs, switches.problem)
        if not switches.auto_bank:
            self.report.disabled = True
            return self.report
        enabled = plan.enabled(self.locs, harnesses, switches)
        plan.note_disabled(self, enabled, harnesses)
        return self._run(enabled, paths, stop)

    def _run(self, enabled: list[str], paths: list[Path] | None, stop: StopSignal | None) -> PassReport:
        try:
            plans = []
            for name in enabled:
                try:
                    planned = plan.plan(self, name, paths, stop)
                    if planned is not None:
                        plans.append(planned)
                except Exception as exc:  # noqa: BLE001 - one harness's fault must not stop the others
                    self.error(f"{name}: pass failed: {exc!r}", name, None, exc)
            if any(planned.todo for planned in plans):
                self._read_and_commit(plans, stop)
            self.locked()
            finish.finish_projects(self)
            finish.propose_supersessions(self)
        except LockLost:
            self.report.locked = True
            return self.report
        finally:
            durable = sys.modules.get("harnesslink_core.store.durable")
            if durable is not None:
                durable.stop_syncing()
        if paths is None:
            background.mark_pass(self.locs)
            from ..store import identity

            identity.forget_cache(self.locs)  # an IDENTITY.md pulled into a known folder counts from now
        return self.report

    def _read_and_commit(self, plans: list[plan.Plan], stop: StopSignal | None) -> None:
        """Read, settle and commit each plan's transcripts, a batch at a time (imported only now: a pass with
        nothing to read needs none of these stages)."""
        from . import read

        try:
            self.ahead = read.read_ahead(self, plans)
        except Exception as exc:  # noqa: BLE001 - the pass reads everything itself
            self.error(f"read-ahead: {exc!r}", None, None, exc)
        try:
            for planned in plans:
                try:
                    self._harness(planned, stop)
                except LockLost:
                    raise
                except Exception as exc:  # noqa: BLE001 - one harness's fault must not stop the others
                    self.error(f"{planned.name}: pass failed: {exc!r}", planned.name, None, exc)
            if self.ahead is not None:
                self.ahead.take(read.MAKE_INDEX)  # the refresh would make it again while the child does
        finally:
            if self.ahead is not None:
                self.ahead.close()
                self.ahead = None

    def _harness(self, planned: plan.Plan, stop: StopSignal | None) -> None:
        from . import commit, read, settle

        remaining = self.budget
        batch: list[FileWork] = []
        for path, st, rec in planned.todo:
            if remaining <= 0:
                self.report.backlog += 1
                continue
            self.remember_redactions()
            self.unlocked()
            assert planned.harness is not None  # a plan with transcripts to read has its reader (plan.py)
            try:
                work, took = read.read_file(self, planned.name, planned.harness, _as_path(path), st, rec, remaining)
                remaining -= took
                if work is not None:
                    settle.settle_file(self, work, planned.window, stop)
            except Exception as exc:  # noqa: BLE001 - a transcript we cannot read is a log line
                self.error(f"{path}: {exc!r}", planned.name, str(path), exc)
                continue
            if work is not None:
                batch.append(work)
            if sum(len(w.prepared) for w in batch) >= BATCH_TURNS:
                commit.commit_batch(self, batch)
                batch = []
        commit.commit_batch(self, batch)
        self.locked()
        self.ledger.set_harness(planned.name, last_pass=self.now, backlog=self.report.backlog)

def _as_path(text: str) -> Path:
    from pathlib import Path

    return Path(text)

