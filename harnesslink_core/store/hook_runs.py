"""When each hook last ran, as the hook itself records it: `<agent dir>/hook-runs/<harness>--<event>`, one
line (the time and the version that ran) rewritten by each run, after its answer. 4 harnesses × 4 events
bound it to 16 small files; `harnesslink doctor` reads them to tell a hook that is wired but silent."""

from __future__ import annotations

import os

from .. import __version__
from ..safefile import open_append, read_regular_text

FOLDER = "hook-runs"


def record(locs, harness: str, event: str, now: float) -> None:
    folder = os.path.join(locs.agent_path, FOLDER)
    os.makedirs(folder, exist_ok=True)
    fd = open_append(os.path.join(folder, f"{harness}--{event}"))  # never a FIFO or a link planted there
    if fd is None:
        return
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{now:.3f} {__version__}\n".encode())
    finally:
        os.close(fd)


def last_run(locs, harness: str, event: str) -> tuple[float, str] | None:
    """(when, which version) of the last run of `event` for `harness`, or None if none was recorded."""
    text = read_regular_text(os.path.join(locs.agent_path, FOLDER, f"{harness}--{event}"), 256)
    when, _, version = (text or "").strip().partition(" ")
    try:
        return float(when), version
    except ValueError:
        return None
