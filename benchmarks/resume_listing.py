"""`harnesslink resume` listing speed on a crowded machine (never read a whole transcript to list).

    python benchmarks/resume_listing.py [--rollouts 2000] [--big-mb 100] [--runs 5]

Builds a temporary HOME with `--rollouts` Codex rollouts (one in ten in the listed folder, each with a 20 KB
`session_meta` as Codex writes) and 20 Claude Code sessions in the folder, the newest of them `--big-mb` MB;
then times `list_sessions` in-process and the whole `harnesslink resume --json` command as a subprocess.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.session_builders import ClaudeWriter, CodexWriter, filler  # noqa: E402


def build(home: Path, cwd: str, rollouts: int, big_mb: int) -> None:
    for i in range(rollouts):
        sid = f"019c8bfe-0000-7000-8000-{i:012d}"
        writer = CodexWriter(home / ".codex" / "sessions" / "2026" / "11" / f"{i % 28 + 1:02d}" /
                             f"rollout-2026-11-01T10-00-00-{sid}.jsonl", cwd if i % 10 == 0 else f"/elsewhere/{i}", sid)
        writer.lines[0]["payload"]["base_instructions"] = {"text": filler(20_000, i)}
        writer.turn(1, 2_000)
        writer.write()
    folder = home / ".claude" / "projects" / "".join(c if c.isalnum() else "-" for c in cwd)
    for i in range(20):
        writer = ClaudeWriter(folder / f"aaaaaaaa-0000-0000-0000-{i:012d}.jsonl", cwd)
        for n in range(5):
            writer.turn(n, 3_000)
        path = writer.write()
        if i == 19:  # the newest: big_mb of older history between its first line and its last turns
            first, rest = path.read_text().split("\n", 1)
            junk = json.dumps({"type": "progress", "data": "x" * (1024 * 1024 - 40)}) + "\n"
            path.write_text(first + "\n" + junk * big_mb + rest)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rollouts", type=int, default=2000)
    parser.add_argument("--big-mb", type=int, default=100)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="resume-bench-"))
    try:
        home, cwd = root / "home", str(root / "app")
        os.makedirs(cwd)
        build(home, cwd, args.rollouts, args.big_mb)
        from harnesslink_core.paths import locations
        from harnesslink_core.sessions.base import list_sessions

        locs = locations({"HOME": str(home)})
        inproc, command = [], []
        for _ in range(args.runs):
            start = time.perf_counter()
            found = list_sessions(locs, cwd, limit=10)
            inproc.append(time.perf_counter() - start)
            start = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "harnesslink_core.main", "resume", "--cwd", cwd, "--json"],
                                  env={**os.environ, "HOME": str(home), "PYTHONPATH": str(REPO)},
                                  capture_output=True, text=True, check=True)
            command.append(time.perf_counter() - start)
        assert len(json.loads(done.stdout)["sessions"]) == 10 and found[0].size > args.big_mb * 1024 * 1024
        print(f"{args.rollouts} Codex rollouts + 20 Claude sessions (newest {args.big_mb} MB): "
              f"list_sessions median {statistics.median(inproc) * 1000:.0f} ms, "
              f"`harnesslink resume --json` median {statistics.median(command) * 1000:.0f} ms")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
