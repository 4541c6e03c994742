"""A backfill's new transcripts read, and their entries rendered, by a second process while the pass banks.

Reading a transcript and rendering its turns' entries is a third of a backfill, and pure work on the
transcript's bytes. A forked child does it for the transcripts the ledger has never seen, in the order
the pass reaches them, and sends each result through a pipe; the pass takes each as it gets there and
does the rest itself, as before. On two cores the reading overlaps the writing.

The child reads transcripts and, when there is no search index yet, makes an empty one after them (its
schema and vocabulary: what the pass's final refresh would otherwise make while the child sits idle). It
never touches the ledger, the bank or the lock, nor any database handle of its parent's: it closes every
descriptor it was born with but its end of the pipe, and its standard streams go to /dev/null (a hook's
harness waits for the hook's stdout to close). A job that fails in the child, or a child that dies,
is killed or is not started, costs only the time of doing that job here. Forked only on Linux (fork
without exec is not safe with macOS's system libraries; Windows has no fork) and only while this process
runs no other thread (a child would inherit locks those threads hold).
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

MIN_JOBS = 8  # fewer new transcripts than this (a hook's pass) are read in-process: not worth a fork
_LENGTH = 8  # bytes of each message's length prefix


class ReadAhead:
    """The child's results, taken in the order its jobs were given."""

    def __init__(self, pid: int, fd: int, keys: list[str]) -> None:
        self.pid = pid
        self.fd = fd
        self.buffer = bytearray()  # what the pipe gave that is not taken yet
        self.waiting = set(keys)  # keys the child has not sent yet
        self.ended = False  # the child closed the pipe

    @classmethod
    def start(cls, jobs: list[tuple[str, Callable[[], object]]],
              before_fork: Callable[[], None] | None = None) -> ReadAhead | None:
        """Fork a child that runs each job and sends back (key, result); None when not worth it or not safe.
        `before_fork` runs only when the child will be forked (what it sets up, the child inherits)."""
        if len(jobs) < MIN_JOBS or not sys.platform.startswith("linux") or not hasattr(os, "fork"):
            return None
        import _thread

        if _thread._count():  # another thread is running
            return None
        if before_fork is not None:
            before_fork()
        read_end, write_end = os.pipe()
        _widen(write_end)
        try:
            pid = os.fork()
        except OSError:
            os.close(read_end)
            os.close(write_end)
            return None
        if pid == 0:
            _child(jobs, read_end, write_end)  # never returns
        os.close(write_end)
        return cls(pid, read_end, [key for key, _ in jobs])

    def take(self, key: str) -> Any:  # what the job returned, unpickled from the child (or None)
        """The result of `key`'s job, or None (not one of the child's, it failed, or the child is gone).
        Results of jobs the caller passed over are dropped on the way."""
        while key in self.waiting:
            message = self._message()
            if message is None:
                self.waiting.clear()
                return None
            got, result = message
            self.waiting.discard(got)
            if got == key:
                return result
        return None

    def _complete(self) -> int | None:
        """The size of the first whole message in the buffer, if there is one."""
        if len(self.buffer) < _LENGTH:
            return None
        size = int.from_bytes(self.buffer[:_LENGTH], "little")
        return size if len(self.buffer) >= _LENGTH + size else None

    def _message(self) -> tuple[str, object] | None:
        import pickle

        while (size := self._complete()) is None:
            if self.ended or not self._fill():
                return None
        body = bytes(self.buffer[_LENGTH:_LENGTH + size])
        del self.buffer[:_LENGTH + size]
        try:
            return pickle.loads(body)
        except Exception:  # noqa: BLE001 - a damaged message: the caller does the job itself
            return None

    def _fill(self) -> bool:
        """Wait for what the pipe holds next; False when the child closed it."""
        try:
            data = os.read(self.fd, 1 << 20)
        except OSError:
            data = b""
        if not data:
            self.ended = True
            return False
        self.buffer += data
        return True

    def close(self) -> None:
        """Stop the child (it may be reading what the pass no longer wants) and reap it."""
        import signal

        try:
            os.kill(self.pid, signal.SIGKILL)
        except OSError:
            pass
        os.close(self.fd)
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass


def _widen(fd: int) -> None:
    """The pipe as large as an unprivileged process may make it (1 MB by default, against 64 KB): the child
    gets that far ahead while the pass writes a batch, instead of waiting for it."""
    import fcntl

    try:
        with open("/proc/sys/fs/pipe-max-size") as f:
            fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), int(f.read()))
    except (OSError, ValueError):
        pass


def _child(jobs: list[tuple[str, Callable[[], object]]], read_end: int, write_end: int) -> None:
    try:
        import pickle

        parent = os.getppid()
        os.close(read_end)
        os.closerange(3, write_end)  # the lock, the ledger, the index, logs: none of them are the child's
        os.closerange(write_end + 1, os.sysconf("SC_OPEN_MAX"))
        nothing = os.open(os.devnull, os.O_RDWR)  # nor a hook's stdin and stdout, which its harness waits on
        for fd in (0, 1, 2):
            os.dup2(nothing, fd)
        os.close(nothing)
        for key, job in jobs:
            if os.getppid() != parent:  # the pass is gone
                break
            try:
                data = pickle.dumps((key, job()), protocol=pickle.HIGHEST_PROTOCOL)
            except Exception:  # noqa: BLE001 - the pass does this job itself
                data = pickle.dumps((key, None), protocol=pickle.HIGHEST_PROTOCOL)
            os.write(write_end, len(data).to_bytes(_LENGTH, "little"))
            view = memoryview(data)
            while view:
                view = view[os.write(write_end, view):]
    finally:
        os._exit(0)
