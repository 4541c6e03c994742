"""Entries made durable (SPEC §5): written whole under a free name or not at all, and on the disk before
the ledger says they are banked.

`write` places one entry (atomically, by a hard link that fails rather than replaces); a writer of many
`stage`s their bytes in temporary files first, syncs them together (`sync_staged`: one `syncfs(2)` of the
file system where that is sure, else an fsync each on a few threads) and then `write`s each from its
staged file, syncing each folder once (`fsync_dirs`). `Writeback` watches a file system for that one
syncfs: only on Linux 5.17 or later (the kernel gate), on the file systems in SYNCFS_TYPES (read from
/proc/self/mountinfo), with little else waiting for writeback. The entry format itself is `bank.py`'s;
`store.commit` is the one caller that writes entries.
"""

from __future__ import annotations

import errno
import os
import re

from ..safefile import may_make_folder
from .bank import Entry, candidates, find_entry

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the stop hook's pass)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from pathlib import Path
    from threading import Thread
    from typing import Any


def write(bank_dir: Path, entry: Entry, *, sync_folder: bool = True, listing: set[str] | None = None,
          staged: Path | None = None) -> Path:
    """Write the entry under a name no other entry has, atomically; return its path.

    The file appears whole or not at all: it is written to a temporary name
    (not ending in .md, so the uploader never sees it) and linked into place,
    which fails rather than replaces when the name is taken. A caller writing many entries
    may sync their folder once itself (`sync_folder=False`, then `fsync_dir`) and hand in the
    folder's names (`listing`, kept up to date here) instead of listing it for each entry, and
    may write and sync the temporary files of all of them first (`stage`, `sync_staged`), then
    hand each in (`staged`): their syncs then overlap instead of following one another. A caller that
    stages has looked for an entry of this turn (`find_entry`) before staging it, under the same lock.
    """
    try:
        existing = None if staged is not None else find_entry(bank_dir, entry.file_iso, entry.turn_key, listing)
        if existing:
            return existing
        if staged is None:
            refuse_linked_folders(bank_dir)
            made = make_folder(bank_dir)
            if made and sync_folder:
                sync_made(made)
            tmp = _temporary(bank_dir, entry.name_stem)
            _write_synced(tmp, entry.text.encode())
        else:
            tmp = staged
    except BaseException:
        if staged is not None:
            staged.unlink(missing_ok=True)
        raise
    try:
        for stem in candidates(entry):
            target = bank_dir / f"{stem}.md"
            if _place(tmp, target):
                if listing is not None:
                    listing.add(target.name)
                if sync_folder and (error := fsync_dir(bank_dir)) is not None:
                    raise error  # placed, not yet sure to stay: the next pass finds it and counts it then
                return target
        raise FileExistsError(f"no free name for {entry.name_stem} in {bank_dir}")
    finally:
        tmp.unlink(missing_ok=True)


_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)


def stage(bank_dir: Path, entry: Entry, made: list[Path] | None = None) -> Path:
    """An entry's bytes in a temporary file of its folder, not yet synced (see `write`'s `staged`).

    Three system calls for most (open, write, close): a pass stages hundreds, and the folder is made only
    when it is missing (the folders made then are added to `made`, for `fsync_dirs`)."""
    refuse_linked_folders(bank_dir)
    tmp = _temporary(bank_dir, entry.name_stem)
    try:
        fd = os.open(tmp, _NEW_FILE, 0o666)
    except FileNotFoundError:
        new = make_folder(bank_dir)
        if made is not None:
            made += new
        fd = os.open(tmp, _NEW_FILE, 0o666)
    try:
        data = memoryview(entry.text.encode())
        while data:  # a regular file takes it in one write; a short one (a full disk) raises next round
            data = data[os.write(fd, data):]
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    finally:
        os.close(fd)
    return tmp


SYNC_THREADS = 16  # concurrent fsyncs share the file system's journal commits (creating files in threads
# too measured slower: each journal commit then waits for more of them)


def sync_staged(paths: list[Path], meanwhile: Callable[[], None] | None = None,
                writeback: Writeback | None = None) -> list[OSError | None]:
    """fsync each staged file, several at a time; for each, the error that kept it from the disk (and
    the file is removed then) or None. `meanwhile` is run in this thread while the disk works.

    With a `writeback` watch opened before they were staged, a batch of SYNCFS_FILES or more is synced by one
    syncfs instead; where that cannot vouch for all of them, each is fsync'd as above."""
    if writeback is not None and len(paths) >= SYNCFS_FILES:
        synced = writeback.sync({path.parent for path in paths}, meanwhile)
        meanwhile = None
        if synced:
            return [None] * len(paths)
    if len(paths) < 2:
        errors = [_sync(p) for p in paths]
        if meanwhile is not None:
            meanwhile()
        return errors
    # one job per thread, not per file: a job's hand-off costs the threads more than an fsync does
    lanes = min(SYNC_THREADS, len(paths))
    pending = _pool().start(_sync_each, [paths[lane::lanes] for lane in range(lanes)])
    if meanwhile is not None:
        meanwhile()
    done = _Pool.results(pending)
    return [done[k % lanes][k // lanes] for k in range(len(paths))]


def _sync_each(paths: list[Path]) -> list[OSError | None]:
    return [_sync(p) for p in paths]


def _sync(path: Path) -> OSError | None:
    try:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        return None
    except OSError as exc:
        path.unlink(missing_ok=True)
        return exc


SYNCFS_FILES = 2  # a batch of this many staged files or more may be synced by one syncfs (a hook's one entry is
# fsync'd: it would cost ctypes's import)
SYNCFS_DIRTY_MAX = 16 << 20  # ... unless this much else waits for writeback: syncfs would wait for all of it
# ... and only on these file systems, whose syncfs writes back and commits all (FUSE's may do neither, and
# others are not known to report writeback errors through it): elsewhere each file is fsync'd
SYNCFS_TYPES = frozenset({"ext4", "ext3", "xfs", "btrfs", "f2fs"})
# ... and only on kernels whose syncfs reports both the writeback errors since its descriptor was opened (5.8)
# and a failed journal commit or cache flush (5.17: "vfs: make sync_filesystem return errors from ->sync_fs")
SYNCFS_KERNEL = (5, 17)


class Writeback:
    """Writeback errors on a file system from now on, to sync a large batch with one `syncfs(2)`.

    One syncfs commits the journal once for all of a batch's files, where an fsync per file makes the disk
    flush its cache once per file (256 small files on ext4: 3 ms against 13 ms and more). Watched only where
    syncfs reports every error since its descriptor was opened (SYNCFS_KERNEL); opened before a batch is
    staged, it misses none of the batch's errors."""

    def __init__(self, fd: int, syncfs: Callable[[int], int]) -> None:
        self.fd = fd
        self.device = os.fstat(fd).st_dev
        self._syncfs = syncfs

    @classmethod
    def watch(cls, folder: Path, files: int) -> Writeback | None:
        """A watch on the file system `folder` is (or will be made) on, for a batch of `files`, or None where
        one syncfs is not the faster or not the sure way: one file, an older kernel, much else to write, a file
        system not in SYNCFS_TYPES."""
        if files < SYNCFS_FILES or (syncfs := _syncfs()) is None or _dirty_bytes() > SYNCFS_DIRTY_MAX:
            return None
        existing = next((f for f in (folder, *folder.parents) if f.is_dir()), folder)
        try:
            fd = os.open(existing, os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            return None
        try:
            watch = cls(fd, syncfs)
        except OSError:
            os.close(fd)
            return None
        if _file_system(folder) not in SYNCFS_TYPES:
            watch.close()
            return None
        return watch

    def sync(self, folders: set[Path], meanwhile: Callable[[], None] | None = None) -> bool:
        """Whether everything written in `folders` is on the disk now: False when one is on another file
        system, or syncfs failed (which file it failed for, it cannot say). `meanwhile` is run here while
        the disk works."""
        import threading

        try:
            same = all(os.stat(folder).st_dev == self.device for folder in folders)
        except OSError:
            same = False
        done: list[int] = []
        if not same or meanwhile is None:
            if meanwhile is not None:
                meanwhile()
            return same and self._syncfs(self.fd) == 0
        # one thread, not the pool: starting its threads costs a batch more than its syncfs
        thread = threading.Thread(target=lambda: done.append(self._syncfs(self.fd)), name="harnesslink-syncfs",
                                  daemon=True)
        thread.start()
        try:
            meanwhile()
        finally:
            thread.join()  # never left holding the descriptor that `close` is about to close
        return done == [0]

    def close(self) -> None:
        os.close(self.fd)


_SYNCFS: list[Callable[[int], int] | None] = []  # [syncfs or None], once looked up


def _syncfs() -> Callable[[int], int] | None:
    if not _SYNCFS:
        _SYNCFS.append(_load_syncfs())
    return _SYNCFS[0]


def _load_syncfs() -> Callable[[int], int] | None:
    import sys

    if sys.platform != "linux":
        return None
    try:
        if tuple(int(part) for part in os.uname().release.split(".")[:2]) < SYNCFS_KERNEL:
            return None
        import ctypes

        syncfs = ctypes.CDLL(None, use_errno=True).syncfs  # CDLL's calls let go of the interpreter lock
    except (ValueError, ImportError, OSError, AttributeError):
        return None
    syncfs.argtypes = [ctypes.c_int]
    syncfs.restype = ctypes.c_int
    return syncfs


_FILE_SYSTEMS: dict[str, str] = {}  # real path -> the type of the file system it is on


def _file_system(path: Path) -> str:
    """The type of the file system `path` is on ("" if unknown): that of the mount whose mount point is the
    longest that holds it, in /proc/self/mountinfo (not by device: a btrfs subvolume's files have a device
    number of their own)."""
    real = os.path.realpath(path)
    if real not in _FILE_SYSTEMS:
        _FILE_SYSTEMS[real] = _mounted_type(real)
    return _FILE_SYSTEMS[real]


def _mounted_type(real: str) -> str:
    best, kind = -1, ""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                head, _, rest = line.partition(" - ")
                fields = head.split()
                if len(fields) < 5 or not rest:
                    continue
                point = _unescape(fields[4])
                inside = real == point or real.startswith(point.rstrip("/") + "/")
                if inside and len(point) >= best:  # the later of two mounts on one point is the one seen
                    best, kind = len(point), rest.split()[0]
    except OSError:
        return ""
    return kind


def _unescape(field: str) -> str:
    """A mountinfo path field: space, tab, newline and backslash are written as octal escapes."""
    if "\\" not in field:
        return field
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def _dirty_bytes() -> int:
    """Bytes the kernel has yet to write back (all file systems'), or a figure past any limit if unknown."""
    try:
        with open("/proc/meminfo", "rb") as f:
            fields = dict(line.split(b":", 1) for line in f.read().splitlines() if b":" in line)
        return sum(int(fields[name].split()[0]) for name in (b"Dirty", b"Writeback")) << 10
    except (OSError, KeyError, ValueError, IndexError):
        return 1 << 62


def fsync_dirs(folders: set[Path], writeback: Writeback | None = None,
               made: Iterable[Path] = ()) -> dict[Path, OSError]:
    """Each folder's entries made durable, and each folder in `made` (made by this batch: `stage`) in its
    parent: by one syncfs with a `writeback` watch, else `fsync_dir` of each, several at a time. The folders
    whose sync failed, or one of whose new parents' did, with the error."""
    every = set(folders) | {folder.parent for folder in made}
    if not folders or writeback is not None and writeback.sync(every):
        return {}
    ordered = sorted(every)
    results = [fsync_dir(f) for f in ordered] if len(ordered) < 2 else _Pool.results(_pool().start(fsync_dir, ordered))
    failed = {f: error for f, error in zip(ordered, results) if error is not None}
    found = {f: failed.get(f) or next((failed[p] for p in f.parents if p in failed), None) for f in folders}
    return {f: error for f, error in found.items() if error is not None}


def refuse_linked_folders(bank_dir: Path) -> None:
    """OSError when the project folder or the bank folder of `bank_dir` is a symlink (or not a folder): an
    entry written through it would land outside the tree."""
    project = bank_dir.parent
    if not may_make_folder(os.fspath(project.parent), project.name, bank_dir.name):
        raise OSError(f"{bank_dir}: a symlink or not a folder in the memory tree; nothing is written through it")


def make_folder(path: Path) -> list[Path]:
    """`path` made with the folders it needs; the ones made, outermost first (`sync_made` makes them stay)."""
    missing = []
    while not path.is_dir():
        missing.append(path)
        if path.parent == path:
            break
        path = path.parent
    made = []
    for folder in reversed(missing):
        try:
            folder.mkdir()
            made.append(folder)
        except FileExistsError:
            pass
    return made


def sync_made(made: list[Path]) -> None:
    """Each folder `make_folder` made, durable in its parent; raises what kept one from it."""
    for folder in made:
        if (error := fsync_dir(folder.parent)) is not None:
            raise error


class _Pool:
    """Up to SYNC_THREADS threads that run the calls handed to them: what `concurrent.futures` would do here,
    without the imports it brings (logging, traceback, ...: 4 ms of a backfill). Threads are started as calls
    need them (starting one can take a millisecond while the read-ahead's child has the other core)."""

    def __init__(self) -> None:
        from queue import SimpleQueue

        self.jobs: SimpleQueue[tuple[Callable[[Any], object], object, list[Any]] | None] = SimpleQueue()
        self.threads: list[Thread] = []

    def _grow(self, wanted: int) -> None:
        import threading

        while len(self.threads) < min(wanted, SYNC_THREADS):
            thread = threading.Thread(target=self._work, name="harnesslink-sync", daemon=True)
            thread.start()
            self.threads.append(thread)

    def _work(self) -> None:
        while True:
            item = self.jobs.get()
            if item is None:
                return
            fn, arg, job = item
            try:
                job[1] = fn(arg)
            except BaseException as exc:  # noqa: BLE001 - raised in the thread that waits for it
                job[2] = exc
            job[0].release()

    def start(self, fn: Callable[[Any], object], args: list[Any]) -> list[list[Any]]:
        """`fn(arg)` of each arg, begun; `results` waits for them."""
        import _thread

        self._grow(len(args))
        pending = []
        for arg in args:
            job: list[Any] = [_thread.allocate_lock(), None, None]  # (released when done, result, error)
            job[0].acquire()
            self.jobs.put((fn, arg, job))
            pending.append(job)
        return pending

    def stop(self) -> None:
        for _ in self.threads:
            self.jobs.put(None)
        for thread in self.threads:
            thread.join()

    @staticmethod
    def results(pending: list[list[Any]]) -> list[Any]:
        """Each job's result, in order, once all are done; the first error is raised."""
        for done, _, _ in pending:
            done.acquire()
        for _, _, error in pending:
            if error is not None:
                raise error
        return [result for _, result, _ in pending]


_POOL: tuple[int, _Pool] | None = None  # (pid, pool): a pass's sync threads (`stop_syncing` lets them go)


def stop_syncing() -> None:
    """The sync threads let go (at a pass's end): the next pass may fork its read-ahead only while no other
    thread runs (`banking/readahead.py`)."""
    global _POOL
    if _POOL is not None and _POOL[0] == os.getpid():
        _POOL[1].stop()
    _POOL = None


def _pool() -> _Pool:
    global _POOL
    if _POOL is None or _POOL[0] != os.getpid():  # a forked child has none of its parent's threads
        _POOL = (os.getpid(), _Pool())
    return _POOL[1]


def _temporary(bank_dir: Path, stem: str) -> Path:
    return bank_dir / f".{stem[:40]}.{os.getpid()}.{os.urandom(4).hex()}.tmp"


def rewrite(path: Path, entry: Entry) -> None:
    """Replace an entry's content in place, atomically (only Antigravity's per-conversation entry)."""
    tmp = _temporary(path.parent, path.stem)
    _write_synced(tmp, entry.text.encode())
    try:
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _write_synced(tmp: Path, data: bytes) -> None:
    """A temporary file with these bytes on disk, or no file at all (a full disk fails the write)."""
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _place(tmp: Path, target: Path) -> bool:
    try:
        os.link(tmp, target)
        return True
    except FileExistsError:
        return False
    except OSError:
        # filesystems without hard links: all writers hold the pass lock, so check-then-rename is safe
        if target.exists():
            return False
        os.replace(tmp, target)
        return True


# what a file system that cannot sync a folder answers (Windows, some FUSE and network file systems)
_CANNOT_SYNC_FOLDERS = frozenset({errno.EINVAL, errno.EOPNOTSUPP, errno.EBADF, errno.EACCES, errno.EPERM})


def fsync_dir(path: Path) -> OSError | None:
    """A folder's entries made durable; the error that kept them from the disk, or None (also where the file
    system cannot sync a folder, or the folder cannot be opened)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        os.fsync(fd)
    except OSError as exc:
        return None if exc.errno in _CANNOT_SYNC_FOLDERS else exc
    finally:
        os.close(fd)
    return None
