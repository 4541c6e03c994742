"""How long `redact` takes over realistic turn text: every string value of every line of the real
transcripts in tests/fixtures/real/ (not part of the tests).

    python benchmarks/redact_speed.py [--old path/to/old/redact.py] [--repeat 5]

With --old, the same strings go through that file's `redact` too (interleaved runs, best of each), and
how many strings the two redact differently is printed."""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def strings(root: Path = ROOT / "tests" / "fixtures" / "real") -> list[str]:
    out: list[str] = []

    def walk(value: object) -> None:
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    for path in sorted(root.rglob("*.jsonl")):
        for line in path.read_text("utf-8").splitlines():
            try:
                walk(json.loads(line))
            except ValueError:
                pass
    return out


def _time(fn, texts: list[str]) -> float:
    t = time.perf_counter()
    for s in texts:
        fn(s)
    return time.perf_counter() - t


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--old", type=Path, help="another redact.py to compare with (e.g. a copy of the previous one)")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    from harnesslink_core.redact import redact

    texts = strings()
    fns = {"new": redact}
    if args.old:
        # a name inside the package, so the copy finds the package's data (the vendored rules)
        spec = importlib.util.spec_from_file_location("harnesslink_core._old_redact", args.old)
        old = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(old)  # type: ignore[union-attr]
        fns["old"] = old.redact
    for fn in fns.values():
        fn("warm up: password=abc ghp_x")
    best = {name: float("inf") for name in fns}
    for _ in range(args.repeat):
        for name, fn in fns.items():
            best[name] = min(best[name], _time(fn, texts))
    print(f"{len(texts)} strings, {sum(map(len, texts)):,} characters")
    for name, secs in best.items():
        print(f"{name}: {secs * 1000:.1f} ms (best of {args.repeat})")
    if "old" in fns:
        differ = sum(1 for s in texts if fns["old"](s) != redact(s))
        print(f"strings redacted differently: {differ}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
