"""The whole test suite, from a fresh clone: `python tests/run.py [pytest args]`.

Makes a private virtual environment (`.venv-test`) with the package and the
test dependencies, then runs pytest in it; the type checker runs among the tests
(tests/test_types.py: mypy, as pyproject.toml configures it). The end-to-end tests install the
real harness CLIs from npm into `.cache/harness-clis` on first use (they are
skipped only where npm is missing).
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv-test"


def venv_python() -> Path:
    return VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def ensure_env() -> Path:
    python = venv_python()
    stamp = VENV / ".installed"
    wanted = (ROOT / "pyproject.toml").read_text()
    if python.exists() and stamp.exists() and stamp.read_text() == wanted:
        return python
    if not python.exists():
        venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    "-e", f"{ROOT}[test]"], check=True)
    stamp.write_text(wanted)
    return python


def main(argv: list[str]) -> int:
    python = ensure_env()
    return subprocess.run([str(python), "-m", "pytest", *argv], cwd=ROOT).returncode


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
