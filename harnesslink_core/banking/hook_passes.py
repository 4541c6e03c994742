"""The passes the hooks run, and when each waits for the lock (SPEC §5, §7).

- stop: the finished turn, with the harness's stop signal, after the answer (`bank_finished_turn`);
- pre-compact: what is settled in the transcript about to be compacted, after the answer
  (`bank_before_compaction`);
- session-start: after a compaction, the session's own transcript first, waiting a bounded time for a
  pass that holds the lock (the pre-compact's, most often), so that the brief gives the state file as the
  transcript now has it; then, when one is due, a pass with a small budget (`session_start_pass`). The
  whole hook answers within `hooks.SESSION_START_DEADLINE` of its start (`store.deadline`): every wait on its way
  (the lock, the ledger's and the index's busy timeouts) takes only what is left, and what it could not
  bank in time is left to the next pass.

The stop and pre-compact passes run in a process the harness neither waits for nor can kill
(`hooks.process_main`): whatever kills them, the ledger's positions and reservations make the next pass
bank what they did not, and nothing twice. Imported only once a hook runs a pass: the answer never waits
for this module's imports.
"""

from __future__ import annotations

import os
import time

from .. import log
from ..store import deadline
from . import autobank, background
from .pass_state import StopSignal

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hooks' path)
if TYPE_CHECKING:
    from pathlib import Path

    from ..paths import Locations

SESSION_START_BUDGET = 1024 * 1024  # bytes of new transcript per harness read before the brief
PRE_COMPACT_WAIT = autobank.STOP_WAIT  # nobody waits for this pass: it waits for the lock as the stop's does
COMPACT_BRIEF_WAIT = 3.0  # seconds the brief after a compaction waits for the lock, of the hook's 5 in all
DUE_PASS_ROOM = 1.5  # a pass of every transcript starts with this much time left, else a background pass runs it
BRIEF_ROOM = 0.5  # the passes end this long before the hook's deadline: the brief is made after them


def bank_finished_turn(locs: Locations, signal: StopSignal) -> None:
    """The stop hook's pass; the rest (a backlog, a pass locked out) is left to a background pass."""
    paths = [_path(signal.transcript_path)] if signal.transcript_path else None
    report = autobank.run_pass(locs, paths=paths, stop=signal, harnesses=[signal.harness])
    if report.locked or paths is not None or report.backlog:
        start_pass_if_due(locs)


def bank_before_compaction(locs: Locations, harness: str, transcript: str | None) -> None:
    """The pre-compact hook's pass: the turns settled in the transcript and the session's state file, as
    they stand before the compaction (the session-start hook after it reads the transcript again)."""
    paths = [_path(transcript)] if transcript else None
    report = autobank.run_pass(locs, paths=paths, harnesses=[harness], wait=PRE_COMPACT_WAIT)
    if report.locked or report.backlog:
        start_pass_if_due(locs)


def session_start_pass(locs: Locations, harness: str, own_transcript: str | None) -> None:
    """What session start banks before its brief: `own_transcript` first when given (after a compaction),
    then, when one is due, a pass of every transcript with a small budget (a session should not start late
    because of a backlog; the rest drains in a background pass)."""
    with deadline.within(leaving=BRIEF_ROOM):
        _session_start_passes(locs, harness, own_transcript)


def _session_start_passes(locs: Locations, harness: str, own_transcript: str | None) -> None:
    if own_transcript:
        asked = time.monotonic()
        report = autobank.run_pass(locs, paths=[_path(own_transcript)], harnesses=[harness],
                                   budget=SESSION_START_BUDGET, wait=COMPACT_BRIEF_WAIT)
        if report.locked:
            log.warning(locs, f"session start: another pass held the lock or the ledger for "
                              f"{time.monotonic() - asked:.1f} s; the brief gives the session's state file as it was")
    if not background.pass_due(locs):
        return
    if not deadline.has_left(DUE_PASS_ROOM) or autobank.run_pass(locs, budget=SESSION_START_BUDGET).backlog:
        background.spawn_background_pass(locs)


def start_pass_if_due(locs: Locations) -> None:
    if background.pass_due(locs):
        background.spawn_background_pass(locs)


def _path(text: str) -> Path:
    from pathlib import Path

    return Path(os.path.expanduser(text))
