"""omp (oh-my-pi, `@oh-my-pi/pi-coding-agent`): sessions under `~/.omp/agent/sessions/<encoded cwd>/`.

Where omp keeps them (`packages/utils/src/dirs.ts`):

- the config root is `~/<PI_CONFIG_DIR or .omp>`; the agent dir is `<root>/agent`;
- named profiles keep theirs in `<root>/profiles/<name>/agent/sessions`;
- on Linux/macOS, once `$XDG_DATA_HOME/omp` exists, sessions live in `$XDG_DATA_HOME/omp/sessions`.

omp also honours `PI_CODING_AGENT_DIR`, but that is pi's variable too and we cannot
tell which agent a user set it for. We leave it to pi: if both modules followed it,
the same files would be read twice and every turn banked under two harness names.

The folder name encodes the cwd lossily (home-relative since 2026-02); the reader
takes the cwd from the session header inside the file, never from the folder.
Subagent transcripts (`<session>/<agent>.jsonl`) are not listed. The file format and
the reader are shared with pi in `pi_family/reader.py`.
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

NAME = "omp"
unreadable = all_readable


def config_root(locs: Locations) -> Path:
    # omp joins the name onto the home folder, even when it looks absolute
    name = (locs.env.get("PI_CONFIG_DIR") or ".omp").lstrip("/\\") or ".omp"
    return locs.home / name


def home(locs: Locations) -> Path:
    return config_root(locs) / "agent"


def session_roots(locs: Locations) -> list[Path]:
    roots = [home(locs) / "sessions"]
    try:
        profiles = sorted(p for p in (config_root(locs) / "profiles").iterdir() if p.is_dir())
    except OSError:
        profiles = []
    roots += [profile / "agent" / "sessions" for profile in profiles]
    xdg = locs.env.get("XDG_DATA_HOME")
    if xdg and (Path(xdg) / "omp").is_dir():
        roots.append(Path(xdg) / "omp" / "sessions")
    return roots


def detect(locs: Locations) -> bool:
    return home(locs).is_dir() or any(root.is_dir() for root in session_roots(locs))


def iter_transcripts(locs: Locations) -> Iterator[os.DirEntry[str]]:
    for root in session_roots(locs):
        yield from pi_family.session_files(root)


def read(path: Path, start: int, carry: dict[str, Any], budget: int,
         long_line: LongLine | None = None) -> Reading:
    return pi_family.read_session(NAME, path, start, carry, budget, long_line)
