"""A prompt that arrives while the encoder fills entry vectors: does it get its answer within the hook's deadline?

    python -m benchmarks.prompt_during_fill --home DIR [--entries N] [--every 0.2]

DIR: a quality corpus home (`benchmarks/quality.py`, `meaning_fit.py`): its index is copied to a scratch agent dir
with the newest N entries' encoder vectors deleted, an encoder is started there, and `encoded.fill` makes them
again (as the drain pass, backfill and reindex do) while another process asks the encoder for one prompt's vector
every `--every` seconds, as the prompt hook does (`encoder_client.Encoding`, its deadline). Prints the fill's
entries per second and the prompts' answer times (min / median / p90 / max) and how many came within the
hook's deadline. The same prompts asked with no fill running are the baseline.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.meaning_fit import serving
from benchmarks.quality import env_for
from harnesslink_core import hooks
from harnesslink_core.paths import locations
from harnesslink_core.recall import encoded, encoder_client, index

PROMPTS = ("why does the upload retry twice", "where did we set the cache size", "fix the flaky login test again",
           "what port does the dev server use", "did we pin the numpy version")

ASKER = """
import json, signal, sys, time
from harnesslink_core.paths import locations
from harnesslink_core.recall import encoder_client
env, every, seconds, deadline, prompts = json.loads(sys.argv[1])
locs = locations(env)
stopped = []
signal.signal(signal.SIGTERM, lambda *_: stopped.append(1))
took, end, n = [], time.monotonic() + seconds, 0
while not stopped and time.monotonic() < end:
    asked = encoder_client.Encoding(locs, [prompts[n % len(prompts)]], deadline)
    asked.vectors()
    took.append(asked.took_ms)
    n += 1
    while not stopped and time.monotonic() < min(end, asked.started + every):
        time.sleep(0.01)
print(json.dumps(took))
"""


def ask_prompts(env: dict[str, str], every: float, seconds: float) -> subprocess.Popen:
    args = json.dumps([env, every, seconds, hooks.ENCODER_DEADLINE_MS, PROMPTS])
    return subprocess.Popen([sys.executable, "-c", ASKER, args], stdout=subprocess.PIPE, text=True,
                            env={**env, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)})


def summary(label: str, took: list[float | None]) -> None:
    answered = sorted(t for t in took if t is not None)
    within = sum(1 for t in answered if t <= hooks.ENCODER_DEADLINE_MS)
    if not answered:
        print(f"{label}: {len(took)} prompts, none answered")
        return
    p90 = answered[min(len(answered) - 1, int(0.9 * len(answered)))]
    print(f"{label}: {len(took)} prompts, {within} answered within {hooks.ENCODER_DEADLINE_MS} ms; answer ms min "
          f"{answered[0]:.1f} / median {statistics.median(answered):.1f} / p90 {p90:.1f} / max {answered[-1]:.1f}")


def copy_index(home: Path, locs, newest: int | None) -> None:
    """The home's index at `locs`, with the `newest` entries' vectors deleted (None: every one)."""
    locs.index_file.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(locations(env_for(home)).index_file) as src, sqlite3.connect(locs.index_file) as dst:
        src.backup(dst)
        if newest is None:
            dst.execute("DELETE FROM encoded")
        else:
            dst.execute("DELETE FROM encoded WHERE path IN (SELECT path FROM docs ORDER BY id DESC LIMIT ?)", (newest,))


def stand_in_fill(home: Path) -> int:
    with tempfile.TemporaryDirectory(prefix="hl-fill-") as scratch:
        locs = locations({"HOME": scratch, "HARNESSLINK_HOME": f"{scratch}/agent"})
        copy_index(home, locs, None)
        encoded.encoder_client.encode = lambda _locs, texts, _ms: [[0.1] * encoder_client.DIMS for _ in texts]
        encoded._ready = lambda *_: True
        conn = index.connect(locs, create=False)
        started = time.monotonic()
        made = encoded.fill(conn, locs, start=False)
        conn.close()
        print(f"fill with a stand-in encoder: {made} entries in {time.monotonic() - started:.1f} s")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--entries", type=int, default=1000)
    parser.add_argument("--every", type=float, default=0.2, help="seconds between prompts (0: none during the fill)")
    parser.add_argument("--stand-in", action="store_true",
                        help="no encoder: every entry's vector deleted and made again by a stand-in that answers at "
                             "once, so that only the fill's own reads and writes are timed")
    args = parser.parse_args(argv)
    if args.stand_in:
        return stand_in_fill(args.home)
    with tempfile.TemporaryDirectory(prefix="hl-fill-") as scratch:
        env = {"HOME": scratch, "HARNESSLINK_HOME": f"{scratch}/agent",
               "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
        locs = locations(env)
        copy_index(args.home, locs, args.entries)
        shutil.copytree(locations(env_for(args.home)).memories, locs.memories)
        server = serving(env)
        try:
            summary("no fill", json.loads(ask_prompts(env, args.every or 0.2, 5).communicate()[0]))
            conn = index.connect(locs, create=False)
            asker = ask_prompts(env, args.every, 3600) if args.every > 0 else None
            started = time.monotonic()
            made = encoded.fill(conn, locs, start=False)
            spent = time.monotonic() - started
            conn.close()
            print(f"fill: {made} entries in {spent:.1f} s, {made / spent:.1f} entries/s")
            if asker is not None:
                asker.terminate()
                took = asker.communicate()[0]
                summary("during the fill", json.loads(took) if took else [])
        finally:
            encoder_client.stop(locs)
            server.wait(10)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
