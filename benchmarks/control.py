"""The costs of user control: the exclusion check on every prompt, and `forget` on a large bank.

    python benchmarks/control.py [--entries 10000]

Runs in a temporary HOME; prints its figures, asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["HOME"] = str(Path(tmp) / "home")
        os.environ.pop("HARNESSLINK_HOME", None)
        from harnesslink_core.clock import iso
        from harnesslink_core.control import exclusion, forget
        from harnesslink_core.paths import locations
        from harnesslink_core.recall import index
        from tests.memory_helpers import write_entry

        locs = locations()
        cwd = str(Path(tmp) / "home" / "code" / "a" / "b" / "c")
        os.makedirs(cwd)
        os.makedirs(str(locs.agent_dir), exist_ok=True)
        config = os.path.join(str(locs.agent_dir), "config.yml")
        with open(config, "w") as f:
            f.write("memory:\n  exclude:\n    - ~/clients/*\n    - scratch-*\n")
        exclusion.is_excluded(locs, cwd)  # writes the glob cache
        print(f"is_excluded, 2 globs, cache warm, cwd 7 folders deep: {_per_call(lambda: exclusion.is_excluded(locs, cwd)):.0f} µs")
        os.unlink(config)
        print(f"is_excluded, no config.yml: {_per_call(lambda: exclusion.is_excluded(locs, cwd)):.0f} µs")

        for i in range(args.entries):
            write_entry(locs, f"/home/dev/p{i % 8}", title=f"Turn number {i} about topic {i % 97}", result="x" * 300,
                        ts=iso(1.7e9 + i * 60), session_id=f"sess-{i % 200:03d}", turn_id=f"t{i}")
        index.rebuild(locs)
        started = time.perf_counter()
        targets = forget.select(locs, session="sess-007")
        selected = time.perf_counter() - started
        started = time.perf_counter()
        done = forget.forget(locs, targets)
        forgotten = time.perf_counter() - started
        started = time.perf_counter()
        hits = forget.select(locs, query="topic 42", projects=["--home-dev-p3--"])
        queried = time.perf_counter() - started
        print(f"{args.entries:,} entries in 8 projects: select --session {selected * 1000:.0f} ms "
              f"({len(targets)} entries); forget them {forgotten * 1000:.0f} ms ({len(done.forgotten)} files, "
              f"{done.index_rows} index rows, {done.main_lines} MAIN.md lines); "
              f"select --query in one project {queried * 1000:.0f} ms ({len(hits)} entries)")
    return 0


def _per_call(fn, n: int = 2000) -> float:
    started = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - started) / n * 1e6


if __name__ == "__main__":
    raise SystemExit(main())
