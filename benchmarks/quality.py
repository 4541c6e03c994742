"""Retrieval quality on the labelled sets (benchmarks/queries.json, queries_heldout.json, queries_unseen.json,
queries_blind.json, queries_final.json, queries_sixth.json, ... queries_thirteenth.json: CORPORA).

The quality corpus is a corpus.py history over the eight example projects (all four
harnesses) into which every target turn of queries.json is planted, in a session of
its own harness and project among ordinary turns. It is banked by the real pass and
indexed by the real index. Each query is then asked from its target's project and
scored for three rankings, all limited to the projects the prompt hook may see:

- ours:        `matches.find_matches` (what the prompt hook injects: at most three, after its floors);
- plain FTS5:  one FTS5 column holding the whole entry file, every query word OR-ed, bm25 order;
- newest:      the project's entries, newest first.

hit@1, hit@3 and MRR are computed on the first three results of each (MRR@3: the
prompt hook injects three at most). never_done queries are about work that is in
no history: the right answer is no injection at all.

queries_heldout.json asks for the same targets in new words (and adds new never-done
queries). It was written before the ranking was tuned on queries.json and is there to
show whether a change generalises: report both, tune on neither.

queries_unseen.json brings its own targets (new topics), planted together with the
first set's in a second corpus built the same way (same background, same seed), so the
first two sets' corpus and scores stay as they were. It was written without looking at
how the matcher ranks, but its scores and misses were seen while tuning, so it is now a
development set like the first two. Its `duplicates` are groups of targets that are the
same work banked twice; any copy answers a query on the group, and a ranking that puts two
copies of one group in the three slots is counted.

queries_blind.json is the fourth set, written blind by someone who never saw how the matcher
ranks, which words it relates or any report. It brings its own targets (new topics, duplicates,
never-done queries, some asked from a project that does not hold the work) and is planted with the
first and third sets' targets as distractors in a third corpus (`DIR-blind`). It was scored once, at
the end of a tuning round, and is now a development set like the first three.

queries_final.json is the fifth set, written blind the same way and not read by whoever tunes the
matcher; it replaces the fourth as the judge. Its own targets are planted with those of the first,
third and fourth sets as distractors in a fourth corpus (`DIR-final`). Do not tune on it and do not
read its misses; score it once, at the very end: `python -m benchmarks.quality --set final`.

queries_sixth.json is the sixth set, written blind the same way after the fifth had been scored once, and not
read by whoever tunes the matcher; it is the judge after the fifth. Its own targets are planted with those of the
first, third, fourth and fifth sets as distractors in a fifth corpus (`DIR-sixth`). Do not tune on it and do not
read its misses; score it once, at the very end: `python -m benchmarks.quality --set sixth`.

The synthetic corpora surround each target with template-made turns whose text is a small, repetitive
vocabulary, unlike a real bank: there, few everyday words are in no entry, and a word that no entry uses
says more. `--prose` also asks the chosen sets of a prose-only corpus (`DIR-prose`): every set's targets,
each banked alone in a session of its own, and nothing else (about 30 real-prose entries a project, the
size of a bank after a few weeks). Its scores are named "<set> (prose)".

queries_tenth.json and queries_eleventh.json are blind judges, written by a helper who never opened the matcher's
code or a report, and scored only when named, never by default nor by run.py (JUDGES). The tenth's targets are
planted with every earlier set's in a corpus of its own (`DIR-tenth`). The eleventh is the scale set: its targets,
each alone in a session of its own, among the real-work background its "background" asks for (benchmarks/
real_work.py: 2,000 banked turns a project made from real changelog items, so 16,000 entries), in `DIR-eleventh`.
queries_twelfth.json and queries_thirteenth.json are the next two blind judges, written the same way by another helper
who never opened the matcher's code or a report, and scored only when named, never by default nor by run.py (JUDGES).
The twelfth's targets are planted with every earlier template-corpus set's (all but the eleventh, whose "background" would
make the corpus a real-work one) in `DIR-twelfth`; the thirteenth is a second scale set like the eleventh, in
`DIR-thirteenth`.
`--encoder` scores ours again with the resident encoder of the package under test answering, as its prompt hook
asks it (benchmarks/as_hooked.py); `--pull` adds the pull's R@5 against plain FTS5's; `--checkout DIR` scores
another checkout's package (a git worktree) with these benchmarks. Misses and wrongly injected never-done
queries are printed only with `--misses`: never ask for them on a blind set.

    python -m benchmarks.quality [--home DIR] [--set NAME ...] [--prose] [--encoder] [--pull] [--checkout DIR] [--misses]
        # only this part; DIR (DIR-unseen, DIR-blind, ... for the third and later sets) are kept
        # and reused (index rebuilt)
    python -m benchmarks.quality --set tenth --set eleventh --encoder --pull --home DIR [--checkout DIR]
        # the blind judges, once, at the very end
    python -m benchmarks.quality --set twelfth --set thirteenth --encoder --pull --home DIR [--checkout DIR]
        # the next two blind judges, once, at the very end
"""

from __future__ import annotations

import contextlib
import inspect
import json
import random
import re
import sqlite3
import statistics
import time
from pathlib import Path

from benchmarks import as_hooked, corpus
from harnesslink_core.banking import autobank
from harnesslink_core.paths import locations
from harnesslink_core.recall import index, query
from harnesslink_core.recall.brief import build_brief
from harnesslink_core.recall.matches import find_matches, render
from harnesslink_core.store.scope import scope_for

QUERIES = Path(__file__).with_name("queries.json")
HELDOUT = Path(__file__).with_name("queries_heldout.json")
UNSEEN = Path(__file__).with_name("queries_unseen.json")
BLIND = Path(__file__).with_name("queries_blind.json")
FINAL = Path(__file__).with_name("queries_final.json")
SIXTH = Path(__file__).with_name("queries_sixth.json")
SEVENTH = Path(__file__).with_name("queries_seventh.json")
EIGHTH = Path(__file__).with_name("queries_eighth.json")
NINTH = Path(__file__).with_name("queries_ninth.json")
TENTH = Path(__file__).with_name("queries_tenth.json")
ELEVENTH = Path(__file__).with_name("queries_eleventh.json")
TWELFTH = Path(__file__).with_name("queries_twelfth.json")
THIRTEENTH = Path(__file__).with_name("queries_thirteenth.json")
QUERY_SETS = (QUERIES, HELDOUT)
# Each corpus: the folder suffix of its HOME, the files whose targets are planted in it, the sets asked of it.
CORPORA = (("", (QUERIES,), QUERY_SETS), ("-unseen", (QUERIES, UNSEEN), (UNSEEN,)),
           ("-blind", (QUERIES, UNSEEN, BLIND), (BLIND,)),
           ("-final", (QUERIES, UNSEEN, BLIND, FINAL), (FINAL,)),
           ("-sixth", (QUERIES, UNSEEN, BLIND, FINAL, SIXTH), (SIXTH,)),
           ("-seventh", (QUERIES, UNSEEN, BLIND, FINAL, SIXTH, SEVENTH), (SEVENTH,)),
           ("-eighth", (QUERIES, UNSEEN, BLIND, FINAL, SIXTH, SEVENTH, EIGHTH), (EIGHTH,)),
           ("-ninth", (QUERIES, UNSEEN, BLIND, FINAL, SIXTH, SEVENTH, EIGHTH, NINTH), (NINTH,)),
           ("-tenth", (QUERIES, UNSEEN, BLIND, FINAL, SIXTH, SEVENTH, EIGHTH, NINTH, TENTH), (TENTH,)),
           ("-eleventh", (ELEVENTH,), (ELEVENTH,)),  # its "background" of real work, not template turns
           ("-twelfth", (QUERIES, UNSEEN, BLIND, FINAL, SIXTH, SEVENTH, EIGHTH, NINTH, TENTH, TWELFTH), (TWELFTH,)),
           ("-thirteenth", (THIRTEENTH,), (THIRTEENTH,)))  # real work again, as the eleventh
ALL_SETS = tuple(s for _, _, sets in CORPORA for s in sets)
# blind: scored only when named (`--set tenth --set eleventh`, `--set twelfth --set thirteenth`), once, at the end
JUDGES = (TENTH, ELEVENTH, TWELFTH, THIRTEENTH)
EVERY_TARGET = tuple(dict.fromkeys(path for _, planted, _ in CORPORA for path in planted))
REAL_WORK_SESSION_TURNS = 8
CUTOFF = 3


def cwd_of(project: str) -> str:
    return f"/home/dev/work/{project}"


def load_targets(files: tuple[Path, ...]) -> dict:
    """The targets (and duplicate groups) of the given set files, in file order, and the real-work background
    entries per project that one of them asks to be planted among (its "background"), if any."""
    data: dict = {"targets": [], "duplicates": [], "background_per_project": 0}
    for path in files:
        labelled = json.loads(path.read_text())
        data["targets"] += labelled["targets"]
        data["duplicates"] += labelled.get("duplicates", [])
        if "background" in labelled:
            data["background_per_project"] = max(data["background_per_project"],
                                                 labelled["background"]["per_project"])
    return data


def real_work_sessions(per_project: int, now: float, days: float = 25.0) -> list[corpus.SessionSpec]:
    """benchmarks/real_work.py's turns, `per_project` a project, as sessions of one project and harness
    (REAL_WORK_SESSION_TURNS consecutive turns each), their two years of clock laid over the last `days` days
    (ending a day ago, the targets' span too, so that neither is the newer by construction)."""
    from benchmarks import real_work

    turns = real_work.build(per_project)
    stamps = [real_work._dt.datetime.fromisoformat(t["ts"]).timestamp() for t in turns]
    first, last = min(stamps), max(stamps)
    runs: dict[tuple[str, str], list[tuple[float, dict]]] = {}
    for stamp, turn in zip(stamps, turns):
        runs.setdefault((turn["project"], turn["harness"]), []).append((stamp, turn))
    sessions = []
    for (project, harness), run in runs.items():
        for i in range(0, len(run), REAL_WORK_SESSION_TURNS):
            chunk = run[i:i + REAL_WORK_SESSION_TURNS]
            start = now - 86400 * (1 + days * (last - chunk[0][0]) / max(last - first, 1))
            specs = [corpus.TurnSpec("bash", t["prompt"], t["answer"], command=t["command"]) for _, t in chunk]
            digest = real_work._h(f"{project} {harness} {i}")
            sessions.append(corpus.SessionSpec(harness, cwd_of(project), start, specs,
                                               f"{digest:08x}-0000-4000-8000-{i:012x}"))
    return sessions


def build(home: Path, *, targets: tuple[Path, ...] = (QUERIES,), background_turns: int = 2400, seed: int = 11,
          prose: bool = False, real_per_project: int | None = None) -> dict:
    """Write the quality corpus into `home`, bank it, index it. Returns the planted targets.
    `prose`: the targets alone, each in a session of its own, without template turns. A set with a real-work
    "background" has its targets planted alone, each in a session of its own, among that many real-work
    entries a project (`real_work_sessions`; `real_per_project` instead, if given), not among template turns."""
    data = load_targets(targets)
    rng = random.Random(seed)
    now = time.time()
    sizes = corpus.real_output_sizes()
    templates = {name: corpus.load_template(name) for name, _ in corpus.HARNESS_MIX}
    real = bool(data["background_per_project"]) and not prose
    prose = prose or real
    per_project = data["background_per_project"] if real_per_project is None else real_per_project
    if real:
        sessions = real_work_sessions(per_project, now) if per_project else []
    else:
        sessions = [] if prose else corpus.plan_sessions(background_turns, seed=seed, now=now,
                                                         projects=len(corpus.DOMAINS), output_sizes=sizes)
    writers = {d: corpus.Writer(random.Random(seed + i), d, sizes) for i, d in enumerate(corpus.DOMAINS)}
    kinds, weights = zip(*corpus.KIND_MIX)
    for target in data["targets"]:
        writer = writers[target["project"]]
        turns = [] if prose else [writer.turn(rng.choices(kinds, weights)[0]) for _ in range(rng.randint(2, 8))]
        planted = corpus.TurnSpec("bash", target["prompt"], target["answer"], command=target["command"],
                                  output="" if real else writer.output())
        turns.insert(rng.randint(0, len(turns)), planted)
        start = now - 86400 * (1 + 24 * rng.random())
        sessions.append(corpus.SessionSpec(target["harness"], cwd_of(target["project"]), start, turns,
                                           f"{rng.getrandbits(32):08x}-0000-4000-8000-{rng.getrandbits(48):012x}"))
    for spec in sessions:
        corpus.write_session(home, spec, templates, fake_home="/home/dev")
    locs = locations(env_for(home))
    report = autobank.drain(locs)
    index.rebuild(locs)
    data["corpus"] = {"sessions": len(sessions), "turns": sum(len(s.turns) for s in sessions),
                      "banked": report.banked, "errors": report.errors}
    return data


def env_for(home: Path) -> dict[str, str]:
    return {"HOME": str(home), "HARNESSLINK_HOME": str(home / ".superpi" / "agent")}


def _target_paths(conn: sqlite3.Connection, data: dict) -> dict[str, frozenset[str]]:
    """Each target id -> the entry paths that answer it: its own, plus those of its duplicate group."""
    paths = {}
    for target in data["targets"]:
        row = conn.execute("SELECT d.path FROM fts JOIN docs d ON d.id = fts.rowid"
                           " WHERE fts.prompt = ? AND d.harness = ?", (target["prompt"], target["harness"])).fetchone()
        if row is None:
            raise RuntimeError(f"target {target['id']} was not banked")
        paths[target["id"]] = row[0]
    if len(set(paths.values())) != len(paths):
        raise RuntimeError("two targets were found in one entry")
    answers = {tid: frozenset([path]) for tid, path in paths.items()}
    for group in data.get("duplicates", []):
        copies = frozenset(paths[tid] for tid in group)
        answers.update(dict.fromkeys(group, copies))
    return answers


def _plain_fts(conn: sqlite3.Connection, memories: Path) -> sqlite3.Connection:
    """Baseline index: the whole entry file in one FTS5 column (same tokenizer as ours)."""
    plain = sqlite3.connect(":memory:")
    plain.execute("CREATE VIRTUAL TABLE plain USING fts5(body, path UNINDEXED, project UNINDEXED,"
                  " tokenize = 'porter unicode61 remove_diacritics 2')")
    rows = conn.execute("SELECT path, project FROM docs").fetchall()
    plain.executemany("INSERT INTO plain(body, path, project) VALUES (?,?,?)",
                      [((memories / path).read_text(), path, project) for path, project in rows])
    return plain


def _plain_search(plain: sqlite3.Connection, query: str, projects: list[str], depth: int = CUTOFF) -> list[str]:
    """Plain FTS5's first `depth` entries: the whole entry, every word of the query OR-ed, bm25."""
    words = dict.fromkeys(w.lower() for w in re.findall(r"\w+", query))
    match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
    if not match:
        return []
    marks = ",".join("?" * len(projects))
    sql = f"SELECT path FROM plain WHERE plain MATCH ? AND project IN ({marks}) ORDER BY bm25(plain) LIMIT ?"
    return [row[0] for row in plain.execute(sql, [match, *projects, depth])]


def _newest(conn: sqlite3.Connection, projects: list[str]) -> list[str]:
    return [hit.path for hit in query.newest(conn, projects, CUTOFF)]


def _score(ranked: list[list[str]], wanted: list[frozenset[str]]) -> dict:
    ranks = [next((i + 1 for i, path in enumerate(r[:CUTOFF]) if path in w), None) for r, w in zip(ranked, wanted)]
    n = len(ranks)
    return {
        "hit@1": round(sum(1 for r in ranks if r == 1) / n, 3),
        "hit@3": round(sum(1 for r in ranks if r is not None) / n, 3),
        "mrr@3": round(sum(1 / r for r in ranks if r) / n, 3),
    }


def evaluate(home: Path, data: dict, sets: tuple[Path, ...] = QUERY_SETS, *, encoder: bool = False,
             pull: bool = False) -> dict:
    """Scores for each query set (by file name), over the corpus `build` wrote; with `encoder`, ours again with
    the package's resident encoder answering (`as_hooked`); with `pull`, the pull's R@5 against plain FTS5's."""
    locs = locations(env_for(home))
    resident = as_hooked.Resident(env_for(home)) if encoder else contextlib.nullcontext()
    with resident:
        conn = index.connect(locs, create=False)
        try:
            targets = _target_paths(conn, data)
            plain = _plain_fts(conn, locs.memories)
            by_id = {t["id"]: t for t in data["targets"]}
            results = {}
            for path in sets:
                qset = json.loads(path.read_text())
                results[path.name] = _evaluate_set(locs, conn, plain, qset, by_id, targets)
                if encoder:
                    judged = _evaluate_set(locs, conn, plain, qset, by_id, targets, resident)
                    results[path.name]["with_encoder"] = {k: judged[k] for k in (
                        "ours", "ours_injected_share", "ours_duplicate_slots", "never_done_no_injection",
                        "prompt_chars", "never_done_injected", "misses")}
                if pull:
                    results[path.name]["pull_r@5"] = _pull_recall(locs, conn, plain, qset, by_id, targets,
                                                                   resident if encoder else None)
        finally:
            conn.close()
    starts = [len(build_brief(locs, cwd_of(project), harness).text)
              for project in corpus.DOMAINS for harness in ("claude-code", "codex", "pi", "omp")]
    return {"corpus": data["corpus"], "sets": results, "session_start_chars": _spread(starts)}


def _duplicate_slots(ranked: list[list[str]], groups: set[frozenset[str]]) -> int:
    """How many rankings hold two or more copies of one duplicate group in their first three."""
    return sum(1 for r in ranked if any(len(g.intersection(r[:CUTOFF])) > 1 for g in groups))


def _pushed(conn: sqlite3.Connection, text: str, projects: list[str], resident=None):
    """What the prompt hook decides for `text`; with `resident`, with the encoder's answer as the hook asks it."""
    if resident is None:
        return find_matches(conn, text, projects, session_id="bench-query", already_injected=set())
    encoding = resident.push_encoding(text, projects)
    try:
        return find_matches(conn, text, projects, session_id="bench-query", already_injected=set(),
                            encoding=encoding)
    finally:
        encoding.close()


def _pull_recall(locs, conn: sqlite3.Connection, plain: sqlite3.Connection, qset: dict, by_id: dict,
                 targets: dict[str, frozenset[str]], resident=None) -> dict:
    """R@5 of the pull (`recall.pull.recall`, as `memory_search` ranks; with `resident`, the query's vector
    asked as the pull asks it) and of plain FTS5, over the labelled queries."""
    from harnesslink_core.recall import pull

    takes_encoding = "encoding" in inspect.signature(pull.recall).parameters
    pulled, plain_ranked, wanted = [], [], []
    for q in qset["queries"]:
        projects = scope_for(locs, cwd_of(by_id[q["target"]]["project"]))
        encoding = resident.pull_encoding(q["query"]) if resident is not None and takes_encoding else None
        try:
            extra = {"encoding": encoding} if encoding is not None else {}
            pulled.append([hit.path for hit in pull.recall(conn, q["query"], projects, limit=5, **extra)])
        finally:
            if encoding is not None:
                encoding.close()
        plain_ranked.append(_plain_search(plain, q["query"], projects, 5))
        wanted.append(targets[q["target"]])

    def found(ranked: list[list[str]]) -> float:
        return round(sum(1 for r, w in zip(ranked, wanted) if w.intersection(r[:5])) / len(wanted), 3)

    return {"pull": found(pulled), "plain_fts5": found(plain_ranked)}


def _evaluate_set(locs, conn: sqlite3.Connection, plain: sqlite3.Connection, qset: dict, by_id: dict,
                  targets: dict[str, frozenset[str]], resident=None) -> dict:
    ours, plain_ranked, newest_ranked, wanted, injected_chars, misses = [], [], [], [], [], []
    for q in qset["queries"]:
        target = by_id[q["target"]]
        projects = scope_for(locs, cwd_of(target["project"]))
        decision = _pushed(conn, q["query"], projects, resident)
        got = [hit.path for hit in decision.hits]
        ours.append(got)
        plain_ranked.append(_plain_search(plain, q["query"], projects))
        newest_ranked.append(_newest(conn, projects))
        wanted.append(targets[q["target"]])
        text = render(decision.hits, decision.terms, str(locs.memories))
        if text:
            injected_chars.append(len(text))
        if not targets[q["target"]].intersection(got):
            misses.append({"query": q["query"], "target_prompt": target["prompt"], "terms": decision.terms,
                           "got": [hit.title for hit in decision.hits],
                           "skipped": decision.skipped,
                           "rejected": [(h.title, why) for h, why in decision.rejected[:3]]})
    quiet, plain_quiet, wrongly = 0, 0, []
    for q in qset["never_done"]:
        projects = scope_for(locs, cwd_of(q["project"]))
        decision = _pushed(conn, q["query"], projects, resident)
        if not decision.hits:
            quiet += 1
        else:
            wrongly.append({"query": q["query"], "got": [h.title for h in decision.hits],
                            "matched": [h.matched for h in decision.hits]})
            injected_chars.append(len(render(decision.hits, decision.terms, str(locs.memories))))
        if not _plain_search(plain, q["query"], projects):
            plain_quiet += 1
    n_never = len(qset["never_done"])
    groups = {copies for copies in targets.values() if len(copies) > 1}
    return {
        "queries": len(qset["queries"]),
        "never_done": n_never,
        "ours": _score(ours, wanted),
        "ours_injected_share": round(sum(1 for g in ours if g) / len(ours), 3),
        "plain_fts5": _score(plain_ranked, wanted),
        "newest_first": _score(newest_ranked, wanted),
        "ours_duplicate_slots": _duplicate_slots(ours, groups),
        "plain_fts5_duplicate_slots": _duplicate_slots(plain_ranked, groups),
        "never_done_no_injection": round(quiet / n_never, 3),
        "plain_fts5_never_done_no_injection": round(plain_quiet / n_never, 3),
        "never_done_injected": wrongly,
        "prompt_chars": _spread(injected_chars),
        "misses": misses,
    }


def _spread(values: list[int]) -> dict:
    if not values:
        return {"n": 0, "median": 0, "max": 0}
    return {"n": len(values), "median": int(statistics.median(values)), "max": max(values)}


def corpus_at(home: Path, planted: tuple[Path, ...] = (QUERIES,), *, prose: bool = False) -> dict:
    """The quality corpus in `home`: built once (its targets kept in a marker file), then reused with a fresh index."""
    marker = home / "quality-corpus.json"
    if marker.exists():
        index.rebuild(locations(env_for(home)))  # the index of the code under test
        return json.loads(marker.read_text())
    home.mkdir(parents=True, exist_ok=True)
    data = build(home, targets=planted, prose=prose)
    marker.write_text(json.dumps(data))
    return data


def measure(home: Path, sets: tuple[Path, ...] = ALL_SETS, *, prose: bool = False, encoder: bool = False,
            pull: bool = False) -> dict:
    """Scores of the chosen sets, each over its corpus: `home` for the first two, `home`-unseen for the third,
    `home`-blind for the fourth, `home`-final for the fifth, `home`-sixth for the sixth, and so on (CORPORA);
    with `prose`, also over the prose-only corpus `home`-prose. `encoder`, `pull`: as `evaluate`."""
    merged: dict = {"sets": {}, "corpora": {}}
    if prose:
        where = home.with_name(home.name + "-prose")
        result = evaluate(where, corpus_at(where, EVERY_TARGET, prose=True), sets, encoder=encoder, pull=pull)
        merged["corpora"][str(where)] = result["corpus"]
        merged["sets"].update((f"{name} (prose)", scores) for name, scores in result["sets"].items())
    for suffix, planted, asked in CORPORA:
        chosen = tuple(s for s in asked if s in sets)
        if not chosen:
            continue
        where = home.with_name(home.name + suffix)
        result = evaluate(where, corpus_at(where, planted), chosen, encoder=encoder, pull=pull)
        merged.setdefault("corpus", result["corpus"])
        merged.setdefault("session_start_chars", result["session_start_chars"])
        merged["corpora"][str(where)] = result["corpus"]
        merged["sets"].update(result["sets"])
    return merged


CHECKOUT_CHILD = """
import sys
sys.path[:1] = [{checkout!r}]
import harnesslink_core  # the checkout's package, imported before this checkout's benchmarks come first
sys.path.insert(0, {benchmarks!r})
from benchmarks import quality
raise SystemExit(quality.main({argv!r}))
"""


def score_checkout(checkout: Path, argv: list[str]) -> int:
    """These benchmarks (this checkout's benchmarks/) over another checkout's harnesslink_core: a child
    process imports that package first, then these benchmarks, and its encoder server runs from there."""
    import os
    import subprocess
    import sys

    code = CHECKOUT_CHILD.format(checkout=str(checkout), benchmarks=str(corpus.REPO), argv=argv)
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    return subprocess.run([sys.executable, "-c", code], env=env, cwd=str(checkout)).returncode


def main(argv: list[str] | None = None) -> int:
    """Build the quality corpora once at --home (or reuse them) and print the chosen sets' scores."""
    import argparse
    import sys
    import tempfile

    import harnesslink_core

    names = {path.stem.removeprefix("queries_"): path for path in ALL_SETS}
    parser = argparse.ArgumentParser(description="retrieval quality only")
    parser.add_argument("--home", type=Path,
                        help="corpus folder to build or reuse (kept); the third and later sets': "
                             "DIR-unseen, DIR-blind, DIR-final, DIR-sixth, ..., DIR-twelfth, DIR-thirteenth")
    parser.add_argument("--set", dest="sets", action="append", choices=sorted(names),
                        help="a set to score (repeatable; default: all but the blind judges, tenth to thirteenth, "
                             "which are scored only when named, once, at the very end)")
    parser.add_argument("--prose", action="store_true",
                        help="also ask the sets of a prose-only corpus: every target, no template turns (DIR-prose)")
    parser.add_argument("--encoder", action="store_true",
                        help="also score ours with the package's resident encoder answering, as its prompt hook "
                             "asks it (benchmarks/as_hooked.py; a package without one says so)")
    parser.add_argument("--pull", action="store_true", help="also the pull's R@5 (memory_search) against plain FTS5")
    parser.add_argument("--checkout", type=Path,
                        help="score that checkout's harnesslink_core with these benchmarks (a git worktree)")
    parser.add_argument("--misses", action="store_true", help="list the misses too")
    args = parser.parse_args(argv)
    if args.checkout:
        rest = list(sys.argv[1:] if argv is None else argv)
        at = next(i for i, a in enumerate(rest) if a == "--checkout" or a.startswith("--checkout="))
        del rest[at:at + (1 if "=" in rest[at] else 2)]
        home = args.home or Path(tempfile.mkdtemp(prefix="hl-quality-")) / "home"
        if args.home is None:
            rest += ["--home", str(home)]
        return score_checkout(args.checkout.resolve(), rest)
    home = args.home or Path(tempfile.mkdtemp(prefix="hl-quality-")) / "home"
    chosen = tuple(names[n] for n in args.sets) if args.sets else tuple(s for s in ALL_SETS if s not in JUDGES)
    encoder = args.encoder and as_hooked.available()
    print(f"package: {Path(harnesslink_core.__file__).resolve().parent}; encoder: "
          + ("resident, as the prompt hook asks it" if encoder else
             "none in this package: scored without" if args.encoder else "not asked (--encoder)"), flush=True)
    result = measure(home, chosen, prose=args.prose, encoder=encoder, pull=args.pull)
    for name, r in result["sets"].items():
        print(f"{name}: {r['queries']} labelled, {r['never_done']} never-done")
        for ranking in ("ours", "plain_fts5", "newest_first"):
            print(f"  {ranking:13} " + "  ".join(f"{k} {v:.3f}" for k, v in r[ranking].items()))
        print(f"  never-done quiet: ours {r['never_done_no_injection']}, plain {r['plain_fts5_never_done_no_injection']}"
              f"; injected share {r['ours_injected_share']}; prompt chars {r['prompt_chars']}")
        print(f"  two copies of one answer in the three slots: ours {r['ours_duplicate_slots']}, "
              f"plain {r['plain_fts5_duplicate_slots']} (of {r['queries']} queries)")
        judged = r.get("with_encoder")
        if judged:
            print("  ours+encoder  " + "  ".join(f"{k} {v:.3f}" for k, v in judged["ours"].items())
                  + f"; never-done quiet {judged['never_done_no_injection']}; injected share "
                    f"{judged['ours_injected_share']}; two copies {judged['ours_duplicate_slots']}")
        if "pull_r@5" in r:
            print(f"  pull R@5 {r['pull_r@5']['pull']:.3f}  plain FTS5 R@5 {r['pull_r@5']['plain_fts5']:.3f}"
                  + (" (the pull with the encoder)" if encoder else ""))
        if args.misses:
            for wrong in r["never_done_injected"] + (judged["never_done_injected"] if judged else []):
                print(f"  NEVER-DONE INJECTED {wrong}")
            for miss in r["misses"] + (judged["misses"] if judged else []):
                print(f"  miss: {miss['query']!r} -> {miss['target_prompt'][:60]!r} terms {miss['terms']} "
                      f"got {miss['got']} rejected {miss['rejected'][:1]}")
    print("homes: " + ", ".join(f"{where} ({c['banked']} entries)" for where, c in result["corpora"].items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
