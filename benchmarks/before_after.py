"""The hooks of this checkout against those of an earlier commit, each installed as its own install.py
installs it, in one interleaved run.

    python benchmarks/before_after.py REV [--runs 20] [--entries 10000]

Each version gets its private venv (made by that version's own installer code, in a git worktree of
REV) and its own HOME holding the real-CLI transcripts of tests/fixtures/generated, backfilled by that
version. Then bare starts, stop, pre-compact, session-start and a prompt of each are timed round-robin.
With `--entries N`, each version also answers prompts (a new session each run) in a HOME of N realistic
entries (benchmarks/hook_latency.py's bank, indexed by that version's own `harnesslink reindex`).
Ratios are to each version's own venv `python -c pass`.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks import hook_latency  # noqa: E402
from benchmarks.installed import Case, clean_env, interleaved, worktree  # noqa: E402
from harnesslink_core.paths import locations  # noqa: E402

FIXTURES = REPO / "tests" / "fixtures" / "generated"
HOMES = (("claude-code", ".claude"), ("codex", ".codex"), ("pi", ".pi/agent"), ("omp", ".omp/agent"))
CWD = "/home/tester/project"  # where the generated sessions ran


def venv_of(source: Path, root: Path) -> Path:
    """That checkout's private venv, made by that checkout's installer (run from its own folder)."""
    code = ("from pathlib import Path; from harnesslink_core.paths import locations; "
            "from harnesslink_core.wiring import environment; "
            f"environment.create_venv(locations({{'HOME': {str(root)!r}, 'HARNESSLINK_HOME': {str(root / 'agent')!r}}}), "
            f"Path({str(source)!r}))")
    subprocess.run([sys.executable, "-c", code], cwd=source, check=True, env={"PATH": "/usr/bin:/bin"})
    return root / "agent" / "venv"


def home_for(venv: Path, home: Path) -> dict[str, str]:
    for harness, folder in HOMES:
        if (FIXTURES / harness).exists():
            shutil.copytree(FIXTURES / harness, home / folder, dirs_exist_ok=True)
    env = clean_env(home)
    subprocess.run([str(venv / "bin" / "harnesslink"), "backfill", "--days", "3650"], env=env, capture_output=True)
    return env


def large_home(venv: Path, home: Path, entries: int) -> tuple[dict[str, str], Path]:
    """A HOME of `entries` realistic entries in one project, indexed and passed by that version itself."""
    env = clean_env(home)
    hook_latency.build_bank(locations(env), entries, hook_latency.CWD)
    for verb in (["reindex"], ["autobank"]):
        subprocess.run([str(venv / "bin" / "harnesslink"), *verb], env=env, capture_output=True, check=True)
    return env, home / ".superpi" / "agent" / ".last-pass"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rev", help="the earlier commit")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--entries", type=int, default=0, help="also prompts against a bank of this many entries")
    args = parser.parse_args()
    with worktree(REPO, args.rev) as (tree, root):
        result = measure(tree, root, args)
    for tag in ("before", "after"):
        bare = result[f"{tag}: bare"]["median_ms"]
        for name, r in result.items():
            if name.startswith(tag):
                print(f"{name:32} median {r['median_ms']:7} ms  p95 {r['p95_ms']:7} ms  "
                      f"{r['median_ms'] / bare:5.2f}x its own bare start")
    return 0


def measure(tree: Path, root: Path, args: argparse.Namespace) -> dict:
    """Both versions installed and their hooks timed, interleaved."""
    cases: dict[str, Case] = {}
    for tag, source in (("before", tree), ("after", REPO)):
        venv = venv_of(source, root / tag)
        home = root / tag / "home"
        home.mkdir(parents=True)
        env = home_for(venv, home)
        stamp = home / ".superpi" / "agent" / ".last-pass"

        def payload(event: str, **extra) -> bytes:
            return json.dumps({"session_id": "s", "cwd": CWD, "hook_event_name": event,
                               "transcript_path": str(home / "none.jsonl"), **extra}).encode()

        hook = [str(venv / "bin" / "context-hook")]
        cases[f"{tag}: bare"] = Case([str(venv / "bin" / "python"), "-c", "pass"], env)
        for event, body, touch in (("stop", {}, False), ("pre-compact", {}, False),
                                   ("session-start", {"source": "startup"}, True),
                                   ("user-prompt-submit", {"prompt": "how did we write the notes file"}, True)):
            cases[f"{tag}: {event}"] = Case([*hook, event, "--harness", "claude-code"], env,
                                            payload(event, **body), stamp.touch if touch else None)
        if args.entries:
            big_env, big_stamp = large_home(venv, root / tag / "large", args.entries)
            cases[f"{tag}: prompt, {args.entries} entries"] = hook_latency.prompt_case(
                venv / "bin" / "context-hook", big_env, big_stamp, hook_latency.PROMPTS, 1)
    return interleaved(cases, args.runs, baseline="after: bare")


if __name__ == "__main__":
    raise SystemExit(main())
