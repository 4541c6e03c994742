"""Progress bars for the long verbs (`backfill`, `reindex`): a percentage, a rate and an ETA on stderr.

Only on a terminal: when stderr is a pipe or a file (hooks, CI, `2>log`) there is no bar at all,
and tqdm is not even imported; the verbs print their one-line summaries either way. An environment
made before tqdm was a dependency gets no bar either, rather than an error.
"""

from __future__ import annotations

import os
import sys
from typing import Any, TextIO

FALLBACK_SIZE = (80, 24)  # columns, lines


class Bars:
    """One bar per stage of a job, opened by the stage's first report and closed by the next stage's."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.shown = _is_terminal(self.stream) and _tqdm() is not None
        self.stage: str | None = None
        self.bar: Any = None  # the stage's tqdm bar, once it has reported

    def report(self, stage: str, done: int, total: int, *, unit: str = "entries", note: str = "") -> None:
        """`done` of `total`, both so far (not since the last report): an estimate may change as the
        work goes, and a total the work outgrew grows with it."""
        if not self.shown:
            return
        if stage != self.stage:
            self.close()
            self.stage = stage
            self.bar = _open(_tqdm(), self.stream, stage, total, unit)
        bar = self.bar
        bar.total = max(total, done)
        if note:
            bar.set_postfix_str(note, refresh=False)
        bar.update(done - bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
        self.stage = None

    def __enter__(self) -> Bars:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def _open(tqdm, stream: TextIO, stage: str, total: int, unit: str):
    if unit == "B":
        scale = {"unit": "B", "unit_scale": True, "unit_divisor": 1000}  # MB, as the summary line says
    else:
        scale = {"unit": f" {unit}"}  # "12.5 entries/s"
    # a terminal that tells no size (a serial console, a bare pty) reads as 0x0, where tqdm draws nothing
    size = {"dynamic_ncols": True} if _has_size(stream) else {"ncols": FALLBACK_SIZE[0], "nrows": FALLBACK_SIZE[1]}
    return tqdm(total=max(total, 0), desc=stage, file=stream, leave=True, mininterval=0.2, **scale, **size)


def _has_size(stream: TextIO) -> bool:
    try:
        size = os.get_terminal_size(stream.fileno())
    except (AttributeError, OSError, ValueError):
        return False
    return size.columns > 0 and size.lines > 0


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or stand-in stream
        return False


def _tqdm():
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm
