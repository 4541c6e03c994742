"""What a process's first long text costs `redact`: a fresh interpreter each run, the CPU time of its first
call over a long text (past `engine.LONG`: the long path, which reads what each rule needs), then of a second
call over the same text. Every process that redacts a long text pays the first: the detached banking pass, the
CLI's output past 16 KB, the memory server, the viewer.

    python benchmarks/redact_first_long.py [--old CHECKOUT] [--runs 10]

The text is the real transcripts' strings (tests/fixtures/real/) joined until 64 KB. With --old, the same runs
go through that checkout's package too (PYTHONPATH, interleaved), and the medians of both are printed."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

RUN = """
import json, sys, time
text = sys.stdin.read()
from harnesslink_core.redact import redact
t = time.process_time(); first = redact(text); t1 = time.process_time(); redact(text + " "); t2 = time.process_time()
print(json.dumps([t1 - t, t2 - t1]))
"""


def long_text(size: int = 64 * 1024) -> str:
    from benchmarks.redact_speed import strings

    out, total = [], 0
    for s in strings():
        out.append(s)
        total += len(s) + 1
        if total >= size:
            break
    return "\n".join(out)


def one_run(package_root: Path, text: str) -> tuple[float, float]:
    env = {**os.environ, "PYTHONPATH": str(package_root)}
    done = subprocess.run([sys.executable, "-c", RUN], input=text, capture_output=True, text=True, env=env,
                          cwd="/", check=True)
    first, again = json.loads(done.stdout)
    return first, again


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--old", type=Path, help="a checkout whose package is timed beside this one")
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args(argv)
    text = long_text()
    roots = {"this": ROOT, **({"old": args.old.resolve()} if args.old else {})}
    got: dict[str, list[tuple[float, float]]] = {name: [] for name in roots}
    for _ in range(args.runs):
        for name, root in roots.items():
            got[name].append(one_run(root, text))
    print(f"{len(text):,} characters, {args.runs} fresh processes each (CPU seconds, median and range)")
    for name, runs in got.items():
        firsts, agains = [f for f, _ in runs], [a for _, a in runs]
        print(f"{name:5} first long text {statistics.median(firsts):.3f} ({min(firsts):.3f}-{max(firsts):.3f})"
              f"   the same again {statistics.median(agains):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
