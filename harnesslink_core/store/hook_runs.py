"""When each hook last ran, as the hook itself records it: `<agent dir>/hook-runs/<harness>--<event>`, one
line (the time and the version that ran) rewritten by a run when it is over a minute old. 4 harnesses × 4 events
bound it to 16 small files; `harnesslink doctor` reads them to tell a hook that is wired but silent."""

from __future__ import annotations

import os

from .. import __version__
from ..safefile import open_append, read_regular_text

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (every hook records its run)
if TYPE_CHECKING:
    from ..paths import Locations

FOLDER = "hook-runs"
FRESH_SECONDS = 60.0  # a record this recent is not rewritten: "ran lately" needs no finer time


def record(locs: Locations, harness: str, event: str, now: float) -> None:
    """Cheap enough to run before the answer (a stat, mostly), so recording it never costs a fork after."""
    folder = os.path.join(locs.agent_path, FOLDER)
    path = os.path.join(folder, f"{harness}--{event}")
    try:
        if 0 <= now - os.lstat(path).st_mtime < FRESH_SECONDS:
            return
    except OSError:
        os.makedirs(folder, exist_ok=True)
    fd = open_append(path)  # never a FIFO or a link planted there
    if fd is None:
        return
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{now:.3f} {__version__}\n".encode())
    finally:
        os.close(fd)


def last_run(locs: Locations, harness: str, event: str) -> tuple[float, str] | None:
    """(when, which version) of the last run of `event` for `harness`, or None if none was recorded."""
    text = read_regular_text(os.path.join(locs.agent_path, FOLDER, f"{harness}--{event}"), 256)
    when, _, version = (text or "").strip().partition(" ")
    try:
        return float(when), version
    except ValueError:
        return None
