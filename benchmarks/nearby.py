"""What the resident encoder's nearest search costs at a bank's size: reading the index's entry vectors, the
memory they hold, and one search of the whole scope (recall/nearby.py), in-process.

    python benchmarks/nearby.py --entries 100000 [--runs 30]

The entries are written straight into a fresh index in a temporary folder (one project, random vectors:
the search's cost does not depend on what they mean). Prints min / median / max of the searches.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from harnesslink_core.fastsqlite import Transaction  # noqa: E402
from harnesslink_core.paths import locations  # noqa: E402
from harnesslink_core.recall import encoded, index  # noqa: E402
from harnesslink_core.recall.encoder import rss_bytes  # noqa: E402
from harnesslink_core.recall.nearby import Nearby  # noqa: E402


def fill(locs, entries: int) -> None:
    rng = np.random.default_rng(1)
    conn = index.connect(locs)
    try:
        encoded.ensure(conn)
        with Transaction(conn):
            conn.executemany(
                "INSERT INTO docs(path, project, mtime_ns, size, ts, title, harness, source, session_id, turn_key, cwd)"
                " VALUES (?, 'app', 1, 1, ?, 't', 'pi', 'autobank:pi', 's', ?, '/w')",
                [(f"app/bank/{n}.md", float(n), f"k{n}") for n in range(entries)])
            vectors = rng.integers(1, 256, size=(entries, 384), dtype=np.uint8)
            conn.executemany("INSERT INTO encoded(path, mtime_ns, size, vec) VALUES (?, 1, 1, ?)",
                             [(f"app/bank/{n}.md", vectors[n].tobytes()) for n in range(entries)])
    finally:
        conn.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        locs = locations({"HOME": tmp, "HARNESSLINK_HOME": f"{tmp}/agent"})
        fill(locs, args.entries)
        before = rss_bytes()
        nearby = Nearby(str(locs.index_file))
        started = time.perf_counter()
        nearby.reload()
        loaded = time.perf_counter() - started
        grown = rss_bytes() - before
        prompt = np.random.default_rng(2).normal(size=384).astype(np.float32)
        prompt /= np.linalg.norm(prompt)
        timings = []
        for _ in range(args.runs):
            started = time.perf_counter()
            nearby.nearest(prompt, ["app"], 16)
            timings.append((time.perf_counter() - started) * 1000)
        nearby.close()
    print(f"{args.entries} entries: read in {loaded:.2f} s, {grown >> 20} MB held; one search "
          f"min {min(timings):.1f} / median {statistics.median(timings):.1f} / max {max(timings):.1f} ms "
          f"({args.runs} runs)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
