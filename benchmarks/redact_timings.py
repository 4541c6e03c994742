"""The timings the redaction engine's choices rest on (not part of the tests), each the best of `--repeat`
runs, in CPU time:

    python benchmarks/redact_timings.py [--repeat 5]

Each line names the choice it is for (benchmarks/reports/2026-12-02-redact-timings.md reads them)."""

from __future__ import annotations

import argparse
import random
import re
import string
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

MB = 1 << 20


def best(repeat: int, fn, *args) -> float:
    """The least CPU time of `repeat` calls, in seconds."""
    times = []
    for _ in range(repeat):
        t = time.process_time()
        fn(*args)
        times.append(time.process_time() - t)
    return min(times)


def per_call(repeat: int, fn, calls: int) -> float:
    """The CPU time of one of `calls` calls of `fn`, best of `repeat` rounds, in seconds."""
    return best(repeat, lambda: [fn() for _ in range(calls)]) / calls


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    n = ap.parse_args(argv).repeat
    from harnesslink_core import redact
    from harnesslink_core.redaction import engine, gates
    from harnesslink_core.redaction import rules as table

    rules = table.load()
    pick = random.Random(7)
    words = "".join(pick.choices(string.ascii_lowercase + "     \n", k=MB))

    starts = sorted({s for rule in rules if rule.inside is not None for s in rule.inside[0]})
    find_all = best(n, lambda: [words.find(s) for s in starts])
    print(f"rule starts looked for in a long text: {len(starts)}; a `find` of each over 1 MB: "
          f"{find_all * 1000:.1f} ms ({find_all / len(starts) * 1000:.2f} ms each)")

    fast = [r for r in rules if r.scans_fast]
    slow = [r for r in rules if not r.scans_fast]
    fast_ms = sorted(best(n, r.pattern.search, words) * 1000 for r in fast)
    slow_ms = sorted(best(n, r.pattern.search, words) * 1000 for r in slow)
    print(f"a scan of 1 MB, rules that start with a character (Rule.scans_fast, {len(fast)}): "
          f"{fast_ms[len(fast_ms) // 10]:.1f}-{fast_ms[-len(fast_ms) // 10]:.1f} ms (10th-90th percentile); "
          f"the others ({len(slow)}): {slow_ms[len(slow_ms) // 10]:.1f}-{slow_ms[-len(slow_ms) // 10]:.1f} ms")

    # a match tried where its start is, as `_windowed` tries it: a near miss every 512 characters
    planted = "".join(words[i:i + 500] + " cookie ghp_" for i in range(0, MB, 512))
    boundary = next(r for r in rules if r.kind == "cookie")  # starts with the look-behind boundary
    scan = best(n, boundary.pattern.search, planted)
    places = [m.start() for m in re.finditer("cookie", planted)]
    match = best(n, lambda: [boundary.pattern.match(planted, i) for i in places]) / len(places)
    print(f"_DENSE_NEAR: a scan of a boundary rule (cookie), per position: {scan / len(planted) * 1e9:.0f} ns; "
          f"a `match` at a place of its start: {match * 1e6:.2f} us "
          f"({match / (scan / len(planted)):.0f} positions' worth)")

    github = next(r for r in rules if r.kind == "github-token")
    fast_scan = best(n, github.pattern.search, planted)
    places = [m.start() for m in re.finditer("ghp_", planted)]
    fast_match = best(n, lambda: [github.pattern.match(planted, i) for i in places]) / len(places)
    print(f"_most_tried: a scan of 1 MB by a fast rule (github-token) costs {fast_scan / fast_match:,.0f} "
          f"`match` calls at places of its start")

    strings = tuple(starts)
    gates._AUTOMATA.clear()
    build_nfa = best(1, gates.automaton, strings)
    gates._AUTOMATA.clear()
    build_dfa = best(1, gates.automaton, strings, True)
    nfa, dfa = gates.automaton(strings), gates.automaton(strings, True)
    scan_nfa = best(n, lambda: nfa.find_matches_as_indexes(words, overlapping=True))
    scan_dfa = best(n, lambda: dfa.find_matches_as_indexes(words, overlapping=True))
    print(f"automaton over the starts: build {build_nfa * 1000:.2f} ms, DFA {build_dfa * 1000:.2f} ms; "
          f"a scan of 1 MB {scan_nfa * 1000:.1f} ms, DFA {scan_dfa * 1000:.1f} ms")

    line = "Run the tests with pytest -q and then open the report in the browser, fixing what fails"
    keywords = table.KEYWORD_STRINGS
    ac = gates.automaton(keywords)
    gate_ac = per_call(n, lambda: ac.find_matches_as_indexes(line, overlapping=True), 2000)
    gate_in = per_call(n, lambda: [kw in line for kw in keywords], 2000)
    gates._AUTOMATA.clear()
    gate_build = best(1, gates.automaton, keywords)
    load = subprocess.run([sys.executable, "-X", "importtime", "-c", "import ahocorasick_rs"], capture_output=True,
                          text=True).stderr.splitlines()[-1].split("|")[1].strip()
    print(f"_gated, a line against the {len(keywords)} keywords: automaton {gate_ac * 1e6:.1f} us, an `in` each "
          f"{gate_in * 1e6:.1f} us; the automaton's build {gate_build * 1000:.2f} ms, "
          f"its import {int(load) / 1000:.2f} ms")

    tags = "<private>" * (MB // 9)
    span = best(n, redact._PRIVATE_SPAN.sub, redact.PRIVATE, tags)
    ours = best(n, redact.hide_private, tags)
    dotted = best(n, ("\u0130" * MB).lower)
    print(f"hide_private over 1 MB of `<private>`: {ours * 1000:.1f} ms, the one expression's sub "
          f"{span * 1000:.1f} ms; lower-casing 1 MB of `İ`: {dotted * 1000:.1f} ms")

    resources = subprocess.run([sys.executable, "-X", "importtime", "-c", "import importlib.resources"],
                               capture_output=True, text=True).stderr.splitlines()[-1].split("|")[1].strip()
    print(f"load's data path: importing importlib.resources costs {int(resources) / 1000:.1f} ms")

    dense = "password=hunter2 " * 61680
    capped = best(n, redact.redact, dense)
    cap = engine._MAX_REPLACED
    engine._MAX_REPLACED = 1 << 30
    try:
        each = best(1, redact.redact, dense)
    finally:
        engine._MAX_REPLACED = cap
    print(f"_MAX_REPLACED: {len(dense):,} characters of assignments, capped {capped * 1000:.0f} ms, "
          f"a call per match {each * 1000:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
