"""Read, the pass's second stage: a planned transcript's new bytes, into turns, without the lock.

Takes a `plan.Plan`'s transcript (path, stat, ledger record) and a byte budget; gives a `pass_state.FileWork`: the
reader's `Reading` (turns, session facts, where it ended) from where the last read left the first
unsettled turn, if the bytes before that are still what was read (head and anchor digests), else from
the start. A transcript of a project kept out is not read past its cwd. Transcripts never read before
are read by the read-ahead's child (`readahead.py`) while the pass writes, their entries rendered there
too; `save_position` records where a read ended, once its turns are committed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .. import log
from ..harnesses import base
from ..store import bank
from ..store.ledger import FileRecord
from . import settle
from .pass_state import FileWork
from .plan import KEPT_OUT, kept_out

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from ..harnesses.base import Harness
    from ..model import Reading
    from ..store.bank import Entry
    from .pass_state import PassState
    from .plan import Plan
    from .readahead import ReadAhead

HEAD_BYTES = 4096  # digests that tell a file replaced or rewritten from one that grew
ANCHOR_BYTES = 256
READ_HERE = 0.3  # of a read-ahead's bytes, read by the pass itself while the child starts (`head`)
MAKE_INDEX = "make index"  # the read-ahead's last job when there is no index yet (`make_index`)
CWD_PEEK_BYTES = 256 * 1024  # how far into a transcript we look for its cwd before reading it
LONG_LINE = "long_line"  # the pass's key in a read position's carry: a partial line past MAX_LINE (base.py)


def read_ahead(p: PassState, plans: list[Plan]) -> ReadAhead | None:
    """A child that reads the transcripts never read before (`readahead.py`) of each harness whose
    transcripts all fit its byte budget: its reads are then the same as this process's would be."""
    jobs: list[tuple[str, Callable[[], object]]] = []
    for plan in plans:
        if plan.harness is not None and sum(st.st_size for _, st, _ in plan.todo) <= p.budget:
            jobs += [(path, _fresh_job(p, plan.harness, path, plan.window))
                     for path, _, rec in plan.todo if rec is None]
    if len(jobs) < 2:
        return None  # a hook's pass (one transcript): not even the module is imported
    from .readahead import ReadAhead

    jobs = jobs[head(plans, jobs):]
    if not p.locs.index_file.exists():  # made by the child once it has read, while this writes
        jobs.append((MAKE_INDEX, lambda: make_index(p)))
    return ReadAhead.start(jobs, before_fork=lambda: warm(p.detect))


def _fresh_job(p: PassState, harness: Harness, path: str, window: float) -> Callable[[], object]:
    """`read_fresh` of this transcript, its arguments bound now (a lambda in the loop would see the last plan's)."""
    return lambda: read_fresh(p, harness, path, window)


def make_index(p: PassState) -> bool:
    """In the read-ahead's child: the search index made (its schema and vocabulary, ~20 ms), so that the
    pass's final refresh finds it made. Another process's: the child holds none of the pass's handles."""
    from ..recall import index

    index.connect(p.locs).close()
    return True


def head(plans: list[Plan], jobs: list[tuple[str, Callable[[], object]]]) -> int:
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


def warm(detect: bool) -> None:
    """What the read-ahead's child runs, imported and its lazy tables built before the fork (~30 ms): the child
    starts on its first transcript at once. The pass needs all of it for its own share anyway."""
    import pickle  # noqa: F401 - the pipe's

    try:
        from ..recall import index
    except ImportError:
        return
    index.computed_columns("", "", "", "")
    if detect:
        from ..control import detect as module  # noqa: F401 - worth_a_look


def read_file(p: PassState, name: str, harness: Harness, path: Path, st: os.stat_result, rec: FileRecord | None,
              budget: int) -> tuple[FileWork | None, int]:
    """A transcript's new bytes read: the work to settle and commit (None for a transcript kept out) and the
    bytes read."""
    if _skip_kept_out(p, name, path, st, rec):
        return None, 0
    # kept out until now: the turns it held then (the bytes we skipped) stay out; it is read again
    # from the start, for its session facts
    kept_out_until = rec.read_end if rec and (rec.excluded or "").startswith(KEPT_OUT) else None
    start, carry = _start(p, path, st, rec)
    long_line = carry.pop(LONG_LINE, None)
    ahead = p.ahead.take(os.fspath(path)) if p.ahead is not None and rec is None else None
    if ahead is not None:
        reading, memo, made = ahead
        long_line = _took(p, name, path, start, reading, memo)
        rendered = {id(turn): each for turn, each in zip(reading.turns, made) if each is not None}
    else:
        memo = base.LongLine(long_line)
        reading = harness.read(path, start, carry, budget, memo)
        long_line = _took(p, name, path, start, reading, memo.value)
        rendered = {}
    session = reading.session
    session_id = session.session_id if session else (rec.session_id if rec else None)
    work = FileWork(name, path, st, rec, reading, start, session_id, long_line, rendered, kept_out_until)
    return work, max(0, reading.end - start)


def _skip_kept_out(p: PassState, name: str, path: Path, st: os.stat_result, rec: FileRecord | None) -> bool:
    """A transcript of a project kept out is not read past its cwd: remember it as read to its end."""
    cwd = rec.cwd if rec and rec.cwd else peek_cwd(path)
    reason = kept_out(p, cwd)
    if reason is None:
        return False
    p.ledger.save_file(FileRecord(
        path=str(path), harness=name, dev=st.st_dev, ino=st.st_ino, size=st.st_size, mtime=st.st_mtime,
        read_end=st.st_size, resume=st.st_size, session_id=rec.session_id if rec else None, cwd=cwd,
        excluded=KEPT_OUT + reason, bad_lines=rec.bad_lines if rec else 0))
    return True


def _took(p: PassState, name: str, path: Path, start: int, reading: Reading, long_line: list[int] | None
          ) -> list[int] | None:
    """Count what a read found; the partial line past the cap that the next read will reach again (it
    starts after where this one ended)."""
    p.report.bytes_read += max(0, reading.end - start)
    if not reading.at_eof:
        p.report.backlog += 1
    if reading.bad_lines:
        p.error(f"{path}: {reading.bad_lines} unreadable lines skipped", name, str(path))
    return long_line if long_line and long_line[0] >= reading.end else None


def read_fresh(p: PassState, harness: Harness, path: str, window: float
               ) -> tuple[Reading, list[int] | None, list[tuple[Entry, str, tuple | None] | None]] | None:
    """In the read-ahead's child: a transcript never read before, whole, and for each turn `settle.prepare`
    may bank, its entry, its checkpoint's note and its index columns, as the pass would make them (from the
    same reading: `read_ahead`)."""
    if kept_out(p, peek_cwd(Path(path))):
        return None  # not read past its cwd, here as by the pass (`_skip_kept_out`)
    p.remember_redactions()
    memo = base.LongLine(None)
    reading = harness.read(Path(path), 0, {}, p.budget, memo)
    made: list[tuple[Entry, str, tuple | None] | None] = []
    fallback_cwd = reading.session.cwd if reading.session else ""
    for turn in reading.turns:
        if reading.excluded is not None or turn.ended < window:
            made.append(None)
            continue
        cwd = turn.cwd
        turn.cwd = cwd or fallback_cwd
        entry = bank.render(turn, p.memo)
        made.append((entry, settle.note(turn, p.memo), settle.columns(entry, p.detect)))
        turn.cwd = cwd
    return reading, memo.value, made


def _start(p: PassState, path: Path, st: os.stat_result, rec: FileRecord | None) -> tuple[int, dict]:
    """Where to resume: the last position if the bytes before it are still what we read."""
    if rec is None or rec.read_end is None:
        return 0, {}
    if st.st_size < rec.read_end:
        log.info(p.locs, f"{path}: shrank from {rec.read_end} to {st.st_size} bytes; reading it again")
        return 0, {}
    try:
        with open(path, "rb") as f:
            for stored in (rec.head_hash, rec.anchor_hash):
                at_len, _, digest = (stored or "").partition(":")
                if not digest:
                    return 0, {}
                if stored is rec.head_hash:
                    ok = base.file_digest(f, 0, int(at_len)) == digest
                else:
                    ok = base.file_digest(f, int(at_len), rec.read_end - int(at_len)) == digest
                if not ok:
                    log.info(p.locs, f"{path}: content changed under us; reading it again")
                    return 0, {}
    except (OSError, ValueError):
        return 0, {}
    return rec.resume, rec.carry()


def save_position(p: PassState, work: FileWork, still_open: list[tuple[int, float]]) -> None:
    """The next read resumes at the first turn still open, else where this one ended (SPEC §5);
    a partial line past the cap is remembered, so the next read skips what it scanned of it."""
    reading, st, rec = work.reading, work.st, work.rec
    head_digest, anchor = _digests(work.path, reading.end, st.st_size)
    session = reading.session
    carry = dict(reading.carry, **{LONG_LINE: work.long_line}) if work.long_line else reading.carry
    p.ledger.save_file(FileRecord(
        path=str(work.path), harness=work.name, dev=st.st_dev, ino=st.st_ino,
        size=st.st_size if reading.at_eof else -1, mtime=st.st_mtime,
        read_end=reading.end, resume=min([reading.end, *(offset for offset, _ in still_open)]),
        head_hash=head_digest, anchor_hash=anchor, carry_json=json.dumps(carry),
        session_id=work.session_id, cwd=session.cwd if session else (rec.cwd if rec else None),
        excluded=reading.excluded, open_turns=len(still_open),
        next_check=min((due for _, due in still_open), default=None),
        bad_lines=(rec.bad_lines if rec else 0) + reading.bad_lines,
    ))


def _digests(path: Path, end: int, size: int) -> tuple[str, str]:
    """The head and anchor digests `_start` checks before it resumes at `end`."""
    with open(path, "rb") as f:
        head_len = min(HEAD_BYTES, end) if end else min(HEAD_BYTES, size)
        anchor_at = max(0, end - ANCHOR_BYTES)
        head_digest = f"{head_len}:{base.file_digest(f, 0, head_len)}"
        anchor = f"{anchor_at}:{base.file_digest(f, anchor_at, end - anchor_at)}"
    return head_digest, anchor


def peek_cwd(path: Path) -> str | None:
    """The first `cwd` a transcript names (Claude Code lines, Codex session_meta and turn_context,
    pi/omp session headers), reading no further than needed."""
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
