"""The prompt hook's meaning judge fitted on the development sets, and scored on any set once.

    python -m benchmarks.meaning_fit --home DIR [--set NAME ...] [--dump FILE]

DIR is benchmarks/quality.py's home (its corpora DIR, DIR-unseen, ... are reused; their entry vectors are
made first by a resident encoder of each corpus's own). Each query of the chosen sets is asked as the
prompt hook asks it (`matches.find_matches`) twice: without the encoder (the words and the static vectors)
and with the prompt's vector from the encoder; each prints hit@3 and never-done quiet. `--dump` writes
every query's candidates with their encoder cosines and whether each answers it, which is what
`decide.MEANING_*` were fitted on (the development sets only: never the blind ones), and the rest of the evidence
the words hold of each (bm25, coverage, matched terms and where, evidence, whether and why the words chose it, its
copies' family; the prompt's terms with their counts and idf) that benchmarks/judge_fit.py reads.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import quality
from harnesslink_core.paths import locations
from harnesslink_core.recall import decide, encoded, encoder_client, index
from harnesslink_core.recall.candidates import NEAREST_ASKED
from harnesslink_core.recall.nearby import Nearby
from harnesslink_core.recall.matches import find_matches
from harnesslink_core.store.scope import scope_for


class Answered:
    """An encoder's answer already in hand (`encoder_client.Encoding`'s interface); with `nearby` (the corpus
    index's vectors, `nearby.Nearby`), the scope's entries nearest the prompt too, as the encoder answers them."""

    def __init__(self, vector: list[float] | None, nearby: Nearby | None = None,
                 projects: list[str] | None = None) -> None:
        self._vector = vector
        self.took_ms = 0.0 if vector else None
        self.why = "" if vector else "none"
        self._nearest = (nearby.nearest(vector, projects, NEAREST_ASKED) if vector and nearby and projects
                         else None)
        self.in_scope = nearby.in_scope(projects) if nearby and projects else 0

    def vectors(self) -> list[list[float]] | None:
        return [self._vector] if self._vector else None

    def nearest(self) -> list[tuple[int, float]] | None:
        return self._nearest if self._vector else None


def serving(env: dict[str, str]) -> subprocess.Popen:
    server = subprocess.Popen([sys.executable, "-m", "harnesslink_core.recall.encoder", "serve", "--idle-seconds", "900"],
                              env=env, stderr=subprocess.DEVNULL)
    locs = locations(env)
    while encoder_client.status(locs, 100) is None:
        if server.poll() is not None:
            raise SystemExit("the encoder did not start")
        time.sleep(0.05)
    return server


def fill(home: Path) -> None:
    """Every entry of this corpus its encoder vector (kept in its index: done once)."""
    env = {**quality.env_for(home), "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    locs = locations(env)
    conn = index.connect(locs)
    try:
        if not encoded.any_made(conn) or encoded.pending(conn):
            server = serving(env)
            try:
                encoded.fill(conn, locs, start=False)
            finally:
                encoder_client.stop(locs)
                server.wait(10)
    finally:
        conn.close()


def questions(home: Path, data: dict, qset: dict) -> list[tuple[str, list[str], frozenset[str]]]:
    """Each query of the set as asked in this corpus: its text, the projects in scope, the entries that answer it."""
    locs = locations(quality.env_for(home))
    conn = index.connect(locs, create=False)
    try:
        targets = quality._target_paths(conn, data)
    finally:
        conn.close()
    by_id = {t["id"]: t for t in data["targets"]}
    asked = [(q["query"], by_id[q["target"]]["project"], targets[q["target"]]) for q in qset["queries"]]
    asked += [(q["query"], q["project"], frozenset()) for q in qset["never_done"]]
    return [(text, scope_for(locs, quality.cwd_of(project)), wanted) for text, project, wanted in asked]


def record(conn, nearby: Nearby, text: str, projects: list[str], wanted: frozenset[str],
           vector: list[float] | None) -> dict:
    """One query's candidates (path, encoder cosine, lexical verdict), its neighbourhood (the cosines of the
    scope's nearest entries) and what each decision gave."""
    plain = find_matches(conn, text, projects, session_id="bench-query")
    answered = Answered(vector, nearby, projects)
    judged = find_matches(conn, text, projects, session_id="bench-query", encoding=answered)
    chose = {h.path: hit.why for hit in plain.hits for h in (hit, *hit.also)}  # why: a rule past the floor
    family = {c.hit.path: f[0].hit.path for f in decide._families(list(judged.features.values())) for c in f}
    return {
        "query": text, "wanted": sorted(wanted),
        "nearby": [round(cosine, 4) for _, cosine in answered.nearest() or []], "in_scope": answered.in_scope,
        "plain": [h.path for h in plain.hits], "judged": [h.path for h in judged.hits],
        "terms": {label: [judged.counts[label], round(judged.idf[label], 3)] for label in judged.terms},
        "absent": len(judged.absent), "required": judged.required,
        "candidates": [{"path": c.hit.path, "cosine": c.encoded, "bm25": round(c.hit.score, 2),
                        "coverage": round(c.coverage, 3), "answers": c.hit.path in wanted,
                        "chose": c.hit.path in chose, "why": chose.get(c.hit.path, ""),
                        "matched": list(c.hit.matched), "strong": sorted(c.strong),
                        "evidence": decide.evidence(c), "weight": round(c.weight, 3),
                        "length": len(c.hit.prompt or "") + len(c.hit.result or ""),
                        "family": family[c.hit.path]}
                       for c in judged.features.values()],
    }


def ask_all(home: Path, data: dict, qset: dict, vectors: dict[str, list[float]]) -> list[dict]:
    """Every query of the set, as `record` makes it."""
    asked = questions(home, data, qset)
    locs = locations(quality.env_for(home))
    conn = index.connect(locs, create=False)
    nearby = Nearby(str(locs.index_file))
    try:
        return [record(conn, nearby, text, projects, wanted, vectors[text]) for text, projects, wanted in asked]
    finally:
        nearby.close()
        conn.close()


def score(records: list[dict], key: str) -> tuple[float, float]:
    labelled = [r for r in records if r["wanted"]]
    never = [r for r in records if not r["wanted"]]
    hit = sum(1 for r in labelled if set(r[key][:3]) & set(r["wanted"])) / max(1, len(labelled))
    quiet = sum(1 for r in never if not r[key]) / max(1, len(never))
    return round(hit, 3), round(quiet, 3)


def query_vectors(texts: list[str]) -> dict[str, list[float]]:
    with tempfile.TemporaryDirectory() as tmp:
        env = {"HOME": tmp, "HARNESSLINK_HOME": f"{tmp}/agent",
               "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
        server = serving(env)
        try:
            locs = locations(env)
            found = {}
            for i in range(0, len(texts), 64):
                chunk = texts[i:i + 64]
                vectors = encoder_client.encode(locs, chunk, 60_000)
                if vectors is None:
                    raise SystemExit("the encoder did not answer")
                found.update(zip(chunk, vectors))
            return found
        finally:
            encoder_client.stop(locs)
            server.wait(10)


def simulate(record: dict, margin: float, threshold: float, near: float, prior: float, words: float,
             local: float) -> list[str]:
    """What `decide.judge_by_meaning` gives for this record under these constants (copies not folded)."""
    judged = [c for c in record["candidates"] if c["cosine"] is not None]
    if not judged:
        return record["plain"]
    chose = set(record["plain"])
    scores = {c["path"]: c["cosine"] + words * (c["path"] in chose) for c in judged}
    judged.sort(key=lambda c: -scores[c["path"]])
    top = judged[0]
    others = [c["cosine"] for c in judged[1:]]
    runner = max(others) if others else min(top["cosine"], prior)
    around = decide.neighbourhood(record.get("nearby"))
    judge = scores[top["path"]] + margin * (top["cosine"] - runner) - local * (around - decide.NEIGHBOURHOOD_PRIOR)
    if judge < threshold:
        return []
    return [c["path"] for c in judged if scores[c["path"]] >= scores[top["path"]] - near][:3]


def fit(dumped: dict[str, list[dict]]) -> dict:
    """The constants that bring back the most and keep the most never-done prompts quiet over every set
    given (the sum of each set's hit@3 and never-done quiet, each set counting alike)."""
    import itertools

    best: tuple = (-1.0,)
    grid = itertools.product((0.0, 0.25, 0.5, 1.0), (0.1, 0.2), (decide.RUNNER_UP_PRIOR,), (0.3, 0.5),
                             (0.0, 0.5, 1.0, 1.5, 2.0))
    for margin, near, prior, words, local in grid:
        for step in range(20, 100, 2):
            threshold = step / 100
            total = 0.0
            for records in dumped.values():
                for r in records:
                    r["fit"] = simulate(r, margin, threshold, near, prior, words, local)
                total += sum(score(records, "fit"))
            if total > best[0]:
                best = (total, margin, threshold, near, prior, words, local)
    _, margin, threshold, near, prior, words, local = best
    per_set = {}
    for name, records in dumped.items():
        for r in records:
            r["fit"] = simulate(r, margin, threshold, near, prior, words, local)
        per_set[name] = {"words": score(records, "plain"), "fitted": score(records, "fit")}
    return {"margin": margin, "threshold": threshold, "near": near, "prior": prior, "words_chose": words,
            "local": local, "sum": round(best[0], 3), "sets": per_set,
            "drift": {f"local {weight:g}": drift(dumped, margin, near, prior, words, weight) for weight in (0.0, local)}}


def drift(dumped: dict[str, list[dict]], margin: float, near: float, prior: float, words: float,
          local: float) -> dict[str, float]:
    """The threshold that suits each bank size best (banks of one to five, the sets' own, 1,000+ per project),
    the other constants held: how far one threshold would have to move with the bank's size."""
    sizes: dict[str, list[list[dict]]] = {}
    for name, records in dumped.items():
        size = "small" if name.endswith("(small)") else "large" if name.endswith("(large)") else "own"
        sizes.setdefault(size, []).append(records)
    best = {}
    for size, groups in sizes.items():
        totals = []
        for step in range(20, 100, 2):
            total = 0.0
            for records in groups:
                for r in records:
                    r["fit"] = simulate(r, margin, step / 100, near, prior, words, local)
                total += sum(score(records, "fit"))
            totals.append((total, step / 100))
        best[size] = max(totals)[1]
    return best


DEVELOPMENT = ("queries", "heldout", "unseen", "blind", "sixth", "seventh", "eighth")


def print_before_after(name: str, records: list) -> None:
    """One line for a set: hit@3 and never-done quiet by the words alone, then as the meaning judges."""
    (hit0, quiet0), (hit1, quiet1) = score(records, "plain"), score(records, "judged")
    print(f"{name}: hit@3 {hit0} -> {hit1}, never-done quiet {quiet0} -> {quiet1}", flush=True)


def main(argv: list[str] | None = None) -> int:
    names = {path.stem.removeprefix("queries_"): path for path in quality.ALL_SETS}
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--home", type=Path)
    parser.add_argument("--set", dest="sets", action="append", choices=sorted(names),
                        help="a set (repeatable; default: the development sets)")
    parser.add_argument("--dump", type=Path, help="write every query's candidates here (JSON)")
    parser.add_argument("--fit", type=Path, nargs="+",
                        help="fit the judge's constants on dumps (development sets only: this one's, bank_sizes'")
    args = parser.parse_args(argv)
    if args.fit:
        dumped = {name: records for path in args.fit for name, records in json.loads(path.read_text()).items()}
        print(json.dumps(fit(dumped), indent=2))
        return 0
    chosen = tuple(names[n] for n in (args.sets or DEVELOPMENT))
    plan = [(suffix, planted, [s for s in asked if s in chosen]) for suffix, planted, asked in quality.CORPORA]
    plan = [(suffix, planted, asked) for suffix, planted, asked in plan if asked]
    sets = {path: json.loads(path.read_text()) for _, _, asked in plan for path in asked}
    texts = sorted({q["query"] for qset in sets.values() for q in (*qset["queries"], *qset["never_done"])})
    vectors = query_vectors(texts)
    dumped = {}
    for suffix, planted, asked in plan:
        home = args.home.with_name(args.home.name + suffix)
        data = quality.corpus_at(home, planted)
        fill(home)
        for path in asked:
            records = ask_all(home, data, sets[path], vectors)
            dumped[path.name] = records
            print_before_after(path.name, records)
    if args.dump:
        args.dump.write_text(json.dumps(dumped))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
