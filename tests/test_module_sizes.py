"""No module of the package over 600 lines, so each reads in one sitting; the README's developer map names
the largest, with its lines, and that figure is the code's."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "harnesslink_core"
MOST_LINES = 600


def module_lines() -> dict[str, int]:
    return {str(path.relative_to(PACKAGE)): len(path.read_text(encoding="utf-8").splitlines())
            for path in PACKAGE.rglob("*.py")}


def test_no_module_is_over_600_lines() -> None:
    over = {name: lines for name, lines in module_lines().items() if lines > MOST_LINES}
    assert over == {}


def test_the_developer_map_names_the_largest_module_and_its_lines() -> None:
    sizes = module_lines()
    largest = max(sizes, key=lambda name: sizes[name])
    said = re.search(r"The largest module is `([\w/.]+)` \((\d+) lines\)", (ROOT / "README.md").read_text())
    assert said, "the README's developer map says which module is the largest"
    assert (said.group(1), int(said.group(2))) == (largest, sizes[largest])
