"""Behaviour unchanged, as bytes: backfill the benchmark corpus with a given checkout and print one digest
of what it made.

    git worktree add /tmp/before <commit before the change>
    python benchmarks/same_bytes.py --checkout /tmp/before --turns 2000
    python benchmarks/same_bytes.py --checkout . --turns 2000              # the same digest: nothing changed

The corpus (benchmarks/corpus.py) is made once from a fixed seed and a fixed "now", copied whole (times kept)
into a fresh HOME at the same path for each run, and banked by `harnesslink backfill --days 30` run in a child
with the checkout on its path and the clock (`clock.now`) held at that same "now", and digested once the
background index job it leaves (the meaning vectors) is done. The digest covers:

- every file under the memory tree, by path and bytes;
- every table of the ledger, rows ordered, with the columns masked that hold the wall clock of the run
  or where the copy of the corpus landed on the disk (LEDGER_MASKED), and the `at` of each history record
  written at the wall clock;
- every table of the search index: its documents, vocabulary, FTS rows and meaning vectors, ordered (the
  times of the files it read masked: INDEX_MASKED).

The child runs with PYTHONHASHSEED=0: the order a set of project slugs is refreshed in decides the index's ids.

`--dump DIR` writes what was digested, part by part, to tell two digests apart.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks import corpus  # noqa: E402

NOW = 1_796_000_000.0  # 2026-11-29: the corpus's "now", and the pass's
PASS_NOW = NOW + 3600.0  # an hour after the last turn: every answered turn settles by the quiet rule
# ledger columns that hold the wall clock of the run (not the pass's clock) or where on the disk a copy landed
LEDGER_MASKED = {"updated", "applied_at", "dev", "ino"}
INDEX_MASKED = {"mtime_ns", "dir_mtime_ns"}  # the entry files' and folders' times: when the run wrote them
CHECKOUT_STAMPS = {"vocabulary"}  # an index meta row: the size and time of the checkout's vocabulary file

CHILD = r"""
import sys
sys.path.insert(0, {checkout!r})
from harnesslink_core import clock
clock.now = lambda: {now!r}
from harnesslink_core.main import main
sys.exit(main(["backfill", "--days", "30"]))
"""


def make_corpus(source: Path, turns: int) -> None:
    corpus.generate(source, turns, seed=turns, now=NOW)


def backfill(checkout: Path, source: Path, home: Path) -> None:
    if home.exists():
        shutil.rmtree(home)
    shutil.copytree(source, home, symlinks=True)  # copy2: the transcripts keep their times
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HARNESSLINK", "CLAUDE_", "CODEX_", "PI_"))}
    env.update(HOME=str(home), HARNESSLINK_HOME=str(home / ".superpi" / "agent"), PYTHONPATH=str(checkout),
               PYTHONHASHSEED="0")
    code = CHILD.format(checkout=str(checkout), now=PASS_NOW)
    subprocess.run([sys.executable, "-c", code], env=env, check=True, stdout=subprocess.DEVNULL, cwd=str(checkout))
    wait_for_background_index(home / ".superpi" / "agent" / "memory-index.db.rebuilding")


def wait_for_background_index(marker: Path, limit: float = 600.0) -> None:
    """Until the detached index job a backfill may leave (its meaning vectors) is done: its marker is gone."""
    end = time.monotonic() + limit
    while marker.exists():
        if time.monotonic() > end:
            raise SystemExit(f"the background index job still runs after {limit:g} s ({marker})")
        time.sleep(0.05)


def tree_part(root: Path) -> list[str]:
    lines = []
    for path in sorted(p for p in root.rglob("*") if p.is_file() or p.is_symlink()):
        data = os.readlink(path).encode() if path.is_symlink() else path.read_bytes()
        lines.append(f"{path.relative_to(root)} {hashlib.sha256(data).hexdigest()}")
    return lines


def database_part(path: Path, masked: set[str]) -> list[str]:
    if not path.exists():
        return ["(none)"]
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = [name for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]
        lines = []
        for table in tables:
            cursor = conn.execute(f'SELECT * FROM "{table}"')
            columns = [d[0] for d in cursor.description]
            rows = sorted(repr(tuple("(masked)" if c in masked else v for c, v in zip(columns, row)))
                          for row in cursor if row[0] not in CHECKOUT_STAMPS)
            lines.append(f"## {table} {columns}")
            lines += rows
        return lines
    finally:
        conn.close()


def history_part(agent: Path) -> list[str]:
    path = agent / "history.jsonl"
    if not path.exists():
        return ["(none)"]
    lines = []
    for raw in path.read_text().splitlines():
        record = json.loads(raw)
        record["at"] = "(masked)"  # time.time() of the write, for a banked record
        lines.append(json.dumps(record, sort_keys=True))
    return lines


def digest(home: Path, dump: Path | None) -> str:
    agent = home / ".superpi" / "agent"
    memories = agent / "memories"
    parts = {
        "tree": tree_part(memories) if memories.is_dir() else ["(none)"],
        "ledger": database_part(agent / "harness-autobank.db", LEDGER_MASKED),
        "index": database_part(agent / "memory-index.db", INDEX_MASKED),
        "history": history_part(agent),
    }
    whole = hashlib.sha256()
    for name, lines in parts.items():
        text = "\n".join(lines) + "\n"
        whole.update(name.encode() + b"\0" + text.encode())
        if dump is not None:
            dump.mkdir(parents=True, exist_ok=True)
            (dump / f"{name}.txt").write_text(text)
    return whole.hexdigest()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkout", type=Path, required=True, help="the checkout whose harnesslink_core banks")
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "harnesslink-same-bytes")
    parser.add_argument("--dump", type=Path, help="write each digested part here")
    args = parser.parse_args()
    source = args.work / f"corpus-{args.turns}"
    if not source.exists():
        make_corpus(source, args.turns)
    home = args.work / "home"  # the same path for every run: the ledger and the entries name it
    backfill(args.checkout.resolve(), source, home)
    print(digest(home, args.dump))
    return 0


if __name__ == "__main__":
    sys.exit(main())
