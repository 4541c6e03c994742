"""The pass lock, `autobank.lock` in the agent dir: every writer of the bank holds it (the autobank pass,
`memory_bank`, forget), and nothing else takes it (SPEC §5).

`PassLock` is the lock itself, taken and let go many times by one pass; `holding` is the lock held for one
whole change (a learning recorded, entries forgotten), `PassBusy` when a pass keeps it past the wait.
"""

from __future__ import annotations

import os
import time

from ..errors import PassBusy
from . import deadline

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the stop hook's path)
if TYPE_CHECKING:
    from types import ModuleType

    from filelock import BaseFileLock

    from ..paths import Locations

LOCK_POLL = 0.05
BUSY = "an autobank pass is running and did not finish in time; try again in a moment"


def process_gone(pid: int) -> bool:
    """Whether process `pid` of this machine writes nothing more: there is no such process, or it is a
    zombie nobody reaps (a killed detached pass is an orphan, and in a container whose first process
    reaps nothing it stays one). Another user's process is taken as alive."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            line = f.read(1024)
    except OSError:
        return False
    return line[line.rfind(b")") + 2:][:1] == b"Z"  # the state follows the name, which may hold ")"


class PassLock:
    """`autobank.lock`, taken with `fcntl.flock` as filelock takes it on Unix (the same file, the same
    lock as any filelock of it), polled until `wait` runs out; filelock itself where there is no flock."""

    def __init__(self, path: os.PathLike[str] | str) -> None:
        self.path = os.fspath(path)
        self.fd: int | None = None
        self.fallback: BaseFileLock | None = None
        self.held = False

    def acquire(self, wait: float) -> bool:
        """Taken within `wait` seconds, or what is left of a hook's deadline when less (`store.deadline`)."""
        if self.held:
            return True
        wait = deadline.left(wait)
        if self.fallback is None:
            try:
                import fcntl
            except ImportError:
                pass
            else:
                taken = self._flock(fcntl, wait)
                if taken is not None:
                    return taken
        return self._filelock(wait)

    def _flock(self, fcntl: ModuleType, wait: float) -> bool | None:
        """Taken, or not within `wait`; None where this file system has no flock."""
        if self.fd is None:
            flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
            try:
                self.fd = os.open(self.path, flags, 0o666)
            except PermissionError:  # someone else's lock file: a lock needs no write access
                self.fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        until = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                self.held = True
                return True
            except BlockingIOError:
                if time.monotonic() >= until:
                    return False
                time.sleep(min(LOCK_POLL, max(0.0, until - time.monotonic())))
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
        elif self.fd is not None:
            import fcntl

            fcntl.flock(self.fd, fcntl.LOCK_UN)

    def close(self) -> None:
        self.release()
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


class holding:  # noqa: N801 - used as a `with` statement, like a function
    """`with holding(locs, wait):` the pass lock held inside, for one whole change; `busy` (the caller's
    error, PassBusy by default) raised with BUSY when another writer keeps it past `wait` seconds."""

    def __init__(self, locs: Locations, wait: float, busy: type[Exception] = PassBusy) -> None:
        self.lock = PassLock(locs.pass_lock)
        self.wait = wait
        self.busy = busy
        locs.agent_dir.mkdir(parents=True, exist_ok=True)

    def __enter__(self) -> None:
        try:
            taken = self.lock.acquire(self.wait)
        except BaseException:
            self.lock.close()
            raise
        if not taken:
            self.lock.close()
            raise self.busy(BUSY)

    def __exit__(self, *exc: object) -> None:
        self.lock.close()
