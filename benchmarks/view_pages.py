"""`harnesslink view`: how long each page takes over a project of N entries.

    python benchmarks/view_pages.py [--entries 5000] [--runs 7]

Writes N entries in four harnesses over 28 days into a temporary HOME, brings the index up to date
once (after the two seconds a just-written folder is distrusted for), serves the app on a free loopback port from a thread (`view.make_server`) and times each page
over HTTP, the median of `--runs` requests (the first, which compiles the template, included).
"""

from __future__ import annotations

import argparse
import http.client
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

WORDS = ["checkout", "cart", "login", "cookie", "session", "deploy", "docker", "rounding", "discount", "invoice", "cache", "redis", "queue", "worker", "flaky", "test", "migration", "schema"]
HARNESSES = ("codex", "pi", "omp", "claude-code")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        from memory_helpers import make_env, make_locs, write_entry

        os.environ.update(make_env(Path(tmp)))
        locs = make_locs(Path(tmp))
        rng = random.Random(1)
        for i in range(args.entries):
            write_entry(locs, "/code/big", title=" ".join(rng.sample(WORDS, 4)) + f" {i}",
                        result=" ".join(rng.sample(WORDS, 8)), harness=HARNESSES[i % 4], session_id=f"s{i}",
                        ts=f"2026-11-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:{i // 60 % 60:02d}.{i % 1000:03d}Z",
                        turn_id=f"t{i}")
        from harnesslink_core.commands import view
        from harnesslink_core.recall import index

        time.sleep(index.RACY_SECONDS)  # a bank folder written this instant is rescanned on every look
        index.refresh(locs)
        token = "t" * 32
        server = view.make_server(locs, token, 0, "/code/big")
        threading.Thread(target=server.serve_forever, daemon=True).start()
        print(f"{args.entries} entries, median of {args.runs} requests")
        try:
            for path in ("/", "/p/--code-big--", "/search?q=checkout+rounding+cookie&p=--code-big--",
                         "/p/--code-big--/brief", "/given"):
                times = []
                for _ in range(args.runs):
                    started = time.perf_counter()
                    conn = http.client.HTTPConnection("127.0.0.1", server.server_port, timeout=30)
                    conn.request("GET", f"/{token}{path}")
                    response = conn.getresponse()
                    size = len(response.read())
                    conn.close()
                    times.append(time.perf_counter() - started)
                    assert response.status == 200, (path, response.status)
                print(f"  {path:52s} {size:7,d} bytes  {statistics.median(times) * 1000:6.1f} ms")
        finally:
            server.shutdown()
            server.server_close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
