"""Pull recall (`memory_search`, `harnesslink recall`): R@5 and R@10 of plain FTS5, of our
words alone, and of words and meaning fused (`recall/pull.py`).

    python -m benchmarks.pull --home DIR [--tune] [--blind]

Development sets: the `queries*.json` sets but the blind ones (final, ninth and later) over the corpora `benchmarks/quality.py`
builds at DIR, DIR-unseen, ... and the first long prose conversations
(`conversations_prose.json`: 12 conversations, 170 turns, each banked as a turn of its own
session in DIR-conversations; 70 questions asked days later); `--tune` tries fusion settings
on them (one meaning weight, leave-one-set-out), with the queries' and entries' vectors from the
resident encoder. Blind, scored once at the very end with `--blind`: the ninth coding set
(`queries_ninth.json`, planted with every earlier set's targets in DIR-ninth) and the second
prose conversations (`conversations_prose_second.json`: 12 conversations, 167 turns, 70
questions, in DIR-conversations-second), both written blind by helpers for this round.
A query counts as found at k when any copy of its target (or any of its evidence turns)
is in the first k.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import corpus, quality
from benchmarks.meaning_fit import Answered
from harnesslink_core.banking import autobank
from harnesslink_core.paths import locations
from harnesslink_core.recall import index, pull
from harnesslink_core.store.scope import scope_for

NINTH = quality.NINTH
CONVERSATIONS = Path(__file__).with_name("conversations_prose.json")  # scored twice: development now
CONVERSATIONS_SECOND = Path(__file__).with_name("conversations_prose_second.json")  # blind: once, at the end
DEV_SETS = (quality.QUERIES, quality.HELDOUT, quality.UNSEEN, quality.BLIND, quality.SIXTH,
            quality.SEVENTH, quality.EIGHTH)  # the seventh and eighth were scored blind once: development now
DEPTH = 10
# what is compared (meaning weight, meaning alone, plain weight): our words alone, and what recall does
SETTINGS = {"words": (0.0, pull.MEANING_ALONE, 0.0), "recall": (None, None, None)}
TUNED_WEIGHTS = (0.0, 0.5, 1.0, 1.5, 3.0, 6.0, 10.0, 15.0, 25.0, 50.0)


def plain_ranked(plain, query: str, projects: list[str]) -> list[str]:
    return quality._plain_search(plain, query, projects, DEPTH)


def asked(conn, locs, data: dict, qset: dict) -> list[tuple[str, list[str], frozenset[str]]]:
    targets = quality._target_paths(conn, data)
    by_id = {t["id"]: t for t in data["targets"]}
    return [(q["query"], scope_for(locs, quality.cwd_of(by_id[q["target"]]["project"])), targets[q["target"]])
            for q in qset["queries"]]


def recall_at(rankings: list[list[str]], wanted: list[frozenset[str]], k: int) -> float:
    return round(sum(1 for r, w in zip(rankings, wanted) if w.intersection(r[:k])) / len(wanted), 3)


def score_queries(conn, plain, queries, settings: dict[str, tuple[float, int]]) -> dict:
    wanted = [w for _, _, w in queries]
    out = {"queries": len(queries)}
    plain_r = [plain_ranked(plain, q, p) for q, p, _ in queries]
    out["plain_fts5"] = {"R@5": recall_at(plain_r, wanted, 5), "R@10": recall_at(plain_r, wanted, 10)}
    for name, (weight, alone, plain) in settings.items():
        ranked = [[h.path for h in pull.recall(conn, q, p, limit=DEPTH, meaning_weight=weight, min_alone=alone,
                                               plain_weight=pull.PLAIN_WEIGHT if plain is None else plain,
                                               encoding=Answered(VECTORS.get(q)))]
                  for q, p, _ in queries]
        out[name] = {"R@5": recall_at(ranked, wanted, 5), "R@10": recall_at(ranked, wanted, 10)}
    return out


VECTORS: dict[str, list[float]] = {}  # each query's vector from the resident encoder (`with_encoder`)


def with_encoder(home: Path, sets, conversation_files=()) -> None:
    """The queries' vectors asked once of an encoder, and every corpus's entry vectors made (kept in its
    index), so that `pull.recall` is measured as `ask` runs it, with the encoder answering."""
    from benchmarks.meaning_fit import fill, query_vectors

    texts = {q["query"] for path in sets for q in json.loads(path.read_text())["queries"]}
    texts |= {q["query"] for path in conversation_files for q in json.loads(path.read_text())["questions"]}
    VECTORS.update(query_vectors(sorted(texts)))
    for suffix, _, chosen in quality.CORPORA:
        if any(s in sets for s in chosen):
            fill(home.with_name(home.name + suffix))


def coding_sets(home: Path, sets, settings) -> dict:
    results = {}
    for suffix, planted, chosen in quality.CORPORA:
        chosen = [s for s in chosen if s in sets]
        if not chosen:
            continue
        where = home.with_name(home.name + suffix)
        data = quality.corpus_at(where, planted)
        locs = locations(quality.env_for(where))
        conn = index.connect(locs, create=False)
        try:
            plain = quality._plain_fts(conn, locs.memories)
            for path in chosen:
                results[path.stem] = score_queries(conn, plain, asked(conn, locs, data, json.loads(path.read_text())),
                                                   settings)
        finally:
            conn.close()
    return results


def conversations(home: Path, settings, source: Path = CONVERSATIONS, suffix: str = "-conversations") -> dict:
    """The prose conversations: each turn banked as an entry; a question finds any of its evidence turns."""
    where = home.with_name(home.name + suffix)
    data = json.loads(source.read_text())
    marker = where / "conversations-corpus.json"
    locs = locations(quality.env_for(where))
    if not marker.exists():
        where.mkdir(parents=True, exist_ok=True)
        rng = random.Random(5)
        templates = {name: corpus.load_template(name) for name, _ in corpus.HARNESS_MIX}
        now = time.time()
        for n, conv in enumerate(data["conversations"]):
            start = now - 86400 * (3 + 20 * rng.random())  # inside the 30-day window the pass banks
            for t, turn in enumerate(conv["turns"]):
                spec = corpus.TurnSpec("long", turn["prompt"], turn["answer"])
                session = f"{rng.getrandbits(32):08x}-0000-4000-8000-{n:04x}{t:08x}"
                corpus.write_session(where, corpus.SessionSpec(conv["harness"], quality.cwd_of(conv["project"]),
                                                               start + 600 * t, [spec], session),
                                     templates, fake_home="/home/dev")
        autobank.drain(locs)
        marker.write_text("{}")
    index.rebuild(locs)
    if VECTORS:
        from benchmarks.meaning_fit import fill

        fill(where)
    conn = index.connect(locs, create=False)
    try:
        by_prompt: dict[str, str] = {}
        for path, in conn.execute("SELECT path FROM docs"):
            text = (locs.memories / path).read_text()
            by_prompt[path] = text
        turn_paths: dict[str, set[str]] = {}
        for conv in data["conversations"]:
            for turn in conv["turns"]:
                probe = " ".join(turn["prompt"].split())[:60]
                turn_paths[turn["id"]] = {p for p, text in by_prompt.items() if probe in " ".join(text.split())}
        queries = [(q["query"], scope_for(locs, quality.cwd_of(q["project"])),
                    frozenset(p for a in q["answers"] for p in turn_paths[a])) for q in data["questions"]]
        found = sum(1 for _, _, w in queries if w)
        plain = quality._plain_fts(conn, locs.memories)
        result = score_queries(conn, plain, queries, settings)
        result["entries"] = len(by_prompt)
        result["questions_with_evidence_banked"] = found
        if found < len(queries):
            raise RuntimeError(f"only {found} of {len(queries)} questions have their evidence banked")
        return {source.stem: result}
    finally:
        conn.close()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--tune", action="store_true", help="try fusion settings on the development sets")
    parser.add_argument("--blind", action="store_true", help="score the blind sets (once, at the very end)")
    parser.add_argument("--conversations-only", action="store_true", help="only the blind conversations")
    parser.add_argument("--static", action="store_true", help="without the encoder: the static vectors' cosines")
    args = parser.parse_args(argv)
    settings = SETTINGS.copy()
    if args.tune:
        settings.update({f"meaning {m:g}": (m, None, None) for m in TUNED_WEIGHTS})
    parser_sets = () if args.conversations_only else ((NINTH,) if args.blind else DEV_SETS)
    if not args.static:
        with_encoder(args.home, parser_sets, (CONVERSATIONS_SECOND,) if args.blind or args.conversations_only
                     else (CONVERSATIONS,))
    results = coding_sets(args.home, parser_sets, settings)
    if not args.blind:
        results.update(conversations(args.home, settings))
    if args.blind or args.conversations_only:
        results.update(conversations(args.home, settings, CONVERSATIONS_SECOND, "-conversations-second"))
    for name, r in results.items():
        print(f"{name}: {r['queries']} queries" + (f", {r['entries']} entries" if "entries" in r else ""))
        for ranking, scores in r.items():
            if isinstance(scores, dict):
                print(f"  {ranking:15} R@5 {scores['R@5']:.3f}  R@10 {scores['R@10']:.3f}")
    if args.tune:
        print(json.dumps(leave_one_set_out(results), indent=2))
    return 0


def leave_one_set_out(results: dict) -> dict:
    """For each set, the meaning weight that does best (mean R@5) on the others, and that weight's R@5 on it;
    and the weight best over them all."""
    names = [f"meaning {m:g}" for m in TUNED_WEIGHTS]

    def best_on(sets: list[str]) -> str:
        return max(names, key=lambda n: (sum(results[s][n]["R@5"] for s in sets), -names.index(n)))

    held = {}
    for name in results:
        chosen = best_on([s for s in results if s != name])
        held[name] = {"weight": chosen, "R@5": results[name][chosen]["R@5"],
                      "plain_fts5": results[name]["plain_fts5"]["R@5"]}
    return {"held_out": held, "over_all": best_on(list(results))}


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
