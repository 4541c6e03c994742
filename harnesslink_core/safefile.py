"""Reading a file that anyone with a shell could have replaced: in the memory tree or the agent dir.

Only a regular file is read, never through a symlink at its last step, never more than a bound, and
the open never blocks: a FIFO named TRUST.md, IDENTITY.md or config.yml would otherwise hold a hook
until its harness kills it. Cheap enough for the prompt hook's path (no imports beyond `os`, `stat`).
"""

from __future__ import annotations

import os
import stat

_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_APPEND_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def open_regular(path: str) -> int | None:
    """A read-only descriptor of the regular file at `path` (the caller closes it), or None where it is
    missing, unreadable, a symlink, or not a regular file: for a file read in pieces, such as a log's tail."""
    return _open_regular(path, _FLAGS)


def read_regular(path: str, limit: int) -> bytes | None:
    """At most `limit` bytes of the regular file at `path`, or None where it is missing, unreadable, a
    symlink, or not a regular file (a FIFO, a socket, a device, a folder). Ask for one byte more than
    you accept to tell a file cut at the bound from one that fits."""
    fd = open_regular(path)
    if fd is None:
        return None
    try:
        chunks: list[bytes] = []
        remaining = limit
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def read_regular_text(path: str, limit: int) -> str | None:
    """`read_regular`, decoded as UTF-8 (undecodable bytes replaced)."""
    data = read_regular(path, limit)
    return None if data is None else data.decode("utf-8", "replace")


def is_regular(path: str) -> bool:
    """Whether `path` is a regular file itself, not a symlink to one (lstat: never opens it)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except (OSError, ValueError):
        return False


def is_folder(path: str) -> bool:
    """Whether `path` is a folder itself, not a symlink to one (lstat: never opens it)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except (OSError, ValueError):
        return False


def tree_folder(root: str, *parts: str) -> str | None:
    """`root` joined with `parts` when each of those steps below `root` is a folder itself, never a
    symlink (a link inside the memory tree may lead out of it); None otherwise."""
    path = root
    for part in parts:
        path = os.path.join(path, part)
        if not is_folder(path):
            return None
    return path


def may_make_folder(root: str, *parts: str) -> bool:
    """Whether writing into `root` joined with `parts` stays below `root`: each step that exists is a folder
    itself, never a symlink (what does not exist yet is made by the writer, as a folder)."""
    path = root
    for part in parts:
        path = os.path.join(path, part)
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            return True
        except (OSError, ValueError):
            return False
        if not stat.S_ISDIR(mode):
            return False
    return True


def open_append(path: str, mode: int = 0o644, *, readable: bool = False) -> int | None:
    """A descriptor appending to the regular file at `path`, made if missing (the caller closes it), that
    can also be read when `readable`; None where `path` is a symlink, a FIFO (opening one to write waits
    for a reader), or anything else."""
    return _open_regular(path, (_APPEND_FLAGS & ~os.O_WRONLY) | os.O_RDWR if readable else _APPEND_FLAGS, mode)


def _open_regular(path: str, flags: int, mode: int = 0o644) -> int | None:
    """A descriptor of `path` opened with `flags` when it is a regular file (the caller closes it), else None."""
    try:
        fd = os.open(path, flags, mode)
    except (OSError, ValueError):
        return None
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None
