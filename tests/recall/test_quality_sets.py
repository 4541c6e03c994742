"""The labelled retrieval sets load, and every target they name is planted and banked where it should be.

Nothing here ranks: the sets judge the matcher, so a test must not look at how it does on them
(`python -m benchmarks.quality` reports that).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import corpus, quality
from harnesslink_core.paths import locations
from harnesslink_core.recall import index
from harnesslink_core.store.scope import project_slug

HARNESSES = {"claude-code", "codex", "pi", "omp"}


@pytest.mark.parametrize(("planted", "asked"), [(planted, asked) for _, planted, asked in quality.CORPORA])
def test_every_query_names_a_target_planted_in_its_corpus(planted, asked):
    data = quality.load_targets(planted)
    ids = [t["id"] for t in data["targets"]]
    assert len(ids) == len(set(ids))
    prompts = [(t["prompt"], t["harness"]) for t in data["targets"]]
    assert len(prompts) == len(set(prompts)), "a target must be found by its prompt and harness"
    by_id = {t["id"]: t for t in data["targets"]}
    for target in data["targets"]:
        assert target["project"] in corpus.DOMAINS and target["harness"] in HARNESSES
        assert target["prompt"] and target["answer"] and target["command"]
    for group in data["duplicates"]:
        assert len(group) >= 2 and len({by_id[tid]["project"] for tid in group}) == 1
    for path in asked:
        qset = json.loads(path.read_text())
        assert all(q["target"] in by_id and q["query"] for q in qset["queries"])
        assert all(q["project"] in corpus.DOMAINS and q["query"] for q in qset["never_done"])


def test_unseen_set_is_new_and_large_enough():
    unseen = json.loads(quality.UNSEEN.read_text())
    first = quality.load_targets((quality.QUERIES,))["targets"]
    assert {t["id"] for t in unseen["targets"]}.isdisjoint(t["id"] for t in first)
    assert {t["prompt"] for t in unseen["targets"]}.isdisjoint(t["prompt"] for t in first)
    assert len(unseen["queries"]) >= 40 and len(unseen["never_done"]) >= 20
    assert {t["harness"] for t in unseen["targets"]} == HARNESSES
    assert {t["project"] for t in unseen["targets"]} == set(corpus.DOMAINS)
    asked = {q["target"] for q in unseen["queries"]}
    assert all(t["id"] in asked or any(t["id"] in g for g in unseen["duplicates"]) for t in unseen["targets"])


@pytest.mark.parametrize("labelled, earlier_files, least_queries, least_never_done", [
    (quality.BLIND, (quality.QUERIES, quality.UNSEEN), 70, 24),
    (quality.FINAL, (quality.QUERIES, quality.UNSEEN, quality.BLIND), 80, 28),
    (quality.SIXTH, (quality.QUERIES, quality.UNSEEN, quality.BLIND, quality.FINAL), 80, 28),
    (quality.SEVENTH, (quality.QUERIES, quality.UNSEEN, quality.BLIND, quality.FINAL, quality.SIXTH), 90, 32),
    (quality.EIGHTH, (quality.QUERIES, quality.UNSEEN, quality.BLIND, quality.FINAL, quality.SIXTH, quality.SEVENTH),
     90, 32),
    (quality.NINTH, (quality.QUERIES, quality.UNSEEN, quality.BLIND, quality.FINAL, quality.SIXTH, quality.SEVENTH,
                     quality.EIGHTH), 90, 32),
    (quality.TENTH, (quality.QUERIES, quality.UNSEEN, quality.BLIND, quality.FINAL, quality.SIXTH, quality.SEVENTH,
                     quality.EIGHTH, quality.NINTH), 90, 32),
    (quality.ELEVENTH, (quality.QUERIES, quality.UNSEEN, quality.BLIND, quality.FINAL, quality.SIXTH,
                        quality.SEVENTH, quality.EIGHTH, quality.NINTH, quality.TENTH), 90, 32),
    (quality.TWELFTH, (quality.QUERIES, quality.UNSEEN, quality.BLIND, quality.FINAL, quality.SIXTH, quality.SEVENTH,
                       quality.EIGHTH, quality.NINTH, quality.TENTH, quality.ELEVENTH), 96, 36),
    (quality.THIRTEENTH, (quality.QUERIES, quality.UNSEEN, quality.BLIND, quality.FINAL, quality.SIXTH,
                          quality.SEVENTH, quality.EIGHTH, quality.NINTH, quality.TENTH, quality.ELEVENTH,
                          quality.TWELFTH), 96, 36),
])
def test_a_blind_set_is_new_and_large_enough(labelled, earlier_files, least_queries, least_never_done):
    """The fourth to seventh sets: their own targets and words, not shared with any earlier set (their
    contents are not asserted)."""
    new = json.loads(labelled.read_text())
    earlier = quality.load_targets(earlier_files)["targets"]
    assert {t["id"] for t in new["targets"]}.isdisjoint(t["id"] for t in earlier)
    assert {t["prompt"] for t in new["targets"]}.isdisjoint(t["prompt"] for t in earlier)
    others = [json.loads(path.read_text()) for path in quality.ALL_SETS if path != labelled]
    asked_before = {q["query"] for o in others for q in o["queries"] + o["never_done"]}
    assert {q["query"] for q in new["queries"] + new["never_done"]}.isdisjoint(asked_before)
    assert len(new["queries"]) >= least_queries and len(new["never_done"]) >= least_never_done
    assert len(new["duplicates"]) >= 4
    assert {t["harness"] for t in new["targets"]} == HARNESSES
    assert {t["project"] for t in new["targets"]} == set(corpus.DOMAINS)
    assert {q["project"] for q in new["never_done"]} == set(corpus.DOMAINS)
    asked = {q["target"] for q in new["queries"]}
    assert all(t["id"] in asked or any(t["id"] in g for g in new["duplicates"]) for t in new["targets"])


def test_blind_set_is_chosen_by_name_and_by_default():
    assert quality.BLIND in quality.ALL_SETS  # `--set blind`, and the default of all sets
    assert "blind" in {path.stem.removeprefix("queries_") for path in quality.ALL_SETS}
    assert any(quality.BLIND in asked and quality.BLIND in planted and quality.UNSEEN in planted
               for _, planted, asked in quality.CORPORA)


def test_final_set_is_chosen_by_name_and_by_default_and_planted_with_every_earlier_target():
    assert quality.FINAL in quality.ALL_SETS  # `--set final`, and the default of all sets
    assert "final" in {path.stem.removeprefix("queries_") for path in quality.ALL_SETS}
    corpora = [(suffix, planted) for suffix, planted, asked in quality.CORPORA if quality.FINAL in asked]
    assert corpora == [("-final", (quality.QUERIES, quality.UNSEEN, quality.BLIND, quality.FINAL))]
    assert len({suffix for suffix, _, _ in quality.CORPORA}) == len(quality.CORPORA)


def test_the_conversations_set_is_long_prose_with_every_answer_a_turn_of_its_project():
    """The blind prose set of the pull (benchmarks/pull.py --blind): its shape, not its contents."""
    data = json.loads((Path(quality.__file__).with_name("conversations_prose.json")).read_text())
    turns = {t["id"]: conv for conv in data["conversations"] for t in conv["turns"]}
    assert len(data["conversations"]) >= 10 and len(turns) >= 150 and len(data["questions"]) >= 60
    assert all(len(t["answer"]) >= 500 for conv in data["conversations"] for t in conv["turns"])
    assert all(a in turns and turns[a]["project"] == q["project"] for q in data["questions"] for a in q["answers"])
    assert {conv["harness"] for conv in data["conversations"]} == HARNESSES


def test_sixth_set_is_chosen_by_name_and_by_default_and_planted_with_every_earlier_target():
    assert quality.SIXTH in quality.ALL_SETS  # `--set sixth`, and the default of all sets
    assert "sixth" in {path.stem.removeprefix("queries_") for path in quality.ALL_SETS}
    corpora = [(suffix, planted) for suffix, planted, asked in quality.CORPORA if quality.SIXTH in asked]
    assert corpora == [("-sixth", (quality.QUERIES, quality.UNSEEN, quality.BLIND, quality.FINAL, quality.SIXTH))]
    assert len({suffix for suffix, _, _ in quality.CORPORA}) == len(quality.CORPORA)


def test_run_py_leaves_the_blind_judges_out_unless_asked():
    source = (Path(quality.__file__).with_name("run.py")).read_text()
    assert '"--final"' in source
    assert "judges = (quality.NINTH,)" in source and "s not in judges" in source
    assert "quality.BLIND" not in source  # the fourth set is routine now


def test_the_blind_judges_are_scored_only_when_named_each_in_a_corpus_of_its_own():
    """The tenth to thirteenth sets: `--set tenth --set eleventh`, `--set twelfth --set thirteenth`, never by default
    nor by run.py."""
    assert quality.JUDGES == (quality.TENTH, quality.ELEVENTH, quality.TWELFTH, quality.THIRTEENTH)
    assert {"tenth", "eleventh", "twelfth", "thirteenth"} <= {path.stem.removeprefix("queries_")
                                                             for path in quality.ALL_SETS}
    corpora = {suffix: planted for suffix, planted, asked in quality.CORPORA if set(asked) & set(quality.JUDGES)}
    template_sets = (quality.QUERIES, quality.UNSEEN, quality.BLIND, quality.FINAL, quality.SIXTH, quality.SEVENTH,
                     quality.EIGHTH, quality.NINTH, quality.TENTH)
    assert corpora == {"-tenth": template_sets, "-eleventh": (quality.ELEVENTH,),
                       "-twelfth": template_sets + (quality.TWELFTH,), "-thirteenth": (quality.THIRTEENTH,)}
    assert "s not in quality.JUDGES" in (Path(quality.__file__).with_name("run.py")).read_text()


def test_the_scale_set_asks_for_a_real_work_background_of_two_thousand_entries_a_project():
    data = quality.load_targets((quality.ELEVENTH,))
    assert data["background_per_project"] >= 2000
    assert quality.load_targets((quality.TENTH,))["background_per_project"] == 0
    assert quality.load_targets((quality.THIRTEENTH,))["background_per_project"] >= 2000
    twelfth_corpus = next(planted for suffix, planted, _ in quality.CORPORA if suffix == "-twelfth")
    assert quality.load_targets(twelfth_corpus)["background_per_project"] == 0  # template turns, as the tenth


@pytest.mark.parametrize("labelled", [quality.TWELFTH, quality.THIRTEENTH], ids=["twelfth", "thirteenth"])
def test_the_twelfth_and_thirteenth_sets_have_their_written_shape(labelled):
    """48 targets, 6 a project and 12 a harness, two queries each, 36 never-done, 4 duplicate groups whose copies
    were banked from another harness; new topics: no target prompt of the other of the two either."""
    new = json.loads(labelled.read_text())
    targets = {t["id"]: t for t in new["targets"]}
    assert len(targets) == len(new["targets"]) == 48
    assert all(sum(t["project"] == p for t in new["targets"]) == 6 for p in corpus.DOMAINS)
    assert all(sum(t["harness"] == h for t in new["targets"]) == 12 for h in HARNESSES)
    assert len(new["queries"]) == 96 and len(new["never_done"]) == 36
    assert all(sum(q["target"] == tid for q in new["queries"]) == 2 for tid in targets)
    assert len(new["duplicates"]) == 4
    for group in new["duplicates"]:
        assert len({targets[tid]["harness"] for tid in group}) == len(group)
        assert len({targets[tid]["prompt"] for tid in group}) == len(group)
    other = quality.THIRTEENTH if labelled == quality.TWELFTH else quality.TWELFTH
    assert {t["prompt"] for t in new["targets"]}.isdisjoint(t["prompt"] for t in json.loads(other.read_text())["targets"])
    assert "never opened the matcher's code" in new["about"]


@pytest.mark.slow
@pytest.mark.parametrize("planted", [planted for suffix, planted, _ in quality.CORPORA if suffix],
                         ids=[suffix.lstrip("-") for suffix, _, _ in quality.CORPORA if suffix])
def test_planted_targets_are_banked_once_each_in_their_project_and_harness(tmp_path, planted):
    """Every target of every corpus; the scale set's without its real-work background (downloaded once for the
    benchmark, not for a test): each target alone in a session of its own, as it is planted there."""
    home = tmp_path / "quality-home"
    home.mkdir()
    data = quality.build(home, targets=planted, background_turns=40, real_per_project=0)
    assert data["corpus"]["errors"] == 0
    locs = locations(quality.env_for(home))
    conn = index.connect(locs, create=False)
    try:
        answers = quality._target_paths(conn, data)
        for target in data["targets"]:
            own = [p for p in answers[target["id"]]
                   if conn.execute("SELECT harness FROM docs WHERE path = ?", (p,)).fetchone()[0] == target["harness"]]
            assert own, target["id"]
            project = conn.execute("SELECT project FROM docs WHERE path = ?", (own[0],)).fetchone()[0]
            assert project == project_slug(quality.cwd_of(target["project"]))
            assert any(target["answer"] in (locs.memories / p).read_text() for p in own), target["id"]
        for group in data["duplicates"]:
            assert len(answers[group[0]]) == len(group)  # each copy is its own entry
            assert all(answers[tid] == answers[group[0]] for tid in group)
    finally:
        conn.close()



@pytest.mark.slow
def test_the_prose_corpus_holds_every_target_and_nothing_else(tmp_path):
    home = tmp_path / "prose-home"
    home.mkdir()
    every_target = quality.EVERY_TARGET
    data = quality.build(home, targets=every_target, prose=True)
    assert data["corpus"]["errors"] == 0
    conn = index.connect(locations(quality.env_for(home)), create=False)
    try:
        answers = quality._target_paths(conn, data)  # raises if a target was not banked
        assert conn.execute("SELECT COUNT(*) FROM docs").fetchone()[0] == len(data["targets"]) == len(answers)
    finally:
        conn.close()
