"""The private venv is built from a clean copy of the checkout: what an earlier build left in the checkout
(setuptools' `build/lib`, an egg-info, bytecode) never reaches it, and the checkout is not written to."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from harnesslink_core.wiring import environment

REPO = Path(__file__).resolve().parents[2]


def files_under(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


def a_checkout_after_an_old_build(root: Path) -> Path:
    """The plugin's layout (links to the real files) with leftovers of a build made before a module moved."""
    root.mkdir()
    for name in ("pyproject.toml", "README.md", "harnesslink_core"):
        (root / name).symlink_to(REPO / name)
    stale = root / "build" / "lib" / "harnesslink_core" / "wiring"
    stale.mkdir(parents=True)
    (stale / "registry.py").write_text("HARNESSES = ('moved-away',)\n")
    (root / "harnesslink_hooks.egg-info").mkdir()
    (root / "harnesslink_hooks.egg-info" / "SOURCES.txt").write_text("harnesslink_core/wiring/registry.py\n")
    return root


def test_the_copy_holds_what_the_build_reads_and_no_leftover(tmp_path: Path) -> None:
    root = tmp_path / "checkout"
    (root / "harnesslink_core" / "__pycache__").mkdir(parents=True)
    (root / "harnesslink_core" / "__init__.py").write_text("")
    (root / "harnesslink_core" / "__pycache__" / "__init__.cpython-311.pyc").write_bytes(b"\0")
    (root / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (root / "README.md").write_text("x\n")
    (root / "build" / "lib" / "harnesslink_core").mkdir(parents=True)
    (root / "build" / "lib" / "harnesslink_core" / "gone.py").write_text("")
    (root / "tests").mkdir()
    (root / "tests" / "test_x.py").write_text("")
    before = files_under(root)

    with environment.package_source(root) as source:
        assert source != root
        assert files_under(source) == {"pyproject.toml", "README.md", "harnesslink_core/__init__.py"}
    assert not source.exists()
    assert files_under(root) == before


@pytest.mark.slow
def test_a_module_left_in_an_old_build_is_not_in_what_pip_builds(tmp_path: Path) -> None:
    root = a_checkout_after_an_old_build(tmp_path / "checkout")
    wheels = tmp_path / "wheels"
    with environment.package_source(root) as source:
        built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check",
                                "--no-deps", "-w", str(wheels), str(source)],
                               capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = wheels.glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "harnesslink_core/hooks.py" in names and "harnesslink_core/data/encoder/model.onnx" in names
    assert "harnesslink_core/wiring/registry.py" not in names
    assert not (root / "build" / "bdist.linux-x86_64").exists() and sorted(p.name for p in root.iterdir()) == [
        "README.md", "build", "harnesslink_core", "harnesslink_hooks.egg-info", "pyproject.toml"]
