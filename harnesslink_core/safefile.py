"""Reading a file that anyone with a shell could have replaced: in the memory tree or the agent dir.

Only a regular file is read, never through a symlink at its last step, never more than a bound, and
the open never blocks: a FIFO named TRUST.md, IDENTITY.md or config.yml would otherwise hold a hook
until its harness kills it. Cheap enough for the prompt hook's path (no imports beyond `os`, `stat`).
"""

from __future__ import annotations

import os
import stat

_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def read_regular(path: str, limit: int) -> bytes | None:
    """At most `limit` bytes of the regular file at `path`, or None where it is missing, unreadable, a
    symlink, or not a regular file (a FIFO, a socket, a device, a folder). Ask for one byte more than
    you accept to tell a file cut at the bound from one that fits."""
    try:
        fd = os.open(path, _FLAGS)
    except (OSError, ValueError):
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
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
