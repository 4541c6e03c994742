"""`harnesslink status` and `harnesslink history` on a long history: each as the process a user runs.

History is only ever appended to, so it grows without end: status must answer from what does not grow with
it (the counts the ledger keeps as pairs are added), and `history` must stream it, newest first from the
file's end, never holding it whole.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harnesslink_core.paths import locations
from harnesslink_core.store import history
from memory_helpers import a_long_history, given_and_opened, make_env, measured, run_cli

RECORDS = 300_000
SECONDS = 1.5  # status's own start-up is about 0.3 s; reading this history whole took several seconds
MEGABYTES = 80  # status's peak is about 30 MB at any size; holding this history whole took hundreds


@pytest.fixture(scope="module")
def long_history(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, str], dict[str, tuple[int, ...]]]:
    env = make_env(tmp_path_factory.mktemp("long-history"))
    return env, a_long_history(locations(env), RECORDS)


def newest_first(records: list[dict[str, str]]) -> list[dict[str, str]]:
    """By time, newest first; records of the same moment, the last written first."""
    return sorted(records[::-1], key=lambda r: r["at"], reverse=True)


def use_line(harness: str, figures: tuple[int, ...]) -> str:
    given, opened, listed, listed_opened = figures
    return (f"{harness}: given {given}, opened {opened} ({round(100 * opened / given)} %); "
            f"listed in briefs {listed}, opened {listed_opened} ({round(100 * listed_opened / listed)} %)")


def test_status_answers_in_a_second_and_flat_in_memory_with_the_figures_the_history_holds(long_history) -> None:
    env, figures = long_history
    seconds, megabytes, out = measured(env, "status")
    assert seconds < SECONDS and megabytes < MEGABYTES, (seconds, megabytes)
    for harness, counts in figures.items():
        assert use_line(harness, counts) in out.splitlines()
    data = json.loads(measured(env, "status", "--json")[2])["harnesses"]
    assert {h: (d["given"], d["opened"], d["briefed"], d["briefed_opened"]) for h, d in data.items()
            if h in figures} == figures
    # what the history itself says, read whole here: the same figures
    records = history.read(locations(env))
    assert len(records) == RECORDS
    assert given_and_opened(records) == {h: f[:2] for h, f in figures.items()}
    assert given_and_opened(records, in_brief=True) == {h: f[2:] for h, f in figures.items()}


def test_history_shows_the_newest_records_first_without_reading_the_whole_file(long_history) -> None:
    env, _ = long_history
    records = history.read(locations(env))
    seconds, megabytes, out = measured(env, "history", "--all", lines=20)  # as `| head -20` reads it
    assert seconds < SECONDS and megabytes < MEGABYTES, (seconds, megabytes)
    newest = newest_first(records[-100:])[:20]
    shown = out.splitlines()
    assert len(shown) == 20
    assert [(line.split()[2], line.split()[4]) for line in shown] == [(r["event"], r["entry"]) for r in newest]


def test_history_filters_scan_the_file_flat_in_memory(long_history) -> None:
    env, _ = long_history
    records = history.read(locations(env))
    _, megabytes, out = measured(env, "history", "--all", "--since", "2100-01-01")
    assert megabytes < MEGABYTES and out.startswith("no history for any project since 2100-01-01"), megabytes
    since = records[-25]["at"]
    _, megabytes, out = measured(env, "history", "--all", "--json", "--since", since)
    assert megabytes < MEGABYTES, megabytes
    events = json.loads(out)["events"]
    assert events == newest_first([r for r in records if r["at"] >= since])


def test_history_skips_torn_and_overlong_lines_from_either_end(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    locs = locations(env)
    first, last = (history.event("banked", "autobank:pi", entry=f"--w-shop--/bank/{name}.md", at=at)
                   for name, at in (("first", 1_780_000_000), ("last", 1_780_000_100)))
    history.append(locs, [first])
    path = Path(history.history_path(locs))
    with path.open("a") as f:
        f.write('{"at": "2026-01-01T00:00:00.000Z", "event": "banked", "detail": "' + "x" * 3_000_000 + '"}\n')
        f.write('{"at": "2026-01-0\n\n')
    history.append(locs, [last])
    with path.open("a") as f:
        f.write("y" * 3_000_000)  # a writer that died mid-line, after writing megabytes of it
    result = run_cli(env, "history", "--all", "--json")
    assert result.returncode == 0, result.stderr
    assert [e["entry"] for e in json.loads(result.stdout)["events"]] == [last["entry"], first["entry"]]
    assert [r["entry"] for r in history.read(locs)] == [first["entry"], last["entry"]]


FILTERED_SECONDS = 0.8  # the start-up and one look at each block; a parse of every line took 1-3 s here


def test_history_filters_read_only_what_can_answer_them_and_answer_exactly(long_history) -> None:
    env, _ = long_history
    records = history.read(locations(env))  # the brute-force answers: every record, parsed
    entry = records[-7]["entry"]
    since = records[-25]["at"]
    project = records[-1]["project"]
    cases = {
        ("--all", "--since", "2100-01-01"): [],
        ("--all", "--entry", "--w-shop--/bank/nothing.md"): [],
        ("--project", "/home/dev/nowhere"): [],
        ("--all", "--since", since): [r for r in records if r["at"] >= since],
        ("--all", "--entry", entry): [r for r in records if r["entry"] == entry],
        ("--all", "--entry", entry.rsplit("/", 1)[1], "--since", since):
            [r for r in records if r["entry"] == entry and r["at"] >= since],
        ("--project", project, "-n", "5"): [r for r in records[-100:] if r["project"] == project],
    }
    for argv, expected in cases.items():
        seconds, _, out = measured(env, "history", *argv, "--json")
        assert seconds < FILTERED_SECONDS, (argv, seconds)
        assert json.loads(out)["events"] == newest_first(expected)[:5 if "-n" in argv else None], argv
