"""Evidence for the judge by meaning: the cosine between the new prompt and an entry's own user prompt.

    nice -n 19 python -m benchmarks.prompt_evidence --homes DIR DUMP ... [--cache FILE]

DUMP: `benchmarks/meaning_fit.py --dump` and `benchmarks/bank_sizes.py --dump` files (development sets only);
DIR: the folder of quality.py's homes (DIR/home, DIR/home-unseen, ..., DIR/home-small, DIR/home-large), whose
indexes hold each entry's prompt (the fts table's prompt column). The queries and the candidates' prompts are
encoded in-process (`encoder.Model`; `--cache` keeps the vectors between runs).

Per set and size, four scores of each candidate (copies folded: a family scores its best member):
whole, the dump's cosine of the prompt and the entry's whole text (title, prompt, result: what the index
encodes); own, the cosine of the prompt and the entry's own prompt alone; max and sum of the two. For each:
the AUC between a labelled query's target score (its best answering family; -9 when no candidate answers) and
a never-done query's best score; hit@3 + never-done quiet at the one threshold best over every set and size
(candidates at or over it, best first, at most three), and at each set's own best threshold, with how far
that lies from the pooled one. Today's judge (benchmarks/judge_fit.py `today_scores`) stands beside them for
reference, and today's judge with max in place of its cosine (today_max; the margin too taken over max). Its
hit@3 here is the rule above (at or over the threshold, at most three), not the real judge's window below the best.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
from pathlib import Path

import numpy as np

from benchmarks import judge_fit
from benchmarks.quality import env_for
from harnesslink_core.paths import locations

SCORES = ("whole", "own", "max", "sum", "today", "today_max")


def home_of(homes: Path, name: str) -> Path:
    """The quality home a dumped set was asked of (quality.CORPORA; bank_sizes for the sizes)."""
    size = judge_fit.size_of(name)
    if size != "own":
        return homes / f"home-{size}"
    stem = judge_fit.set_of(name).removesuffix(".json").removeprefix("queries")
    return homes / ("home" if stem in ("", "_heldout") else f"home-{stem.removeprefix('_')}")


def prompts_of(home: Path, paths: set[str]) -> dict[str, str]:
    index = locations(env_for(home)).index_file
    with sqlite3.connect(f"file:{index}?mode=ro", uri=True) as conn:
        rows = conn.execute("SELECT d.path, f.prompt FROM docs d JOIN fts f ON f.rowid = d.id").fetchall()
    return {path: prompt or "" for path, prompt in rows if path in paths}


def encode_all(texts: list[str], cache: Path | None) -> dict[str, np.ndarray]:
    known: dict[str, np.ndarray] = {}
    if cache and cache.exists():
        known = {t: np.array(v, dtype=np.float32) for t, v in json.loads(cache.read_text()).items()}
    due = [t for t in dict.fromkeys(texts) if t not in known]
    if due:
        from harnesslink_core.recall.encoder import Model

        model = Model()
        for i in range(0, len(due), 256):
            chunk = due[i:i + 256]
            vectors = np.frombuffer(model.encode(chunk), dtype=np.float32).reshape(len(chunk), -1)
            known.update(zip(chunk, vectors))
        if cache:
            cache.write_text(json.dumps({t: [round(float(x), 6) for x in v] for t, v in known.items()}))
    return known


class Scored:
    """One set and size: per query, its folded candidates' scores (by SCORES), which answer, whether labelled."""

    def __init__(self, name: str, records: list[dict], prompts: dict[str, str],
                 vectors: dict[str, np.ndarray]) -> None:
        self.name, self.size = name, judge_fit.size_of(name)
        self.queries = []
        for r in records:
            q = vectors[r["query"]]
            grouped: dict[str, list[dict]] = {}
            for c in r["candidates"]:
                if c["cosine"] is not None:
                    grouped.setdefault(c["family"], []).append(c)
            folded = judge_fit.families(r)
            today = dict(zip((c["family"] for c in folded), judge_fit.today_scores(r, folded)))
            own = {family: max(float(q @ vectors[prompts[c["path"]]]) for c in members)
                   for family, members in grouped.items()}
            raised = [dict(c, cosine=max(c["cosine"], own[c["family"]])) for c in folded]
            today_max = dict(zip((c["family"] for c in raised), judge_fit.today_scores(r, raised)))
            rows = []
            for family, members in grouped.items():
                whole = max(c["cosine"] for c in members)
                rows.append(([whole, own[family], max(whole, own[family]), whole + own[family], today[family],
                              today_max[family]], any(c["answers"] for c in members)))
            scores = np.array([s for s, _ in rows], dtype=float).reshape(len(rows), len(SCORES))
            answers = np.array([a for _, a in rows], dtype=bool)
            self.queries.append((scores, answers, bool(r["wanted"])))
        self.labelled = sum(1 for *_, labelled in self.queries if labelled)
        self.never = len(self.queries) - self.labelled

    def auc(self, k: int) -> float:
        pos = [max((s for s, a in zip(x[:, k], y) if a), default=-9.0) for x, y, lab in self.queries if lab]
        neg = [max(x[:, k], default=-9.0) for x, y, lab in self.queries if not lab]
        return judge_fit.auc(pos, neg)

    def reach(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Per labelled query, the lowest threshold at which an answering family is among the three best given
        (the best score among the three best that answers; -inf when none does); per never-done query, its
        best score (it is quiet below any threshold over it)."""
        hits, bests = [], []
        for x, y, labelled in self.queries:
            order = np.argsort(-x[:, k], kind="stable")[:3]
            if labelled:
                hits.append(max((x[i, k] for i in order if y[i]), default=-np.inf))
            else:
                bests.append(x[order[0], k] if len(order) else -np.inf)
        return np.array(hits), np.array(bests)

    def rates(self, k: int, threshold: float) -> tuple[float, float]:
        hits, bests = self.reach(k)
        return float((hits >= threshold).sum()) / max(1, self.labelled), float((bests < threshold).sum()) / max(1, self.never)


def best_threshold(groups: list[Scored], k: int, grid: np.ndarray) -> tuple[float, float]:
    """The threshold of the most hit@3 + quiet summed over the groups (ties: the lowest), and that sum."""
    totals = np.zeros(len(grid))
    for g in groups:
        hits, bests = g.reach(k)
        totals += (hits[:, None] >= grid).sum(0) / max(1, g.labelled)
        totals += (bests[:, None] < grid).sum(0) / max(1, g.never)
    best = int(np.argmax(totals))
    return float(grid[best]), float(totals[best])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dumps", type=Path, nargs="+")
    parser.add_argument("--homes", type=Path, required=True)
    parser.add_argument("--cache", type=Path)
    args = parser.parse_args(argv)
    dumped = {name: records for path in args.dumps for name, records in json.loads(path.read_text()).items()}
    prompts: dict[str, dict[str, str]] = {}
    for name, records in dumped.items():
        paths = {c["path"] for r in records for c in r["candidates"] if c["cosine"] is not None}
        prompts[name] = prompts_of(home_of(args.homes, name), paths)
        missing = paths - prompts[name].keys()
        if missing:
            raise SystemExit(f"{name}: {len(missing)} candidates not in {home_of(args.homes, name)}'s index")
    texts = [r["query"] for records in dumped.values() for r in records]
    texts += [p for found in prompts.values() for p in found.values()]
    vectors = encode_all(texts, args.cache)
    groups = [Scored(name, records, prompts[name], vectors) for name, records in sorted(dumped.items())]
    print("AUC, labelled target vs never-done best:", " ".join(SCORES))
    for g in groups:
        print(f"  {g.name} ({g.labelled}/{g.never}): " + " ".join(f"{g.auc(k):.3f}" for k in range(len(SCORES))))
    print("hit@3 + quiet at the pooled threshold (per set at its own best threshold, its drift from the pooled)")
    pooled = {}
    for k, score in enumerate(SCORES):
        every = np.concatenate([x[:, k] for g in groups for x, *_ in g.queries])
        grid = np.round(np.arange(np.floor(every.min() * 100) / 100, every.max() + 0.02, 0.01), 2)
        t_all, total = best_threshold(groups, k, grid)
        own = [best_threshold([g], k, grid) for g in groups]
        drift = [t - t_all for t, _ in own]
        pooled[score] = (t_all, total, sum(s for _, s in own), max(abs(d) for d in drift))
        print(f"  {score}: threshold {t_all:.2f}, sum {total:.2f} of {2 * len(groups)} rates; at each set's own "
              f"{pooled[score][2]:.2f}; drift max {pooled[score][3]:.2f}")
        for g, (t, s), d in zip(groups, own, drift):
            hit, quiet = g.rates(k, t_all)
            print(f"    {g.name}: {hit:.3f}/{quiet:.3f} = {hit + quiet:.3f}; own best {s:.3f} at {t:.2f} ({d:+.2f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
