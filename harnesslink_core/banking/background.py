"""When a hook should start a background pass, and how: cheap enough for every prompt.

Kept apart from `autobank` so the prompt hook never imports the pass (filelock, the readers).
"""

from __future__ import annotations

import os
import sys
import time

from ..paths import Locations
from ..safefile import open_append

STAMP = ".last-pass"
PASS_INTERVAL = 30.0  # hooks start a background pass at most this often


def pass_due(locs: Locations) -> bool:
    """Whether a pass should run now: one stat of the stamp the last pass left."""
    try:
        return time.time() - os.stat(os.path.join(locs.agent_path, STAMP)).st_mtime >= PASS_INTERVAL
    except OSError:
        return True


def mark_pass(locs: Locations) -> None:
    try:
        _touch(os.path.join(locs.agent_path, STAMP))
    except OSError:
        pass


def _touch(path: str) -> None:
    fd = open_append(path)  # never a FIFO's open, which waits for a reader
    if fd is None:
        raise OSError(f"{path} is not a regular file")
    try:
        os.utime(fd)
    finally:
        os.close(fd)


def spawn_background_pass(locs: Locations) -> None:
    """A detached `harnesslink autobank --drain`, so no hook waits for a backlog."""
    import subprocess

    os.makedirs(locs.agent_path, exist_ok=True)
    mark_pass(locs)  # before spawning: the next prompt must not start another one
    subprocess.Popen(
        [sys.executable, "-m", "harnesslink_core.main", "autobank", "--drain", "--quiet"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True, close_fds=True, env=dict(locs.env),
    )
