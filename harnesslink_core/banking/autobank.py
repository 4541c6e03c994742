"""The autobank pass (SPEC §5): read new transcript bytes, settle turns, bank each exactly once.

Every writer of the bank holds `autobank.lock`; a hook that finds it taken does not wait
(except a stop signal, briefly). The pass holds it only for short steps: deciding what to
read, and then, a batch of transcripts at a time, reserving, writing and marking their settled
turns and saving their read positions; reading a transcript and rendering its entries (one
turn's slow work) happen without it, so a slow or huge transcript never keeps another
session's stop hook waiting. For each enabled harness the pass stats every transcript, reads
only files that changed (or hold a turn that may now settle by the quiet rule), from where the
last read left the first unsettled turn, within a byte budget. Settled turns are reserved in
the ledger, written, then marked banked; the projects it touched get their MAIN.md, summaries,
state files and search index refreshed.

A pass with nothing new to read (most stop hooks) imports no reader, nor yaml, json, re,
dataclasses or typing: the stop hook's whole process costs a small multiple of a bare start.
"""

from __future__ import annotations

import os
import sys
import time

from .. import clock, config, log, wirejson
from ..control import exclusion
from ..harnesses import registry
from ..store.ledger import open_ledger, owner_id, tombstones
from . import background

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the stop hook's path)
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from ..harnesses.base import Harness
    from ..model import Reading, StateUpdate, Turn
    from ..paths import Locations
    from ..store import bank
    from ..store.bank import Entry
    from ..store.entries import Entry as ParsedEntry
    from ..store.ledger import FileRecord, Ledger
    from .readahead import ReadAhead

DEFAULT_BUDGET = 8 * 1024 * 1024  # bytes of new transcript per harness per pass
# A drain's passes (backfill) take more each: every pass ends with each touched project's state files,
# MAIN.md, summaries and index (~0.1 s for a few projects) and a pause; memory grows with what one holds.
DRAIN_BUDGET = 64 * 1024 * 1024
FIRST_WINDOW = 30 * 86400
QUIET = 300.0  # a transcript quiet this long settles its answered last turn
GIVE_UP = 7 * 86400.0  # a turn still waiting after this long is dropped
SKIP_RESULT_CHARS = 200
HEAD_BYTES = 4096  # digests that tell a file replaced or rewritten from one that grew
ANCHOR_BYTES = 256
STOP_WAIT = 10.0  # a stop signal waits this long for the lock
STOP_RETRIES = 20  # ... and re-reads a transcript that lags behind the hook this often
STOP_RETRY_DELAY = 0.1
COMMIT_WAIT = 10.0  # a pass that has read a batch waits this long to take the lock again and write it
DETECT_PENDING_MAX = 2000  # entries a hook's passes leave for the next detecting pass (the newest kept)
BATCH_TURNS = 256  # entries written (and synced together) under one hold of the lock (~0.2 s for 256)
READ_HERE = 0.3  # of a read-ahead's bytes, read by the pass itself while the child starts (`_head`)
MAKE_INDEX = "make index"  # the read-ahead's last job when there is no index yet (`_make_index`)
LOCK_POLL = 0.05
DRAIN_PAUSE = 0.05  # between drained passes, so a stop hook waiting for the lock gets it
CWD_PEEK_BYTES = 256 * 1024  # how far into a transcript we look for its cwd before reading it
KEPT_OUT = "kept out: "  # `files.excluded` of a transcript whose project is kept out (exclusion.py)
TEMP_STALE = 600.0  # a temporary file this old was left by a writer that died: removed
LONG_LINE = "long_line"  # the pass's key in a read position's carry: a partial line past MAX_LINE (base.py)


class StopSignal:
    """A harness told us a session's turn just ended (its Stop hook, or our extension's end of run)."""

    __slots__ = ("harness", "session_id", "transcript_path", "at", "last_message", "turn_id")

    def __init__(self, harness: str, session_id: str, transcript_path: str | None, at: float,
                 last_message: str | None = None, turn_id: str | None = None) -> None:
        self.harness, self.session_id, self.transcript_path, self.at = harness, session_id, transcript_path, at
        self.last_message = last_message
        self.turn_id = turn_id  # Codex names the turn that ended


class PassReport:
    def __init__(self, locked: bool = False, disabled: bool = False) -> None:
        self.locked = locked
        self.disabled = disabled
        self.banked = 0
        self.skipped = 0
        self.dropped = 0
        self.duplicates = 0
        self.excluded = 0  # turns of projects kept out (memory.exclude, .harnesslink-off)
        self.bytes_read = 0
        self.backlog = 0  # transcripts with unread bytes left for a later pass
        self.errors = 0
        self.failure: str | None = None  # the last write that failed (full disk, permissions, database), in one line
        self.touched: set[str] = set()  # project slugs
        self.entries: list[Path] = []
        self.open_turns = 0
        self.stop_waiting = False  # the stopped session's last turn is not in its transcript yet
        self.before_window = 0  # turns of transcripts read here that ended before the backfill window
        self.old_files = 0  # transcripts last written before the window: not opened at all
        self.oldest: float | None = None  # the oldest of either: what a wider `backfill --days` would reach

    def __repr__(self) -> str:
        return "PassReport(" + ", ".join(f"{k}={v!r}" for k, v in vars(self).items()) + ")"


class PassLock:
    """`autobank.lock`, taken with `fcntl.flock` as filelock takes it on Unix (the same file, the same
    lock: our other writers hold it through filelock), polled until `wait` runs out; filelock itself
    where there is no flock. Taken and let go many times by one pass (see the module docstring)."""

    def __init__(self, path: os.PathLike[str] | str) -> None:
        self.path = os.fspath(path)
        self.fd: int | None = None
        self.fallback = None
        self.held = False

    def acquire(self, wait: float) -> bool:
        if self.held:
            return True
        if self.fallback is None:
            try:
                import fcntl
            except ImportError:
                fcntl = None
            if fcntl is not None:
                taken = self._flock(fcntl, wait)
                if taken is not None:
                    return taken
        return self._filelock(wait)

    def _flock(self, fcntl, wait: float) -> bool | None:
        """Taken, or not within `wait`; None where this file system has no flock."""
        if self.fd is None:
            flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
            try:
                self.fd = os.open(self.path, flags, 0o666)
            except PermissionError:  # someone else's lock file: a lock needs no write access
                self.fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                self.held = True
                return True
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    return False
                time.sleep(min(LOCK_POLL, max(0.0, deadline - time.monotonic())))
            except OSError:  # a file system without flock: filelock knows what to do there
                os.close(self.fd)
                self.fd = None
                return None

    def _filelock(self, wait: float) -> bool:
        from filelock import FileLock, Timeout

        if self.fallback is None:
            self.fallback = FileLock(self.path)
        try:
            self.fallback.acquire(timeout=wait)
        except Timeout:
            return False
        self.held = True
        return True

    def release(self) -> None:
        if not self.held:
            return
        self.held = False
        if self.fallback is not None:
            self.fallback.release()
        else:
            import fcntl

            fcntl.flock(self.fd, fcntl.LOCK_UN)

    def close(self) -> None:
        self.release()
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


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
    names = _enabled(locs, harnesses)
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
    """What `_Pass._needs_read` and `_start` would have a pass read of one transcript (the digests
    aside: a transcript rewritten under us is read again from its start, and the bar's total grows)."""
    if rec is None or rec.read_end is None:
        return 0 if st.st_mtime < window else st.st_size
    if (rec.excluded or "").startswith(KEPT_OUT):
        return 0  # never read past its cwd while its project is kept out
    if not _read_again(st, rec, now):
        return 0
    if st.st_size < rec.read_end:
        return st.st_size  # shrank: read again from the start
    return st.st_size - rec.resume


def _read_again(st: os.stat_result, rec: FileRecord, now: float, stopped_session: str | None = None) -> bool:
    """Whether a pass reads a transcript it read before: it changed, or it has an open turn whose
    session just stopped or whose next check is due."""
    if (rec.size, rec.mtime, rec.ino) != (st.st_size, st.st_mtime, st.st_ino):
        return True
    if rec.open_turns == 0:
        return False
    if stopped_session is not None and rec.session_id == stopped_session:
        return True
    return rec.next_check is not None and now >= rec.next_check


def _enabled(locs: Locations, requested: list[str] | None, switches: config.Switches | None = None) -> list[str]:
    switches = switches or config.switches(locs)
    if not switches.auto_bank:
        return []
    names = [n for n in switches.autobank if n in registry.MODULES]
    return [n for n in names if requested is None or n in requested]


class _FileWork:
    """One transcript read and settled without the lock, waiting for the lock to be written."""

    __slots__ = ("name", "path", "st", "rec", "reading", "start", "session_id", "still_open", "prepared", "long_line")

    def __init__(self, name: str, path: Path, st: os.stat_result, rec: FileRecord | None, reading: Reading,
                 start: int, session_id: str | None, still_open: list[tuple[int, float]],
                 prepared: list[tuple[str, Turn, Entry | None]], long_line: list[int] | None) -> None:
        self.name, self.path, self.st, self.rec, self.reading, self.start = name, path, st, rec, reading, start
        self.session_id, self.still_open, self.prepared, self.long_line = session_id, still_open, prepared, long_line


class _Plan:
    """A harness's transcripts this pass reads: (path, stat, ledger record) of each, oldest first."""

    __slots__ = ("name", "harness", "window", "todo")

    def __init__(self, name: str, harness: Harness | None, window: float,
                 todo: list[tuple[str, os.stat_result, FileRecord | None]]) -> None:
        self.name, self.harness, self.window, self.todo = name, harness, window, todo


class _Held:
    """The lock of a pass whose caller holds it already."""

    held = True

    def acquire(self, wait: float) -> bool:
        return True

    def release(self) -> None:
        pass


class _LockLost(Exception):
    """The lock could not be taken back within COMMIT_WAIT: what was read is read again next pass."""


class _Pass:
    def __init__(self, locs: Locations, ledger: Ledger, budget: int, now: float, lock: PassLock | None = None,
                 commit_wait: float = COMMIT_WAIT, detect: bool = False):
        self.locs = locs
        self.detect = detect
        self.ledger = ledger
        self.lock = lock or _Held()
        self.budget = budget
        self.now = now
        self.commit_wait = commit_wait
        self.owner = owner_id()
        self.report = PassReport()
        self.sessions: dict[tuple[str, str], tuple[str, list[StateUpdate]]] = {}
        self.listings: dict[Path, set[str]] = {}
        self.kept_out_cwds: dict[str, str | None] = {}
        self.placed: dict[str, Entry] = {}  # the entries this pass wrote, by path
        # id(entry) -> (entry, the texts, their `index.computed_columns`, whether they state a change, if this pass
        # detects), for entries written (or being written)
        self.computed: dict[int, tuple[Entry, tuple[str, str, str, str], tuple[str, str, str], bool | None]] = {}
        self.stated: dict[str, bool] = {}  # whether each entry this pass placed states a change (`detect.worth_a_look`)
        self.uses: list[tuple[Turn, list[tuple[str, str]]]] = []  # settled turns' calls that may open an entry
        self.history: list[dict[str, str]] = []  # records for history.jsonl, appended once per commit
        self.remembering = False  # whether this pass turned `redact.remember` on
        self.parsed: dict[str, tuple[int, ParsedEntry, tuple[str, str, str] | None]] | None = None  # _placed_entries
        self.ahead: ReadAhead | None = None  # the child reading this pass's new transcripts (`readahead.py`)

    def _unlocked(self) -> None:
        """Slow work ahead (reading a transcript, rendering its entries): others may write meanwhile."""
        self.lock.release()

    def _locked(self) -> None:
        if self.lock.held:
            return
        if not self.lock.acquire(self.commit_wait):
            raise _LockLost
        self.listings.clear()  # another writer may have added entries while we did not hold it

    def run(self, *, harnesses: list[str] | None, paths: list[Path] | None, stop: StopSignal | None) -> PassReport:
        switches = config.switches(self.locs)
        if switches.problem:
            log.warning(self.locs, switches.problem)
        if not switches.auto_bank:
            self.report.disabled = True
            return self.report
        enabled = _enabled(self.locs, harnesses, switches)
        self._note_disabled(enabled, harnesses)
        try:
            return self._run(enabled, paths, stop)
        finally:
            if self.remembering:
                from .. import redact as module

                module.remember(False)

    def _run(self, enabled: list[str], paths: list[Path] | None, stop: StopSignal | None) -> PassReport:
        try:
            plans = []
            for name in enabled:
                try:
                    plan = self._plan(name, paths, stop)
                    if plan is not None:
                        plans.append(plan)
                except Exception as exc:  # noqa: BLE001 - one harness's fault must not stop the others
                    self._error(f"{name}: pass failed: {exc!r}", name, None, exc)
            try:
                self.ahead = self._read_ahead(plans)
            except Exception as exc:  # noqa: BLE001 - the pass reads everything itself
                self._error(f"read-ahead: {exc!r}", None, None, exc)
            try:
                for plan in plans:
                    try:
                        self._harness(plan, stop)
                    except _LockLost:
                        raise
                    except Exception as exc:  # noqa: BLE001 - one harness's fault must not stop the others
                        self._error(f"{plan.name}: pass failed: {exc!r}", plan.name, None, exc)
                if self.ahead is not None:
                    self.ahead.take(MAKE_INDEX)  # the refresh below would make it again while the child does
            finally:
                if self.ahead is not None:
                    self.ahead.close()
                    self.ahead = None
            self._locked()
            self._finish_projects()
            self._propose_supersessions()
        except _LockLost:
            self.report.locked = True
            return self.report
        finally:
            bank = sys.modules.get("harnesslink_core.store.bank")
            if bank is not None:
                bank.stop_syncing()
        if paths is None:
            background.mark_pass(self.locs)
            from ..store import identity

            identity.forget_cache(self.locs)  # an IDENTITY.md pulled into a known folder counts from now
        return self.report

    def _remember_redactions(self) -> None:
        """From the first transcript read to the end of the pass, a text redacted once is not redacted again
        (`redact.remember`; only now: a pass with nothing to read imports no redact)."""
        if not self.remembering:
            from .. import redact as module

            module.remember(True)
            self.remembering = True

    def _note_disabled(self, enabled: list[str], requested: list[str] | None) -> None:
        """A harness turned off pauses; turned back on, it banks the last 30 days, not the gap."""
        for name in registry.MODULES:
            if requested is not None and name not in requested:
                continue
            row = self.ledger.harness_row(name)
            if name not in enabled and row and row.enabled:
                self.ledger.set_harness(name, enabled=False)
            elif name in enabled and row and not row.enabled:
                self.ledger.set_harness(name, enabled=True, window_start=max(row.window_start, self.now - FIRST_WINDOW))

    # -- one harness -----------------------------------------------------
    def _plan(self, name: str, paths: list[Path] | None, stop: StopSignal | None) -> _Plan | None:
        """What this pass reads of a harness's transcripts: those that changed, oldest first (None: no reader)."""
        harness: Harness | None = None
        row = self.ledger.harness_row(name)
        if row is None:
            self.ledger.set_harness(name, window_start=self.now - FIRST_WINDOW, enabled=True)
            window = self.now - FIRST_WINDOW
        else:
            window = row.window_start
        if paths is None:
            try:
                harness = registry.get(name)
            except ImportError:
                return None
            records = self.ledger.files(name)
            # plain strings: building 10,000 Path objects would cost more than the rest of a no-op pass
            found = [os.fspath(f) for f in harness.iter_transcripts(self.locs)]
            present = set(found)
            gone = [p for p in records if p not in present]
            if gone:
                self.ledger.forget_files(gone)
        else:
            found = [str(p) for p in paths if p.is_file()]
            records = self.ledger.files(name, found)
        todo: list[tuple[float, str, os.stat_result, FileRecord | None]] = []
        for path in found:
            try:
                st = os.stat(path)
            except OSError:
                continue
            rec = records.get(path)
            if self._needs_read(path, st, rec, window, name, stop):
                todo.append((st.st_mtime, path, st, rec))
        todo.sort(key=lambda item: item[0])
        if todo and harness is None:
            try:
                harness = registry.get(name)  # only now: a pass with nothing to read imports no reader
            except ImportError:
                return None
        return _Plan(name, harness, window, [(path, st, rec) for _, path, st, rec in todo])

    def _read_ahead(self, plans: list[_Plan]) -> ReadAhead | None:
        """A child that reads the transcripts never read before (`readahead.py`) of each harness whose
        transcripts all fit its byte budget: its reads are then the same as this process's would be."""
        jobs = []
        for plan in plans:
            if plan.harness is not None and sum(st.st_size for _, st, _ in plan.todo) <= self.budget:
                jobs += [(path, lambda h=plan.harness, p=path, w=plan.window: self._read_fresh(h, p, w))
                         for path, _, rec in plan.todo if rec is None]
        if len(jobs) < 2:
            return None  # a hook's pass (one transcript): not even the module is imported
        from .readahead import ReadAhead

        jobs = jobs[_head(plans, jobs):]
        if not self.locs.index_file.exists():  # made by the child once it has read, while this writes
            jobs.append((MAKE_INDEX, self._make_index))
        return ReadAhead.start(jobs, before_fork=lambda: _warm(self.detect))

    def _make_index(self) -> bool:
        """In the read-ahead's child: the search index made (its schema and vocabulary, ~20 ms), so that the
        pass's final refresh finds it made. Another process's: the child holds none of the pass's handles."""
        from ..recall import index

        index.connect(self.locs).close()
        return True

    def _harness(self, plan: _Plan, stop: StopSignal | None) -> None:
        name, harness, window = plan.name, plan.harness, plan.window
        remaining = self.budget
        batch: list[_FileWork] = []
        for path, st, rec in plan.todo:
            if remaining <= 0:
                self.report.backlog += 1
                continue
            self._remember_redactions()
            self._unlocked()
            try:
                work, read = self._read_file(name, harness, _as_path(path), st, rec, window, remaining, stop)
                remaining -= read
            except Exception as exc:  # noqa: BLE001 - a transcript we cannot read is a log line
                self._error(f"{path}: {exc!r}", name, str(path), exc)
                continue
            if work is not None:
                batch.append(work)
            if sum(len(w.prepared) for w in batch) >= BATCH_TURNS:
                self._commit(batch, window)
                batch = []
        self._commit(batch, window)
        self._locked()
        self.ledger.set_harness(name, last_pass=self.now, backlog=self.report.backlog)

    def _older(self, when: float) -> None:
        if when and (self.report.oldest is None or when < self.report.oldest):
            self.report.oldest = when

    def _needs_read(self, path: str, st: os.stat_result, rec: FileRecord | None, window: float,
                    name: str, stop: StopSignal | None) -> bool:
        if rec is None or rec.read_end is None:
            if st.st_mtime < window:
                self.report.old_files += 1
                self._older(st.st_mtime)
                if rec is None:  # remember it unopened, so the next pass skips it with one stat
                    from ..store.ledger import FileRecord

                    self.ledger.save_file(FileRecord(path=path, harness=name, dev=st.st_dev, ino=st.st_ino,
                                                     size=st.st_size, mtime=st.st_mtime))
                return False
            return True
        return _read_again(st, rec, self.now, stop.session_id if stop is not None else None)

    def _kept_out(self, cwd: str | None) -> str | None:
        if not cwd:
            return None
        if cwd not in self.kept_out_cwds:
            self.kept_out_cwds[cwd] = exclusion.is_excluded(self.locs, cwd)
        return self.kept_out_cwds[cwd]

    def _skip_kept_out(self, name: str, path: Path, st: os.stat_result, rec: FileRecord | None) -> bool:
        """A transcript of a project kept out is not read past its cwd: remember it as read to its end."""
        cwd = rec.cwd if rec and rec.cwd else _peek_cwd(path)
        reason = self._kept_out(cwd)
        if reason is None:
            return False
        from ..store.ledger import FileRecord

        self.ledger.save_file(FileRecord(
            path=str(path), harness=name, dev=st.st_dev, ino=st.st_ino, size=st.st_size, mtime=st.st_mtime,
            read_end=st.st_size, resume=st.st_size, session_id=rec.session_id if rec else None, cwd=cwd,
            excluded=KEPT_OUT + reason, bad_lines=rec.bad_lines if rec else 0))
        return True

    def _read_file(self, name: str, harness: Harness, path: Path, st: os.stat_result, rec: FileRecord | None,
                   window: float, budget: int, stop: StopSignal | None) -> tuple[_FileWork | None, int]:
        """Read a transcript's new bytes and settle its turns, without the lock: the work to write
        (None for a transcript kept out) and the bytes read."""
        if self._skip_kept_out(name, path, st, rec):
            return None, 0
        # kept out until now: the turns it held then (the bytes we skipped) stay out; it is read again
        # from the start, for its session facts
        kept_out_until = rec.read_end if rec and (rec.excluded or "").startswith(KEPT_OUT) else None
        start, carry = self._start(path, st, rec)
        long_line = carry.pop(LONG_LINE, None)
        ahead = self.ahead.take(os.fspath(path)) if self.ahead is not None and rec is None else None
        if ahead is not None:
            reading, memo, made = ahead
            long_line = self._took(name, path, start, reading, memo)
            rendered = {id(turn): each for turn, each in zip(reading.turns, made) if each is not None}
        else:
            reading, long_line = self._read(name, harness, path, start, carry, budget, long_line)
            rendered = {}
        session = reading.session
        session_id = session.session_id if session else (rec.session_id if rec else None)
        still_open: list[tuple[int, float]] = []
        prepared: list[tuple[str, Turn, Entry | None]] = []
        if reading.excluded is None:
            settled, still_open = self._verdicts(name, reading, st.st_mtime, session_id, kept_out_until, stop)
            prepared = self._prepare(settled, window, session.cwd if session else "", rendered)
        if session is not None and reading.states and kept_out_until is None:
            self._note_states(session.harness, session.session_id, session.cwd, reading.states)
        work = _FileWork(name, path, st, rec, reading, start, session_id, still_open, prepared, long_line)
        return work, max(0, reading.end - start)

    def _read(self, name: str, harness: Harness, path: Path, start: int, carry: dict, budget: int,
              long_line: list[int] | None) -> tuple[Reading, list[int] | None]:
        from ..harnesses import base

        with base.remembering_long_line(path, long_line) as memo:
            reading = harness.read(path, start, carry, budget)
        return reading, self._took(name, path, start, reading, memo.value)

    def _took(self, name: str, path: Path, start: int, reading: Reading, long_line: list[int] | None
              ) -> list[int] | None:
        """Count what a read found; the partial line past the cap that the next read will reach again (it
        starts after where this one ended)."""
        self.report.bytes_read += max(0, reading.end - start)
        if not reading.at_eof:
            self.report.backlog += 1
        if reading.bad_lines:
            self._error(f"{path}: {reading.bad_lines} unreadable lines skipped", name, str(path))
        return long_line if long_line and long_line[0] >= reading.end else None

    def _read_fresh(self, harness: Harness, path: str, window: float
                    ) -> tuple[Reading, list[int] | None, list[tuple[Entry, str, tuple | None] | None]] | None:
        """In the read-ahead's child: a transcript never read before, whole, and for each turn `_prepare` may
        bank, its entry, its checkpoint's note and its index columns, as the pass would make them (from the
        same reading: `_read_ahead`)."""
        from ..harnesses import base
        from ..store import bank

        if self._kept_out(_peek_cwd(_as_path(path))):
            return None  # not read past its cwd, here as by the pass (`_skip_kept_out`)
        self._remember_redactions()
        with base.remembering_long_line(_as_path(path), None) as memo:
            reading = harness.read(_as_path(path), 0, {}, self.budget)
        made: list[tuple[Entry, str, tuple | None] | None] = []
        fallback_cwd = reading.session.cwd if reading.session else ""
        for turn in reading.turns:
            if reading.excluded is not None or turn.ended < window:
                made.append(None)
                continue
            cwd = turn.cwd
            turn.cwd = cwd or fallback_cwd
            entry = bank.render(turn)
            made.append((entry, _note(turn), _columns(entry, self.detect)))
            turn.cwd = cwd
        return reading, memo.value, made

    def _verdicts(self, name: str, reading: Reading, mtime: float, session_id: str | None,
                  kept_out_until: int | None, stop: StopSignal | None,
                  ) -> tuple[list[tuple[Turn, str]], list[tuple[int, float]]]:
        """Each turn's verdict (SPEC §4): the settled turns, and (offset, when to look again) of those still open."""
        stopped_at = self.ledger.stopped_at(name, session_id) if session_id else None
        settled: list[tuple[Turn, str]] = []
        still_open: list[tuple[int, float]] = []
        for i, turn in enumerate(reading.turns):
            last = i == len(reading.turns) - 1 and reading.at_eof
            # Quiet since the file or the turn last changed, whichever is older: a
            # transcript copied from elsewhere has a fresh mtime but old lines.
            last_change = min(mtime, turn.ended) if turn.ended > 0 else mtime
            session_stop = stop if stop and (stop.harness, stop.session_id) == (name, turn.session_id) else None
            named = bool(session_stop and session_stop.turn_id == turn.turn_id and session_stop.last_message)
            verdict = settle(turn, last, stopped_at, self.now - last_change, stop_named=named)
            if last and session_stop is not None:
                verdict = self._await_stop(turn, verdict, session_stop.last_message)
            if kept_out_until is not None and turn.offset < kept_out_until:
                verdict = "excluded"
            if verdict == "open":
                still_open.append((turn.offset, last_change + (QUIET if _answered(turn) else GIVE_UP)))
            else:
                settled.append((turn, verdict))
        return settled, still_open

    def _await_stop(self, turn: Turn, verdict: str, last_message: str | None) -> str:
        """The last turn of the session a stop signal ended stays open until it shows the answer the
        harness ended with; the stop hook then reads the transcript again (run_pass)."""
        if verdict == "bank" and _shows(turn.result, last_message):
            return verdict
        self.report.stop_waiting = not turn.closed
        return verdict if turn.closed else "open"

    def _save_position(self, name: str, path: Path, st: os.stat_result, rec: FileRecord | None, reading: Reading,
                       session_id: str | None, still_open: list[tuple[int, float]],
                       long_line: list[int] | None = None) -> None:
        """The next read resumes at the first turn still open, else where this one ended (SPEC §5);
        a partial line past the cap is remembered, so the next read skips what it scanned of it."""
        import json

        from ..store.ledger import FileRecord

        head, anchor = _digests(path, reading.end, st.st_size)
        session = reading.session
        carry = dict(reading.carry, **{LONG_LINE: long_line}) if long_line else reading.carry
        self.ledger.save_file(FileRecord(
            path=str(path), harness=name, dev=st.st_dev, ino=st.st_ino,
            size=st.st_size if reading.at_eof else -1, mtime=st.st_mtime,
            read_end=reading.end, resume=min([reading.end, *(offset for offset, _ in still_open)]),
            head_hash=head, anchor_hash=anchor, carry_json=json.dumps(carry),
            session_id=session_id, cwd=session.cwd if session else (rec.cwd if rec else None),
            excluded=reading.excluded, open_turns=len(still_open),
            next_check=min((due for _, due in still_open), default=None),
            bad_lines=(rec.bad_lines if rec else 0) + reading.bad_lines,
        ))

    def _start(self, path: Path, st: os.stat_result, rec: FileRecord | None) -> tuple[int, dict]:
        """Where to resume: the last position if the bytes before it are still what we read."""
        from ..harnesses.base import file_digest

        if rec is None or rec.read_end is None:
            return 0, {}
        if st.st_size < rec.read_end:
            log.info(self.locs, f"{path}: shrank from {rec.read_end} to {st.st_size} bytes; reading it again")
            return 0, {}
        try:
            with open(path, "rb") as f:
                for stored in (rec.head_hash, rec.anchor_hash):
                    at_len, _, digest = (stored or "").partition(":")
                    if not digest:
                        return 0, {}
                    if stored is rec.head_hash:
                        ok = file_digest(f, 0, int(at_len)) == digest
                    else:
                        ok = file_digest(f, int(at_len), rec.read_end - int(at_len)) == digest
                    if not ok:
                        log.info(self.locs, f"{path}: content changed under us; reading it again")
                        return 0, {}
        except (OSError, ValueError):
            return 0, {}
        return rec.resume, rec.carry()

    # -- settled turns ---------------------------------------------------
    def _prepare(self, settled: list[tuple[Turn, str]], window: float, fallback_cwd: str,
                 rendered: dict[int, tuple[Entry, str, tuple | None]] | None = None
                 ) -> list[tuple[str, Turn, Entry | None]]:
        """What becomes of each finished turn, decided (and its entry rendered, unless the read-ahead did:
        `rendered`, (entry, note, columns) by id of the turn) without the lock: ("excluded" | "drop" |
        "skipped" | "bank", turn, entry)."""
        from ..harnesses.base import is_our_action
        from ..store import bank
        from . import use

        prepared: list[tuple[str, Turn, Entry | None]] = []
        for turn, verdict in settled:
            if verdict == "excluded" or self._kept_out(turn.cwd or fallback_cwd):
                prepared.append(("excluded", turn, None))
                continue
            if turn.result or turn.actions:
                self.uses.append((turn, use.references(turn)))
            if verdict == "drop":
                prepared.append(("drop", turn, None))
                continue
            if turn.ended < window:
                self.report.before_window += 1
                self._older(turn.ended)
                continue  # before the backfill window: not ours to bank (a wider backfill reads it again)
            turn.cwd = turn.cwd or fallback_cwd
            made = rendered.get(id(turn)) if rendered else None
            self._checkpoint(turn, turn.cwd, made[1] if made else None)
            # our own memory tools are not work: a turn that only looked memory up (or recorded a
            # learning, banked already as its own entry) is skipped like one with no tool call
            worked = any(not is_our_action(a.tool) for a in turn.actions)
            if not worked and len(turn.result.strip()) < SKIP_RESULT_CHARS and not turn.always_bank:
                prepared.append(("skipped", turn, None))
                continue
            if made and made[2] is not None:
                self.computed[id(made[0])] = (made[0], *made[2])
            prepared.append(("bank", turn, made[0] if made else bank.render(turn)))
        return prepared

    def _settle(self, settled: list[tuple[Turn, str]], window: float, fallback_cwd: str) -> list[Turn]:
        """Drop, skip or bank finished turns at once (see `_commit`); returns those a later pass must try again."""
        return self._bank(self._prepare(settled, window, fallback_cwd))

    def _bank(self, prepared: list[tuple[str, Turn, Entry | None]]) -> list[Turn]:
        """Under the lock, the three steps of `_commit`: the turns a later pass must try again."""
        self._locked()
        to_write, busy = self._reserve(prepared)
        written, failed = self._write(to_write)
        self._mark_banked(written)
        self._note_uses()
        self._append_history()  # one write for the batch's banked, rewritten and opened records
        return busy + failed

    def _commit(self, batch: list[_FileWork], window: float) -> None:
        """Under the lock: settle a batch of transcripts' turns, then save where each read ended.

        Three short steps keep the ledger free for the hooks in between: record and reserve in
        one transaction, write the entries (synced together, each folder once), then mark them
        banked in one transaction — only once they are durable. A pass that dies between the
        steps leaves reservations that a later pass takes over; `bank.write` finds an entry
        that was already written. A turn not written (a full disk, a read-only tree, a
        reservation another pass holds) is read again by the next pass.
        """
        if not batch:
            return
        retry = {id(turn) for turn in self._bank([item for work in batch for item in work.prepared])}
        for work in batch:
            still_open = work.still_open + [(turn.offset, self.now) for _, turn, _ in work.prepared
                                            if id(turn) in retry]
            self.report.open_turns += len(still_open)
            try:
                self._save_position(work.name, work.path, work.st, work.rec, work.reading, work.session_id,
                                    still_open, work.long_line)
            except Exception as exc:  # noqa: BLE001 - read again from where it was
                self._error(f"{work.path}: {exc!r}", work.name, str(work.path), exc)

    def _reserve(self, prepared: list[tuple[str, Turn, Entry | None]]
                 ) -> tuple[list[tuple[Turn, Entry]], list[Turn]]:
        """Record the turns that get no entry and reserve the others: (reserved, reserved by another pass)."""
        to_write: list[tuple[Turn, Entry]] = []
        busy: list[Turn] = []
        with self.ledger.write():
            for kind, turn, entry in prepared:
                if kind == "excluded":
                    if self.ledger.turn_status(turn.key) is None:
                        self.ledger.record(turn.key, turn.harness, "excluded", turn.dedupe_id, turn.ended)
                        self.report.excluded += 1
                elif kind == "drop":
                    self.ledger.record(turn.key, turn.harness, "dropped", turn.dedupe_id, turn.ended)
                    self.report.dropped += 1
                elif kind == "skipped":
                    if self.ledger.turn_status(turn.key) is None:
                        self.ledger.record(turn.key, turn.harness, "skipped", turn.dedupe_id, turn.ended)
                        self.report.skipped += 1
                elif entry is not None and not (turn.revision is not None and self._rewrote(turn, entry)):
                    status = self.ledger.reserve(turn.key, turn.harness, turn.dedupe_id, self.owner, self.now)
                    if status == "duplicate":
                        self.report.duplicates += 1
                    elif status == "ok":
                        to_write.append((turn, entry))
                    elif status == "busy":
                        busy.append(turn)
        return to_write, busy

    def _write(self, to_write: list[tuple[Turn, Entry]]) -> tuple[list[tuple[Turn, Path, str]], list[Turn]]:
        """Write the reserved turns' entries, durably: (turn, entry, project) of each written, and those not.

        The new entries' bytes go to temporary files first and are synced together; each is then
        linked into place (`bank.write`), and each folder synced once (the folders together)."""
        from ..store import bank

        writeback = bank.Writeback.watch(self.locs.memories, len(to_write))
        try:
            return self._stage_and_place(to_write, writeback)
        finally:
            if writeback is not None:
                writeback.close()

    def _stage_and_place(self, to_write: list[tuple[Turn, Entry]], writeback: bank.Writeback | None
                         ) -> tuple[list[tuple[Turn, Path, str]], list[Turn]]:
        from ..store import bank

        written: list[tuple[Turn, Path, str]] = []
        failed: list[Turn] = []
        staged: list[tuple[Turn, Entry, Path, str, Path | None]] = []
        made: list[Path] = []  # folders the batch made (a new project's): synced into their parents with the rest
        memories = self.locs.memories
        folders: dict[str, tuple[str, Path]] = {}  # by cwd: a batch's entries come from a few projects
        for turn, entry in to_write:
            if turn.cwd not in folders:
                slug = bank.project_slug(turn.cwd)
                folders[turn.cwd] = (slug, memories / slug / "bank")
            slug, folder = folders[turn.cwd]
            tmp = None
            try:
                if not bank.find_entry(folder, entry.file_iso, entry.turn_key, self._listing(folder)):
                    tmp = bank.stage(folder, entry, made)
            except OSError as exc:
                self._write_failed(turn, exc)
                failed.append(turn)
                continue
            staged.append((turn, entry, folder, slug, tmp))
        new = [entry for _, entry, _, _, tmp in staged if tmp is not None]
        errors = bank.sync_staged([tmp for *_, tmp in staged if tmp is not None],
                                  meanwhile=lambda: self._compute_columns(new), writeback=writeback)
        synced = iter(errors)
        for turn, entry, folder, slug, tmp in staged:
            error = next(synced) if tmp is not None else None
            listing = self._listing(folder)
            names = len(listing)
            try:
                if error is not None:
                    raise error
                path = bank.write(folder, entry, sync_folder=False, listing=listing, staged=tmp)
            except OSError as exc:
                self._write_failed(turn, exc)
                failed.append(turn)
                continue
            if len(listing) > names:  # placed now (not an entry an earlier, killed pass left)
                self.placed[str(path)] = entry
            written.append((turn, path, slug))
        unsynced = bank.fsync_dirs({path.parent for _, path, _ in written}, writeback, made)
        if unsynced:  # placed, not yet sure to stay: not counted now; the next pass finds them and counts them
            for turn, path, _ in written:
                if path.parent in unsynced:
                    self._write_failed(turn, unsynced[path.parent])
                    failed.append(turn)
            written = [item for item in written if item[1].parent not in unsynced]
        return written, failed

    def _compute_columns(self, new: list[Entry]) -> None:
        """What the index and the detector compute from entries being written (`index.computed_columns`,
        `detect.worth_a_look`), made while their files sync: the CPU's work overlaps the disk's, and
        `_refresh_index` and `_propose_supersessions` have them ready."""
        for entry in new:
            if id(entry) not in self.computed:  # the read-ahead's child may have made them
                made = _columns(entry, self.detect)
                if made is not None:
                    self.computed[id(entry)] = (entry, *made)

    def _write_failed(self, turn: Turn, exc: OSError) -> None:
        # a full disk or a read-only tree: the reservation lapses and the next pass retries
        self._error(f"cannot write entry for {turn.key}: {exc!r}", turn.harness, None, failure=exc)

    def _mark_banked(self, written: list[tuple[Turn, Path, str]]) -> None:
        if not written:
            return
        with self.ledger.write():
            for turn, path, slug in written:
                self.ledger.finish(turn.key, "banked", entry=str(path), project=slug, ended=turn.ended)
                if turn.revision is not None:
                    self.ledger.set_revision(turn.key, turn.revision)
        from ..store import history

        for turn, path, slug in written:
            self.report.banked += 1
            self.report.entries.append(path)
            self.report.touched.add(slug)
            self.history.append(history.event("banked", f"autobank:{turn.harness}", entry=history.entry_id(path),
                                              session=turn.session_id))

    def _note_uses(self) -> None:
        """The given entries the settled turns opened, each (session, entry) once (`use.py`)."""
        if not self.uses:
            return
        from ..store import history
        from . import use

        uses, self.uses = self.uses, []
        records = []
        texts: dict[str, ParsedEntry | None] = {}  # the given entries read for their facts, once a batch
        sessions: dict[tuple[str, str], dict[str, float]] = {}  # what each session was given, asked once a batch
        found: list[tuple[Turn, dict[str, str]]] = []
        try:
            for turn, refs in uses:
                key = (turn.harness, turn.session_id)
                if key not in sessions:
                    sessions[key] = self.ledger.given(*key)
                given = sessions[key]
                if not given:
                    continue
                opened = use.opened(refs, set(given))
                if turn.result:
                    opened.update(self._repeated(turn, given, opened, texts))
                if opened:
                    found.append((turn, opened))
            if not found:
                return  # the ledger's write lock only for what there is to note
            with self.ledger.write():
                for turn, opened in found:
                    for entry in self.ledger.note_opened(turn.harness, turn.session_id, sorted(opened), turn.ended):
                        records.append(history.event("opened", f"autobank:{turn.harness}", entry=entry,
                                                     session=turn.session_id, detail=opened[entry],
                                                     at=turn.ended or None))
        except Exception as exc:  # noqa: BLE001 - what a session used must never stop what it did being banked
            self._error(f"could not note which given entries were opened: {exc!r}", None, None, exc)
            return
        self.history += records

    def _repeated(self, turn: Turn, given: dict[str, float], opened: dict[str, str],
                  texts: dict[str, ParsedEntry | None]) -> dict[str, str]:
        """The entries given before the turn ended whose facts its answer repeats (`use.Answer`);
        an entry of the same session does not count (the session knew it without memory)."""
        from ..store.entries import read_entry
        from . import use

        found = {}
        answer = None
        for entry_id, given_at in given.items():
            if entry_id in opened or given_at > turn.ended:
                continue
            if entry_id not in texts:
                texts[entry_id] = read_entry(self.locs.memories / entry_id)
            entry = texts[entry_id]
            if entry is None or entry.session_id == turn.session_id:
                continue
            answer = answer or use.Answer(turn)
            if answer.repeats("\n".join((entry.title, entry.prompt, entry.actions, entry.result))):
                found[entry_id] = use.REPEATED
        return found

    def _append_history(self) -> None:
        if not self.history:
            return
        from ..store import history

        try:
            history.append(self.locs, self.history)
        except OSError as exc:  # the bank is written; only its history line is missing
            self._error(f"could not append to {history.HISTORY_FILE}: {exc!r}", None, None, exc)
        self.history = []

    def _listing(self, folder: Path) -> set[str]:
        """A bank folder's file names, listed once per pass (every writer holds the pass lock)."""
        if folder not in self.listings:
            from ..store.bank import Listing

            try:
                self.listings[folder] = Listing(os.listdir(folder))
            except FileNotFoundError:
                self.listings[folder] = Listing()
        return self.listings[folder]

    def _rewrote(self, turn: Turn, rendered: Entry) -> bool:
        """An entry that follows its source (Antigravity): rewrite it when what it shows changed."""
        from ..store import bank

        entry, revision = self.ledger.revision(turn.key)
        if entry is None:
            return False
        if revision != turn.revision and _as_path(entry).exists():
            from ..store import history

            bank.rewrite(_as_path(entry), rendered)
            self.ledger.set_revision(turn.key, turn.revision or "")
            self.report.touched.add(_as_path(entry).parent.parent.name)
            self.history.append(history.event("rewritten", f"autobank:{turn.harness}", entry=history.entry_id(entry),
                                              session=turn.session_id))
        return True

    def _checkpoint(self, turn: Turn, cwd: str, note: str | None = None) -> None:
        from ..model import StateUpdate

        update = StateUpdate(at=turn.ended, kind="turn", note=_note(turn) if note is None else note)
        self._note_states(turn.harness, turn.session_id, cwd, [update])

    def _note_states(self, harness: str, session_id: str, cwd: str, updates: list[StateUpdate]) -> None:
        key = (harness, session_id)
        known_cwd, pending = self.sessions.get(key, (cwd, []))
        self.sessions[key] = (cwd or known_cwd, pending + updates)

    # -- per project, once per pass ---------------------------------------
    def _finish_projects(self) -> None:
        """State files, MAIN.md, summaries and the index of the projects this pass touched, and of
        those an earlier pass could not finish (a full disk, a read-only folder): retried until done."""
        unfinished = self._unfinished()
        if not (self.sessions or self.report.touched or unfinished["sessions"] or unfinished["projects"]):
            return  # nothing was banked, nothing is left to finish
        from ..store import bank, projectfiles, state

        for harness, session_id, cwd in unfinished["sessions"]:
            self.sessions.setdefault((harness, session_id), (cwd, []))
        self.report.touched |= set(unfinished["projects"])
        # written ahead: a pass killed before it finishes leaves the work to the next one
        ahead = {"sessions": [[h, sid, cwd] for (h, sid), (cwd, _) in self.sessions.items() if cwd],
                 "projects": sorted(self.report.touched)}
        self._save_unfinished(unfinished, ahead["sessions"], set(ahead["projects"]))
        failed_sessions: list[list[str]] = []
        failed_projects: set[str] = set()
        states: list[tuple[str, str, str, dict, bool]] = []  # (harness, session, cwd, state, changed)
        for (harness, session_id), (cwd, updates) in self.sessions.items():
            if not cwd or self._kept_out(cwd):
                continue
            try:
                old_cwd, old = self.ledger.session_state(harness, session_id)
                new = state.apply(old, updates)
                states.append((harness, session_id, cwd, new, new != old or old_cwd != cwd))
            except Exception as exc:  # noqa: BLE001
                failed_sessions.append([harness, session_id, cwd])
                self._error(f"state of {harness}:{session_id}: {exc!r}", harness, None, exc)
        try:
            with self.ledger.write():  # one transaction for all of them (a backfill has hundreds)
                for harness, session_id, cwd, new, changed in states:
                    if changed:
                        self.ledger.save_session_state(harness, session_id, cwd, new)
        except Exception as exc:  # noqa: BLE001 - all retried next pass
            failed_sessions += [[harness, session_id, cwd] for harness, session_id, cwd, _, _ in states]
            self._error(f"session states: {exc!r}", None, None, exc)
            states = []
        for harness, session_id, cwd, new, _ in states:
            try:
                slug = bank.project_slug(cwd)
                if state.write(self.locs.memories / slug, harness, session_id, cwd, new):
                    self.report.touched.add(slug)
                self._record_identity(slug, cwd)
            except Exception as exc:  # noqa: BLE001
                failed_sessions.append([harness, session_id, cwd])
                self._error(f"state file for {harness}:{session_id}: {exc!r}", harness, None, exc)
        today = clock.iso(self.now)[:10]
        forgotten = tombstones(self.locs) if self.report.touched else None
        headers = self._placed_headers()
        for slug in sorted(self.report.touched):
            project = self.locs.memories / slug
            try:
                projectfiles.rebuild_main(project, forgotten, headers.get(slug))
                projectfiles.write_summaries(project, today, forgotten, headers.get(slug))
                _sweep_temp(project)
            except Exception as exc:  # noqa: BLE001
                failed_projects.add(slug)
                self._error(f"{project}: {exc!r}", None, str(project), exc)
        if self.report.touched and not self._refresh_index():
            failed_projects |= self.report.touched
        self._save_unfinished(ahead, failed_sessions, failed_projects)

    def _propose_supersessions(self) -> None:
        """Supersessions the entries placed since the last detecting pass may bring (`control.detect`), proposed
        in their projects' TRUST.md, never applied. After the index is refreshed: the candidates come from it.
        A pass without `detect` (a hook's) keeps the list for the next one that has it."""
        placed = sorted(self.placed)
        if not self.detect and not placed:
            return  # a hook's pass that banked nothing: not even the ledger is asked
        pending = self._pending_detection()
        if not self.detect:
            self._save_pending_detection((pending + [p for p in placed if p not in pending])[-DETECT_PENDING_MAX:])
            return
        todo = list(dict.fromkeys(pending + placed))
        if not todo:
            return
        try:
            from ..control import detect

            parsed = {os.fspath(entry.path): entry for _, entry, _ in self._placed_entries().values()}
            detect.propose(self.locs, [p for p in todo if os.path.exists(p)], parsed, self.stated)
        except Exception as exc:  # noqa: BLE001 - a proposal missed must never stop the bank
            self._error(f"supersession detection failed: {exc!r}", None, None, exc)
        if pending:
            self._save_pending_detection([])

    def _pending_detection(self) -> list[str]:
        try:
            value = wirejson.loads(self.ledger.get_meta("detect_pending") or "[]")
        except (ValueError, _sqlite3().Error):
            value = []
        return [p for p in value if isinstance(p, str)] if isinstance(value, list) else []

    def _save_pending_detection(self, paths: list[str]) -> None:
        import json

        try:
            self.ledger.set_meta("detect_pending", json.dumps(paths))
        except _sqlite3().Error as exc:
            log.error(self.locs, "could not remember which entries to look at for supersessions", exc)

    def _placed_headers(self) -> dict[str, dict[str, tuple[int, dict[str, object]]]]:
        """(size, frontmatter) of each entry this pass wrote whose frontmatter it knows, by project and file name."""
        headers: dict[str, dict[str, tuple[int, dict[str, object]]]] = {}
        for path, entry in self.placed.items():
            if entry.meta is not None:
                folder, name = os.path.split(path)
                headers.setdefault(os.path.basename(os.path.dirname(folder)), {})[name] = (
                    len(entry.text.encode()), entry.meta)
        return headers

    def _placed_entries(self) -> dict[str, tuple[int, ParsedEntry, tuple[str, str, str] | None]]:
        """(size, parsed entry, its computed columns if made while it synced) of each entry this pass wrote,
        by `<slug>/bank/<file>.md` (the index's key); made once, for the index and then the detector."""
        if self.parsed is not None:
            return self.parsed
        from ..store import entries

        out: dict[str, tuple[int, ParsedEntry, tuple[str, str, str] | None]] = {}
        for path, entry in self.placed.items():
            data = entry.text.encode()
            if len(data) > entries.MAX_ENTRY_BYTES:
                continue  # the index reads only the head of a file this big: let it
            where = _as_path(path)
            slug = where.parent.parent.name
            if entry.meta is not None and entry.sections is not None:
                parsed = entries.entry_from(entry.meta, entry.sections, where, slug)
            else:
                parsed = entries.parse_entry(entry.text, where, slug)
            made = self.computed.get(id(entry))
            computed = None
            if made is not None and made[1] == (parsed.title, parsed.prompt, parsed.actions, parsed.result):
                computed = made[2]  # made from the texts the index reads
                if made[3] is not None:
                    self.stated[path] = made[3]
            out[f"{slug}/bank/{where.name}"] = (len(data), parsed, computed)
        self.parsed = out
        return out

    def _record_identity(self, slug: str, cwd: str) -> None:
        """The repository this project's folder is, written into the tree (SPEC §11), once it has a bank."""
        from ..store import identity
        from ..store.scope import folder_key

        project = self.locs.memories / slug
        if (project / "bank").is_dir() and identity.record(str(project), folder_key(cwd), identity.repository_of(cwd)):
            identity.forget_cache(self.locs)

    def _unfinished(self) -> dict[str, list]:
        try:
            value = wirejson.loads(self.ledger.get_meta("unfinished") or "{}")
        except (ValueError, _sqlite3().Error):
            value = {}
        value = value if isinstance(value, dict) else {}
        return {"sessions": [s for s in value.get("sessions", []) if isinstance(s, list) and len(s) == 3],
                "projects": [p for p in value.get("projects", []) if isinstance(p, str)]}

    def _save_unfinished(self, old: dict[str, list], sessions: list[list[str]], projects: set[str]) -> None:
        new = {"sessions": sessions, "projects": sorted(projects)}
        if new == old:
            return
        import json

        try:
            self.ledger.set_meta("unfinished", json.dumps(new))
        except _sqlite3().Error as exc:
            log.error(self.locs, "could not remember what to finish next pass", exc)

    def _refresh_index(self) -> bool:
        try:
            from ..recall import index
        except ImportError:
            return True
        try:
            index.refresh(self.locs, set(self.report.touched), self._placed_entries())
            return True
        except Exception as exc:  # noqa: BLE001
            self._error(f"index refresh failed: {exc!r}", None, None, exc)
            return False

    def _error(self, message: str, harness: str | None, path: str | None, exc: BaseException | None = None,
               *, failure: BaseException | None = None) -> None:
        self.report.errors += 1
        failure = failure or (exc if isinstance(exc, (OSError, _sqlite3().Error)) else None)
        if failure is not None:
            from ..errors import describe

            self.report.failure = describe(failure, self.locs)
        log.error(self.locs, message, exc)
        self.ledger.error(message, harness, path)


def _head(plans: list[_Plan], jobs: list[tuple[str, Callable[[], object]]]) -> int:
    """How many of the read-ahead's jobs this process does itself, first, while the child starts on the rest
    (`READ_HERE` of their bytes): it would otherwise wait for the child's first transcripts."""
    sizes = {path: st.st_size for plan in plans for path, st, _ in plan.todo}
    total = sum(sizes[path] for path, _ in jobs)
    done = 0
    for k, (path, _) in enumerate(jobs):
        if done >= READ_HERE * total:
            return k
        done += sizes[path]
    return len(jobs)


def _columns(entry: Entry, detect: bool) -> tuple[tuple[str, str, str, str], tuple[str, str, str], bool | None] | None:
    """What `_compute_columns` keeps of an entry: the texts the index reads, their `index.computed_columns`,
    and `detect.worth_a_look` (with `detect`); None when they are not known before the refresh parses it."""
    if entry.meta is None or entry.sections is None:
        return None  # its text is parsed at refresh: what it reads as is not known here
    try:
        from ..recall import index
    except ImportError:
        return None
    inputs = (str(entry.meta["title"]), entry.sections["prompt"], entry.sections["actions"], entry.sections["result"])
    try:
        if detect:
            from ..control.detect import worth_a_look

            stated = worth_a_look(inputs[0], inputs[1], inputs[3])
        else:
            stated = None
        return inputs, index.computed_columns(*inputs), stated
    except Exception:  # noqa: BLE001 - the refresh computes them again
        return None


def _warm(detect: bool) -> None:
    """What the read-ahead's child runs, imported and its lazy tables built before the fork (~30 ms): the child
    starts on its first transcript at once. The pass needs all of it for its own share anyway."""
    import pickle  # noqa: F401 - the pipe's

    from ..store import bank  # noqa: F401 - render

    redact("")
    try:
        from ..recall import index
    except ImportError:
        return
    index.computed_columns("", "", "", "")
    if detect:
        from ..control import detect as module  # noqa: F401 - worth_a_look


def _note(turn: Turn) -> str:
    """A settled turn's line in its session's state (`state.py`): its title, redacted before it is cut."""
    from ..store import bank

    return bank.make_title(redact(turn.title or turn.prompt))


def redact(text: str) -> str:
    """`redact.redact`, imported when a turn is first banked (a pass with nothing new needs none)."""
    from .. import redact as module

    return module.redact(text)


def _sqlite3():
    from ..fastsqlite import sqlite3

    return sqlite3


def _as_path(text: str) -> Path:
    from pathlib import Path

    return Path(text)


def _sweep_temp(project: Path) -> None:
    """Remove temporary files a killed writer left in a project (never an entry: those are `.md`).

    Our temporary names end in `.<pid>.<random>.tmp`: a file of a process that is gone goes at
    once, any other once it is TEMP_STALE old."""
    cutoff = time.time() - TEMP_STALE
    for folder in (project, project / "bank", project / "summaries", project / "state"):
        try:
            with os.scandir(folder) as it:
                stale = [e.path for e in it if e.name.startswith(".") and e.name.endswith(".tmp")
                         and (_writer_gone(e.name) or e.stat(follow_symlinks=False).st_mtime < cutoff)]
        except OSError:
            continue
        for path in stale:
            try:
                os.unlink(path)
            except OSError:
                pass


def _writer_gone(name: str) -> bool:
    parts = name.rsplit(".", 3)
    if len(parts) != 4 or not parts[1].isdigit() or int(parts[1]) in (0, os.getpid()):
        return False
    try:
        os.kill(int(parts[1]), 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


def _peek_cwd(path: Path) -> str | None:
    """The first `cwd` a transcript names (Claude Code lines, Codex session_meta and turn_context,
    pi/omp session headers), reading no further than needed."""
    import json

    try:
        with open(path, "rb") as f:
            read = 0
            while read < CWD_PEEK_BYTES:
                line = f.readline(CWD_PEEK_BYTES)
                if not line:
                    return None
                read += len(line)
                if b'"cwd"' not in line:
                    continue
                try:
                    obj = json.loads(line)
                except ValueError:
                    continue
                if not isinstance(obj, dict):
                    continue
                payload = obj.get("payload")
                for holder in (obj, payload if isinstance(payload, dict) else {}):
                    if isinstance(holder.get("cwd"), str) and holder["cwd"]:
                        return holder["cwd"]
    except OSError:
        return None
    return None


def _digests(path: Path, end: int, size: int) -> tuple[str, str]:
    """The head and anchor digests `_start` checks before it resumes at `end`."""
    from ..harnesses.base import file_digest

    with open(path, "rb") as f:
        head_len = min(HEAD_BYTES, end) if end else min(HEAD_BYTES, size)
        anchor_at = max(0, end - ANCHOR_BYTES)
        head = f"{head_len}:{file_digest(f, 0, head_len)}"
        anchor = f"{anchor_at}:{file_digest(f, anchor_at, end - anchor_at)}"
    return head, anchor


def _shows(result: str, last_message: str | None) -> bool:
    """Whether the answer we read is the one the harness says it ended with. The readers take our
    memory out of an answer that quotes it (`strip_injected`); the harness's word keeps it."""
    from ..harnesses.base import strip_injected

    if not last_message:
        return True
    want = " ".join(strip_injected(last_message).split())[:200]
    return want in " ".join(result.split())


def settle(turn: Turn, last: bool, stopped_at: float | None, quiet: float, *, stop_named: bool = False) -> str:
    """"bank", "drop" or "open": whether a turn is finished (SPEC §4).

    `stopped_at`: when a stop signal last came for the turn's session; `quiet`: seconds since the
    turn or its transcript last changed; `stop_named`: this pass's stop signal names this very turn
    and the answer it ended with (Codex).
    """
    if turn.aborted:
        return "drop"
    if turn.closed:
        return "bank"
    if not last:
        # a later turn started: this one is over (Codex: never completed, so not banked)
        return "drop" if turn.needs_end_marker else "bank"
    if turn.needs_end_marker:
        if stop_named and turn.pending_tools == 0:
            # Codex runs its Stop hook before it writes task_complete: the hook's own word is the end marker
            return "bank"
        return "drop" if quiet >= GIVE_UP else "open"
    answered = _answered(turn)
    if answered and stopped_at is not None and stopped_at + 2.0 >= turn.ended:
        return "bank"
    if answered and quiet >= QUIET:
        return "bank"
    if quiet >= GIVE_UP:
        return "drop"
    return "open"


def _answered(turn: Turn) -> bool:
    """An answer with no tool call still waiting: what the quiet rule settles after QUIET (SPEC §4)."""
    return bool(turn.result.strip()) and turn.pending_tools == 0 and not turn.needs_end_marker
