"""`harnesslink status` and `harnesslink history` on a long history: time and peak memory of the whole process.

    python benchmarks/status_growth.py [--records 1500000] [--runs 3]

Builds a temporary HOME whose `<agent dir>/history.jsonl` holds `--records` records, written as the writers
write them (`tests.memory_helpers.a_long_history`: sessions given entries, listing them in briefs, opening
some, a pass banking turns), with the ledger rows the same writers keep; then runs `harnesslink status`,
`harnesslink history --all` read for its first 20 lines, and `harnesslink history --all --since` a day no
record reaches (a scan of the whole file), each as its own process, and reports the median wall time and the
largest peak RSS (`os.wait4`'s ru_maxrss of that process).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from tests.memory_helpers import a_long_history, make_env, measured  # noqa: E402

from harnesslink_core.paths import locations  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=1_500_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="status-growth-"))
    try:
        env = make_env(root)
        env["PYTHONPATH"] = os.environ.get("STATUS_GROWTH_CODE", str(REPO))  # another checkout's code: its figures
        locs = locations(env)
        figures = a_long_history(locs, args.records)
        size = os.path.getsize(os.path.join(locs.agent_path, "history.jsonl"))
        print(f"{args.records} records, {size / 1e6:.0f} MB; code from {env['PYTHONPATH']}")
        runs = {"status": ((), None), "history --all (first 20 lines)": (("--all",), 20),
                "history --all --since 2100-01-01": (("--all", "--since", "2100-01-01"), None)}
        for name, (extra, lines) in runs.items():
            verb = name.split()[0]
            results = [measured(env, verb, *extra, lines=lines) for _ in range(args.runs)]
            print(f"  {name}: median {statistics.median(r[0] for r in results):.2f} s, "
                  f"peak RSS {max(r[1] for r in results)} MB")
            if verb == "status":
                given, opened = figures["claude-code"][:2]
                shown = [line for line in results[0][2].splitlines() if line.startswith("claude-code: given")]
                print(f"    {shown[0] if shown else 'no given line'} (written: given {given}, opened {opened})")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
