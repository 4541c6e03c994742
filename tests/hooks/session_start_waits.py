"""The session-start hook's whole time while another process holds one lock it may meet (a test-side harness).

A world where a pass ran a while ago (the ledger, the index and a bank exist) and a session of claude-code
or pi has two finished turns and then a compaction; the hook runs as its harness runs it (its own process
group, its JSON on stdin, timed until both pipes close) while a holder process keeps one of `HOLDERS`:

- the banking lock (`autobank.lock`, as a pass at work holds it);
- SQLite's write lock of the ledger or of the index (another writer's BEGIN IMMEDIATE);
- SQLite's busy state of either (a connection in EXCLUSIVE locking mode: every reader is refused too);
- the index's fill lock (`memory-index.db.filling`, a detached job filling vectors).

`python -m tests.hooks.session_start_waits` (from the checkout) prints the hook's time for each holder, each
source and each harness; the tests use `Scene` one case at a time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

from tests.claude_builder import ClaudeSession

ROOT = Path(__file__).resolve().parents[2]
CWD = "/work/app"
LONG = "The retry loop now backs off exponentially, so a flaky network no longer floods the server. " * 4
FIRST = "Set up the upload client"  # the turn a pass banked before
PROMPTS = ("Make the upload retry with a backoff", "Log each failed upload once")  # the compacted session's
HARNESSES = ("claude-code", "pi")
SOURCES = ("startup", "compact")

HOLD = """
import fcntl, os, sqlite3, sys
kind, path = sys.argv[1], sys.argv[2]
if kind == "flock":
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    fcntl.flock(fd, fcntl.LOCK_EX)
else:
    db = sqlite3.connect(path, isolation_level=None)
    if kind == "exclusive":
        db.execute("PRAGMA locking_mode=EXCLUSIVE")
        db.execute("BEGIN EXCLUSIVE")
    else:
        db.execute("BEGIN IMMEDIATE")
    db.execute("SELECT count(*) FROM sqlite_master").fetchall()
print("held", flush=True)
sys.stdin.read()
"""
HOLDERS = {  # name -> (how it is held, which file of the agent dir)
    "banking lock": ("flock", "autobank.lock"),
    "ledger writer": ("writer", "harness-autobank.db"),
    "ledger busy": ("exclusive", "harness-autobank.db"),
    "index writer": ("writer", "memory-index.db"),
    "index busy": ("exclusive", "memory-index.db"),
    "index fill lock": ("flock", "memory-index.db.filling"),
}


def iso(dt: datetime) -> str:
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def env_for(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HARNESSLINK", "CLAUDE", "CODEX", "PI_"))}
    env.update(HOME=str(home), HARNESSLINK_HOME=str(home / ".superpi" / "agent"), PYTHONPATH=str(ROOT))
    return env


class Holder:
    """Another process holding one of `HOLDERS` until `release`."""

    def __init__(self, agent_dir: Path, name: str) -> None:
        kind, file = HOLDERS[name]
        self.proc = subprocess.Popen([sys.executable, "-c", HOLD, kind, str(agent_dir / file)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None and self.proc.stdout.readline() == "held\n", name

    def release(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            self.proc.wait(timeout=30)


class Answer:
    def __init__(self, code: int, out: bytes, err: bytes, took: float) -> None:
        self.code, self.out, self.err, self.took = code, out, err, took

    def context(self, harness: str) -> str | None:
        """The context the harness would take from the answer; None when the answer is not its valid one."""
        try:
            value = json.loads(self.out)
        except ValueError:
            return None
        if harness in ("pi", "omp"):
            ok = isinstance(value, dict) and set(value) == {"additionalContext"}
            return value["additionalContext"] if ok and isinstance(value["additionalContext"], str) else None
        if value == {}:
            return ""
        if not isinstance(value, dict) or set(value) != {"hookSpecificOutput"}:
            return None
        inner = value["hookSpecificOutput"]
        if not isinstance(inner, dict) or inner.get("hookEventName") != "SessionStart":
            return None
        return inner.get("additionalContext") if isinstance(inner.get("additionalContext"), str) else None


class Scene:
    """The world of one case, below `home`: a first pass banked one turn, then `harness`'s session has two
    finished turns and a compaction, and a pass is due (the last one ran a minute ago)."""

    def __init__(self, home: Path, harness: str) -> None:
        from harnesslink_core.banking import autobank, background
        from harnesslink_core.paths import locations

        home.mkdir(parents=True, exist_ok=True)
        self.home, self.harness, self.env = home, harness, env_for(home)
        self.locs = locations(self.env)
        self.session_id = str(uuid.uuid4())
        self.start = datetime.now(timezone.utc) - timedelta(minutes=30)
        self._claude([(FIRST, True)], "sess-first")
        assert autobank.run_pass(self.locs).banked == 1
        if harness == "claude-code":
            self.transcript = self._claude([(p, True) for p in PROMPTS], self.session_id, compacted=True)
        else:
            self.transcript = self._pi()
        stamp = os.path.join(self.locs.agent_path, background.STAMP)
        background.mark_pass(self.locs)
        os.utime(stamp, (time.time() - 60, time.time() - 60))

    def _claude(self, turns: list[tuple[str, bool]], session_id: str, compacted: bool = False) -> str:
        session = ClaudeSession(self.home, cwd=CWD, session_id=session_id, start=self.start)
        for prompt, closed in turns:
            session.turn(prompt, LONG, tools=[("Bash", {"command": "pytest tests/test_upload.py"})], closed=closed)
        if compacted:
            session.compaction()
            session.prompt("Now document the retry settings")  # the turn after the compaction, under way
        return str(session.flush())

    def _pi(self) -> str:
        folder = self.home / ".pi" / "agent" / "sessions" / ("--" + CWD.strip("/").replace("/", "-") + "--")
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{iso(self.start).replace(':', '-').replace('.', '-')}_{self.session_id}.jsonl"
        clock = [self.start]
        parent: list[str | None] = [None]

        def entry(**fields) -> dict:
            clock[0] += timedelta(seconds=1)
            fields.update(id=uuid.uuid4().hex[:8], parentId=parent[0], timestamp=iso(clock[0]))
            if "message" in fields:
                fields["message"]["timestamp"] = int(clock[0].timestamp() * 1000)
            parent[0] = fields["id"]
            return fields

        def user(text: str) -> dict:
            return entry(type="message", message={"role": "user", "content": [{"type": "text", "text": text}]})

        def assistant(content: list, stop: str) -> dict:
            return entry(type="message", message={"role": "assistant", "content": content, "stopReason": stop,
                                                  "usage": {"input": 50, "output": 20, "totalTokens": 70}})

        lines = [{"type": "session", "version": 3, "id": self.session_id, "timestamp": iso(self.start), "cwd": CWD}]
        first = None
        for n, prompt in enumerate(PROMPTS):
            lines.append(user(prompt))
            first = first or lines[-1]["id"]
            lines.append(assistant([{"type": "toolCall", "id": f"call_{n}", "name": "bash",
                                     "arguments": {"command": "pytest tests/test_upload.py"}}], "toolUse"))
            lines.append(entry(type="message", message={"role": "toolResult", "toolCallId": f"call_{n}",
                                                        "toolName": "bash", "content": [{"type": "text", "text": "ok"}],
                                                        "isError": False}))
            lines.append(assistant([{"type": "text", "text": LONG}], "stop"))
        lines.append(entry(type="compaction", summary="## Goal\nMake the uploads robust.", firstKeptEntryId=first,
                           tokensBefore=150000))
        lines.append(user("Now document the retry settings"))  # the turn after the compaction, under way
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        return str(path)

    def payload(self, source: str) -> dict:
        payload = {"session_id": self.session_id, "cwd": CWD, "transcript_path": self.transcript, "source": source}
        return payload if self.harness in ("pi", "omp") else {**payload, "hook_event_name": "SessionStart"}

    def hook(self, source: str, root: Path = ROOT) -> Answer:
        """The session-start hook as the harness runs it, timed from its start until both its pipes close."""
        started = time.monotonic()
        proc = subprocess.Popen([sys.executable, str(root / "hooks" / "session-start"), "--harness", self.harness],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env={**self.env, "PYTHONPATH": str(root)}, start_new_session=True, cwd=self.home)
        out, err = proc.communicate(json.dumps(self.payload(source)).encode(), timeout=120)
        return Answer(proc.returncode, out, err, time.monotonic() - started)

    def holder(self, name: str) -> Holder:
        return Holder(Path(self.locs.agent_path), name)

    def banked_titles(self) -> list[str]:
        """The titles of every entry in the bank, one per entry (a turn banked twice shows twice)."""
        titles = []
        for path in sorted(Path(self.locs.memories_path).glob("*/bank/*.md")):
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.startswith("title: "):
                    titles.append(json.loads(line[len("title: "):]))
                    break
        return sorted(titles)

    def next_pass(self) -> None:
        """The pass after the holder let go (it waits for a background pass the hook may have started)."""
        from harnesslink_core.banking import autobank

        report = autobank.run_pass(self.locs, wait=30)
        assert not report.locked and report.failure is None, report


def measure(folder: Path, rounds: int = 1) -> list[tuple[str, str, str, float, int, bool]]:
    """(holder, source, harness, whole time, exit code, valid answer) of each case, each in a fresh world."""
    rows = []
    n = 0
    for _ in range(rounds):
        for name in ("none", *HOLDERS):
            for source in SOURCES:
                for harness in HARNESSES:
                    n += 1
                    scene = Scene(folder / f"case-{n}", harness)
                    holder = scene.holder(name) if name != "none" else None
                    try:
                        answer = scene.hook(source)
                    finally:
                        if holder is not None:
                            holder.release()
                    rows.append((name, source, harness, answer.took, answer.code, answer.context(harness) is not None))
    return rows


def interleaved(folder: Path, roots: list[Path], harness: str, source: str, rounds: int) -> dict[str, dict[Path, list]]:
    """Each holder's whole times with the hook of each checkout in `roots`, the checkouts alternating run by run
    (each run in a fresh world)."""
    times: dict[str, dict[Path, list]] = {}
    n = 0
    for name in ("none", *HOLDERS):
        times[name] = {root: [] for root in roots}
        for _ in range(rounds):
            for root in roots:
                n += 1
                scene = Scene(folder / f"ab-{n}", harness)
                holder = scene.holder(name) if name != "none" else None
                try:
                    times[name][root].append(scene.hook(source, root).took)
                finally:
                    if holder is not None:
                        holder.release()
    return times


def main() -> None:
    """`python -m tests.hooks.session_start_waits [ROUNDS]`: every case with this checkout's hook;
    `... ROUNDS --ab OTHER_CHECKOUT [HARNESS SOURCE]`: both checkouts' hooks interleaved, medians and ratios."""
    import statistics
    import tempfile

    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    with tempfile.TemporaryDirectory() as folder:
        os.environ.update(env_for(Path(folder) / "unused-home"))  # nothing here may reach the real home
        if "--ab" in sys.argv:
            at = sys.argv.index("--ab")
            other, rest = Path(sys.argv[at + 1]), sys.argv[at + 2:]
            harness, source = (rest + ["claude-code", "compact"][len(rest):])[:2]
            times = interleaved(Path(folder), [other, ROOT], harness, source, rounds)
            print(f"# {harness}, {source}: {other} (A) and {ROOT} (B) interleaved, {rounds} runs each, "
                  f"load {os.getloadavg()[0]:.2f}")
            print(f"{'holder':<16} {'A median':>9} {'B median':>9} {'A/B':>6}  A runs / B runs")
            for name, by_root in times.items():
                a, b = statistics.median(by_root[other]), statistics.median(by_root[ROOT])
                runs = " ".join(f"{t:.2f}" for t in by_root[other]) + " / " + " ".join(
                    f"{t:.2f}" for t in by_root[ROOT])
                print(f"{name:<16} {a:9.2f} {b:9.2f} {a / b:6.2f}  {runs}")
            return
        rows = measure(Path(folder), rounds)
    print(f"# {ROOT} ({os.popen('git -C ' + str(ROOT) + ' rev-parse --short HEAD').read().strip()}), "
          f"load {os.getloadavg()[0]:.2f}")
    print(f"{'holder':<16} {'source':<8} {'harness':<12} {'seconds':>8}  exit  valid")
    for name, source, harness, took, code, valid in rows:
        print(f"{name:<16} {source:<8} {harness:<12} {took:8.2f}  {code:>4}  {valid}")


if __name__ == "__main__":
    main()
