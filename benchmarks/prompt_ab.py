"""The prompt hook of two or more checkouts, interleaved, whole process, as installed.

    git worktree add /tmp/base <rev>
    python benchmarks/prompt_ab.py --entries 10000 --runs 30 --checkout A=/tmp/base --checkout B=. \
        [--case encoder absent plain] [--venvs DIR]

Each checkout gets its private venv (benchmarks/installed.py, the installer's own code, kept in `--venvs`), its
own copy of hook_latency.py's cached realistic world per case, and, for `encoder`, its own resident encoder
started from its own code. Cases: `encoder` (vectors made, the encoder answering), `absent` (vectors made, no
encoder at the socket), `plain` (no vectors, no encoder). The vectors are hook_latency.py's (`encode_world`,
2,000 made, the rest copied by topic). Every case of every checkout runs round-robin with each venv's
`python -c pass`; ratios are over the pooled median of those, of the wall time and (beside it, less moved by a
loaded machine) of the CPU time each hook process used. Before timing, the answer's byte count of each
checkout is printed per case, and whether the bytes are the same in every checkout (each world's HOME written
`<home>`); the exit status is 1 when they are not.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks import hook_latency as hl  # noqa: E402
from benchmarks import installed  # noqa: E402
from harnesslink_core.paths import locations  # noqa: E402
from harnesslink_core.recall import encoder_client  # noqa: E402


def venv_of(checkout: Path, folder: Path) -> installed.Installed:
    """The checkout's private venv, built by its own benchmarks/installed.py."""
    code = (f"import sys; sys.path.insert(0, {str(checkout)!r}); from pathlib import Path; "
            f"from benchmarks import installed; print(installed.build(Path({str(folder)!r})).folder)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return installed.Installed(Path(out.stdout.strip().splitlines()[-1]))


def start_encoder(checkout: Path, env: dict[str, str], entries: int) -> subprocess.Popen:
    server = subprocess.Popen([sys.executable, "-m", "harnesslink_core.recall.encoder", "serve", "--idle-seconds",
                               "3600"], env={**env, "PYTHONPATH": str(checkout)}, cwd="/", stderr=subprocess.DEVNULL)
    while encoder_client.status(locations(env), 100) is None:
        if server.poll() is not None:
            raise SystemExit(f"the encoder of {checkout} did not start")
        time.sleep(0.05)
    time.sleep(3 if entries >= 100_000 else 0.5)  # its vectors read, as between two prompts
    # its first encode untimed, as before any prompt but the first (a cold first inference came past the hook's
    # 30 ms on a loaded machine, and that checkout's first answer, by the words, differed from the others')
    encoder_client.Encoding(locations(env), [hl.PROMPTS[-1]], 10_000, nearest=["warm-up"], limit=1).vectors()
    return server


def answer_bytes(hook: Path, env: dict[str, str]) -> bytes:
    """What the hook prints for the first prompt, its world's HOME written `<home>` (each checkout has its own copy)."""
    out = subprocess.run([str(hook), "user-prompt-submit", "--harness", "codex"], env=env, capture_output=True,
                         input=json.dumps({"session_id": "check", "cwd": hl.CWD, "prompt": hl.PROMPTS[0]}).encode())
    return out.stdout.replace(env["HOME"].encode(), b"<home>")


def same_answers(kind: str, answers: dict[str, bytes]) -> bool:
    """Prints the answers' sizes and whether every checkout printed the same bytes; True if they did."""
    same = len(set(answers.values())) == 1
    sizes = {name: len(data) for name, data in answers.items()}
    print(f"{kind}: answer bytes {sizes}, {'the same in every checkout' if same else 'DIFFERENT'}")
    return same


def timed(case: installed.Case) -> tuple[float, float]:
    """One run's wall ms, and the CPU ms (user + system) of the process it ran and of the children it waited
    for: less moved by a loaded machine than the wall time (what a harness waits for, the figure that counts)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    took = case.run()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return took, (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--checkout", action="append", required=True, help="NAME=PATH, in the order shown")
    parser.add_argument("--case", nargs="+", default=["encoder", "absent", "plain"],
                        choices=["encoder", "absent", "plain"])
    parser.add_argument("--venvs", type=Path, default=REPO / ".cache" / "prompt-ab")
    args = parser.parse_args()
    checkouts = {name: Path(path).resolve() for name, path in (c.split("=", 1) for c in args.checkout)}
    venvs = {name: venv_of(path, args.venvs / name) for name, path in checkouts.items()}
    if {"encoder", "absent"} & set(args.case):
        hl.encode_world(args.entries, 2000)
    root = Path(tempfile.mkdtemp(prefix="hl-ab-"))
    servers = []
    samples: dict[str, list[float]] = {}
    cpu: dict[str, list[float]] = {}
    try:
        cases = {f"bare {name}": installed.Case([str(v.python), "-c", "pass"], installed.clean_env(root))
                 for name, v in venvs.items()}
        for seed, (kind, name) in enumerate(((k, n) for k in args.case for n in checkouts), 10):
            env, stamp = hl.world(root / f"{kind}-{name}", args.entries, worst=False)
            if kind == "plain":
                hl._forget_vectors(env)
            if kind == "encoder":
                servers.append(start_encoder(checkouts[name], env, args.entries))
            cases[f"{kind} {name}"] = hl.prompt_case(venvs[name].hook, env, stamp, hl.PROMPTS, seed)
        differ = [kind for kind in args.case if not same_answers(
            kind, {n: answer_bytes(venvs[n].hook, cases[f"{kind} {n}"].env) for n in checkouts})]
        load_before = " ".join(Path("/proc/loadavg").read_text().split()[:3])
        for name, case in cases.items():
            case.run()  # one untimed run each: caches warm
        for _ in range(args.runs):
            for name, case in cases.items():
                took, used = timed(case)
                samples.setdefault(name, []).append(took)
                cpu.setdefault(name, []).append(used)
    finally:
        for server in servers:
            server.kill()
            server.wait(10)
        shutil.rmtree(root, ignore_errors=True)
    bare = statistics.median([t for name in venvs for t in samples[f"bare {name}"]])
    bare_cpu = statistics.median([t for name in venvs for t in cpu[f"bare {name}"]])
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    print(f"{args.entries:,} entries, {args.runs} interleaved runs, load average {load_before} before, {load} after; "
          f"baseline: the venvs' `python -c pass`, pooled median {bare:.1f} ms (CPU {bare_cpu:.1f} ms)")
    for name, times in samples.items():
        low, mid, high = min(times), statistics.median(times), max(times)
        used = statistics.median(cpu[name])
        print(f"  {name:14} min {low:6.1f} median {mid:6.1f} max {high:6.1f} ms   "
              f"x {low / bare:.2f} / {mid / bare:.2f} / {high / bare:.2f}   CPU median {used:5.1f} ms, x {used / bare_cpu:.2f}")
    if differ:
        print(f"the checkouts answered differently: {', '.join(differ)}")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
