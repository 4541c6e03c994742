"""`harnesslink backfill` as a user runs it: the whole command, timed from process start to exit.

    python benchmarks/backfill_command.py REV [--runs 5] [--sessions 100] [--turns 20] [--encoder]

The corpus is real-shaped Claude Code history: `--sessions` sessions of `--turns` finished turns each,
rendered from the transcript the real CLI wrote (benchmarks/corpus.py's template and writer, seed fixed),
all quiet for an hour. Each version (REV, and this checkout) gets the private venv install.py makes
(`environment.build_venv`, pip installing the checkout with its `encoder` extra), kept under --venvs
and rebuilt when its code changed. Every run backfills a fresh HOME, a copy of the corpus made before the
first run; the versions alternate ABBA...

A run is the venv's `bin/harnesslink backfill --days 30`, timed until it has exited and its stdout and
stderr are closed (as `installed.run_once`). Then, at once, the words index is checked ready: every banked
entry in it and found by its words. From the same start, the time until every entry has its static
meaning vector (`meaning`), and with --encoder (the venv linked in as the HOME's own private venv, so the
backfill may start the resident encoder) until every entry has the encoder's vector too, polled every
20 ms, up to --vector-wait seconds. The encoder a run started is stopped before the next run.

Printed per version: turns/s of the whole command (turns in the transcripts over its wall time) min,
median and max, its wall time, the CPU time of the command and of the read-ahead child it reaped (user +
system; the detached job's is not in it), the seconds until the meaning vectors were filled, and the
banked count.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import resource
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks import corpus  # noqa: E402
from benchmarks.installed import clean_env, worktree  # noqa: E402

NOW = time.time()
PROJECTS = 8  # the sessions' cwds, one per corpus domain


def make_corpus(home: Path, sessions: int, turns: int, seed: int = 20) -> int:
    """`sessions` Claude Code sessions of `turns` turns each, over PROJECTS projects, within the last 20 days and
    quiet for an hour; the turns written."""
    rng = random.Random(seed)
    template = corpus.load_template("claude-code")
    sizes = corpus.real_output_sizes()
    domains = list(corpus.DOMAINS)[:PROJECTS]
    writers = {d: corpus.Writer(random.Random(seed * 31 + i), d, sizes) for i, d in enumerate(domains)}
    kinds, weights = zip(*corpus.KIND_MIX)
    for n in range(sessions):
        domain = domains[n % len(domains)]
        specs = [writers[domain].turn(rng.choices(kinds, weights)[0] if i else "bash") for i in range(turns)]
        start = NOW - 3600 - 20 * 86400 * rng.random() - turns * 600
        spec = corpus.SessionSpec("claude-code", f"/home/dev/work/{domain}", start, specs,
                                  str(uuid.UUID(int=rng.getrandbits(128))))
        corpus.write_session(home, spec, {"claude-code": template}, fake_home="/home/dev")
    return sessions * turns


def venv_for(tree: Path, venvs: Path) -> Path:
    """The private venv of `tree`'s code, as install.py makes it; rebuilt when that code changed."""
    from harnesslink_core.wiring import environment

    files = sorted(p for p in (tree / "harnesslink_core").rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    stamp = hashlib.sha256()
    for path in [*files, tree / "pyproject.toml"]:
        stamp.update(str(path.relative_to(tree)).encode() + b"\0" + path.read_bytes())
    target = venvs / stamp.hexdigest()[:16]
    if not (target / ".bench-built").exists():
        shutil.rmtree(target, ignore_errors=True)
        environment.build_venv(target, tree)
        (target / ".bench-built").write_text(str(tree))
    return target


def agent_of(home: Path) -> Path:
    return home / ".superpi" / "agent"


def one_run(venv: Path, home: Path, turns: int, encoder: bool, vector_wait: float) -> dict:
    agent = agent_of(home)
    agent.mkdir(parents=True, exist_ok=True)
    if encoder:  # the HOME's own private venv: the backfill may start the resident encoder
        (agent / "venv").symlink_to(venv)
    env = clean_env(home)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    out = subprocess.run([str(venv / "bin" / "harnesslink"), "backfill", "--days", "30"], env=env,
                         capture_output=True, text=True, cwd=str(home))
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the command and the read-ahead child it reaped
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    if out.returncode:
        raise SystemExit(f"backfill failed ({out.returncode}):\n{out.stdout}\n{out.stderr[-3000:]}")
    index = agent / "memory-index.db"
    banked = words_ready(index)
    static = wait_for(index, "meaning", banked, started, vector_wait)
    encoded = wait_for(index, "encoded", banked, started, vector_wait) if encoder else None
    stop_encoder(venv, env)
    return {"wall": wall, "rate": turns / wall, "cpu": cpu, "banked": banked, "static": static, "encoded": encoded,
            "summary": out.stdout.strip().splitlines()[0]}


def words_ready(index: Path) -> int:
    """The entries the index holds, once it is checked to answer by words (SystemExit when not)."""
    conn = sqlite3.connect(f"file:{index}?mode=ro", uri=True)
    try:
        docs = conn.execute("SELECT count(*) FROM docs").fetchone()[0]
        title = conn.execute("SELECT title FROM docs ORDER BY id LIMIT 1").fetchone()[0]
        word = max(title.split(), key=len).strip("\"'.,:;()[]") or "the"
        found = conn.execute("SELECT count(*) FROM fts WHERE fts MATCH ?", (f'"{word}"',)).fetchone()[0]
    finally:
        conn.close()
    if not docs or not found:
        raise SystemExit(f"the words index is not ready at exit: {docs} entries, {found} found by {word!r}")
    return docs


def wait_for(index: Path, table: str, want: int, started: float, limit: float) -> float | None:
    """Seconds from the run's start until `table` holds a vector for each of `want` entries (None: not within
    `limit`)."""
    while True:
        try:
            conn = sqlite3.connect(f"file:{index}?mode=ro", uri=True, timeout=1.0)
            try:
                have = conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            finally:
                conn.close()
        except sqlite3.Error:
            have = 0
        elapsed = time.perf_counter() - started
        if have >= want:
            return elapsed
        if elapsed > limit:
            return None
        time.sleep(0.02)


def stop_encoder(venv: Path, env: dict[str, str]) -> None:
    subprocess.run([str(venv / "bin" / "harnesslink"), "encoder", "stop"], env=env, capture_output=True)
    # and any process still running from this venv for this HOME (a detached fill): waited for, not killed
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and _running_in(env["HOME"]):
        time.sleep(0.05)
    for pid in _running_in(env["HOME"]):
        os.kill(pid, signal.SIGTERM)


def _running_in(home: str) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if f"HOME={home}".encode() in environ:
            pids.append(int(entry))
    return pids


def alternate(trees: dict[str, Path], scratch: Path, args: argparse.Namespace) -> dict[str, list[dict]]:
    source = scratch / "corpus"
    turns = make_corpus(source, args.sessions, args.turns)
    venvs = {name: venv_for(tree, args.venvs) for name, tree in trees.items()}
    plan = [name for i in range(args.runs) for name in (("before", "after") if i % 2 == 0 else ("after", "before"))]
    homes = [scratch / f"run{n}" / "home" for n in range(len(plan) + 2)]
    for home in homes:
        shutil.copytree(source, home, symlinks=True)
    os.sync()
    for name, home in zip(trees, homes[-2:]):  # one untimed run each: the venvs' first start compiles nothing later
        one_run(venvs[name], home, turns, args.encoder, args.vector_wait)
    results: dict[str, list[dict]] = {name: [] for name in trees}
    for name, home in zip(plan, homes):
        results[name].append(one_run(venvs[name], home, turns, args.encoder, args.vector_wait))
        print(f"  {name}: {results[name][-1]['rate']:,.0f} turns/s", file=sys.stderr)
    return results


def spread(values: list[float | None], fmt: str) -> str:
    known = sorted(v for v in values if v is not None)
    if not known:
        return "not filled"
    text = f"{fmt.format(known[0])} / {fmt.format(statistics.median(known))} / {fmt.format(known[-1])}"
    return text + (f" ({len(values) - len(known)} not filled)" if len(known) < len(values) else "")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rev", help="the version to compare with (a commit)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--turns", type=int, default=20, help="finished turns per session")
    parser.add_argument("--encoder", action="store_true", help="let the backfill start the resident encoder")
    parser.add_argument("--vector-wait", type=float, default=300.0)
    parser.add_argument("--venvs", type=Path, default=Path("/tmp/harnesslink-bench-venvs"))
    args = parser.parse_args()
    args.venvs.mkdir(parents=True, exist_ok=True)
    with worktree(REPO, args.rev) as (base, scratch):
        results = alternate({"before": base, "after": REPO}, scratch, args)
    turns = args.sessions * args.turns
    print(f"harnesslink backfill of {turns:,} turns in {args.sessions} Claude Code sessions, n={args.runs} each,"
          f" encoder {'on' if args.encoder else 'off'} (min / median / max)")
    for name, runs in results.items():
        label = args.rev if name == "before" else "this checkout"
        print(f"{name} ({label}): {spread([r['rate'] for r in runs], '{:,.0f}')} turns/s;"
              f" wall {spread([r['wall'] for r in runs], '{:.2f}')} s; CPU {spread([r['cpu'] for r in runs], '{:.2f}')} s;"
              f" {runs[0]['banked']} banked")
        print(f"    static vectors filled at {spread([r['static'] for r in runs], '{:.2f}')} s"
              + (f"; encoder vectors at {spread([r['encoded'] for r in runs], '{:.2f}')} s" if args.encoder else ""))
    print(f"summary line: {results['after'][0]['summary']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
