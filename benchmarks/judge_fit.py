"""The push's judge by meaning: how far any judge over the dumped evidence could go, and a joint (linear) judge
fitted leave-one-set-out.

    python -m benchmarks.judge_fit DUMP ... [--weights FILE]

DUMP: `benchmarks/meaning_fit.py --dump` and `benchmarks/bank_sizes.py --dump` files (development sets only).
Prints, per set and size: how often a labelled query's target is among the candidates, and the AUC between
the labelled queries' target score and the never-done queries' best score for today's judge
(the judge by meaning of 1bde8c4, as if the candidate were the best), the cosine alone and the joint judge;
then each judge's hit@3 and never-done quiet, the joint judge's held out (each set, at every size, scored with
weights fitted on the other sets), and the threshold that suits each bank size best. `--weights` writes the
joint judge fitted on every set.

The joint judge scores each candidate (copies folded into one) by a weighted sum of its evidence
(`joint_features`), the prompt's "nothing answers" option scoring 0, and gives the candidates over 0,
best first, at most three; the weights maximise the likelihood of the right answer (the target, or nothing for
a never-done prompt) among these options, each set and size counting alike (a conditional logit).
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np

from harnesslink_core.recall import decide

SIZES = ("own", "small", "large")
JOINT_FEATURES = ("cosine", "chose", "margin", "neighbourhood", "bm25_lead", "coverage", "rare", "matched",
                  "strong", "evidence", "meaning_only", "absent", "cosine_chose")
# The judge before the joint one (1bde8c4): score = cosine + WORDS_CHOSE if the words chose it; the best's judge
# = its score + MARGIN x (its cosine - the runner-up's) - LOCAL x (neighbourhood - prior), against THRESHOLD.
WORDS_CHOSE, MARGIN, LOCAL, THRESHOLD, NEAR = 0.3, 0.25, 0.5, 0.46, 0.2


def joint_features(cosine: float, chose: bool, other_cosines: list[float], nearby: list[float] | None,
                   bm25: float, other_bm25: list[float], coverage: float, matched: list[str], strong,
                   idf: dict[str, float], found: float, required: int, absent: int) -> list[float]:
    """A candidate's evidence for the joint judge, in `JOINT_FEATURES` order (pure Python: what the hook could
    compute from its `decide.Pool`): its cosine, whether the words chose it, its cosine's margin over the best
    other content's, the prompt's neighbourhood, its bm25 over the best other's (log), its coverage, the share of
    the prompt's two rarest terms it holds, of the prompt's terms it matches (anywhere; in its title, prompt or
    keys), its evidence over the floor's, whether only its meaning found it, the concepts no entry in scope
    mentions, and its cosine when the words chose it."""
    runner = max(other_cosines) if other_cosines else min(cosine, decide.RUNNER_UP_PRIOR)
    rivals = [b for b in other_bm25 if b > 0]
    lead = 0.0 if bm25 <= 0 else 2.0 if not rivals else max(-2.0, min(2.0, math.log(bm25 / max(rivals))))
    rarest = sorted(idf, key=lambda label: -idf[label])[:2]
    rare = sum(1 for label in rarest if label in matched) / len(rarest) if rarest else 0.0
    n_terms = max(1, len(idf))
    return [cosine, float(chose), cosine - runner, decide.neighbourhood(nearby) - decide.NEIGHBOURHOOD_PRIOR, lead,
            coverage, rare, len(matched) / n_terms, len(strong) / n_terms,
            min(2.0, found / required) if required else 0.0, float(not matched), float(min(absent, 3)),
            cosine * chose]




def size_of(name: str) -> str:
    return "small" if name.endswith("(small)") else "large" if name.endswith("(large)") else "own"


def set_of(name: str) -> str:
    return name.split(" (")[0]


def families(record: dict) -> list[dict]:
    """The record's candidates with an encoder cosine, copies folded (the copy of best cosine stands for its
    family; it answers when any copy does, the words chose it when they chose any)."""
    grouped: dict[str, list[dict]] = {}
    for c in record["candidates"]:
        if c["cosine"] is not None:
            grouped.setdefault(c["family"], []).append(c)
    folded = []
    for members in grouped.values():
        head = dict(max(members, key=lambda c: c["cosine"]))
        head["answers"] = any(c["answers"] for c in members)
        head["chose"] = any(c["chose"] for c in members)
        head["why"] = next((c["why"] for c in members if c["chose"]), "")
        folded.append(head)
    return folded


def evidence_of(record: dict, folded: list[dict]) -> list[list[float]]:
    """Each folded candidate's features, (`joint_features`)."""
    idf = {label: counted[1] for label, counted in record["terms"].items()}
    return [joint_features(c["cosine"], c["chose"], [o["cosine"] for o in folded if o is not c],
                                  record.get("nearby"), c["bm25"], [o["bm25"] for o in folded if o is not c],
                                  c["coverage"], c["matched"], c["strong"], idf, c["evidence"],
                                  record["required"], record["absent"])
            for c in folded]


def today_scores(record: dict, folded: list[dict]) -> list[float]:
    """Today's judge for each candidate as if it were the best (for the best, the judge itself)."""
    around = decide.neighbourhood(record.get("nearby"))
    out = []
    for c in folded:
        others = [o["cosine"] for o in folded if o is not c]
        runner = max(others) if others else min(c["cosine"], decide.RUNNER_UP_PRIOR)
        out.append(c["cosine"] + WORDS_CHOSE * c["chose"] + MARGIN * (c["cosine"] - runner)
                   - LOCAL * (around - decide.NEIGHBOURHOOD_PRIOR))
    return out


def today_given(record: dict) -> list[dict]:
    """What the judge by meaning of 1bde8c4 gave (its constants; copies folded as the dump's families say)."""
    judged = [c for c in record["candidates"] if c["cosine"] is not None]
    if not judged:
        return []
    score = {id(c): c["cosine"] + WORDS_CHOSE * c["chose"] for c in judged}
    heads: dict[str, dict] = {}
    for c in sorted(judged, key=lambda c: (-score[id(c)], -c["bm25"])):
        heads.setdefault(c["family"], c)
    ranked = list(heads.values())
    top = ranked[0]
    cosines = sorted((c["cosine"] for c in ranked), reverse=True)  # the second of these, as the real code reads
    runner = cosines[1] if len(cosines) > 1 else min(cosines[0], decide.RUNNER_UP_PRIOR)
    judge = (score[id(top)] + MARGIN * (top["cosine"] - runner)
             - LOCAL * (decide.neighbourhood(record.get("nearby")) - decide.NEIGHBOURHOOD_PRIOR))
    if judge < THRESHOLD:
        return []
    return [c for c in ranked if score[id(c)] >= score[id(top)] - NEAR][:3]


def auc(positives: list[float], negatives: list[float]) -> float:
    if not positives or not negatives:
        return float("nan")
    wins = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives))


class Prepared:
    """Every query of one set and size: its folded candidates, their features, which answer."""

    def __init__(self, name: str, records: list[dict]) -> None:
        self.name, self.set, self.size = name, set_of(name), size_of(name)
        self.queries = []
        for r in records:
            folded = families(r)
            x = np.array(evidence_of(r, folded), dtype=float).reshape(len(folded), len(JOINT_FEATURES))
            y = np.array([c["answers"] for c in folded], dtype=bool)
            self.queries.append((r, folded, x, y, bool(r["wanted"])))
        self.labelled = sum(1 for q in self.queries if q[4])
        self.never = len(self.queries) - self.labelled


def fit_logit(groups: list[Prepared], l2: float = 1e-3, steps: int = 1500) -> np.ndarray:
    """The conditional logit's weights (the last is the bias) over these groups, each counting alike: a
    labelled query whose target is among its candidates counts 1 / its set's labelled queries, a never-done
    query 1 / its set's never-done queries."""
    rows, owner, target, weights, never = [], [], [], [], []
    n = 0
    for g in groups:
        for _, _, x, y, labelled in g.queries:
            if labelled and not y.any():
                continue  # nothing any judge could give: no say in the weights
            rows.append(x)
            owner += [n] * len(x)
            target += list(y)
            weights.append(1 / max(1, g.labelled) if labelled else 1 / max(1, g.never))
            never.append(not labelled)
            n += 1
    x = np.vstack(rows)
    x = np.hstack([x, np.ones((len(x), 1))])
    owner, target = np.array(owner), np.array(target, dtype=bool)
    weights, never = np.array(weights), np.array(never)
    w = np.zeros(x.shape[1])
    m, v = np.zeros_like(w), np.zeros_like(w)
    for step in range(1, steps + 1):
        s = np.clip(x @ w, -30, 30)
        e = np.exp(s)
        z = 1 + np.bincount(owner, e, n)
        zt = np.bincount(owner, e * target, n)
        # d loss / d s_c = e_c / Z - [c answers] e_c / Z_target (a never-done query: Z_target is the null's 1)
        grad_s = e / z[owner] - np.where(target, e / np.maximum(zt[owner], 1e-300), 0.0)
        grad = x.T @ (grad_s * weights[owner]) / weights.sum() + l2 * np.r_[w[:-1], 0.0]
        m = 0.9 * m + 0.1 * grad
        v = 0.999 * v + 0.001 * grad * grad
        w -= 0.05 * (m / (1 - 0.9 ** step)) / (np.sqrt(v / (1 - 0.999 ** step)) + 1e-8)
    return w


def joint_given(w: np.ndarray, x: np.ndarray, threshold: float) -> list[int]:
    if not len(x):
        return []
    s = x @ w[:-1] + w[-1]
    order = [i for i in np.argsort(-s) if s[i] >= threshold]
    return order[:3]


def agreement(g: Prepared) -> float:
    """How often the simulated today's judge gives what the real code gave (the dump's "judged")."""
    same = sum(1 for r, *_ in g.queries if [c["path"] for c in today_given(r)] == r["judged"])
    return same / max(1, len(g.queries))


def rates(g: Prepared, chosen) -> tuple[float, float]:
    """hit@3 and never-done quiet of `chosen(record, folded, x)` (indices or candidates given) over the group."""
    hit = quiet = 0
    for r, folded, x, y, labelled in g.queries:
        given = chosen(r, folded, x)
        if labelled:
            hit += any(y[i] for i in given)
        else:
            quiet += not given
    return hit / max(1, g.labelled), quiet / max(1, g.never)


def words_rates(g: Prepared) -> tuple[float, float]:
    """hit@3 and never-done quiet by the words alone (the dump's "plain")."""
    hit = sum(1 for r, *_ in g.queries if r["wanted"] and set(r["plain"][:3]) & set(r["wanted"]))
    quiet = sum(1 for r, *_ in g.queries if not r["wanted"] and not r["plain"])
    return hit / max(1, g.labelled), quiet / max(1, g.never)


def today_chosen(r, folded, x) -> list[int]:
    """Today's judge's answer as indices of `folded` (the family each given candidate is in)."""
    families = [c["family"] for c in folded]
    return [families.index(c["family"]) for c in today_given(r) if c["family"] in families]


def best_threshold(w: np.ndarray, groups: list[Prepared]) -> float:
    grid = [t / 20 for t in range(-60, 61)]
    totals = [(sum(sum(rates(g, lambda r, f, x: joint_given(w, x, t))) for g in groups), -abs(t), t) for t in grid]
    return max(totals)[2]


def ceiling(groups: list[Prepared], w: np.ndarray | None) -> None:
    print("set (size): target among candidates; AUC target vs never-done best: today's judge, cosine, joint")
    for g in groups:
        among = sum(1 for q in g.queries if q[4] and q[3].any())
        pos: dict[str, list[float]] = {"today": [], "cosine": [], "joint": []}
        neg: dict[str, list[float]] = {"today": [], "cosine": [], "joint": []}
        for r, folded, x, y, labelled in g.queries:
            judged = {"today": today_scores(r, folded), "cosine": [c["cosine"] for c in folded],
                      "joint": list(x @ w[:-1] + w[-1]) if w is not None and len(x) else [0.0] * len(folded)}
            for key, scores in judged.items():
                if labelled:
                    pos[key].append(max((s for s, a in zip(scores, y) if a), default=-9.0))
                else:
                    neg[key].append(max(scores, default=-9.0))
        aucs = " ".join(f"{auc(pos[k], neg[k]):.3f}" for k in ("today", "cosine", "joint"))
        print(f"  {g.name}: {among}/{g.labelled}; AUC {aucs}; today's simulated = real {agreement(g):.3f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dumps", type=Path, nargs="+")
    parser.add_argument("--weights", type=Path)
    parser.add_argument("--l2", type=float, default=1e-3)
    parser.add_argument("--drop", action="append", default=[], choices=JOINT_FEATURES,
                        help="a feature left out (repeatable)")
    parser.add_argument("--without", choices=("clear winner", "rare word"),
                        help="as if the words' rule past the floor had not let its candidates in")
    args = parser.parse_args(argv)
    dumped = {name: records for path in args.dumps for name, records in json.loads(path.read_text()).items()}
    if args.without:
        for records in dumped.values():
            for r in records:
                for c in r["candidates"]:
                    if c["why"].startswith(args.without):
                        c["chose"], c["why"] = False, ""
                r["plain"] = [p for p in r["plain"] if any(c["path"] == p and c["chose"] for c in r["candidates"])
                              or not any(c["path"] == p for c in r["candidates"])]
    groups = [Prepared(name, records) for name, records in sorted(dumped.items())]
    for g in groups:
        for _, _, x, _, _ in g.queries:
            for feature in args.drop:
                x[:, JOINT_FEATURES.index(feature)] = 0.0
    sets = sorted({g.set for g in groups})
    held: dict[str, tuple] = {}
    for left in sets:
        train = [g for g in groups if g.set != left]
        w = fit_logit(train, args.l2)
        t = best_threshold(w, train)
        for g in groups:
            if g.set == left:
                held[g.name] = rates(g, lambda r, f, x: joint_given(w, x, t)) + (t,)
    w_all = fit_logit(groups, args.l2)
    t_all = best_threshold(w_all, groups)
    ceiling(groups, w_all)
    print("set (size): hit@3 / quiet: words; today's judge; joint held out (its threshold); joint fitted on all")
    sums = {"words": 0.0, "today": 0.0, "held": 0.0, "all": 0.0}
    by_size: dict[str, dict[str, float]] = {}
    for g in groups:
        words = words_rates(g)
        today = rates(g, today_chosen)
        fitted = rates(g, lambda r, f, x: joint_given(w_all, x, t_all))
        for key, pair in (("words", words), ("today", today), ("held", held[g.name][:2]), ("all", fitted)):
            sums[key] += sum(pair)
            by_size.setdefault(g.size, {}).setdefault(key, 0.0)
            by_size[g.size][key] += sum(pair)
        print(f"  {g.name}: {words[0]:.3f}/{words[1]:.3f}; {today[0]:.3f}/{today[1]:.3f}; "
              f"{held[g.name][0]:.3f}/{held[g.name][1]:.3f} ({held[g.name][2]:g}); {fitted[0]:.3f}/{fitted[1]:.3f}")
    print("sums:", {k: round(v, 2) for k, v in sums.items()}, "over", 2 * len(groups), "rates")
    print("sums by size:", {s: {k: round(v, 2) for k, v in d.items()} for s, d in by_size.items()})
    drift = {size: best_threshold(w_all, [g for g in groups if g.size == size]) for size in SIZES
             if any(g.size == size for g in groups)}
    print(f"joint on all: threshold {t_all:g}; best threshold per size, weights held: {drift}")
    names = list(JOINT_FEATURES) + ["bias"]
    print("weights:", {n: round(float(v), 3) for n, v in zip(names, w_all)})
    if args.weights:
        args.weights.write_text(json.dumps({"weights": dict(zip(names, map(float, w_all))), "threshold": t_all}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
