"""Supersession detection: a newer entry that says the subject of an older one changed is proposed,
with its evidence, never applied; look-alikes are not proposed; review lists a proposal, accepting supersedes
and rejecting keeps it from coming back; proposals travel in the tree; the background pass proposes, a
hook's pass leaves it for later."""

from __future__ import annotations

import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from harnesslink_core.banking import autobank
from harnesslink_core.commands import review
from harnesslink_core.control import detect
from harnesslink_core.paths import locations
from harnesslink_core.recall import index
from harnesslink_core.store import entries, history, trust
from harnesslink_core.store.scope import project_slug
from memory_helpers import make_env, write_entry
from tests.claude_builder import ClaudeSession

SHOP = "/home/dev/shop"
SLUG = project_slug(SHOP)
LONG = "Done. " + "The change is in place and the tests pass. " * 4


def edits(*files: str, cwd: str = SHOP) -> list[tuple[str, dict]]:
    return [("edit", {"file_path": f"{cwd}/{f}", "old_string": "a", "new_string": "b"}) for f in files]


def bank(locs, cwd: str, title: str, prompt: str, result: str, files: tuple[str, ...], ts: str, sid: str) -> str:
    path = write_entry(locs, cwd, title=title, prompt=prompt, result=result, actions=edits(*files, cwd=cwd),
                       ts=ts, session_id=sid)
    return f"{path.parent.parent.name}/bank/{path.name}"


@pytest.fixture
def locs(tmp_path: Path):
    return locations(make_env(tmp_path))


def redis_sessions(locs, cwd: str = SHOP) -> str:
    return bank(locs, cwd, "Store sessions in Redis", "Move the session store into Redis so logins survive restarts.",
                "The session store lives in Redis now, 14-day TTL.", ("src/session/store.py", "config/settings.py"),
                "2026-03-02T10:00:00.000Z", "s-old")


def to_postgres(locs, cwd: str = SHOP) -> str:
    return bank(locs, cwd, "Move the session store from Redis to Postgres",
                "Move the session store from Redis to Postgres; Redis stays for the rate limiter.",
                "Sessions are rows of a sessions table now.", ("src/session/store.py", "migrations/0042.sql"),
                "2026-05-10T11:00:00.000Z", "s-new")


def run_detector(locs, *rels: str) -> list[detect.Finding]:
    index.rebuild(locs)
    return detect.propose(locs, [locs.memories / rel for rel in rels])


def test_a_from_x_to_y_pair_is_proposed_with_its_evidence_in_words(locs):
    old, new = redis_sessions(locs), to_postgres(locs)
    (finding,) = run_detector(locs, new)
    assert (finding.old, finding.newer) == (old, new)
    for said in ("Move the session store from Redis to Postgres", "set up redis", "session, store",
                 "both touched src/session/store.py"):
        assert said in finding.evidence
    (proposal,) = review.proposed_supersessions(locs, [SLUG])
    assert (proposal.old, proposal.newer) == (old, new) and "from Redis to Postgres" in proposal.evidence
    assert [r["event"] for r in history.read(locs)] == ["proposed"]


LOOK_ALIKES = {
    "same files, unrelated work": [
        ("Add a dark mode toggle", "Add a dark mode toggle to the header.", "Saved in localStorage.", ("src/App.tsx",)),
        ("Convert App.tsx from class components to hooks", "Convert App.tsx from class components to hooks.",
         "Function components now.", ("src/App.tsx",))],
    "extended, not changed": [
        ("Add Sentry error reporting", "Report unhandled exceptions to Sentry.", "sentry_sdk.init in main.py.",
         ("app/main.py",)),
        ("Send errors to Slack too", "Post errors to Slack instead of only Sentry.", "Both get them.",
         ("app/main.py", "app/alerts.py"))],
    "a fix that keeps the decision": [
        ("Use Postgres advisory locks for the scheduler", "Only one scheduler instance may run a job.",
         "Each job takes an advisory lock.", ("src/scheduler.py",)),
        ("Fix scheduler deadlock", "The scheduler hangs after a failed job.",
         "Switched from session-level to transaction-level advisory locks. Still Postgres.", ("src/scheduler.py",))],
    "two different X's": [
        ("Format with Black and isort", "Add Black and isort to pre-commit.", "pre-commit runs them.",
         (".pre-commit-config.yaml",)),
        ("Change the header colour from black to navy", "Change the header text colour from black to navy.",
         "Navy now.", ("src/theme.ts",))],
    "considered, not done": [
        ("Use SQLite for local dev", "Local dev needs no server: use SQLite.", "sqlite:///dev.db.", ("app/db.py",)),
        ("Consider moving local dev off SQLite", "Should we move local dev from SQLite to Postgres?",
         "We considered switching local dev from SQLite to Postgres but kept SQLite.", ("app/db.py",))],
    "the same setting in another file": [
        ("Configure the DB pool", "Set up the DB pool.", "config/database.yml: pool_size: 20, max_overflow: 5.",
         ("config/database.yml",)),
        ("Raise the loader's DB pool", "The loader waits on connections.",
         "Raised the loader's pool_size from 20 to 50 in config/pipeline.yaml.", ("config/pipeline.yaml",))],
    "a setting said to stay": [
        ("Configure the DB pool", "Set up the DB pool.", "config/database.yml: pool_size: 20, pool_timeout: 10.",
         ("config/database.yml",)),
        ("Tune the DB pool", "Pool timeouts under load.",
         "Set pool_size: 20 again in config/database.yml (pool_timeout stays 10).", ("config/database.yml",))],
    "a detail of what the older did, changed": [
        ("Cache product pages in Redis", "Cache rendered product pages.",
         "Pages are cached in Redis with per-key expiry of 10 minutes.", ("src/catalog/cache.py",)),
        ("Fix cache stampede on product pages", "All product pages expire at once and the DB melts.",
         "Switched from per-key expiry to jittered expiry for the product pages cache.", ("src/catalog/cache.py",))],
    "the same prompt asked again, answered in other words": [
        ("Zero-dependency HTTP client", "Get rid of axios in the SDK and use native fetch.",
         "src/http/client.ts is built on fetch now; axios is removed from package.json.",
         ("src/http/client.ts", "package.json")),
        ("Zero-dependency HTTP client", "Get rid of axios in the SDK and use  native fetch.",
         "The SDK's client uses fetch instead of axios; no runtime dependencies left, 27 tests pass.",
         ("src/http/client.ts", "package.json"))],
    "a copy banked twice": [
        ("Replace webpack with Vite", "Replace webpack with Vite for the frontend build.", "Vite builds it now.",
         ("vite.config.ts", "webpack.config.js")),
        ("Replace webpack with Vite", "Replace webpack with Vite for the frontend build.", "Vite builds it now.",
         ("vite.config.ts", "webpack.config.js"))],
}


@pytest.mark.parametrize("kind", sorted(LOOK_ALIKES))
def test_a_look_alike_is_not_proposed(locs, kind):
    (t1, p1, r1, f1), (t2, p2, r2, f2) = LOOK_ALIKES[kind]
    bank(locs, SHOP, t1, p1, r1, f1, "2026-03-01T10:00:00.000Z", "s-1")
    newer = bank(locs, SHOP, t2, p2, r2, f2, "2026-03-01T10:05:00.000Z", "s-2")
    assert run_detector(locs, newer) == []
    assert review.proposed_supersessions(locs, [SLUG]) == []


def test_a_setting_given_a_new_value_in_the_same_file_is_proposed(locs):
    old = bank(locs, SHOP, "Configure the DB pool", "We hit QueuePool limits; set up the DB pool.",
               "config/database.yml: pool_size: 20, max_overflow: 5, pool_timeout: 10.",
               ("config/database.yml", "src/db/engine.py"), "2026-03-01T10:00:00.000Z", "s-1")
    new = bank(locs, SHOP, "Tune the DB pool after the load test", "Pool timeouts again at 600 users.",
               "Set pool_size: 50 and max_overflow: 10 in config/database.yml (pool_timeout stays 10).",
               ("config/database.yml",), "2026-04-01T10:00:00.000Z", "s-2")
    (finding,) = run_detector(locs, new)
    assert (finding.old, finding.newer, finding.strong) == (old, new, False)
    assert "(a new value); the older set pool_size to 20" in finding.evidence
    assert "both touched config/database.yml" in finding.evidence


def test_x_named_only_in_what_the_older_did_needs_the_strong_evidence(locs):
    old = bank(locs, SHOP, "Set up the background job queue", "Long exports time out; set up a job queue.",
               "Exports run as RQ jobs on the Redis we already have.", ("app/jobs.py", "app/worker.py"),
               "2026-03-01T10:00:00.000Z", "s-1")
    new = bank(locs, SHOP, "Move the job queue to Dramatiq", "The job queue needs retries with backoff.",
               "Replaced RQ with Dramatiq: exports are actors with 3 retries.", ("app/jobs.py", "app/worker.py"),
               "2026-04-01T10:00:00.000Z", "s-2")
    (finding,) = run_detector(locs, new)
    assert (finding.old, finding.newer, finding.strong) == (old, new, True)
    assert "the older set up rq (what it did)" in finding.evidence
    elsewhere = bank(locs, SHOP, "Move the job queue to Celery", "The job queue needs retries with backoff.",
                     "Replaced RQ with Celery.", ("app/celery.py",), "2026-05-01T10:00:00.000Z", "s-3")
    assert [f for f in run_detector(locs, elsewhere) if f.old == old] == []  # no shared file: not enough


def test_the_same_words_in_another_project_or_folder_are_not_proposed(locs):
    redis_sessions(locs, "/home/dev/shop")
    assert project_slug("/home/dev/my-shop") == project_slug("/home/dev/my/shop")  # one slug, two folders
    redis_sessions(locs, "/home/dev/my-shop")
    elsewhere = [to_postgres(locs, "/home/dev/shop-admin"), to_postgres(locs, "/home/dev/my/shop")]
    assert run_detector(locs, *elsewhere) == []


def test_a_proposal_is_never_applied(locs):
    old, new = redis_sessions(locs), to_postgres(locs)
    assert run_detector(locs, new)
    assert trust.superseded_paths(locs, [SLUG]) == set()
    assert trust.state(locs, [SLUG]).of(old) == "current"
    assert "superseded" not in {r["event"] for r in history.read(locs)}


def test_review_lists_a_proposal_and_accepting_it_supersedes_as_cli(locs):
    old, new = redis_sessions(locs), to_postgres(locs)
    run_detector(locs, new)
    (item,) = review.collect(locs, [SLUG])
    assert (item.kind, item.entry, item.newer) == ("proposed", old, new)
    assert "from Redis to Postgres" in item.reasons[f"proposed {new}"]

    class Enter:  # `s`, then Enter: the proposed newer entry
        def line(self, prompt: str) -> str:
            return ""

    assert review._decide(locs, item, "s", Enter(), SHOP)[0] == "superseded"
    assert trust.state(locs, [SLUG]).superseded_by(old)[0::2] == (new, "cli")
    assert review.proposed_supersessions(locs, [SLUG]) == [] and review.collect(locs, [SLUG]) == []


def test_rejecting_a_proposal_keeps_it_from_coming_back(locs):
    old, new = redis_sessions(locs), to_postgres(locs)
    run_detector(locs, new)
    (item,) = review.collect(locs, [SLUG])
    review.keep(locs, item)
    assert review.proposed_supersessions(locs, [SLUG]) == []
    assert run_detector(locs, new) == []  # the detector does not propose a rejected pair again
    assert review.collect(locs, [SLUG]) == [] and trust.state(locs, [SLUG]).of(old) == "current"


def test_a_proposal_travels_with_the_tree_and_old_readers_skip_it(locs, tmp_path):
    old, new = redis_sessions(locs), to_postgres(locs)
    run_detector(locs, new)
    (tmp_path / "other-machine").mkdir()
    other = locations(make_env(tmp_path / "other-machine"))
    shutil.copytree(locs.memories / SLUG, other.memories / SLUG)  # what the uploader carries
    (proposal,) = review.proposed_supersessions(other, [SLUG])
    assert (proposal.old, proposal.newer) == (old, new) and "Redis" in proposal.evidence
    lines = (other.memories / SLUG / trust.TRUST_FILE).read_text().splitlines()
    assert [line for line in lines if line.startswith("- ") and trust.parse_line(line)] == []


def a_pass_home(tmp_path, monkeypatch):
    """A HOME the pass reads as the real one (HOME alone set), and a start two hours ago for its sessions."""
    home = tmp_path / "pass-home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("HARNESSLINK_HOME", "CLAUDE_CONFIG_DIR"):
        monkeypatch.delenv(name, raising=False)
    return home, locations(), datetime.now(timezone.utc) - timedelta(hours=2)


def test_the_background_pass_proposes_and_a_hook_pass_leaves_it_for_later(tmp_path, monkeypatch):
    home, locs, start = a_pass_home(tmp_path, monkeypatch)
    first = ClaudeSession(home, cwd=SHOP, start=start)
    first.turn("Store sessions in Redis so logins survive restarts", LONG,
               tools=[("Edit", {"file_path": f"{SHOP}/src/session/store.py", "old_string": "a", "new_string": "b"})])
    first.flush()
    autobank.run_pass(locs)  # a hook's pass
    later = ClaudeSession(home, cwd=SHOP, start=start + timedelta(hours=1))
    later.turn("Move the session store from Redis to Postgres", LONG,
               tools=[("Edit", {"file_path": f"{SHOP}/src/session/store.py", "old_string": "b", "new_string": "c"})])
    later.flush()
    assert autobank.run_pass(locs).banked == 1
    assert review.proposed_supersessions(locs, [SLUG]) == []  # noted, not looked at on a hook's path
    autobank.drain(locs)  # the background pass
    (proposal,) = review.proposed_supersessions(locs, [SLUG])
    assert "from Redis to Postgres" in proposal.evidence
    assert trust.superseded_paths(locs, [SLUG]) == set()


def test_a_backfill_that_banks_both_proposes_from_what_it_rendered(tmp_path, monkeypatch):
    home, locs, start = a_pass_home(tmp_path, monkeypatch)
    first = ClaudeSession(home, cwd=SHOP, start=start)
    first.turn("Store sessions in Redis so logins survive restarts", LONG,
               tools=[("Edit", {"file_path": f"{SHOP}/src/session/store.py", "old_string": "a", "new_string": "b"})])
    first.turn("Move the session store from Redis to Postgres", LONG,
               tools=[("Edit", {"file_path": f"{SHOP}/src/session/store.py", "old_string": "b", "new_string": "c"})])
    first.flush()
    read_back = []
    monkeypatch.setattr(detect, "read_entry", lambda *a: read_back.append(a) or entries.read_entry(*a))
    assert autobank.drain(locs).banked == 2
    (proposal,) = review.proposed_supersessions(locs, [SLUG])
    assert "from Redis to Postgres" in proposal.evidence
    # the pass handed both entries over as it rendered them: only the candidate found for the newer is read
    assert [Path(a[0]).name for a in read_back] == [proposal.old.split("/")[-1]]


def test_the_trigger_words_never_hide_a_change_a_pattern_finds(monkeypatch):
    """`changes` looks for a trigger word before trying its patterns; on every text of the labelled sets it
    finds exactly what the patterns alone find (a new pattern needs its word in `_TRIGGER_WORDS`)."""
    import json
    import re

    texts = []
    for name in ("supersession_pairs.json", "supersession_pairs_blind.json", "supersession_pairs_third.json"):
        data = json.loads((Path(__file__).resolve().parents[2] / "benchmarks" / name).read_text())
        texts += [f"{e['title']}.\n{e['prompt']}\n{e['result']}" for e in data["entries"]]
    with_trigger = [[(c.kind, c.x, c.y) for c in detect.changes(t)] for t in texts]
    monkeypatch.setattr(detect, "_TRIGGER", re.compile(""))
    assert with_trigger == [[(c.kind, c.x, c.y) for c in detect.changes(t)] for t in texts]
    assert sum(map(len, with_trigger)) > 50
