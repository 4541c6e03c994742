"""The push's decision at other bank sizes: the development sets' questions asked of banks of one to five
entries and of their corpus planted among 1,000 entries of real coding work per project.

    python -m benchmarks.bank_sizes --home DIR --real-work FILE [--dump FILE]

DIR is benchmarks/quality.py's home (benchmarks/meaning_fit.py made DIR-eighth and its entry vectors: every
development set's targets are planted there). FILE is benchmarks/real_work.py's output (`--per-project 1000`).
Two corpora are made beside DIR once, each given its entry vectors by an encoder of its own:

- DIR-small: for each question, a project of its own holding the target's entries (its copies) and up to four
  other entries of the target's project, one to five entries in all (a never-done question: one to five
  entries of its project); the question is asked of that project alone;
- DIR-large: DIR-eighth's bank with the real work's entries added to each project; the questions are asked
  as in DIR-eighth.

Each question is asked as `meaning_fit` asks it (by the words alone and judged by meaning, the scope's nearest
entries answered as the encoder answers them) and prints hit@3 and never-done quiet per set and size; `--dump`
writes the records `meaning_fit --fit` reads, keyed `<set> (small)` and `<set> (large)`. Only the development
sets are asked.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
from pathlib import Path

from benchmarks import meaning_fit, quality
from harnesslink_core.paths import locations
from harnesslink_core.recall import index
from harnesslink_core.store.scope import scope_for

DEVELOPMENT = tuple(p for p in quality.ALL_SETS if p.stem.removeprefix("queries_") in
                    {"queries", "heldout", "unseen", "blind", "sixth", "seventh", "eighth"})
SEED = 5


def bank_of(home: Path, project: str) -> Path:
    locs = locations(quality.env_for(home))
    slug = scope_for(locs, quality.cwd_of(project))[0]
    return locs.memories / slug / "bank"


def small_corpus(source: Path, home: Path, data: dict, sets: dict[Path, dict]) -> dict[str, list[tuple]]:
    """DIR-small (see the module docstring): per set, each question's (text, project slug, wanted file names)."""
    rng = random.Random(SEED)
    locs = locations(quality.env_for(source))
    conn = index.connect(locs, create=False)
    try:
        targets = quality._target_paths(conn, data)
    finally:
        conn.close()
    by_id = {t["id"]: t for t in data["targets"]}
    memories = locs.memories
    asked: dict[str, list[tuple]] = {}
    for path, qset in sets.items():
        rows = [(q["query"], by_id[q["target"]]["project"], sorted(targets[q["target"]])) for q in qset["queries"]]
        rows += [(q["query"], q["project"], []) for q in qset["never_done"]]
        asked[path.name] = []
        for n, (text, project, wanted) in enumerate(rows):
            slug = f"small-{path.stem.removeprefix('queries_')}-{n:03d}"
            bank = bank_of(source, project)
            others = sorted(p for p in bank.glob("*.md") if str(p.relative_to(memories)) not in wanted)
            size = rng.randint(1, 5)
            chosen = [memories / w for w in wanted][:size]
            chosen += rng.sample(others, max(0, size - len(chosen)))
            folder = home / ".superpi" / "agent" / "memories" / slug / "bank"
            folder.mkdir(parents=True, exist_ok=True)
            for file in chosen:
                shutil.copy2(file, folder / file.name)
            asked[path.name].append((text, slug, [f"{slug}/bank/{Path(w).name}" for w in wanted
                                                  if memories / w in chosen]))
    return asked


def entry_text(turn: dict, cwd: str, n: int) -> tuple[str, str]:
    """A real-work turn as a bank entry file (its name and Markdown), in the format the stop hook writes."""
    ts = turn["ts"].replace("+00:00", ".000Z")
    title = " ".join(turn["prompt"].split())[:120]
    key = f"{turn['harness']}:real-work:{n:05d}"
    front = ["---", f"id: {json.dumps(ts)}", f"ts: {json.dumps(ts)}", f"title: {json.dumps(title)}",
             "tags:", "  - bash", f"cwd: {json.dumps(cwd)}", f"session_id: \"real-work-{n // 4:05d}\"",
             f"harness: {turn['harness']}", f"turn_key: {json.dumps(key)}", f"source: autobank:{turn['harness']}",
             "---"]
    body = ["", "## Prompt", "", turn["prompt"], "", "## Actions", "",
            f"- bash: {json.dumps({'command': turn['command']}, separators=(',', ':'))}", "", "## Result", "",
            turn["answer"], ""]
    name = f"{re.sub(r'[^0-9A-Za-z]+', '-', ts)}--real-work-{n:05d}.md"
    return name, "\n".join(front + body)


def large_corpus(source: Path, home: Path, real_work: Path) -> None:
    """DIR-large: DIR-eighth's agent dir copied, the real work's turns written into each project's bank."""
    shutil.copytree(source / ".superpi", home / ".superpi", symlinks=True)
    for n, turn in enumerate(json.loads(real_work.read_text(encoding="utf-8"))):
        bank = bank_of(home, turn["project"])
        name, text = entry_text(turn, quality.cwd_of(turn["project"]), n)
        (bank / name).write_text(text, encoding="utf-8")


def ask(home: Path, asked: list[tuple], vectors: dict[str, list[float]]) -> list[dict]:
    """Each question (text, projects, wanted entry paths) asked as `meaning_fit.ask_all` asks it."""
    locs = locations(quality.env_for(home))
    conn = index.connect(locs, create=False)
    nearby = meaning_fit.Nearby(str(locs.index_file))
    try:
        return [meaning_fit.record(conn, nearby, text, projects, frozenset(wanted), vectors[text])
                for text, projects, wanted in asked]
    finally:
        nearby.close()
        conn.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--real-work", type=Path, required=True)
    parser.add_argument("--dump", type=Path)
    args = parser.parse_args(argv)
    source = args.home.with_name(args.home.name + "-eighth")
    planted = next(p for suffix, p, _ in quality.CORPORA if suffix == "-eighth")
    data = quality.corpus_at(source, planted)
    meaning_fit.fill(source)
    sets = {path: json.loads(path.read_text()) for path in DEVELOPMENT}
    texts = sorted({q["query"] for qset in sets.values() for q in (*qset["queries"], *qset["never_done"])})
    vectors = meaning_fit.query_vectors(texts)
    small = args.home.with_name(args.home.name + "-small")
    plan_file = small / "asked.json"
    if not plan_file.exists():
        plan_file.parent.mkdir(parents=True, exist_ok=True)
        plan_file.write_text(json.dumps(small_corpus(source, small, data, sets)))
    small_asked = json.loads(plan_file.read_text())
    large = args.home.with_name(args.home.name + "-large")
    if not (large / ".superpi").exists():
        large_corpus(source, large, args.real_work)
    dumped = {}
    for where, home in (("small", small), ("large", large)):
        index.rebuild(locations(quality.env_for(home)))
        meaning_fit.fill(home)
        for path, qset in sets.items():
            if where == "small":
                asked = [(text, [slug], wanted) for text, slug, wanted in small_asked[path.name]]
            else:
                asked = meaning_fit.questions(home, data, qset)
            records = ask(home, asked, vectors)
            dumped[f"{path.name} ({where})"] = records
            meaning_fit.print_before_after(f"{path.name} ({where})", records)
    if args.dump:
        args.dump.write_text(json.dumps(dumped))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
