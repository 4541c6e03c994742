"""pi sessions (`$PI_CODING_AGENT_DIR/sessions/--<cwd>--/<ts>_<id>.jsonl`).

Resume: `pi --session <id>`, run in the session's project folder: elsewhere pi asks
"Session found in different project … Fork this session into current directory?".
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
EXECUTABLE = "pi"
MUST_RUN_IN_FOLDER = True


def all_transcripts(locs: Locations) -> Iterator[Path]:
    return pi_family.session_files([reader.home(locs) / "sessions"])


def transcripts(locs: Locations, cwd: str) -> Iterator[Path]:
    return pi_family.in_folder(all_transcripts(locs), cwd)


def describe(path: Path) -> Session | None:
    return pi_family.describe(NAME, path)


def resume_argv(session: Session) -> list[str]:
    return [EXECUTABLE, "--session", session.session_id]


def fresh_argv() -> list[str]:
    return [EXECUTABLE]
