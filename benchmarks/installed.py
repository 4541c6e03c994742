"""The hooks as users run them, and the clock that times them.

Users never run the hooks with the interpreter that ran install.py: install.py
makes a private venv (`<agent dir>/venv`), and every harness calls its
`bin/context-hook`. `build` makes that venv the same way (the installer's own
`environment.create_venv`, pip compiling the bytecode), in a folder of ours.
`interleaved` times whole processes round-robin, so that load on the machine
touches every case alike, and reports each against a baseline measured in the
same run: that venv's own `python -c pass`.

Runs from any interpreter, in a venv or not: the child processes use the
private venv (hooks) or `sys.executable` (our own measurement code), never a
path that leaves the running venv's packages behind.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


class Installed:
    """A private environment made by install.py's code: its python and its hook launcher."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.python = folder / "bin" / "python"
        self.hook = folder / "bin" / "context-hook"


def build(root: Path) -> Installed:
    """The private venv under `root` (a HOME of its own), made as `python install.py` makes it.
    Reused when it is already there and holds this checkout's code."""
    from harnesslink_core.paths import locations
    from harnesslink_core.wiring import environment

    locs = locations({"HOME": str(root), "HARNESSLINK_HOME": str(root / "agent")})
    stamp = root / "agent" / "venv" / ".bench-source"
    source = _source_stamp()
    if not (stamp.exists() and stamp.read_text() == source):
        environment.create_venv(locs, REPO)
        stamp.write_text(source)
    return Installed(environment.folder(locs))


def _source_stamp() -> str:
    """What the venv was built from: the newest modification among the package's files."""
    files = [p for p in (REPO / "harnesslink_core").rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    return str(max(p.stat().st_mtime_ns for p in [*files, REPO / "pyproject.toml"]))


def run_once(cmd: list[str], env: dict[str, str], stdin: bytes = b"") -> float:
    """Wall time of one whole process, in ms, as a harness sees it: until it has exited and its stdout and
    stderr pipes are closed (whatever it left running still holding them counts)."""
    started = time.perf_counter()
    subprocess.run(cmd, input=stdin, env=env, capture_output=True, check=False)
    return (time.perf_counter() - started) * 1000


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


class Case:
    """One command to time: argv, environment, stdin (bytes, or a function making each run's), and what
    to do before and after each run (untimed)."""

    def __init__(self, cmd: list[str], env: dict[str, str], stdin=b"", before=None, after=None) -> None:
        self.cmd, self.env, self.stdin, self.before, self.after = cmd, env, stdin, before, after

    def run(self) -> float:
        if self.before:
            self.before()
        took = run_once(self.cmd, self.env, self.stdin() if callable(self.stdin) else self.stdin)
        if self.after:
            self.after()
        return took


RESIDENT = b"harnesslink_core.recall.encoder"  # the one process of ours that stays (until idle)


def settled(folder: Path, timeout: float = 30.0) -> None:
    """Wait (untimed) until no process runs from `folder` (a private venv) but the resident encoder: the work a
    hook left for after its answer is done, and its CPU is not timed as the next case's."""
    deadline = time.monotonic() + timeout
    needle = os.fsencode(folder)
    while time.monotonic() < deadline:
        busy = False
        for pid in os.listdir("/proc"):
            if not pid.isdigit() or int(pid) == os.getpid():
                continue
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    cmdline = f.read()
            except OSError:
                continue
            busy = needle in cmdline and RESIDENT not in cmdline
            if busy:
                break
        if not busy:
            return
        time.sleep(0.005)


def interleaved(cases: dict[str, Case], runs: int, baseline: str) -> dict:
    """Each case `runs` times, round-robin; min, median, p95, max and ratios to the `baseline` case's median."""
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for case in cases.values():  # one untimed run each: caches warm, as on a machine in use
        case.run()
    for _ in range(runs):
        for name, case in cases.items():
            samples[name].append(case.run())
    base = statistics.median(samples[baseline])
    return {name: {"min_ms": round(min(v), 1), "median_ms": round(statistics.median(v), 1), "p95_ms": round(pct(v, 0.95), 1),
                   "max_ms": round(max(v), 1), "x": round(statistics.median(v) / base, 2)}
            for name, v in samples.items()}


def clean_env(home: Path) -> dict[str, str]:
    """The environment a hook gets: ours, with HOME and the agent dir in `home` and no harness overrides."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("HARNESSLINK", "CLAUDE_", "CODEX_", "PI_", "PYTHON", "VIRTUAL_ENV"))}
    env.update(HOME=str(home), HARNESSLINK_HOME=str(home / ".superpi" / "agent"))
    return env


def base_interpreter() -> str:
    """The interpreter behind the running one (outside any venv): shown beside the venv's, for information."""
    return os.path.realpath(getattr(sys, "_base_executable", sys.executable))


class worktree:
    """`with worktree(REPO, rev) as (tree, scratch)`: a temporary git worktree of `rev` (detached) and a scratch
    folder beside it, both removed after."""

    def __init__(self, repo: Path, rev: str) -> None:
        import tempfile

        self.repo, self.rev = repo, rev
        self.root = Path(tempfile.mkdtemp(prefix="hl-worktree-"))

    def __enter__(self) -> tuple[Path, Path]:
        tree = self.root / "tree"
        subprocess.run(["git", "-C", str(self.repo), "worktree", "add", "--detach", str(tree), self.rev], check=True,
                       capture_output=True)
        (self.root / "scratch").mkdir()
        return tree, self.root / "scratch"

    def __exit__(self, *exc: object) -> None:
        import shutil

        subprocess.run(["git", "-C", str(self.repo), "worktree", "remove", "--force", str(self.root / "tree")],
                       capture_output=True)
        shutil.rmtree(self.root, ignore_errors=True)

