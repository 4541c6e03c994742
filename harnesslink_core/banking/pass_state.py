"""What the stages of one autobank pass share (autobank.py runs them): the stop signal it was started for,
its report, `PassState`, which each stage takes as `p` (the ledger and the lock, the time the pass runs
at, what it noted and placed so far, how a stage counts a fault and takes the lock back), and `FileWork`,
what the read stage hands the settle and commit stages of one transcript."""

from __future__ import annotations

from .. import log
from ..errors import LockLost
from ..store.ledger import owner_id

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the stop hook's path)
if TYPE_CHECKING:
    import os
    from pathlib import Path

    from ..model import Reading, StateUpdate, Turn
    from ..paths import Locations
    from ..redact import Memo
    from ..store.bank import Entry
    from ..store.entries import Entry as ParsedEntry
    from ..store.ledger import FileRecord, Ledger
    from ..store.lock import PassLock
    from .readahead import ReadAhead

COMMIT_WAIT = 10.0  # a pass that has read a batch waits this long to take the lock again and write it


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


class _Held:
    """The lock of a pass whose caller holds it already."""

    held = True

    def acquire(self, wait: float) -> bool:
        return True

    def release(self) -> None:
        pass


class PassState:
    """One pass's shared state (see the module docstring); `autobank._Pass` is the loop that runs its stages."""

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
        self.memo: Memo | None = None  # the redactions this pass remembers, from its first read on
        self.parsed: dict[str, tuple[int, ParsedEntry, tuple[str, str, str] | None]] | None = None  # finish's
        self.ahead: ReadAhead | None = None  # the child reading this pass's new transcripts (`readahead.py`)

    def unlocked(self) -> None:
        """Slow work ahead (reading a transcript, rendering its entries): others may write meanwhile."""
        self.lock.release()

    def locked(self) -> None:
        if self.lock.held:
            return
        if not self.lock.acquire(self.commit_wait):
            raise LockLost
        self.listings.clear()  # another writer may have added entries while we did not hold it

    def remember_redactions(self) -> None:
        """From the first transcript read to the end of the pass, a text redacted once is not redacted again
        (`redact.Memo`; only now: a pass with nothing to read imports no redact)."""
        if self.memo is None:
            from ..redact import Memo

            self.memo = Memo()

    def older(self, when: float) -> None:
        """`when` (a turn's or a transcript's time outside the window) counted for `report.oldest`."""
        if when and (self.report.oldest is None or when < self.report.oldest):
            self.report.oldest = when

    def error(self, message: str, harness: str | None, path: str | None, exc: BaseException | None = None,
              *, failure: BaseException | None = None) -> None:
        """A fault the pass goes on after: counted, logged, kept in the ledger; the last failed write in one line."""
        self.report.errors += 1
        failure = failure or (exc if isinstance(exc, (OSError, _sqlite3().Error)) else None)
        if failure is not None:
            from ..errors import describe  # it redacts: imported with the first failure, not by every pass

            self.report.failure = describe(failure, self.locs)
        log.error(self.locs, message, exc)
        self.ledger.error(message, harness, path)


def _sqlite3():
    from ..fastsqlite import sqlite3

    return sqlite3


class FileWork:
    """One transcript read (and then settled, `settle.settle_file`) without the lock, waiting for the lock
    to be committed: the reading, where it started, the session, the offsets of turns still open (and when
    to look again), what becomes of each settled turn, and a long line the next read resumes scanning."""

    __slots__ = ("name", "path", "st", "rec", "reading", "start", "session_id", "still_open", "prepared",
                 "long_line", "rendered", "kept_out_until")

    def __init__(self, name: str, path: Path, st: os.stat_result, rec: FileRecord | None, reading: Reading,
                 start: int, session_id: str | None, long_line: list[int] | None,
                 rendered: dict[int, tuple[Entry, str, tuple | None]], kept_out_until: int | None) -> None:
        self.name, self.path, self.st, self.rec, self.reading, self.start = name, path, st, rec, reading, start
        self.session_id, self.long_line, self.rendered = session_id, long_line, rendered
        self.kept_out_until = kept_out_until
        self.still_open: list[tuple[int, float]] = []
        self.prepared: list[tuple[str, Turn, Entry | None]] = []
