"""When a hook should start a background pass, and how: cheap enough for every prompt; and how a hook
process leaves its harness to do the work its answer does not depend on (`leave_the_harness`).

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


def leave_the_harness() -> None:
    """Let the harness go, and return in a process it neither waits for nor can kill: this one exits at
    once (the harness has its answer), after its child has started the grandchild that returns here in
    a session of its own (a harness that kills the hook's process group does not reach it), holding
    none of the harness's pipes (a harness waits until every writer has closed them). Where there is
    no fork, this process simply carries on."""
    try:
        pid = os.fork()
    except OSError:
        return
    if pid:
        try:
            os.waitpid(pid, 0)  # the grandchild has left the group, and no longer holds the pipes
        finally:
            os._exit(0)
    try:
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        if os.fork():
            os._exit(0)
    except OSError:  # no second fork: this child does the work, and the harness waits for it
        return
