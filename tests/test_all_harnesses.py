"""One project folder receiving turns from all four harnesses, banked once, in time order.

The transcripts were written by the real CLIs (tests/generate_transcripts.py); which turns
must be banked is written in each harness's EXPECTED.md, read off the files by hand.
"""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path

import frontmatter
import pytest

from harnesslink_core.banking.autobank import run_pass, widen_window
from harnesslink_core.store import bank

GENERATED = Path(__file__).resolve().parent / "fixtures" / "generated"
HOMES = {  # where each harness keeps its transcripts, below HOME
    "claude-code": (".claude", "projects"),
    "codex": (".codex", "sessions"),
    "pi": (".pi/agent", "sessions"),
    "omp": (".omp/agent", "sessions"),
}


def expected_titles(harness: str) -> list[str]:
    rows = re.findall(r"^\| \d+ \| (.*?) \| .*? \| \d+ \| (.*?) \|$", (GENERATED / harness / "EXPECTED.md").read_text(),
                      re.M)
    return sorted(bank.make_title(prompt.replace("\\|", "|")) for prompt, verdict in rows if verdict.startswith("bank"))


def install_generated(home: Path) -> None:
    for harness, (base, sub) in HOMES.items():
        shutil.copytree(GENERATED / harness / sub, home / base / sub, dirs_exist_ok=True)


@pytest.fixture
def banked(locs, isolated_home: Path) -> list[frontmatter.Post]:
    install_generated(isolated_home)
    widen_window(locs, 4000)
    later = time.time() + 3600  # the last turn of each session settles by the quiet rule
    for _ in range(10):
        if run_pass(locs, now=later).bytes_read == 0:
            break
    return [frontmatter.load(p) for p in sorted(locs.memories.glob("*/bank/*.md"))]


@pytest.mark.parametrize("harness", sorted(HOMES))
def test_each_harness_banks_exactly_the_expected_turns(banked: list[frontmatter.Post], harness: str) -> None:
    titles = sorted(p["title"] for p in banked if p["harness"] == harness)
    assert titles == expected_titles(harness)


def test_all_four_land_in_one_project_in_time_order(banked, locs) -> None:
    assert {p["cwd"] for p in banked} == {"/home/tester/project"}
    assert {p["harness"] for p in banked} == set(HOMES)
    names = [p.name for p in sorted((locs.memories / "--home-tester-project--" / "bank").glob("*.md"))]
    stamps = [frontmatter.load(locs.memories / "--home-tester-project--" / "bank" / n)["ts"] for n in names]
    assert stamps == sorted(stamps)
    main = (locs.memories / "--home-tester-project--" / "MAIN.md").read_text()
    rows = [l for l in main.splitlines() if l.startswith("- 20")]
    assert len(rows) == len(banked) and rows == sorted(rows, reverse=True)
    keys = [p["turn_key"] for p in banked]
    assert len(keys) == len(set(keys))


def test_a_second_backfill_banks_nothing_new(banked, locs) -> None:
    widen_window(locs, 4000)
    assert run_pass(locs, now=time.time() + 3600).banked == 0
