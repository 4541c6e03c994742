"""Plan, the pass's first stage: which transcripts of each enabled harness to read.

Takes the ledger's read positions and one stat of each transcript; gives a `Plan` per harness: the
transcripts that changed since they were read (or hold a turn that may now settle by the quiet rule),
oldest first, with their stat and ledger record, and the harness's backfill window. Nothing is opened,
and no reader is imported unless it has something to read. Transcripts last written before the
window are remembered unopened, so the next pass skips them with one stat.
"""

from __future__ import annotations

import os

from .. import clock, config
from ..control import exclusion
from ..harnesses import registry
from ..store.ledger import open_ledger

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the stop hook's path)
if TYPE_CHECKING:
    from pathlib import Path

    from ..harnesses.base import Harness
    from ..paths import Locations
    from ..store.ledger import FileRecord
    from .pass_state import PassState, StopSignal

FIRST_WINDOW = 30 * 86400
KEPT_OUT = "kept out: "  # `files.excluded` of a transcript whose project is kept out (exclusion.py)


class Plan:
    """A harness's transcripts this pass reads: (path, stat, ledger record) of each, oldest first."""

    __slots__ = ("name", "harness", "window", "todo")

    def __init__(self, name: str, harness: Harness | None, window: float,
                 todo: list[tuple[str, os.stat_result, FileRecord | None]]) -> None:
        self.name, self.harness, self.window, self.todo = name, harness, window, todo


def enabled(locs: Locations, requested: list[str] | None, switches: config.Switches | None = None) -> list[str]:
    """The harnesses to bank (config.yml's switches), of those `requested` (None: all)."""
    switches = switches or config.switches(locs)
    if not switches.auto_bank:
        return []
    names = [n for n in switches.autobank if n in registry.MODULES]
    return [n for n in names if requested is None or n in requested]


def kept_out(p: PassState, cwd: str | None) -> str | None:
    """Why the project of `cwd` is kept out of memory (exclusion.py), or None; asked once a folder a pass."""
    if not cwd:
        return None
    if cwd not in p.kept_out_cwds:
        p.kept_out_cwds[cwd] = exclusion.is_excluded(p.locs, cwd)
    return p.kept_out_cwds[cwd]


def note_disabled(p: PassState, names: list[str], requested: list[str] | None) -> None:
    """A harness turned off pauses; turned back on, it banks the last 30 days, not the gap."""
    for name in registry.MODULES:
        if requested is not None and name not in requested:
            continue
        row = p.ledger.harness_row(name)
        if name not in names and row and row.enabled:
            p.ledger.set_harness(name, enabled=False)
        elif name in names and row and not row.enabled:
            p.ledger.set_harness(name, enabled=True, window_start=max(row.window_start, p.now - FIRST_WINDOW))


def plan(p: PassState, name: str, paths: list[Path] | None, stop: StopSignal | None) -> Plan | None:
    """What this pass reads of a harness's transcripts: those that changed, oldest first (None: no reader)."""
    harness: Harness | None = None
    row = p.ledger.harness_row(name)
    if row is None:
        p.ledger.set_harness(name, window_start=p.now - FIRST_WINDOW, enabled=True)
        window = p.now - FIRST_WINDOW
    else:
        window = row.window_start
    if paths is None:
        try:
            harness = registry.get(name)
        except ImportError:
            return None
        records = p.ledger.files(name)
        # plain strings: building 10,000 Path objects would cost more than the rest of a no-op pass
        found = [os.fspath(f) for f in harness.iter_transcripts(p.locs)]
        present = set(found)
        gone = [path for path in records if path not in present]
        if gone:
            p.ledger.forget_files(gone)
    else:
        found = [str(path) for path in paths if path.is_file()]
        records = p.ledger.files(name, found)
    todo: list[tuple[float, str, os.stat_result, FileRecord | None]] = []
    for path in found:
        try:
            st = os.stat(path)
        except OSError:
            continue
        rec = records.get(path)
        if _needs_read(p, path, st, rec, window, name, stop):
            todo.append((st.st_mtime, path, st, rec))
    todo.sort(key=lambda item: item[0])
    if todo and harness is None:
        try:
            harness = registry.get(name)  # only now: a pass with nothing to read imports no reader
        except ImportError:
            return None
    return Plan(name, harness, window, [(path, st, rec) for _, path, st, rec in todo])


def _needs_read(p: PassState, path: str, st: os.stat_result, rec: FileRecord | None, window: float,
                name: str, stop: StopSignal | None) -> bool:
    if rec is None or rec.read_end is None:
        if st.st_mtime < window:
            p.report.old_files += 1
            p.older(st.st_mtime)
            if rec is None:  # remember it unopened, so the next pass skips it with one stat
                from ..store.ledger import FileRecord

                p.ledger.save_file(FileRecord(path=path, harness=name, dev=st.st_dev, ino=st.st_ino,
                                              size=st.st_size, mtime=st.st_mtime))
            return False
        return True
    return read_again(st, rec, p.now, stop.session_id if stop is not None else None)


def read_again(st: os.stat_result, rec: FileRecord, now: float, stopped_session: str | None = None) -> bool:
    """Whether a pass reads a transcript it read before: it changed, or it has an open turn whose
    session just stopped or whose next check is due."""
    if (rec.size, rec.mtime, rec.ino) != (st.st_size, st.st_mtime, st.st_ino):
        return True
    if rec.open_turns == 0:
        return False
    if stopped_session is not None and rec.session_id == stopped_session:
        return True
    return rec.next_check is not None and now >= rec.next_check


def unread_bytes(locs: Locations, harnesses: list[str]) -> int:
    """The transcript bytes a drain of these harnesses has to read, as the ledger knows them: from
    where each transcript's last read left its first unsettled turn to its end, for those inside the
    window (`backfill`'s progress bar). One stat per transcript; nothing is opened."""
    now = clock.now()
    ledger = open_ledger(locs)
    try:
        total = 0
        for name in harnesses:
            try:
                harness = registry.get(name)
            except ImportError:
                continue
            row = ledger.harness_row(name)
            window = row.window_start if row else now - FIRST_WINDOW
            records = ledger.files(name)
            for path in harness.iter_transcripts(locs):
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                total += _unread(st, records.get(os.fspath(path)), window, now)
        return total
    finally:
        ledger.close()


def _unread(st: os.stat_result, rec: FileRecord | None, window: float, now: float) -> int:
    """What `plan` and the read stage's resume point would have a pass read of one transcript (the
    digests aside: a transcript rewritten under us is read again from its start, and the bar's total grows)."""
    if rec is None or rec.read_end is None:
        return 0 if st.st_mtime < window else st.st_size
    if (rec.excluded or "").startswith(KEPT_OUT):
        return 0  # never read past its cwd while its project is kept out
    if not read_again(st, rec, now):
        return 0
    if st.st_size < rec.read_end:
        return st.st_size  # shrank: read again from the start
    return st.st_size - rec.resume
