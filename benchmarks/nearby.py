"""What the resident encoder's nearest search costs at a bank's size: reading the index's entry vectors, the
memory they hold, and one search of the whole scope (recall/nearby.py), in-process; with --encoder, the
resident encoder process itself holding them.

    python benchmarks/nearby.py --entries 100000 [--runs 30] [--encoder] [--checkout PATH]

The entries are written straight into a fresh index in a temporary folder (one project, random vectors:
the search's cost does not depend on what they mean), numpy's BLAS on one thread as in the encoder.
In-process: the first read's time, the memory it left held (RSS) and its peak above the RSS before it
(VmHWM, reset first through /proc/self/clear_refs), the same for a second read over the first (what the
encoder does after the index changed), then min / median / max of the searches, and the load average.

--encoder starts `python -m harnesslink_core.recall.encoder serve` on the same agent dir before the index is
written and reads its /proc/PID/status: VmRSS once warm (one encode, no vectors), then VmRSS and VmHWM after
its first read of the vectors (a nearest request) and after a reload (one more entry written, a request that
finds the index changed: it reads again after its answer); the peak is reset before each.
--checkout: the package of another checkout (a worktree at an earlier revision), for before/after runs of
this same benchmark.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def fill(locs, entries: int, start: int = 0) -> None:
    import numpy as np

    from harnesslink_core.fastsqlite import Transaction
    from harnesslink_core.recall import encoded, index

    rng = np.random.default_rng(1 + start)
    conn = index.connect(locs)
    try:
        encoded.ensure(conn)
        with Transaction(conn):
            conn.executemany(
                "INSERT INTO docs(path, project, mtime_ns, size, ts, title, harness, source, session_id, turn_key, cwd)"
                " VALUES (?, 'app', 1, 1, ?, 't', 'pi', 'autobank:pi', 's', ?, '/w')",
                [(f"app/bank/{n}.md", float(n), f"k{n}") for n in range(start, start + entries)])
            vectors = rng.integers(1, 256, size=(entries, 384), dtype=np.uint8)
            conn.executemany("INSERT INTO encoded(path, mtime_ns, size, vec) VALUES (?, 1, 1, ?)",
                             [(f"app/bank/{n}.md", vectors[n - start].tobytes()) for n in range(start, start + entries)])
    finally:
        conn.close()


def memory(pid: int | str = "self") -> dict[str, int]:
    """VmRSS and VmHWM of a process, in KB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = int(value.split()[0])
    return fields


def reset_peak(pid: int | str = "self") -> None:
    Path(f"/proc/{pid}/clear_refs").write_text("5")


def timed_read(nearby) -> tuple[float, int, int]:
    """One read of the vectors: seconds, KB held after it and KB of its peak, both above the RSS before it."""
    reset_peak()
    before = memory()["VmRSS"]
    started = time.perf_counter()
    nearby.reload()
    taken = time.perf_counter() - started
    after = memory()
    return taken, after["VmRSS"] - before, after["VmHWM"] - before


def in_process(locs, runs: int) -> str:
    import numpy as np

    from harnesslink_core.recall.nearby import Nearby

    nearby = Nearby(str(locs.index_file))
    first = timed_read(nearby)
    second = timed_read(nearby)
    prompt = np.random.default_rng(2).normal(size=384).astype(np.float32)
    prompt /= np.linalg.norm(prompt)
    timings = []
    for _ in range(runs):
        started = time.perf_counter()
        nearby.nearest(prompt, ["app"], 16)
        timings.append((time.perf_counter() - started) * 1000)
    nearby.close()
    return (f"read in {first[0]:.2f} s, {first[1] >> 10} MB held (peak +{first[2] >> 10} MB); read again in "
            f"{second[0]:.2f} s, {second[1] >> 10} MB more held (peak +{second[2] >> 10} MB); one search min "
            f"{min(timings):.1f} / median {statistics.median(timings):.1f} / max {max(timings):.1f} ms ({runs} runs),"
            f" load {os.getloadavg()[0]:.2f}")


def start_encoder(tmp: str, checkout: Path) -> subprocess.Popen:
    from harnesslink_core.paths import locations
    from harnesslink_core.recall import encoder_client as client

    env = {**os.environ, "HOME": tmp, "HARNESSLINK_HOME": f"{tmp}/agent", "PYTHONPATH": str(checkout)}
    server = subprocess.Popen([sys.executable, "-m", "harnesslink_core.recall.encoder", "serve",
                               "--idle-seconds", "600"], env=env, cwd=tmp, stderr=subprocess.DEVNULL)
    started = time.monotonic()
    while client.status(locations(env), 100) is None:
        if server.poll() is not None or time.monotonic() - started > 60:
            raise SystemExit("the encoder did not start")
        time.sleep(0.05)
    return server


def ask_nearest(locs) -> int:
    from harnesslink_core.recall import encoder_client as client

    answer = client.Encoding(locs, ["why did signing in stop working after midnight"], 60_000, nearest=["app"],
                             limit=16)
    assert answer.nearest(), "no nearest answer"
    client.status(locs, 60_000)  # answered after the reload that follows the answer, if one was due
    return answer.in_scope


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--encoder", action="store_true", help="also the resident encoder process holding them")
    parser.add_argument("--checkout", type=Path, default=ROOT, help="the package of this checkout")
    args = parser.parse_args(argv)
    for name in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # as the encoder runs it (encoder._one_blas_thread)
        os.environ[name] = "1"
    checkout = args.checkout.resolve()
    sys.path.insert(0, str(checkout))
    from harnesslink_core.paths import locations
    from harnesslink_core.recall import encoder_client as client

    with tempfile.TemporaryDirectory() as tmp:
        locs = locations({"HOME": tmp, "HARNESSLINK_HOME": f"{tmp}/agent"})
        server = start_encoder(tmp, checkout) if args.encoder else None
        try:
            if server is not None:
                client.encode(locs, ["the model's first run sets up its buffers"], 60_000)
                warm = memory(server.pid)
                reset_peak(server.pid)
            fill(locs, args.entries)
            print(f"{args.entries} entries ({checkout.name}): {in_process(locs, args.runs)}")
            if server is not None:
                assert ask_nearest(locs) == args.entries
                first = memory(server.pid)
                reset_peak(server.pid)
                fill(locs, 1, start=args.entries)
                ask_nearest(locs)  # answered from the vectors held, then read again
                assert ask_nearest(locs) == args.entries + 1
                again = memory(server.pid)
                print(f"  encoder: warm {warm['VmRSS'] >> 10} MB without vectors; holding them {first['VmRSS'] >> 10}"
                      f" MB (peak {first['VmHWM'] >> 10} MB); after a reload {again['VmRSS'] >> 10} MB (peak "
                      f"{again['VmHWM'] >> 10} MB), load {os.getloadavg()[0]:.2f}")
        finally:
            if server is not None:
                client.stop(locs)
                try:
                    server.wait(10)
                except subprocess.TimeoutExpired:
                    server.kill()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
