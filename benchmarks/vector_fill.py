"""What meaning vectors cost: the fill per entry (write path), the prompt-side vector, and the scan.

    python -m benchmarks.vector_fill --home DIR    # DIR: a quality corpus (benchmarks/quality.py builds one)
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import quality  # noqa: E402
from harnesslink_core.paths import locations  # noqa: E402
from harnesslink_core.recall import index, meaning, vectors  # noqa: E402


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, required=True)
    args = parser.parse_args(argv)
    locs = locations(quality.env_for(args.home))
    conn = index.connect(locs)
    try:
        conn.execute("DELETE FROM meaning")
        entries = conn.execute("SELECT count(*) FROM docs").fetchone()[0]
        started = time.perf_counter()
        made = vectors.fill(conn)
        took = time.perf_counter() - started
        print(f"fill: {made} of {entries} entries in {took:.2f} s = {1000 * took / max(made, 1):.2f} ms per entry")
        model = meaning.load()
        prompts = [q["query"] for q in __import__("json").loads(quality.QUERIES.read_text())["queries"]]
        times = []
        for prompt in prompts:
            model._pieces.clear()
            t = time.perf_counter()
            model.vector(prompt)
            times.append(time.perf_counter() - t)
        print(f"prompt vector (cold word cache): median {1000 * statistics.median(times):.2f} ms")
        projects = [row[0] for row in conn.execute("SELECT project FROM docs GROUP BY project ORDER BY count(*) DESC")]
        times = []
        for prompt in prompts:
            v = model.vector(prompt)
            t = time.perf_counter()
            vectors.nearest(conn, v, projects[:1])
            times.append(time.perf_counter() - t)
        size = conn.execute("SELECT length(ids) / 8 FROM meaning_packs WHERE project = ?", projects[:1]).fetchone()[0]
        print(f"nearest over {size} entries of one project: median {1000 * statistics.median(times):.2f} ms")
        for n in (10_000, 100_000):
            codes = random.Random(n).randbytes(vectors.CODE_BYTES * n)
            times = []
            for _ in range(7):
                t = time.perf_counter()
                vectors._closest_slots(random.getrandbits(8 * vectors.CODE_BYTES), codes, n, vectors.RESCORE)
                times.append(time.perf_counter() - t)
            print(f"code scan alone over {n:,} codes: median {1000 * statistics.median(times):.2f} ms")
    finally:
        conn.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
