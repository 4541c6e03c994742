"""Use as a ranking prior (SPEC §11): in a pull, an entry sessions opened after it was given rises,
one given to many sessions and opened by none sinks, and `why` says so; nothing is dropped for being unused,
and with no use recorded the ranking is what the words and meaning make it."""

from __future__ import annotations

import json
import os

import pytest

from harnesslink_core import memory_tools
from harnesslink_core.main import main
from harnesslink_core.recall import pull
from harnesslink_core.store.injected import Given, use_counts
from harnesslink_core.store.ledger import open_ledger
from memory_helpers import write_entry
from store.test_trust import LOGIN, SHOP, SLUG, pulled, rel, world  # noqa: F401 - the fixture

QUERY = "rotate the staging deploy key"
WHY_LOGIN = "why does the login test fail every night at midnight"  # the login entry, far ahead of the rest


def give(locs, entry: str, sessions: int, opened: int = 0) -> None:
    for n in range(sessions):
        given = Given(locs, "codex", f"s-{entry[-12:]}-{n}")
        given.add([entry])
        given.close()
    ledger = open_ledger(locs)
    try:
        with ledger.write():
            for n in range(opened):
                ledger.note_opened("codex", f"s-{entry[-12:]}-{n}", [entry], 0.0)
    finally:
        ledger.close()


@pytest.fixture
def twins(world):
    """Two entries about the same work, ranked next to each other by their words and meaning."""
    _, locs, _ = world
    made = [write_entry(locs, SHOP, title=f"Rotate the staging deploy key ({n})",
                        actions=[("bash", {"command": f"vault write deploy/staging-{n}"})],
                        result=f"The staging deploy key was rotated in vault ({n}); the runner picks it up.",
                        ts=f"2026-08-2{n}T10:00:00.000Z", harness="codex", session_id=f"cx-key-{n}",
                        turn_id=f"key-{n}")
            for n in (1, 2)]
    return locs, [f"{SLUG}/bank/{m.name}" for m in made]


def order(capsys, locs, query: str = QUERY) -> list[str]:
    return [rel(m, locs) for m in pulled(capsys, query)]


def test_an_entry_sessions_opened_rises_and_says_why(twins, capsys):
    locs, pair = twins
    first, second = order(capsys, locs)[:2]
    assert {first, second} == set(pair)
    give(locs, second, sessions=3, opened=3)
    after = pulled(capsys, QUERY)
    assert [rel(m, locs) for m in after][:2] == [second, first]
    assert "opened by 3 sessions" in after[0]["why"]
    assert use_counts(locs)[second] == (3, 3)


def test_an_entry_given_often_and_never_opened_sinks_but_stays(twins, capsys):
    locs, pair = twins
    first, second = order(capsys, locs)[:2]
    give(locs, first, sessions=pull.IGNORED_AFTER)
    after = pulled(capsys, QUERY)
    assert [rel(m, locs) for m in after][:2] == [second, first]
    assert f"given to {pull.IGNORED_AFTER} sessions, opened by none" in after[1]["why"]


def test_the_prior_moves_an_entry_among_its_neighbours_not_from_the_back_to_the_front(world, capsys):
    _, locs, _ = world
    before = order(capsys, locs, WHY_LOGIN)
    assert before[0] == LOGIN
    give(locs, before[2], sessions=9, opened=9)  # the most use can do, for the third of three lists' thirds
    assert order(capsys, locs, WHY_LOGIN)[0] == LOGIN


def test_given_a_few_times_without_an_open_changes_nothing(twins, capsys):
    locs, pair = twins
    before = pulled(capsys, QUERY)
    give(locs, rel(before[0], locs), sessions=pull.IGNORED_AFTER - 1)
    assert pulled(capsys, QUERY) == before


def test_memory_search_takes_the_prior_too(twins, capsys):
    locs, pair = twins
    first, second = order(capsys, locs)[:2]
    give(locs, second, sessions=3, opened=3)
    answer = memory_tools.call("memory_search", {"query": QUERY}, memory_tools.Session(locs, SHOP, "codex", "s-x"))
    assert answer.index(second) < answer.index(first)


@pytest.mark.parametrize("given, opened, factor", [(0, 0, 1.0), (4, 0, 1.0), (5, 0, pull.IGNORED_SINK),
                                                   (9, 1, 1 + pull.USED_LIFT / pull.USED_FULL),
                                                   (9, 7, 1 + pull.USED_LIFT)])
def test_the_prior_is_bounded(given, opened, factor):
    assert pull.use_prior(given, opened)[0] == pytest.approx(factor)


def test_no_ledger_no_prior(tmp_path, monkeypatch, capsys):
    """A bank with no ledger yet (pulled onto a new machine): the pull answers, with no use in its reasons."""
    from harnesslink_core.paths import locations

    monkeypatch.setenv("HARNESSLINK_HOME", str(tmp_path / "agent"))
    locs = locations()
    write_entry(locs, SHOP, title="Rotate the staging deploy key", result="Rotated in vault; the runner has it.")
    assert not os.path.exists(locs.ledger_path) and use_counts(locs) == {}
    assert main(["recall", QUERY, "--cwd", SHOP, "--json"]) == 0
    [match] = json.loads(capsys.readouterr().out)["matches"]
    assert match["title"] == "Rotate the staging deploy key" and "opened" not in match["why"]
    assert not os.path.exists(locs.ledger_path)
