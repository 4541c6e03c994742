"""Prompt matches: the right past turn comes back for a prompt in other words, and nothing that must stay out."""

from __future__ import annotations

import pytest

from harnesslink_core.recall import index
from harnesslink_core.recall.matches import BUDGET, find_matches, render
from harnesslink_core.recall.terms import meaningful_terms, prompt_terms, prompt_words, skip_reason
from harnesslink_core.store.scope import project_slug, scope_for
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
                    result=" ".join(f"The kafka consumer lag grew in case {n}.{i}, group {n * 31 + i * 7}."
                                    for i in range(40)),
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
    from harnesslink_core.recall import candidates

    monkeypatch.setattr(candidates, "RECENT_WINDOW", 3)
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


# --- related words, evidence, coverage --------------------------------------

def _bank(tmp_path, entries):
    """A project with these (title, result) entries plus filler turns that make common words common."""
    locs = make_locs(tmp_path)
    for n, (title, result) in enumerate(entries):
        write_entry(locs, SHOP, title=title, result=result, ts=f"2026-08-1{n % 10}T10:00:00.000Z", session_id=f"e{n}")
    for n in range(30):
        write_entry(locs, SHOP, title=f"Refactor the checkout service part {n}",
                    result="Moved the checkout service code around; tests still pass.",
                    ts=f"2026-07-{10 + n % 18}T10:00:00.000Z", session_id=f"f{n}")
    index.refresh(locs)
    return locs, index.connect(locs)


def test_related_words_bridge_a_paraphrase(tmp_path):
    locs, conn = _bank(tmp_path, [
        ("The modal can't be closed with the Escape key and traps focus",
         "Moved to the native dialog element; focus returns to the trigger on close."),
        ("Bundle size grew after adding the charts library", "Charts are lazy loaded now."),
    ])
    popup = find_matches(conn, "keyboard users stuck in the popup", scope_for(locs, SHOP))
    assert [h.title for h in popup.hits] == ["The modal can't be closed with the Escape key and traps focus"]
    graphs = find_matches(conn, "javascript bundle got way bigger because of graphs", scope_for(locs, SHOP))
    assert [h.title for h in graphs.hits][:1] == ["Bundle size grew after adding the charts library"]


def test_a_lexicon_phrase_is_one_term_for_both_words(tmp_path):
    assert prompt_terms(prompt_words("code hard to read in dark mode"))[-1].alternatives[:2] == ["dark mode", "dark theme"]
    # "rate limiting" is about throttling, not about rates
    assert [t.label for t in prompt_terms(prompt_words("rate limiting the search endpoint"))][0] == "rate limiting"
    locs, conn = _bank(tmp_path, [("Shipping rates API call to the carrier times out", "Added a cache of rates.")])
    assert find_matches(conn, "rate limiting the public endpoint", scope_for(locs, SHOP)).hits == []


def test_a_word_found_only_in_the_result_counts_half(tmp_path):
    locs, conn = _bank(tmp_path, [
        ("Nightly export job fails", "The invoice currency was read from the wrong setting."),
        ("Invoice emails show the wrong currency", "Fixed the currency lookup for invoices."),
    ])
    decision = find_matches(conn, "invoice currency", scope_for(locs, SHOP))
    assert [h.title for h in decision.hits] == ["Invoice emails show the wrong currency"]
    rejected = {h.title: why for h, why in decision.rejected}
    assert "Nightly export job fails" in rejected and "(1)" in rejected["Nightly export job fails"]


def test_common_words_cannot_stand_for_the_specific_ones(tmp_path):
    # "checkout" and "service" are in most entries' titles; the prompt's specific words are
    # "invoice", "currency", "customers": the decoy has the two common ones and one specific
    # one (enough terms), but not enough of what the prompt says
    locs, conn = _bank(tmp_path, [
        ("Invoice emails show the wrong currency for EU customers", "Fixed the currency lookup."),
        ("Refactor the checkout service once more", "Also renamed the invoice module."),
    ])
    decision = find_matches(conn, "checkout service invoice currency customers", scope_for(locs, SHOP))
    assert [h.title for h in decision.hits] == ["Invoice emails show the wrong currency for EU customers"]
    why = {h.title: why for h, why in decision.rejected}["Refactor the checkout service once more"]
    assert why.startswith("covers")


def test_matches_never_come_from_a_project_whose_name_extends_ours(tmp_path):
    locs = make_locs(tmp_path)
    write_entry(locs, "/home/dev/web", title="Tailwind classes missing in the production build",
                result="Fixed the content globs.", ts="2026-08-10T10:00:00.000Z", session_id="w1")
    write_entry(locs, "/home/dev/web-frontend", title="Tailwind classes missing in the production build again",
                result="Fixed the content globs again.", ts="2026-08-11T10:00:00.000Z", session_id="w2")
    index.refresh(locs)
    conn = index.connect(locs)
    decision = find_matches(conn, "tailwind styles missing in prod", scope_for(locs, "/home/dev/web"))
    assert [h.project for h in decision.hits] == [project_slug("/home/dev/web")]
