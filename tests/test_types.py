"""The type checker, as CI runs it: mypy over the whole package with pyproject.toml's [tool.mypy], strict on
the layer protocols (harnesses/base.py, harnesses/registry.py, sessions/base.py) and the store.

Run here rather than before pytest in tests/run.py: the README's test command runs it with the rest, a
failure reads like any other (mypy's own lines), and a run of a few test files does not pay for it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "harnesslink_core"

pytestmark = pytest.mark.slow


def mypy(tmp_path: Path, *shadows: tuple[str, str]) -> tuple[int, list[str]]:
    """mypy's exit status and error lines over the package, each (module path, text) of `shadows` checked
    in place of that file (the tree is never written)."""
    args = []
    for number, (relative, text) in enumerate(shadows):
        shadow = tmp_path / f"shadow{number}.py"
        shadow.write_text(text, encoding="utf-8")
        args += ["--shadow-file", str(PACKAGE / relative), str(shadow)]
    env = {**os.environ, "MYPY_FORCE_COLOR": "0", "NO_COLOR": "1"}
    done = subprocess.run([sys.executable, "-m", "mypy", "--no-error-summary", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert "error: " in done.stdout or done.returncode == 0, done.stdout + done.stderr  # it ran, and checked
    return done.returncode, [line for line in done.stdout.splitlines() if ": error: " in line]


def source(relative: str) -> str:
    return (PACKAGE / relative).read_text(encoding="utf-8")


def test_the_package_type_checks(tmp_path: Path) -> None:
    status, errors = mypy(tmp_path)
    assert errors == [] and status == 0, "\n".join(errors)


def test_the_store_and_the_protocols_are_checked_strictly_and_the_rest_at_the_baseline(tmp_path: Path) -> None:
    untyped = "\n\ndef _untyped(value):\n    return value\n"
    strict = ["store/hook_runs.py", "store/ledger.py", "harnesses/base.py", "harnesses/registry.py",
              "sessions/base.py"]
    baseline = "clock.py"
    status, errors = mypy(tmp_path, *[(name, source(name) + untyped) for name in [*strict, baseline]])
    flagged = sorted({line.split(":", 1)[0] for line in errors})
    assert status == 1
    assert flagged == sorted(f"harnesslink_core/{name}" for name in strict), "\n".join(errors)
    assert all("[no-untyped-def]" in line for line in errors), "\n".join(errors)


def test_the_registry_holds_every_reader_to_the_harness_protocol(tmp_path: Path) -> None:
    """A reader whose `read` lost a parameter of the protocol's is refused where the registry returns it."""
    text = source("harnesses/omp/reader.py")
    assert "def read(" in text
    broken = text.replace("def read(", "def _read_as_it_was(") + "\n\ndef read(path, start, carry, budget):\n    ...\n"
    status, errors = mypy(tmp_path, ("harnesses/omp/reader.py", broken))
    assert status == 1
    assert [line.split(":", 1)[0] for line in errors] == ["harnesslink_core/harnesses/registry.py"], "\n".join(errors)
    assert "[return-value]" in errors[0]
