"""The hooks of this checkout against those of an earlier commit, each installed as its own install.py
installs it, in one interleaved run.

    python benchmarks/before_after.py REV [--runs 20] [--entries 10000]

Each version gets its private venv (made by that version's own installer code, in a git worktree of
REV) and its own HOME holding the real-CLI transcripts of tests/fixtures/generated, backfilled by that
version. Then bare starts, stop, pre-compact, session-start and a prompt of each are timed round-robin.
The stop and pre-compact that count are those of a real Claude Code session (tests/fixtures/real) that
grows by one finished turn before each call; the same hooks on a transcript that does not exist
(`none.jsonl`: nothing to bank) are the labelled extra. After each run, untimed, the work a hook left for
after its answer ends (no process of that venv is left), so that no case is timed beside another's detached
pass; then each version's stop and pre-compact are timed from the answer to the turn found in the search
index (min/median/max of 5 turns that bank an entry: the real session's `/compact` turn banks none).
With `--entries N`, each version also answers prompts (a new session each run) in a HOME of N realistic
entries (benchmarks/hook_latency.py's bank, indexed by that version's own `harnesslink reindex`).
Ratios are to each version's own venv `python -c pass`.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks import hook_latency  # noqa: E402
from benchmarks.installed import Case, clean_env, interleaved, settled, worktree  # noqa: E402
from harnesslink_core.paths import locations  # noqa: E402

FIXTURES = REPO / "tests" / "fixtures" / "generated"
REAL_SESSION = REPO / "tests" / "fixtures" / "real" / "claude-code" / "oneryalcin__fasthooks__sample_main_transcript.jsonl"
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
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


def switch_off_encoder(home: Path) -> None:
    """`recall: {encoder: false}` in the HOME's config.yml (an earlier version reads no such key)."""
    agent = home / ".superpi" / "agent"
    agent.mkdir(parents=True, exist_ok=True)
    (agent / "config.yml").write_text("recall:\n  encoder: false\n")


def large_home(venv: Path, home: Path, entries: int) -> tuple[dict[str, str], Path]:
    """A HOME of `entries` realistic entries in one project, indexed and passed by that version itself."""
    env = clean_env(home)
    hook_latency.build_bank(locations(env), entries, hook_latency.CWD)
    for verb in (["reindex"], ["autobank"]):
        subprocess.run([str(venv / "bin" / "harnesslink"), *verb], env=env, capture_output=True, check=True)
    return env, home / ".superpi" / "agent" / ".last-pass"


class GrowingSession:
    """A real Claude Code session written one finished turn at a time, as the CLI writes it: `grow()`
    appends the next turn, `payload(event)` is the hook's input naming it. The real session's turns come
    round again with fresh uuids, so each is a new turn to bank."""

    def __init__(self, home: Path) -> None:
        from harnesslink_core.banking.settle import SKIP_RESULT_CHARS
        from harnesslink_core.harnesses.claude_code import reader as claude_code

        data = REAL_SESSION.read_bytes()
        turns = claude_code.read(REAL_SESSION, 0, {}, len(data) + 1).turns
        starts = [t.offset for t in turns]
        self.turns = [data[a:b] for a, b in zip(starts, [*starts[1:], len(data)])]
        self.session = json.loads(self.turns[0].splitlines()[0])["sessionId"]
        self.path = home / ".claude" / "projects" / "-workspace" / f"{self.session}.jsonl"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_bytes(data[:starts[0]])
        self.written = 0
        # whether each turn makes an entry (banking/settle.py's rule: a tool call, or an answer long enough)
        self.banks = [bool(t.actions) or len(t.result.strip()) >= SKIP_RESULT_CHARS for t in turns]

    def next_banks(self) -> bool:
        return self.banks[self.written % len(self.turns)]

    def grow(self) -> None:
        lap, turn = divmod(self.written, len(self.turns))
        text = self.turns[turn].decode()
        fresh = UUID.sub(lambda m: m[0] if m[0] == self.session else f"{lap:08x}{m[0][8:]}", text)
        with self.path.open("a") as f:
            f.write(fresh)
        self.written += 1

    def payload(self, event: str) -> bytes:
        return json.dumps({"session_id": self.session, "cwd": "/workspace", "hook_event_name": event,
                           "transcript_path": str(self.path)}).encode()


def searchable_ms(case: Case, session: GrowingSession, home: Path, runs: int) -> list[float]:
    """The times from a hook's answer to its turn in the search index (one more entry there), sorted; the
    turns timed are ones that make an entry (one that does not is written, untimed, before the next)."""
    from benchmarks.installed import run_once
    from harnesslink_core.recall import index, query

    locs = locations(clean_env(home))

    def indexed() -> int:
        try:
            conn = index.connect(locs, create=False, busy_ms=1000)
        except index.IndexUnavailable:
            return 0
        try:
            return query.count(conn)
        finally:
            conn.close()

    times = []
    for _ in range(runs):
        while not session.next_banks():
            session.grow()
        time.sleep(0.5)  # the last run's pass is done
        before = indexed()
        case.before()
        run_once(case.cmd, case.env, case.stdin())
        answered = time.perf_counter()
        while indexed() <= before and time.perf_counter() - answered < 10:
            time.sleep(0.002)
        times.append((time.perf_counter() - answered) * 1000)
    return sorted(round(t, 1) for t in times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rev", help="the earlier commit")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--entries", type=int, default=0, help="also prompts against a bank of this many entries")
    parser.add_argument("--no-encoder", action="store_true",
                        help="config.yml turns the resident encoder off (as installed, the first prompt starts it)")
    args = parser.parse_args()
    with worktree(REPO, args.rev) as (tree, root):
        result = measure(tree, root, args)
    for tag in ("before", "after"):
        for event in ("stop", "pre-compact"):
            times = result.pop(f"{tag}: {event} searchable")
            print(f"{tag}: {event}'s answer to its turn searchable: min {times[0]} median {times[len(times) // 2]} "
                  f"max {times[-1]} ms")
    for tag in ("before", "after"):
        base = result[f"{tag}: bare"]
        for name, r in result.items():
            if name.startswith(tag):
                print(f"{name:44} min {r['min_ms']:7} median {r['median_ms']:7} max {r['max_ms']:7} ms  "
                      + " / ".join(f"{r[k] / base[k]:5.2f}x" for k in ("min_ms", "median_ms", "max_ms"))
                      + " its own bare start's min / median / max")
    return 0


def measure(tree: Path, root: Path, args: argparse.Namespace) -> dict:
    """Both versions installed and their hooks timed, interleaved."""
    cases: dict[str, Case] = {}
    sessions: dict[str, GrowingSession] = {}
    for tag, source in (("before", tree), ("after", REPO)):
        venv = venv_of(source, root / tag)
        home = root / tag / "home"
        home.mkdir(parents=True)
        if args.no_encoder:
            switch_off_encoder(home)
        env = home_for(venv, home)
        stamp = home / ".superpi" / "agent" / ".last-pass"

        def payload(event: str, **extra) -> bytes:
            return json.dumps({"session_id": "s", "cwd": CWD, "hook_event_name": event,
                               "transcript_path": str(home / "none.jsonl"), **extra}).encode()

        hook = [str(venv / "bin" / "context-hook")]
        cases[f"{tag}: bare"] = Case([str(venv / "bin" / "python"), "-c", "pass"], env)
        session = sessions[tag] = GrowingSession(home)
        for event in ("stop", "pre-compact"):
            cases[f"{tag}: {event}, a growing real session"] = Case(
                [*hook, event, "--harness", "claude-code"], env, lambda e=event, s=session: s.payload(e), session.grow)
        for event, body, touch in (("stop (none.jsonl)", {}, False), ("pre-compact (none.jsonl)", {}, False),
                                   ("session-start", {"source": "startup"}, True),
                                   ("user-prompt-submit", {"prompt": "how did we write the notes file"}, True)):
            verb = event.split()[0]
            cases[f"{tag}: {event}"] = Case([*hook, verb, "--harness", "claude-code"], env,
                                            payload(verb, **body), stamp.touch if touch else None)
        if args.entries:
            if args.no_encoder:
                switch_off_encoder(root / tag / "large")
            big_env, big_stamp = large_home(venv, root / tag / "large", args.entries)
            cases[f"{tag}: prompt, {args.entries} entries"] = hook_latency.prompt_case(
                venv / "bin" / "context-hook", big_env, big_stamp, hook_latency.PROMPTS, 1)
        for name, case in cases.items():
            if name.startswith(tag):
                case.after = lambda v=venv: settled(v)
    result = interleaved(cases, args.runs, baseline="after: bare")
    for tag in ("before", "after"):
        for event in ("stop", "pre-compact"):
            result[f"{tag}: {event} searchable"] = searchable_ms(cases[f"{tag}: {event}, a growing real session"],
                                                                sessions[tag], root / tag / "home", 5)
    return result


if __name__ == "__main__":
    raise SystemExit(main())
