"""The resident encoder's figures, in a temporary agent dir: `python benchmarks/encoder.py [--rounds N]`.

- ready: from spawning `python -m harnesslink_core.recall.encoder serve` to its first answer (target ≤ 2 s);
- RSS once warm, and after the batches (≤ 300 MB);
- idle CPU: the process's CPU ticks over a few quiet seconds (none: it blocks in its selector);
- one prompt, end to end from a client process: a fresh interpreter imports the client, connects,
  asks and reads the vector (the client's own time, and the whole process's);
- entries per second for batches of real entry texts (the prompts and results of tests/fixtures/real,
  repeated to the batch size; ≥ 100/s on a 2-core machine), and of the short ones alone (≤ 300 characters);
  with each, entries per second of the server's CPU (user + system): on a loaded machine the wall-clock rate
  is the share of the cores it got, this one is not.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harnesslink_core.paths import locations  # noqa: E402
from harnesslink_core.recall import encoder_client as client  # noqa: E402

ONE_PROMPT = ("import sys, time\nstart = time.perf_counter()\nfrom harnesslink_core.paths import locations\n"
              "from harnesslink_core.recall import encoder_client\n"
              "v = encoder_client.encode(locations(), [sys.argv[1]], 1000)\n"
              "assert v is not None and len(v[0]) == 384\n"
              "print(time.perf_counter() - start)\n")
PROMPT = "why did signing in stop working right after 12am? something with the session cookie"


def entry_texts() -> list[str]:
    sys.path.insert(0, str(ROOT / "scripts"))
    from build_encoder import real_texts

    return real_texts()


def ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=20, help="one-prompt runs")
    parser.add_argument("--idle", type=float, default=3.0, help="seconds of idle CPU measured")
    args = parser.parse_args(argv)
    print(json.dumps(measure(args.rounds, args.idle), indent=2))
    return 0


def measure(rounds: int, idle: float) -> dict[str, object]:
    """The figures of the module docstring (benchmarks/run.py prints them too)."""
    figures: dict[str, object] = {"cores": os.cpu_count(), "load_before": os.getloadavg()[0]}
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "HOME": tmp, "HARNESSLINK_HOME": f"{tmp}/agent", "PYTHONPATH": str(ROOT)}
        locs = locations(env)
        started = time.monotonic()
        server = subprocess.Popen([sys.executable, "-m", "harnesslink_core.recall.encoder", "serve",
                                   "--idle-seconds", "300"], env=env, stderr=subprocess.DEVNULL)
        try:
            while client.status(locs, 100) is None:
                if server.poll() is not None or time.monotonic() - started > 30:
                    raise SystemExit("the encoder did not start")
                time.sleep(0.005)
            figures["ready_s"] = round(time.monotonic() - started, 3)
            client.encode(locs, [PROMPT], 5000)  # the first run sets up the model's buffers
            figures["rss_warm_mb"] = client.status(locs)["rss_bytes"] >> 20

            before = ticks(server.pid)
            time.sleep(idle)
            figures["idle_cpu_ticks"] = ticks(server.pid) - before
            figures["idle_seconds_measured"] = idle

            inside, whole = [], []
            for _ in range(rounds):
                t = time.perf_counter()
                out = subprocess.run([sys.executable, "-S", "-c", ONE_PROMPT, PROMPT], env=env, capture_output=True,
                                     text=True, check=True)
                whole.append(time.perf_counter() - t)
                inside.append(float(out.stdout))
            figures["one_prompt_client_ms_median"] = round(statistics.median(inside) * 1000, 2)
            figures["one_prompt_client_ms_max"] = round(max(inside) * 1000, 2)
            figures["one_prompt_process_ms_median"] = round(statistics.median(whole) * 1000, 1)

            texts = entry_texts()
            short = [text for text in texts if len(text) <= 300]  # a prompt, a title: a few dozen tokens
            for name, pool in (("entries", texts), ("short", short)):
                for size in (32, 128):
                    batch = (pool * (size // len(pool) + 1))[:size]
                    t, cpu = time.perf_counter(), ticks(server.pid)
                    assert client.encode(locs, batch, 120_000) is not None
                    figures[f"{name}_per_s_batch_{size}"] = round(size / (time.perf_counter() - t), 1)
                    spent = (ticks(server.pid) - cpu) / os.sysconf("SC_CLK_TCK")
                    figures[f"{name}_per_cpu_s_batch_{size}"] = round(size / max(spent, 0.01), 1)
            figures["rss_after_batches_mb"] = client.status(locs)["rss_bytes"] >> 20
        finally:
            client.stop(locs)
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                server.kill()
    figures["load_after"] = os.getloadavg()[0]
    return figures


if __name__ == "__main__":
    raise SystemExit(main())
