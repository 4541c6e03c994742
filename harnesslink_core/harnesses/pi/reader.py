"""pi (badlogic/pi-mono, `@mariozechner/pi-coding-agent`): sessions under
`$PI_CODING_AGENT_DIR` (default `~/.pi/agent`) in `sessions/--<cwd>--/<ts>_<id>.jsonl`.

The file format and the reader are shared with omp in `pi_family/reader.py`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...model import Reading
from ...paths import Locations
from ..base import LongLine, all_readable
from ..pi_family import reader as pi_family

NAME = "pi"
unreadable = all_readable


def home(locs: Locations) -> Path:
    return locs.env_path("PI_CODING_AGENT_DIR", locs.home / ".pi" / "agent")


def detect(locs: Locations) -> bool:
    return home(locs).is_dir()


def iter_transcripts(locs: Locations) -> Iterator[os.DirEntry[str]]:
    yield from pi_family.session_files(home(locs) / "sessions")


def read(path: Path, start: int, carry: dict[str, Any], budget: int,
         long_line: LongLine | None = None) -> Reading:
    return pi_family.read_session(NAME, path, start, carry, budget, long_line)
