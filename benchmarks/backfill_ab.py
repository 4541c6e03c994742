"""Backfill throughput of this checkout against an earlier commit, alternated on identical copies of one corpus.

    python benchmarks/backfill_ab.py REV [--runs 12] [--turns 1000]

The corpus is `run.py --quick`'s (benchmarks/corpus.py, seed = turns). Every run gets its own copy of it,
all made before the first run, so no run backfills into a folder another has just emptied (creating files
where many were deleted is slower on this machine's file system). The two versions alternate ABBA...;
each run is a process of its own with HOME in the copy, timing `drain` as run.py does. Printed: banked
turns per second (median, spread), the process's CPU and its main thread's.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks import corpus  # noqa: E402
from benchmarks.installed import worktree  # noqa: E402

CHILD = r"""
import json, os, sys, time
home = sys.argv[1]
from harnesslink_core.paths import locations
from harnesslink_core.banking import autobank
locs = locations({"HOME": home, "HARNESSLINK_HOME": home + "/.superpi/agent"})
t, c, m = time.perf_counter(), os.times(), time.thread_time()
r = autobank.drain(locs, harnesses=autobank.widen_window(locs, 30))
c2 = os.times()
print(json.dumps({"seconds": time.perf_counter() - t, "banked": r.banked, "errors": r.errors,
                  "cpu": c2.user - c.user + c2.system - c.system, "main": time.thread_time() - m}))
"""


def backfill(tree: Path, home: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HARNESSLINK", "CLAUDE_", "CODEX_", "PI_"))}
    env.update(HOME=str(home), PYTHONPATH=str(tree))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode cached, as an installed venv has it
    out = subprocess.run([sys.executable, "-c", CHILD, str(home)], env=env, cwd=tree, capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rev")
    parser.add_argument("--runs", type=int, default=12)
    parser.add_argument("--turns", type=int, default=1000)
    args = parser.parse_args()
    with worktree(REPO, args.rev) as (base, work):
        results = alternate(base, work, args)
    for name in ("before", "after"):
        runs = results[name]
        rates = sorted(r["banked"] / r["seconds"] for r in runs)
        cpu, main_thread = (statistics.median(r[key] for r in runs) * 1e3 for key in ("cpu", "main"))
        print(f"{name} ({args.rev if name == 'before' else 'this checkout'}): median"
              f" {statistics.median(rates):,.0f} banked turns/s ({rates[0]:,.0f}-{rates[-1]:,.0f}, n={len(rates)}),"
              f" {runs[0]['banked']} banked; process CPU {cpu:.0f} ms, main thread {main_thread:.0f} ms")


def alternate(base: Path, work: Path, args: argparse.Namespace) -> dict[str, list[dict]]:
    """Each version's backfills, ABBA..., each into its own copy of one corpus."""
    source = work / "corpus" / "home"
    source.mkdir(parents=True)
    corpus.generate(source, args.turns, seed=args.turns)
    trees = {"after": REPO, "before": base}
    plan = [name for i in range(args.runs) for name in (("before", "after") if i % 2 == 0 else ("after", "before"))]
    homes = []
    for n in range(len(plan)):
        homes.append(work / f"run{n}" / "home")
        shutil.copytree(source, homes[-1], symlinks=True)
    os.sync()
    results: dict[str, list[dict]] = {"before": [], "after": []}
    for name, home in zip(plan, homes):
        results[name].append(backfill(trees[name], home))
    return results


if __name__ == "__main__":
    main()
