"""omp sessions (`~/.omp/agent/sessions/<encoded cwd>/<ts>_<id>.jsonl`, plus profiles and XDG).

Resume: `omp --resume <id>` works from any folder (omp switches to the session's project).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ...paths import Locations
from ...sessions.base import Session
from ..pi_family import sessions as pi_family
from ..pi_family.sessions import id_from_name  # noqa: F401 - part of this module's interface
from . import reader

NAME = reader.NAME
EXECUTABLE = "omp"
MUST_RUN_IN_FOLDER = False


def all_transcripts(locs: Locations) -> Iterator[Path]:
    return pi_family.session_files(reader.session_roots(locs))


def transcripts(locs: Locations, cwd: str) -> Iterator[Path]:
    return pi_family.in_folder(all_transcripts(locs), cwd)


def describe(path: Path) -> Session | None:
    return pi_family.describe(NAME, path)


def resume_argv(session: Session) -> list[str]:
    return [EXECUTABLE, "--resume", session.session_id]


def fresh_argv() -> list[str]:
    return [EXECUTABLE]
