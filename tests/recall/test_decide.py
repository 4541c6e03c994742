"""The prompt hook's decision (recall/decide.py) is pure: the candidates stage reads everything first,
and the decision over those features reads nothing, changes nothing and says why."""

from __future__ import annotations

import copy

from harnesslink_core.recall import candidates, decide, index
from harnesslink_core.recall.terms import prompt_terms, prompt_words
from harnesslink_core.store.scope import scope_for
from memory_helpers import SHOP, make_env, make_locs, run_hook, write_entry

PROMPT = "stripe event handled two times"


def _pool(tmp_path):
    locs = make_locs(tmp_path)
    write_entry(locs, SHOP, title="Payments are processed twice", prompt="payments are processed twice, fix it",
                result="The stripe webhook handler now stores each event id and skips events it has seen.",
                ts="2026-08-10T10:00:00.000Z", session_id="a")
    write_entry(locs, SHOP, title="Stripe keys rotated", result="New restricted key in the vault.",
                ts="2026-08-11T10:00:00.000Z", session_id="b")
    for n in range(20):
        write_entry(locs, SHOP, title=f"Refactor the checkout service part {n}",
                    result=f"Moved the checkout service code around, step {n}; tests still pass.",
                    ts=f"2026-07-{10 + n % 18}T10:00:00.000Z", session_id=f"f{n}")
    index.refresh(locs)
    conn = index.connect(locs)
    words = prompt_words(PROMPT)
    pool = candidates.gather(conn, prompt_terms(words, candidates.prompt_vocabulary(conn, words)),
                             scope_for(locs, SHOP))
    return conn, pool


def _state(pool) -> list:
    return [(c.hit.path, c.hit.why, list(c.hit.also), list(c.hit.matched), sorted(c.strong), c.weight, c.coverage,
             c.own, c.own_strong) for c in pool.candidates]


def test_the_decision_reads_nothing_and_leaves_its_candidates_as_they_were(tmp_path):
    conn, pool = _pool(tmp_path)
    conn.close()  # every read was made by the candidates stage
    before = copy.deepcopy(_state(pool))
    first = decide.decide(pool)
    second = decide.decide(pool)
    assert _state(pool) == before
    assert [h.path for h in first.hits] == [h.path for h in second.hits] and first.hits
    assert first.hits[0].why.startswith("clear winner")
    assert [(h.path, why) for h, why in first.rejected] == [(h.path, why) for h, why in second.rejected]


def test_the_decision_explains_each_candidates_features_and_the_thresholds(tmp_path):
    conn, pool = _pool(tmp_path)
    conn.close()
    decision = decide.decide(pool)
    lines = decision.explain()
    assert len(lines) == len(pool.candidates)
    assert all("evidence " in line and "coverage " in line and "idf " in line for line in lines)
    rules = decision.rules()
    assert any(line.startswith("floor: evidence >= 2") for line in rules)
    assert any(f"{decide.CLEAR_WINNER:g}x" in line and f"<= {decide.RARE_ENTRIES} entries" in line for line in rules)
    assert rules[0].startswith("entries in scope per term: stripe 2 (idf ")


def test_the_dry_run_prints_the_rules_and_each_candidates_features(tmp_path):
    env = make_env(tmp_path)
    conn, _ = _pool(tmp_path)
    conn.close()
    out = run_hook(env, "user-prompt-submit", "--harness", "codex", "--dry-run", "--cwd", SHOP,
                   "--session", "s-dry", "--prompt", PROMPT)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.decode().splitlines()
    assert any(line.startswith("# floor: evidence >= 2") for line in lines)
    chosen = [line for line in lines if line.startswith("# chosen:")]
    assert len(chosen) == 1 and "clear winner: bm25" in chosen[0] and "evidence 1/2 (title/prompt: -; steps/result: stripe, event)" in chosen[0]
    assert any(line.startswith("# not chosen:") and "coverage " in line for line in lines)
