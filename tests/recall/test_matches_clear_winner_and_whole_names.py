"""Prompt matches II: a clear winner is trusted, versions / identifiers / file names are
searched whole, the vocabulary is data the index stores, and one answer is never given twice."""

from __future__ import annotations

import json
import time

import pytest

from harnesslink_core.recall import decide, index, lexicon
from harnesslink_core.recall.candidates import gather, prompt_vocabulary
from harnesslink_core.recall.fingerprint import resemblance, same_content, sketch
from harnesslink_core.recall.matches import find_matches, render
from harnesslink_core.recall.terms import is_filler, meaningful_terms, prompt_terms, prompt_words
from harnesslink_core.recall.tokens import Compound, derived_keys, prompt_tokens
from harnesslink_core.store.scope import scope_for
from memory_helpers import SHOP, make_env, make_locs, run_hook, write_entry


def not_filler(word: str) -> bool:
    return not is_filler(word)


def _bank(tmp_path, entries, *, filler=30):
    """A project with these entries (dicts of write_entry arguments) among filler turns."""
    locs = make_locs(tmp_path)
    for n, entry in enumerate(entries):
        write_entry(locs, SHOP, **{"ts": f"2026-08-1{n % 10}T10:00:00.000Z", "session_id": f"e{n}", **entry})
    for n in range(filler):
        write_entry(locs, SHOP, title=f"Refactor the checkout service part {n}",
                    result=f"Moved the checkout service code around, step {n}; tests still pass.",
                    ts=f"2026-07-{10 + n % 18}T10:00:00.000Z", session_id=f"f{n}")
    index.refresh(locs)
    return locs, index.connect(locs)


def titles(decision):
    return [h.title for h in decision.hits]


# --- tokens ----------------------------------------------------------------------------------------------


def test_versions_numbers_identifiers_and_file_names_stay_whole_in_the_prompt():
    assert meaningful_terms("what broke when we went to Node 22?") == ["broke", "went", "node", "node 22"]
    assert meaningful_terms("upgrade to v2.3.1 broke port 8080 with a 500") == [
        "upgrade", "v2.3.1", "broke", "port", "8080", "500"]
    assert meaningful_terms("python 3.12 uses 300 MB in invoices/tasks.py") == [
        "python", "3.12", "python 3.12", "300mb", "invoices", "tasks.py"]
    # a release after an ordinary word is still a term of its own; contractions without
    # their apostrophe and "much" say nothing
    assert meaningful_terms("couldnt publish 2.4.0, much slower") == ["publish", "2.4.0", "publish 2.4.0", "slower"]
    terms = {t.label: t for t in prompt_terms(prompt_words("why does applyDiscount ignore stripe_event_id"))}
    assert terms["applydiscount"].alternatives[1:] == ["apply discount"] and terms["applydiscount"].words == 2
    assert terms["stripe_event_id"].alternatives[1:] == ["stripe event id", "stripeeventid"]
    # a version after a filler word is not joined to it; a brand in camel case is one word
    assert "to v2.3.1" not in meaningful_terms("move to v2.3.1 now")
    assert prompt_tokens("GitHub macOS")[:2] == ["github", "macos"]
    assert [t for t in prompt_tokens("at 5 s") if isinstance(t, Compound)][0].label == "5s"
    assert meaningful_terms("getting 500s and 429s from checkout") == ["500", "429", "checkout"]
    assert meaningful_terms("what did #87 do to the checkout") == ["87", "checkout"]
    assert meaningful_terms("after the Node.js 22 upgrade, app.js fails") == [
        "node", "node 22", "upgrade", "app.js", "fails"]


def test_the_index_stores_each_identifiers_other_spelling():
    keys = derived_keys("applyDiscount() sets ProcessedEvent.stripe_event_id; HTTPServer; GitHub", not_filler)
    assert keys.split() == ["apply", "discount", "processed", "event", "stripeeventid", "http", "server"]


def test_a_version_finds_the_entry_that_names_it(tmp_path):
    locs, conn = _bank(tmp_path, [
        {"title": "Upgrade to Node 22", "result": "Bumped the engines field and the CI image."},
        {"title": "Upgrade to Node 20", "result": "Bumped the engines field and the CI image as well."},
        {"title": "Node worker pool sizing", "result": "Sized the worker pool by cores."},
    ])
    decision = find_matches(conn, "what broke when we went to Node 22?", scope_for(locs, SHOP))
    assert titles(decision)[:1] == ["Upgrade to Node 22"]
    assert "Upgrade to Node 20" not in titles(decision)[:1]


def test_identifiers_meet_across_camel_and_snake_case(tmp_path):
    locs, conn = _bank(tmp_path, [
        {"title": "Rounding in applyDiscount is off by a cent", "result": "Decimal from the string amount now."},
        {"title": "Webhook stores stripe_event_id", "result": "A unique constraint on the column."},
    ])
    apply = find_matches(conn, "apply discount rounding is wrong", scope_for(locs, SHOP))
    assert titles(apply)[:1] == ["Rounding in applyDiscount is off by a cent"]
    event = find_matches(conn, "is stripeEventId unique in the webhook", scope_for(locs, SHOP))
    assert titles(event)[:1] == ["Webhook stores stripe_event_id"]


def test_a_file_name_is_one_term(tmp_path):
    locs, conn = _bank(tmp_path, [
        {"title": "Invoice job reads the wrong currency setting",
         "result": "Fixed in invoices/tasks.py: customer.billing_currency instead of the default."},
        {"title": "Celery tasks retry forever", "result": "Set max_retries on the tasks."},
    ])
    decision = find_matches(conn, "the currency bug in tasks.py", scope_for(locs, SHOP))
    assert titles(decision)[:1] == ["Invoice job reads the wrong currency setting"]


def test_a_name_and_its_version_meet_a_few_words_apart(tmp_path):
    locs, conn = _bank(tmp_path, [
        {"title": "Upgrade Airflow from 2.7 to 2.10 and fix the deprecation warnings",
         "result": "Replaced SubDagOperator with task groups."},
        {"title": "Airflow pool for the vendor feeds", "result": "A pool of four slots."},
    ])
    decision = find_matches(conn, "moving to airflow 2.10, what had to change", scope_for(locs, SHOP))
    assert titles(decision)[:1] == ["Upgrade Airflow from 2.7 to 2.10 and fix the deprecation warnings"]
    assert "airflow 2.10" in decision.hits[0].matched
    assert "airflow2.10" in derived_keys("Upgrade Airflow from 2.7 to 2.10", not_filler).split()
    assert "expo52" in derived_keys("Expo SDK 51 to SDK 52", not_filler).split()


def test_one_identifier_or_release_is_enough_to_ask_with(tmp_path):
    locs, conn = _bank(tmp_path, [
        {"title": "Failed captures fail the whole order", "prompt": "failed payment captures fail the order",
         "result": "Transient capture errors are retried up to CAPTURE_RETRY_MAX (3) times before the order fails."},
        {"title": "Cut the v2.3.1 patch release", "result": "Changelog, version bump and tag."},
        {"title": "Capture the card on shipment", "result": "Authorise at checkout, capture when shipped."},
    ])
    scope = scope_for(locs, SHOP)
    retry = find_matches(conn, "where does CAPTURE_RETRY_MAX come from", scope)
    assert titles(retry) == ["Failed captures fail the whole order"] and retry.hits[0].why.startswith("clear winner")
    assert titles(find_matches(conn, "what went into 2.3.1", scope)) == ["Cut the v2.3.1 patch release"]
    # one plain word is still too little; an identifier nobody wrote finds nothing
    assert find_matches(conn, "capture?", scope).skipped
    assert find_matches(conn, "where does CAPTURE_TIMEOUT_MS come from", scope).hits == []
    assert find_matches(conn, "what went into 2.4.0", scope).hits == []


CELERY_AND_DRAMATIQ = [
        {"title": "Should we replace Celery with Dramatiq for the background jobs?",
         "result": "No: the retry semantics differ and the migration would take two weeks."},
        {"title": "Celery workers leak memory", "result": "max_tasks_per_child = 200."},
        {"title": "Celery beat schedule lives in the database", "result": "django-celery-beat."},
]


def test_one_rare_word_of_the_prompt_in_a_title_names_the_work(tmp_path):
    locs, conn = _bank(tmp_path, [
        *CELERY_AND_DRAMATIQ,
        {"title": "Cut the 2.4.0 release", "result": "cargo publish failed to verify the package tarball."},
    ])
    scope = scope_for(locs, SHOP)
    decision = find_matches(conn, "what did we conclude about dramatiq", scope)
    assert titles(decision) == ["Should we replace Celery with Dramatiq for the background jobs?"]
    assert decision.hits[0].why.startswith("rare word: dramatiq in 1 entry")
    assert titles(find_matches(conn, "couldnt publish 2.4.0", scope)) == ["Cut the 2.4.0 release"]
    # a word in three entries is not rare; a rare word only in the result is not enough
    assert find_matches(conn, "what did we conclude about celery", scope).hits == []
    assert find_matches(conn, "what did we decide about the tarball", scope).hits == []


def test_a_rare_word_whose_entry_means_something_else_names_nothing(tmp_path):
    """The leak the rare-word rule had: a generic word of the prompt that a small bank happens to hold in
    one title let in an entry that shares nothing else with the question. The decision now also asks
    how close the entry's meaning is; with no vector to tell (an index made before them, or an entry not
    filled yet), the rule stays as it was."""
    locs, conn = _bank(tmp_path, CELERY_AND_DRAMATIQ)
    prompt = "what did we conclude about dramatiq"
    words = prompt_words(prompt)
    pool = gather(conn, prompt_terms(words, prompt_vocabulary(conn, words)), scope_for(locs, SHOP), prompt=prompt)
    [leader] = [c for c in pool.candidates if c.similarity is not None]  # read for the one the rule looks at
    for similarity, let_in in ((0.05, False), (None, True), (decide.RARE_WORD_MEANING, True)):
        leader.similarity = similarity
        decision = decide.decide(pool)
        assert bool(decision.hits) is let_in
        if not let_in:
            assert any("means something else (cosine 0.05" in line for line in decision.explain())


def test_a_rare_words_entry_close_in_meaning_still_gets_in(tmp_path):
    locs, conn = _bank(tmp_path, CELERY_AND_DRAMATIQ)
    decision = find_matches(conn, "what did we conclude about dramatiq", scope_for(locs, SHOP))
    assert decision.hits and ", cosine " in decision.hits[0].why
    assert float(decision.hits[0].why.rsplit("cosine ", 1)[1]) >= decide.RARE_WORD_MEANING


# --- vocabulary as data -----------------------------------------------------------------------------------


def test_the_vocabulary_is_read_from_the_index_not_parsed_per_prompt(tmp_path):
    locs, conn = _bank(tmp_path, [])
    prompt = "the sign in page fell over on the box after the deploy"
    vocab = prompt_vocabulary(conn, prompt_words(prompt))
    assert vocab.is_phrase("sign in") and vocab.related("sign in")[:1] == ["login"]
    words = prompt_words(prompt)
    assert [t.alternatives for t in prompt_terms(words, vocab)] == [t.alternatives for t in prompt_terms(words)]
    assert len(vocab.keys) < 20  # only the prompt's own words were fetched


def test_the_vocabulary_marks_concepts_and_the_index_keeps_the_mark(tmp_path):
    _, conn = _bank(tmp_path, [])
    vocab = prompt_vocabulary(conn, prompt_words("the dark mode toggle is stuck in pagerduty"))
    assert vocab.is_concept("dark mode") and vocab.is_concept("pagerduty")
    assert not vocab.is_concept("stuck") and not vocab.is_concept("wombat")
    assert lexicon.full().is_concept("dark mode") and not lexicon.full().is_concept("stuck")
    assert all(not word.startswith("*") for group in lexicon.groups() for word in group)


def _settings_bank(tmp_path):
    return _bank(tmp_path, [
        {"title": "The settings screen crashes on small phones", "prompt": "the settings screen crashes on small phones",
         "result": "The settings screen laid out its rows in a fixed-height container; it now scrolls."},
        {"title": "Add a settings screen for notifications", "result": "New screen under Settings with three toggles."},
    ])


def test_a_concept_the_project_never_mentions_keeps_entries_about_its_other_words_out(tmp_path):
    locs, conn = _settings_bank(tmp_path)
    decision = find_matches(conn, "when did we add the dark mode toggle to the settings screen", scope_for(locs, SHOP))
    assert decision.hits == []
    assert all("never mentioned in this project: dark mode" in line for line in decision.explain())
    # an everyday word no entry uses says nothing of the kind
    assert titles(find_matches(conn, "the settings screen is stuck on small phones", scope_for(locs, SHOP))) == [
        "The settings screen crashes on small phones"]


def test_a_concept_the_project_mentions_anywhere_is_not_absent(tmp_path):
    locs, conn = _settings_bank(tmp_path)
    write_entry(locs, SHOP, title="Night theme colours", result="The dark theme uses the system setting.",
                ts="2026-08-20T10:00:00.000Z", session_id="dark")
    index.refresh(locs)
    decision = find_matches(conn, "when did we add the dark mode toggle to the settings screen", scope_for(locs, SHOP))
    assert "dark mode" in decision.terms
    assert not any("never mentioned" in line for line in decision.explain())


@pytest.mark.parametrize("word, other_meaning", [
    ("rotate", "orientation"),  # keys are rotated; screens change orientation
    ("store", "redux"),  # the App Store, a shop
    ("offset", "utc offset"),  # a Kafka or page offset
    ("breakpoint", "responsive"),  # a debugger's breakpoint
])
def test_a_word_with_two_meanings_does_not_search_the_other_one(word, other_meaning):
    assert other_meaning not in lexicon.related(word)


def test_no_vocabulary_group_is_listed_twice():
    groups = [tuple(g) for g in lexicon.groups()]
    assert len(groups) == len(set(groups))


def test_a_changed_vocabulary_file_is_reloaded_by_the_next_refresh(tmp_path, monkeypatch):
    locs, conn = _bank(tmp_path, [])
    conn.close()
    data = tmp_path / "related.txt"
    data.write_text("# test\nwombat marsupial\n", "utf-8")
    monkeypatch.setattr(lexicon, "DATA_FILE", str(data))
    index.refresh(locs)
    conn = index.connect(locs)
    assert prompt_vocabulary(conn, prompt_words("wombat burrows")).related("wombat") == ["marsupial"]


@pytest.mark.parametrize("prompt, expected", [
    ("the importer fell over yesterday", "The importer crashes on large CSV files"),
    ("the box has no space left", "Build server disk full"),
    ("someone bounced the box", "Restarted the build server"),
])
def test_everyday_words_find_the_developer_words(tmp_path, prompt, expected):
    # each prompt shares at most one word with its entry: the vocabulary must bridge the rest
    locs, conn = _bank(tmp_path, [
        {"title": "The importer crashes on large CSV files", "result": "Streams rows now instead of reading it all."},
        {"title": "Build server disk full", "result": "Docker images are pruned nightly now."},
        {"title": "Restarted the build server", "result": "It came back after the kernel update."},
    ])
    assert titles(find_matches(conn, prompt, scope_for(locs, SHOP)))[:1] == [expected]


# --- clear winner -----------------------------------------------------------------------------------------


def test_a_clear_winner_with_its_words_in_the_result_is_trusted(tmp_path):
    locs, conn = _bank(tmp_path, [
        {"title": "Payments are processed twice", "prompt": "payments are processed twice, fix it",
         "result": "The stripe webhook handler now stores each event id and skips events it has seen."},
        {"title": "Stripe keys rotated", "result": "New restricted key in the vault."},
    ])
    decision = find_matches(conn, "stripe event handled two times", scope_for(locs, SHOP))
    assert titles(decision)[:1] == ["Payments are processed twice"]
    assert decision.hits[0].why.startswith("clear winner")
    assert any("clear winner" in line for line in decision.explain())


def test_the_dry_run_names_a_clear_winner(tmp_path):
    env = make_env(tmp_path)
    _, conn = _bank(tmp_path, [
        {"title": "Payments are processed twice", "prompt": "payments are processed twice, fix it",
         "result": "The stripe webhook handler now stores each event id and skips events it has seen."},
    ])
    conn.close()
    out = run_hook(env, "user-prompt-submit", "--harness", "codex", "--dry-run", "--cwd", SHOP,
                   "--session", "s-dry", "--prompt", "stripe event handled two times")
    assert out.returncode == 0, out.stderr
    chosen = [line for line in out.stdout.decode().splitlines() if line.startswith("# chosen:")]
    assert len(chosen) == 1 and "clear winner: bm25" in chosen[0] and "stripe, event" in chosen[0]


def test_related_words_alone_never_make_a_clear_winner(tmp_path):
    # "live" and "widget" reach this entry only as related words (production, component)
    locs, conn = _bank(tmp_path, [
        {"title": "Tailwind classes missing in the build",
         "result": "The production build purged the component classes; fixed the content globs."},
    ])
    assert find_matches(conn, "how did we add a websocket live chat widget", scope_for(locs, SHOP)).hits == []


# --- one answer, given once -------------------------------------------------------------------------------


ANSWER = ("Added a unique constraint on ProcessedEvent.stripe_event_id and the webhook view now returns 200 "
          "early when the event id was already stored, so retries from Stripe are harmless.")


def test_fingerprints_tell_copies_from_different_answers():
    assert resemblance(sketch("a", ANSWER), sketch("b", ANSWER)) == 1.0
    near = ANSWER.replace("harmless", "safe now")
    assert same_content(sketch("x", ANSWER), sketch("y", near))
    other = "Moved the refund tax computation to per line item and added tests for partial shipments."
    assert resemblance(sketch("x", ANSWER), sketch("x", other)) < 0.2
    # another agent's account of the same work: its own order and sentences, the same facts
    retold = ("Retries from Stripe are now harmless. Two changes: ProcessedEvent.stripe_event_id has a unique "
              "constraint, and when an event id is already stored the webhook view returns 200 early.")
    assert same_content(sketch("a", ANSWER), sketch("b", retold))
    same_topic = ("The Stripe webhook view now checks the signature header against the endpoint secret before it "
                  "parses the event; requests without a valid signature get a 400.")
    assert not same_content(sketch("a", ANSWER), sketch("b", same_topic))
    # a short result is fingerprinted with its prompt: two terse turns are not one answer
    assert not same_content(sketch("deploy the docs site", "Done."), sketch("rotate the vault keys", "Done."))


def test_another_agents_copies_fold_and_distinct_answers_do_not():
    """benchmarks/copies_reworded.json: 30 development targets written again, lightly and by another
    agent's hand (same facts, own wording and order)."""
    from benchmarks import copies
    result = copies.measure()
    for kind in ("light", "heavy"):
        assert result[kind]["folded"] == result[kind]["copies"] == 30
    assert result["distinct"]["folded"] == 0 and result["distinct"]["pairs"] > 1000


def _texts_sharing(share: float, rng) -> tuple[str, str]:
    """Two results of 120 distinct content words each, about `share` of them in common (Jaccard)."""
    common = round(240 * share / (1 + share))  # |A & B| / |A | B| with |A| = |B| = 120
    word = lambda: "w" + "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(9))  # noqa: E731
    shared = [word() for _ in range(common)]
    return " ".join(shared + [word() for _ in range(120 - common)]), " ".join(shared + [word() for _ in range(120 - common)])


def test_reworded_copies_fold_reliably_and_distinct_answers_never():
    """The sketch estimates the share of content words. Another agent's copy of an answer shares
    0.38-0.79 of them, distinct answers at most 0.18 (the labelled sets' real-prose entries); too
    few hashes, or word pairs, would fold the copy about half the time or never."""
    import random
    rng = random.Random(7)
    folded = {share: sum(same_content(*(sketch("p", t) for t in _texts_sharing(share, rng))) for _ in range(200))
              for share in (0.1, 0.4, 0.6)}
    assert folded[0.1] <= 2  # a distinct answer is folded at most one time in a hundred
    assert folded[0.4] >= 170 and folded[0.6] == 200


def _copies(tmp_path):
    return _bank(tmp_path, [
        {"title": "Stripe webhooks are processed twice", "result": ANSWER, "harness": "claude-code",
         "ts": "2026-11-20T10:00:00.000Z"},
        {"title": "Make the stripe webhook idempotent", "result": ANSWER.replace("harmless", "safe"),
         "harness": "codex", "ts": "2026-11-21T10:00:00.000Z", "session_id": "c2"},
        {"title": "Stripe webhook handled twice again", "result": ANSWER, "harness": "pi",
         "ts": "2026-11-22T10:00:00.000Z", "session_id": "c3"},
        {"title": "Stripe refunds webhook", "result": "Refund events now update the order status.",
         "ts": "2026-11-19T10:00:00.000Z", "session_id": "c4"},
    ])


def test_copies_of_one_answer_fill_one_slot_that_names_the_others(tmp_path):
    locs, conn = _copies(tmp_path)
    decision = find_matches(conn, "stripe webhook events processed twice", scope_for(locs, SHOP))
    firsts = [h for h in decision.hits if "unique constraint" in h.result]
    assert len(firsts) == 1 and len(firsts[0].also) == 2
    block = render(decision.hits, decision.terms, str(locs.memories))
    assert block.count("unique constraint") == 1
    also = block.split("also in ", 1)[1].split("\n", 1)[0]
    harnesses, days = also.split(" · ")
    assert sorted(harnesses.split(", ")) == sorted(c.harness for c in firsts[0].also)
    assert sorted(days.split(", ")) == sorted(time.strftime("%Y-%m-%d", time.gmtime(c.ts)) for c in firsts[0].also)
    folded = [line for line in decision.explain() if "folded into it" in line]
    assert len(folded) == 2
    assert len(decision.given()) == len(decision.hits) + 2


def test_a_session_never_gets_the_same_content_twice_from_another_copy(tmp_path):
    locs, conn = _copies(tmp_path)
    scope = scope_for(locs, SHOP)
    first = find_matches(conn, "stripe webhook events processed twice", scope)
    copy = next(h for h in first.hits if h.also).also[0]
    # a session that was given only one copy (say, before the others were banked)
    again = find_matches(conn, "stripe webhook events processed twice", scope, already_injected={copy.path})
    assert not [h for h in again.hits if "unique constraint" in h.result]
    assert any("already given in this session" in why for _, why in again.rejected)


def test_the_prompt_hook_remembers_every_copy_it_folded(tmp_path):
    env = make_env(tmp_path)
    locs, conn = _copies(tmp_path)
    conn.close()
    prompt = "stripe webhook events processed twice"

    def ask(*extra):
        out = run_hook(env, "user-prompt-submit", "--harness", "claude-code", *extra,
                       stdin=json.dumps({"session_id": "live", "cwd": SHOP, "prompt": prompt}))
        assert out.returncode == 0, out.stderr
        return out.stdout.decode()

    dry = ask("--dry-run")
    assert "folded into it" in dry and "also in" in dry
    first = ask()
    assert first.count("unique constraint") == 1
    assert "unique constraint" not in ask()  # the next prompt of the session: no copy of it comes back


@pytest.mark.parametrize("prompt", ["how did we add a websocket live chat widget", "apple watch companion app"])
def test_never_done_prompts_stay_quiet_on_the_copies_bank(tmp_path, prompt):
    locs, conn = _copies(tmp_path)
    assert find_matches(conn, prompt, scope_for(locs, SHOP)).hits == []
