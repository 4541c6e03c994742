"""Redaction in modules of a readable size, its code saying why and leaving the timings to
benchmarks/reports/2026-12-02-redact-timings.md (`benchmarks/redact_timings.py` measures them again)."""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "harnesslink_core"
MODULES = [PACKAGE / "redact.py", *sorted((PACKAGE / "redaction").glob("*.py"))]
MOST_LINES = 600
# a duration (`0.5 ms`, `~50 ns`, `1.5 us`, `2 s`) or a rate (`per MB`): a figure that belongs in the report
TIMING = re.compile(r"\b\d[\d.,]*[ -]?(?:ms|us|µs|ns|s|seconds?)\b|\bper (?:MB|megabyte)\b")


def prose_of(path: Path) -> list[tuple[int, str]]:
    """The comments and docstrings of a module, with their line numbers."""
    found = []
    previous = tokenize.NEWLINE
    for token in tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline):
        if token.type == tokenize.COMMENT:
            found.append((token.start[0], token.string))
        elif token.type == tokenize.STRING and previous in (tokenize.NEWLINE, tokenize.NL, tokenize.INDENT,
                                                            tokenize.DEDENT):
            found.append((token.start[0], token.string))  # a string standing alone: a docstring
        if token.type not in (tokenize.COMMENT, tokenize.NL):
            previous = token.type
    return found


def test_no_module_of_redaction_is_longer_than_600_lines() -> None:
    assert (PACKAGE / "redaction").is_dir()
    long = {path.relative_to(PACKAGE).as_posix(): n for path in MODULES
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > MOST_LINES}
    assert long == {}


def test_redactions_code_states_no_timing_figure() -> None:
    figures = {f"{path.relative_to(PACKAGE).as_posix()}:{line}": TIMING.findall(text)
               for path in MODULES for line, text in prose_of(path) if TIMING.search(text)}
    assert figures == {}
