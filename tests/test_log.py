"""The log: errors go to a bounded, redacted file; when that file cannot be written (an unusable
HARNESSLINK_HOME), to stderr, so no traceback is ever lost."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_an_unusable_home_logs_to_stderr_with_the_traceback(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the agent dir should be")
    code = ("from harnesslink_core import log\nfrom harnesslink_core.paths import locations\n"
            "try:\n    raise RuntimeError('disk on fire ghp_' + 'a' * 36)\n"
            "except RuntimeError as exc:\n    log.error(locations(), 'the pass failed', exc)\n")
    env = {"HOME": str(tmp_path), "HARNESSLINK_HOME": str(blocker / "agent"), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=30)
    assert out.returncode == 0
    assert "the pass failed" in out.stderr and "Traceback" in out.stderr and "RuntimeError" in out.stderr
    assert "ghp_" + "a" * 36 not in out.stderr, "what goes to stderr is redacted too"


def test_a_usable_home_logs_to_the_file_and_not_to_stderr(tmp_path: Path, capsys) -> None:
    from harnesslink_core import log
    from harnesslink_core.paths import locations

    locs = locations({"HOME": str(tmp_path), "HARNESSLINK_HOME": str(tmp_path / "agent")})
    log.error(locs, "something small")
    assert "something small" in Path(locs.log_path).read_text()
    assert capsys.readouterr().err == ""
