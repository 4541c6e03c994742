"""The hook launcher install.py writes exits 0, printing nothing, when the package is not in its venv for a
moment: an upgrade (install.py again, the plugin's setup after an update) reinstalls the package into the venv
the hooks run from, and between pip taking the old files out and putting the new ones in a hook may start."""

from __future__ import annotations

import subprocess
import venv
from pathlib import Path

from harnesslink_core.wiring.environment import write_hook_launcher


def test_the_launcher_exits_0_while_the_package_is_out_of_its_venv(tmp_path: Path) -> None:
    target = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False, symlinks=True).create(target)  # a venv without the package, as mid-upgrade
    write_hook_launcher(target)
    for event in ("session-start", "user-prompt-submit", "stop", "pre-compact"):
        done = subprocess.run([str(target / "bin" / "context-hook"), event, "--harness", "claude-code"],
                              input='{"session_id": "s1", "cwd": "/tmp"}', capture_output=True, text=True,
                              timeout=60, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert done.stdout == ""  # every harness takes an empty answer (pi's extension: no context)
        assert "Traceback" not in done.stderr
