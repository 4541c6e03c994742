"""Evidence for the judge by meaning: late interaction (each word of the prompt against the entry's tokens).

    PYTHONPATH=<a folder with onnx> nice -n 19 python -m benchmarks.late_interaction --homes DIR DUMP ...

Today's judge reads one cosine between two mean-pooled vectors. A question about work never done often shares
its topic with work that was done ("did we add retries to the S3 upload?" against the S3 upload's entry), so
the pooled vectors agree although one thing asked is nowhere in the entry. Late interaction keeps the
encoder's token states instead: each content word of the prompt takes its best cosine over the entry's
tokens (ColBERT's MaxSim, here with all-MiniLM-L6-v2's own token states, not trained for it), and the
prompt's least-covered word says whether something asked is missing.

The shipped graph (`harnesslink_core/data/encoder/model.onnx`) is opened with the onnx package and its last
layer's token states are made an output too (nothing is written into the package; onnx is not a dependency of
the package: a throwaway folder on PYTHONPATH). DUMP and DIR as for `benchmarks/prompt_evidence.py`.

Per candidate family (copies folded: a family scores its best member), beside the dump's whole-text cosine and
today's judge: li_mean (the mean over the prompt's content words of their best token cosine), li_min (the
least), li_low2 (the mean of the two least), and today's judge plus w × li_min for w in WEIGHTS. AUC and
hit@3 + quiet at one pooled threshold, as prompt_evidence.py prints them.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
from pathlib import Path

import numpy as np

from benchmarks import judge_fit, meaning_fit, prompt_evidence
from benchmarks.quality import env_for
from harnesslink_core.paths import locations
from harnesslink_core.recall import decide
from harnesslink_core.recall.encoder import DATA, MAX_TEXT_CHARS
from harnesslink_core.recall.terms import STOPWORDS
from harnesslink_core.recall.vectors import entry_text

WEIGHTS = (0.5, 1.0, 2.0)
SCORES = ("whole", "li_mean", "li_min", "li_low2", "today",
          *(f"today+{w}li_min" for w in WEIGHTS), *(f"today+{w}li_low2" for w in WEIGHTS),
          "st_mean", "st_low2", *(f"today+{w}st_low2" for w in WEIGHTS))
TOKEN_STATES = "layernormalization_292"  # the last layer's output, before the mean pooling


class TokenModel:
    """The shipped graph with its token states as a second output; texts in, (words, L2-normalised states)."""

    def __init__(self) -> None:
        import onnx
        import onnxruntime
        from tokenizers import Tokenizer

        proto = onnx.load(str(DATA / "model.onnx"))
        if not any(n.output[0] == TOKEN_STATES for n in proto.graph.node):
            raise SystemExit(f"{TOKEN_STATES} is not a node of the shipped graph: look at its last layer's name")
        proto.graph.output.append(onnx.helper.make_tensor_value_info(TOKEN_STATES, onnx.TensorProto.FLOAT, None))
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 2
        self.session = onnxruntime.InferenceSession(proto.SerializeToString(), options,
                                                    providers=["CPUExecutionProvider"])
        self.tokenizer = Tokenizer.from_file(str(DATA / "tokenizer.json"))
        self.tokenizer.no_padding()

    def states(self, text: str) -> tuple[list[int | None], np.ndarray, list[str]]:
        piece = self.tokenizer.encode(text[:MAX_TEXT_CHARS])
        ids = np.array([piece.ids], dtype=np.int64)
        _, states = self.session.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids)})
        x = states[0]
        x = x / np.clip(np.linalg.norm(x, axis=1, keepdims=True), 1e-12, None)
        return list(piece.word_ids), x.astype(np.float32), list(piece.tokens)


def content_words(word_ids: list[int | None], tokens: list[str]) -> list[list[int]]:
    """Each content word of a prompt as the rows of its pieces: no special token, punctuation or stop word."""
    words: dict[int, list[int]] = {}
    for row, word in enumerate(word_ids):
        if word is not None:
            words.setdefault(word, []).append(row)
    kept = []
    for rows in words.values():
        text = "".join(tokens[r].removeprefix("##") for r in rows)
        if any(ch.isalnum() for ch in text) and text.lower() not in STOPWORDS:
            kept.append(rows)
    return kept


def late_scores(query: tuple, entry: np.ndarray) -> tuple[float, float, float]:
    """li_mean, li_min, li_low2 of one prompt (word ids, states, tokens) against one entry's token states."""
    word_ids, states, tokens = query
    words = content_words(word_ids, tokens) or [[r for r, w in enumerate(word_ids) if w is not None]]
    best = (states @ entry[1:-1].T).max(axis=1)  # each prompt token's best over the entry's real tokens
    per_word = np.sort(np.array([best[rows].mean() for rows in words]))
    return float(per_word.mean()), float(per_word[0]), float(per_word[:2].mean())


class StaticWords:
    """The shipped static table (recall/meaning.py) as word vectors: a word's pieces' rows, meaned, of length 1."""

    def __init__(self) -> None:
        from harnesslink_core.recall import meaning

        self.table = meaning.Model()
        self.words = meaning._words
        self.known: dict[str, np.ndarray | None] = {}

    def vectors(self, text: str, content: bool) -> np.ndarray:
        words = [w for w in dict.fromkeys(self.words(text)) if any(ch.isalnum() for ch in w)
                 and not (content and w in STOPWORDS)]
        rows = []
        for w in words:
            if w not in self.known:
                got = self.table._vectors(list(self.table.piece_ids(w)))
                v = np.frombuffer(b"".join(got), dtype=np.uint8).reshape(len(got), -1).astype(np.float32) - 128 \
                    if got else None
                v = v.mean(0) if v is not None else None
                self.known[w] = None if v is None else v / max(float(np.linalg.norm(v)), 1e-9)
            if self.known[w] is not None:
                rows.append(self.known[w])
        return np.array(rows, dtype=np.float32).reshape(len(rows), -1)


def static_scores(query: np.ndarray, entry: np.ndarray) -> tuple[float, float]:
    """st_mean and st_low2: each content word of the prompt's best static cosine over the entry's words."""
    if not len(query) or not len(entry):
        return 0.0, 0.0
    best = np.sort((query @ entry.T).max(axis=1))
    return float(best.mean()), float(best[:2].mean())


def texts_of(home: Path, paths: set[str]) -> dict[str, str]:
    index = locations(env_for(home)).index_file
    with sqlite3.connect(f"file:{index}?mode=ro", uri=True) as conn:
        rows = conn.execute("SELECT d.path, d.title, f.prompt, f.result FROM docs d JOIN fts f ON f.rowid = d.id"
                            ).fetchall()
    return {path: entry_text(title, prompt or "", result or "") for path, title, prompt, result in rows
            if path in paths}


def late_of(records: list[dict], texts: dict[str, str], model: TokenModel,
            entries: dict[str, np.ndarray]) -> None:
    """Each record's candidates their late-interaction scores, in place: c["late"] = (li_mean, li_min, li_low2)."""
    for r in records:
        query = model.states(r["query"])
        for c in r["candidates"]:
            if c["cosine"] is None:
                continue
            text = texts[c["path"]]
            if text not in entries:
                entries[text] = model.states(text)[1]
            c["late"] = late_scores(query, entries[text])


def simulate(record: dict, which: int, weight: float, threshold: float, rescored: int = 1) -> list[str]:
    """`meaning_fit.simulate` at today's constants with `weight` x a late score (`which`: 0 li_mean, 1 li_min,
    2 li_low2) added to the score of the `rescored` best candidates (one more model run each), the best
    of them judged again."""
    judged = [c for c in record["candidates"] if c["cosine"] is not None]
    if not judged:
        return record["plain"]
    chose = set(record["plain"])
    scores = {c["path"]: c["cosine"] + decide.WORDS_CHOSE * (c["path"] in chose) for c in judged}
    judged.sort(key=lambda c: -scores[c["path"]])
    for c in judged[:rescored]:
        scores[c["path"]] += weight * c["late"][which]
    for c in judged[rescored:]:
        scores[c["path"]] += weight * min(c2["late"][which] for c2 in judged[:rescored])  # unknown: no better
    judged.sort(key=lambda c: -scores[c["path"]])
    top = judged[0]
    others = [c["cosine"] for c in judged[1:]]
    runner = max(others) if others else min(top["cosine"], decide.RUNNER_UP_PRIOR)
    around = decide.neighbourhood(record.get("nearby"))
    judge = (scores[top["path"]] + decide.MEANING_MARGIN * (top["cosine"] - runner)
             - decide.MEANING_LOCAL * (around - decide.NEIGHBOURHOOD_PRIOR))
    if judge < threshold:
        return []
    return [c["path"] for c in judged if scores[c["path"]] >= scores[top["path"]] - decide.MEANING_NEAR][:3]


def fit(dumped: dict[str, list[dict]], weights=(0.0, 0.5, 1.0, 1.5, 2.0), rescored: int = 1) -> None:
    """Per late score and weight, the one threshold best over every set and size (each set's hit@3 and
    never-done quiet summed, every set alike), each size's own best threshold (the drift), and per set."""
    sizes = {"own": [], "small": [], "large": []}
    for name in dumped:
        sizes["small" if name.endswith("(small)") else "large" if name.endswith("(large)") else "own"].append(name)

    def total(names, which, weight, threshold):
        out = 0.0
        for name in names:
            for r in dumped[name]:
                r["fit"] = simulate(r, which, weight, threshold, rescored)
            out += sum(meaning_fit.score(dumped[name], "fit"))
        return out

    grid = [step / 100 for step in range(20, 260, 2)]
    for which, label in enumerate(("li_mean", "li_min", "li_low2")):
        for weight in weights:
            if weight == 0.0 and which:
                continue
            sums = [(total(dumped, which, weight, t), t) for t in grid]
            best, threshold = max(sums)
            own = {size: max((total(names, which, weight, t), t) for t in grid)[1] for size, names in sizes.items() if names}
            by_size = {size: round(total(names, which, weight, threshold), 2) for size, names in sizes.items() if names}
            print(f"{rescored} rescored, {label if weight else 'today'} x {weight:g}: threshold {threshold:.2f}, sum {best:.2f} of "
                  f"{2 * len(dumped)}; by size {by_size}; each size's best {own}", flush=True)


class LateScored(prompt_evidence.Scored):
    """One set and size, scored by SCORES (prompt_evidence.Scored's AUC and thresholds over them), from the late
    scores `late_of` gave its candidates."""

    def __init__(self, name: str, records: list[dict], texts: dict[str, str], static: StaticWords) -> None:
        self.name, self.size = name, judge_fit.size_of(name)
        self.queries = []
        for r in records:
            query_words = static.vectors(r["query"], content=True)
            folded = judge_fit.families(r)
            today = judge_fit.today_scores(r, folded)
            members: dict[str, list[dict]] = {}
            for c in r["candidates"]:
                if c["cosine"] is not None:
                    members.setdefault(c["family"], []).append(c)
            rows = []
            for head, judged in zip(folded, today):
                late = [(*c["late"], *static_scores(query_words, static.vectors(texts[c["path"]], content=False)))
                        for c in members[head["family"]]]
                li_mean, li_min, li_low2, st_mean, st_low2 = (max(values) for values in zip(*late))
                rows.append(([head["cosine"], li_mean, li_min, li_low2, judged,
                              *(judged + w * li_min for w in WEIGHTS), *(judged + w * li_low2 for w in WEIGHTS),
                              st_mean, st_low2, *(judged + w * st_low2 for w in WEIGHTS)],
                             head["answers"]))
            scores = np.array([s for s, _ in rows], dtype=float).reshape(len(rows), len(SCORES))
            answers = np.array([a for _, a in rows], dtype=bool)
            self.queries.append((scores, answers, bool(r["wanted"])))
        self.labelled = sum(1 for *_, labelled in self.queries if labelled)
        self.never = len(self.queries) - self.labelled


def with_late_scores(dumped: dict[str, list[dict]], homes: Path) -> dict[str, dict[str, str]]:
    """Every dumped candidate its late scores (`late_of`); each set's candidates' texts, by path."""
    model = TokenModel()
    entries: dict[str, np.ndarray] = {}
    texts = {}
    for name, records in sorted(dumped.items()):
        paths = {c["path"] for r in records for c in r["candidates"] if c["cosine"] is not None}
        texts[name] = texts_of(prompt_evidence.home_of(homes, name), paths)
        if paths - texts[name].keys():
            raise SystemExit(f"{name}: {len(paths - texts[name].keys())} candidates not in its home's index")
        late_of(records, texts[name], model, entries)
        print(f"late scores of {name} ({len(entries)} entry texts so far)", flush=True)
    return texts


def pull_late(home: Path, weights=(0.0, 2.0, 5.0, 10.0, 15.0, 25.0)) -> None:
    """The pull (`pull.recall`, the encoder answering) with the late score of its `LATE_POOL` best added at each
    weight: R@5 per development set and weight, and the weight chosen leave-one-set-out. It needs the `late`
    hook `recall/pull.py` had at c7fc686 (`git checkout c7fc686 -- harnesslink_core/recall/pull.py`): not adopted."""
    from harnesslink_core.recall import pull as package_pull

    if not hasattr(package_pull, "LATE_POOL"):
        raise SystemExit("--pull needs recall/pull.py of c7fc686: git checkout c7fc686 -- harnesslink_core/recall/pull.py")
    from benchmarks import pull as bench_pull, quality
    from benchmarks.meaning_fit import Answered
    from harnesslink_core.recall import index, pull

    sets = (*bench_pull.DEV_SETS, quality.TENTH)
    bench_pull.with_encoder(home, sets)
    model = TokenModel()
    known: dict[tuple[str, str], float] = {}

    def late(which: int):
        def score(query: str, hits) -> dict[int, float]:
            words = model.states(query)
            out = {}
            for hit in hits:
                key = (query, hit.path)
                if key not in known:
                    known[key] = late_scores(words, model.states(entry_text(hit.title, hit.prompt, hit.result))[1])
                out[hit.doc_id] = known[key][which]
            return out
        return score

    results: dict[str, dict[str, float]] = {}
    for suffix, planted, chosen in quality.CORPORA:
        for path in (s for s in chosen if s in sets):
            where = home.with_name(home.name + suffix)
            data = quality.corpus_at(where, planted)
            locs = locations(env_for(where))
            conn = index.connect(locs, create=False)
            try:
                queries = bench_pull.asked(conn, locs, data, json.loads(path.read_text()))
                wanted = [w for *_, w in queries]
                row = {}
                for which, label in enumerate(("li_mean", "li_min", "li_low2")):
                    for weight in weights:
                        if weight == 0.0 and which:
                            continue
                        ranked = [[h.path for h in pull.recall(conn, q, p, limit=5, encoding=Answered(bench_pull.VECTORS.get(q)),
                                                               late=late(which), late_weight=weight)]
                                  for q, p, _ in queries]
                        row[f"{label} {weight:g}" if weight else "today"] = bench_pull.recall_at(ranked, wanted, 5)
                results[path.stem] = row
                print(path.stem, json.dumps(row), flush=True)
            finally:
                conn.close()
    names = list(next(iter(results.values())))
    for held in results:
        others = [s for s in results if s != held]
        best = max(names, key=lambda n: sum(results[s][n] for s in others))
        print(f"held out {held}: chosen on the others {best}: R@5 {results[held][best]:.3f} (today {results[held]['today']:.3f})")
    print("best over all:", max(names, key=lambda n: sum(r[n] for r in results.values())))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dumps", type=Path, nargs="+")
    parser.add_argument("--homes", type=Path, required=True)
    parser.add_argument("--pull", action="store_true", help="the pull's R@5 with late scores instead (DUMP unused)")
    parser.add_argument("--fit", action="store_true", help="fit the late score's weight and one threshold instead")
    parser.add_argument("--rescored", type=int, nargs="+", default=[1],
                        help="with --fit: how many of the best candidates get a late score (one model run each)")
    parser.add_argument("--cache", type=Path, help="with --fit: keep the late scores here between runs (JSON)")
    args = parser.parse_args(argv)
    if args.pull:
        pull_late(args.homes / "home")
        return 0
    dumped = {name: records for path in args.dumps for name, records in json.loads(path.read_text()).items()}
    if args.fit:
        if args.cache and args.cache.exists():
            dumped = json.loads(args.cache.read_text())
        else:
            with_late_scores(dumped, args.homes)
            if args.cache:
                args.cache.write_text(json.dumps(dumped))
        for rescored in args.rescored:
            fit(dumped, rescored=rescored)
        return 0
    texts = with_late_scores(dumped, args.homes)
    static = StaticWords()
    groups = [LateScored(name, records, texts[name], static) for name, records in sorted(dumped.items())]
    print("AUC, labelled target vs never-done best:", " ".join(SCORES))
    for g in groups:
        print(f"  {g.name} ({g.labelled}/{g.never}): " + " ".join(f"{g.auc(k):.3f}" for k in range(len(SCORES))))
    print("hit@3 + quiet at the pooled threshold (per set at its own best threshold, its drift from the pooled)")
    for k, score in enumerate(SCORES):
        every = np.concatenate([x[:, k] for g in groups for x, *_ in g.queries])
        grid = np.round(np.arange(np.floor(every.min() * 100) / 100, every.max() + 0.02, 0.01), 2)
        t_all, total = prompt_evidence.best_threshold(groups, k, grid)
        own = [prompt_evidence.best_threshold([g], k, grid) for g in groups]
        drift = max(abs(t - t_all) for t, _ in own)
        print(f"  {score}: threshold {t_all:.2f}, sum {total:.2f} of {2 * len(groups)} rates; at each set's own "
              f"{sum(s for _, s in own):.2f}; drift max {drift:.2f}")
        for g in groups:
            hit, quiet = g.rates(k, t_all)
            print(f"    {g.name}: {hit:.3f}/{quiet:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
