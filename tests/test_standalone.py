"""The repository stands alone: every fixture a test reads is inside it, and nothing of the project
reads a path outside it. The proof is the suite itself, run from a copy of the checkout in a folder
with nothing beside it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
OUTSIDE = re.compile(r"\.\./shared|shared/fixtures|/work/(?:shared|main|\.library)")
PARENTS = re.compile(r"__file__\)\.resolve\(\)\.parents\[(\d+)\]")
SKIPPED = {".git", ".cache", "__pycache__", "build", ".pytest_cache", ".hypothesis"}


def project_files() -> list[str]:
    """The checkout's files as git sees them (tracked, or new and not ignored); outside a checkout,
    every file but caches and environments."""
    if (REPO / ".git").exists():
        out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO, capture_output=True,
                             text=True, check=True)
        return [name for name in out.stdout.splitlines() if (REPO / name).is_file() or (REPO / name).is_symlink()]
    return [str(p.relative_to(REPO)) for p in sorted(REPO.rglob("*")) if p.is_file()
            and not any(part in SKIPPED or part.startswith(".venv") for part in p.relative_to(REPO).parts)]


def test_no_test_benchmark_or_script_names_a_path_outside_the_repository() -> None:
    offenders = []
    for name in project_files():
        if name.endswith(".py") and not name.startswith("tests/fixtures/") and name != "tests/test_standalone.py":
            depth = len(Path(name).parts)  # parents[depth] of a file is the folder that holds the checkout
            for number, line in enumerate((REPO / name).read_text(encoding="utf-8").splitlines(), 1):
                if OUTSIDE.search(line) or any(int(k) >= depth for k in PARENTS.findall(line)):
                    offenders.append(f"{name}:{number}: {line.strip()}")
    assert offenders == []


ISSUE_NUMBER = re.compile(r"\b[Ii]ssues?[ -]#?\d+")


def test_no_file_cites_an_issue_number() -> None:
    """Code, tests, benchmarks and reports say what they hold, not which tracker entry asked for it.
    Labelled data (JSON) and real transcripts are quoted text, left as written."""
    offenders = []
    for name in project_files():
        path = REPO / name
        if (name.startswith("tests/fixtures/") or name.endswith((".json", ".jsonl", ".db", ".onnx", ".png"))
                or path.is_symlink() or not path.is_file()):
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        offenders += [f"{name}:{n}: {line.strip()}" for n, line in enumerate(text.splitlines(), 1)
                      if ISSUE_NUMBER.search(line)]
    assert offenders == []


@pytest.mark.slow
def test_the_suite_passes_from_a_copy_with_nothing_beside_it(tmp_path: Path) -> None:
    alone = tmp_path / "alone"
    copy = alone / "harnesslink-hooks"
    for name in project_files():
        target = copy / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if (REPO / name).is_symlink():  # the plugin folder links to the package (plugins/harnesslink)
            target.symlink_to(os.readlink(REPO / name))
        else:
            shutil.copy2(REPO / name, target)
    assert [p.name for p in alone.iterdir()] == ["harnesslink-hooks"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env["PYTHONPATH"] = str(copy)
    code = ("import sys, harnesslink_core, pytest\n"
            f"assert harnesslink_core.__file__.startswith({str(copy)!r}), harnesslink_core.__file__\n"
            "sys.exit(pytest.main(sys.argv[1:]))\n")
    out = subprocess.run([sys.executable, "-c", code, "-q", "-x", "-p", "no:cacheprovider", "-m", "not e2e",
                          "--deselect", "tests/test_standalone.py::test_the_suite_passes_from_a_copy_with_nothing_beside_it"],
                         cwd=copy, env=env, capture_output=True, text=True, timeout=1200)
    tail = out.stdout[-3000:] + out.stderr[-2000:]
    assert out.returncode == 0, tail
    assert " passed" in out.stdout and "skipped" not in out.stdout.splitlines()[-1], tail
