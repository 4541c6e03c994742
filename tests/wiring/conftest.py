from __future__ import annotations

import io
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from harnesslink_core.paths import Locations, locations
from harnesslink_core.wiring import installer, uninstaller


@pytest.fixture(autouse=True)
def _no_real_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    # anything that falls back on os.environ still lands in a temporary folder
    fallback = tmp_path_factory.mktemp("fallback-home")
    monkeypatch.setenv("HOME", str(fallback))
    for name in ("HARNESSLINK_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "PI_CODING_AGENT_DIR"):
        monkeypatch.delenv(name, raising=False)


@dataclass
class World:
    """A home folder (with a space in its path) and an empty PATH: no harness unless a test adds one."""

    root: Path
    env: dict[str, str]

    @property
    def home(self) -> Path:
        return Path(self.env["HOME"])

    @property
    def locs(self) -> Locations:
        return locations(self.env)

    def install(self, *args: str) -> tuple[int, str]:
        out = io.StringIO()
        code = installer.main(["--no-venv", "--no-backfill", *args], env=self.env, out=out)
        return code, out.getvalue()

    def uninstall(self, *args: str) -> tuple[int, str]:
        out = io.StringIO()
        code = uninstaller.main(list(args), env=self.env, out=out)
        return code, out.getvalue()

    def put_command(self, name: str) -> None:
        path = Path(self.env["PATH"]) / name
        path.write_text("#!/bin/sh\n")
        path.chmod(0o755)

    def snapshot(self) -> dict[str, bytes | None]:
        """Every file and folder under the root, with file bytes: to prove nothing changed."""
        found: dict[str, bytes | None] = {}
        for folder, dirs, files in os.walk(self.root):
            for d in dirs:
                found[os.path.join(folder, d)] = None
            for f in files:
                path = os.path.join(folder, f)
                found[path] = Path(path).read_bytes() if not os.path.islink(path) else b"->" + os.readlink(path).encode()
        return found


@pytest.fixture
def world(tmp_path: Path) -> World:
    home = tmp_path / "home with space"
    bin_dir = tmp_path / "bin"
    home.mkdir()
    bin_dir.mkdir()
    return World(tmp_path, {"HOME": str(home), "PATH": str(bin_dir)})
