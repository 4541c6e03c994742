"""Every test runs in its own world: HOME and the agent dir point into tmp_path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# real transcripts from public projects, copied into the repository (SOURCES.md in each folder)
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "real"

HARNESS_ENV = (
    "HARNESSLINK_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "PI_CODING_AGENT_DIR", "PI_CONFIG_DIR",
    "PI_CODING_AGENT_SESSION_DIR", "XDG_DATA_HOME",
)
REAL_HOME = os.path.expanduser("~")


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in HARNESS_ENV:
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture
def locs(isolated_home: Path):
    from harnesslink_core.paths import locations

    result = locations()
    assert not str(result.agent_dir).startswith(REAL_HOME + "/.superpi"), "tests must not touch the real home"
    return result
