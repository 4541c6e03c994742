"""Prompt matches: the right past turn comes back for a prompt in other words, and nothing that must stay out."""

from __future__ import annotations

import pytest

from harnesslink_core import index
from harnesslink_core.matches import BUDGET, find_matches, meaningful_terms, render, skip_reason
from harnesslink_core.scope import project_slug, scope_for
from memory_helpers import BLOG, SHOP, build_corpus, make_locs, write_entry


@pytest.fixture
def world(tmp_path):
    locs = make_locs(tmp_path)
    entries = build_corpus(locs)
    index.refresh(locs)
    conn = index.connect(locs)
    yield locs, entries, conn
    conn.close()


def names(decision):
    return [hit.path.rsplit("/", 1)[1] for hit in decision.hits]


def match(world, prompt, *, cwd=SHOP, session="live-session", already=frozenset()):
    locs, _, conn = world
    return find_matches(conn, prompt, scope_for(locs, cwd), session_id=session, already_injected=set(already))


@pytest.mark.parametrize(
    "prompt, expected",
    [
        ("why did signing in stop working right after 12am? something with the session cookie", "login"),
        ("the database runs out of connections when traffic spikes", "pool"),
        ("shrink the container image, it is huge", "docker"),
        ("tests pass locally but fail randomly in CI", "flaky"),
        ("throttle requests per client with redis", "ratelimit"),
        ("RAM usage climbs forever on the websocket server", "leak"),
        ("move our packaging metadata into pyproject", "pyproject"),
    ],
)
def test_paraphrased_prompt_finds_the_turn_that_answered_it(world, prompt, expected):
    _, entries, _ = world
    decision = match(world, prompt)
    assert decision.hits, decision.rejected
    assert names(decision)[0] == entries[expected].name


def test_linked_project_entries_are_searched_too(world):
    _, entries, _ = world
    decision = match(world, "retry http calls with backoff")
    assert names(decision) == [entries["retry"].name]


def test_another_projects_entry_never_comes_back(world):
    _, entries, _ = world
    decision = match(world, "session cookie expiry timezone after midnight")
    assert entries["blog_cookie"].name not in names(decision)
    assert names(decision) == [entries["login"].name]
    # and from the blog, the shop's entry stays out (the shop's linked.txt does not link back)
    decision = match(world, "session cookie expiry timezone after midnight", cwd=BLOG)
    assert names(decision) == [entries["blog_cookie"].name]


def test_entries_of_the_current_session_are_left_out(world):
    _, entries, _ = world
    decision = match(world, "websocket clients reconnect with exponential backoff", session="live-session")
    assert entries["live"].name not in names(decision)
    other = match(world, "websocket clients reconnect with exponential backoff", session="another-session")
    assert names(other)[0] == entries["live"].name


def test_already_injected_entries_are_left_out(world):
    locs, entries, _ = world
    rel = f"{project_slug(SHOP)}/bank/{entries['login'].name}"
    decision = match(world, "session cookie expiry after midnight", already={rel})
    assert entries["login"].name not in names(decision)


@pytest.mark.parametrize(
    "prompt, reason",
    [
        ("/compact keep the session cookie notes", "a /command"),
        ("  /review session cookie midnight", "a /command"),
        ("!pytest tests/test_login.py session cookie", "a !shell command"),
        ("cookie", "fewer than two meaningful terms"),
        ("can you please do that again?", "fewer than two meaningful terms"),
        ("", "empty prompt"),
    ],
)
def test_commands_and_thin_prompts_get_nothing(world, prompt, reason):
    assert skip_reason(prompt) == reason
    assert match(world, prompt).hits == []


def test_an_unrelated_prompt_gets_nothing(world):
    assert match(world, "write a haiku about autumn leaves").hits == []


def test_a_single_shared_word_is_not_enough(world):
    # "connections" appears in three entries, but nothing else of this prompt does
    assert match(world, "hiking trails connections mountains").hits == []


def test_at_most_three_matches_within_the_budget(tmp_path):
    locs = make_locs(tmp_path)
    for n in range(8):
        write_entry(locs, SHOP, title=f"Kafka consumer lag number {n}",
                    result=("The kafka consumer lag grew because the consumer group rebalanced too often. " * 30),
                    ts=f"2026-08-2{n}T10:00:00.000Z", session_id=f"s{n}")
    index.refresh(locs)
    conn = index.connect(locs)
    decision = find_matches(conn, "kafka consumer lag keeps growing", scope_for(locs, SHOP))
    assert len(decision.hits) == 3
    block = render(decision.hits, decision.terms, str(locs.memories))
    assert len(block) <= BUDGET
    assert block.count("[cut:") == 3  # each long excerpt says where it was cut
    for hit in decision.hits:
        assert str(locs.memories / hit.path) in block


def test_each_match_shows_title_date_harness_and_path(world):
    locs, entries, _ = world
    decision = match(world, "session cookie expiry after midnight")
    block = render(decision.hits, decision.terms, str(locs.memories))
    assert "The login test fails every night around midnight" in block
    assert "2026-08-20 09:12 UTC" in block
    assert "claude-code" in block
    assert str(entries["login"]) in block
    assert "datetime.now(timezone.utc)" in block


def test_meaningful_terms_drop_filler_and_keep_order():
    assert meaningful_terms("Can you please fix the flaky Login test? The login TEST!") == ["flaky", "login", "test"]


def test_a_huge_prompt_is_judged_by_its_start(world):
    decision = match(world, "shrink the container image " + "lorem ipsum dolor " * 60000)
    assert len(decision.terms) <= 16
    assert decision.hits


def test_old_entries_are_still_found_when_recent_ones_do_not_match(tmp_path, monkeypatch):
    from harnesslink_core import matches

    monkeypatch.setattr(matches, "RECENT_WINDOW", 3)
    locs = make_locs(tmp_path)
    write_entry(locs, SHOP, title="Elasticsearch reindex through an alias", ts="2026-01-01T00:00:00.000Z",
                result="Created the new index, reindexed, then swapped the alias atomically.", session_id="a")
    index.refresh(locs)
    for n in range(10):
        write_entry(locs, SHOP, title=f"Unrelated chore {n}", ts=f"2026-08-1{n}T00:00:00.000Z",
                    result="Bumped dependencies and regenerated the lock file.", session_id=f"b{n}")
    index.refresh(locs)
    conn = index.connect(locs)
    decision = find_matches(conn, "swap the elasticsearch alias after a reindex", scope_for(locs, SHOP))
    assert [h.title for h in decision.hits] == ["Elasticsearch reindex through an alias"]
