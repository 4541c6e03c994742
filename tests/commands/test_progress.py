"""Progress of the long verbs (`backfill`, `reindex`): a bar with a percentage, a rate and an ETA on a
terminal; off a terminal no bar at all, and the same one-line summary."""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from harnesslink_core.banking import autobank
from harnesslink_core.commands import progress
from harnesslink_core.paths import locations
from tests.claude_builder import ClaudeSession

ROOT = Path(__file__).resolve().parents[2]
PERCENT = re.compile(rb"\b\d{1,3}%\|")
ETA = re.compile(rb"\[\d\d:\d\d<\d\d:\d\d, ")  # tqdm's [elapsed<remaining, rate]


def write_corpus(home: Path, sessions: int = 12, turns: int = 6) -> None:
    for i in range(sessions):
        s = ClaudeSession(home, cwd=f"/work/app{i % 3}")
        for j in range(turns):
            s.turn(f"Fix the flaky login test, part {i}.{j}", "Moved the cookie expiry check after the refresh. " * 20,
                   tools=[("Bash", {"command": "pytest -q tests/test_login.py"})])
        s.flush()


def env_of(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARNESSLINK")}
    env.update(HOME=str(home), HARNESSLINK_HOME=str(home / ".superpi" / "agent"), PYTHONPATH=str(ROOT))
    return env


def harnesslink(*argv: str, home: Path, terminal: tuple[int, int] | None = None, sized: bool = True):
    """Run the verb with stdout on a pipe and stderr on a pty's slave (`terminal`: columns, lines) or
    on a pipe: (stdout, what stderr got). `sized=False`: a pty that tells no size, as a bare one."""
    env = env_of(home)
    command = [sys.executable, "-m", "harnesslink_core.main", *argv]
    if terminal is None:
        out = subprocess.run(command, capture_output=True, env=env, cwd=ROOT, timeout=120)
        assert out.returncode == 0, out.stderr
        return out.stdout.decode(), out.stderr
    master, slave = os.openpty()
    if sized:
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", terminal[1], terminal[0], 0, 0))
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=slave, stdin=subprocess.DEVNULL, env=env, cwd=ROOT)
    os.close(slave)
    seen = _drain(master)  # read as it comes: a full pty would stall the verb
    stdout = proc.stdout.read().decode()
    assert proc.wait(timeout=120) == 0, seen
    return stdout, seen


def _drain(master: int) -> bytes:
    """All a pty's writer sent until it closed its end (one read may return only part of it); closes `master`."""
    seen = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the writer has closed the slave
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    return seen


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """A home with a dozen Claude Code sessions, built once and copied (same bytes, same times) per run."""
    home = tmp_path / "corpus"
    write_corpus(home)
    return home


def copy_of(corpus: Path, name: str) -> Path:
    home = corpus.parent / name
    shutil.copytree(corpus, home, symlinks=True)
    return home


def test_backfill_on_a_terminal_shows_a_bar_with_percentage_rate_and_eta(corpus: Path) -> None:
    stdout, bar = harnesslink("backfill", "--days", "30", home=copy_of(corpus, "tty"), terminal=(100, 30))
    assert b"transcripts:" in bar and PERCENT.search(bar) and ETA.search(bar), bar
    assert b"100%|" in bar and b"B/s" in bar, "it ends full, at a rate in bytes"
    assert b"72 banked" in bar
    assert stdout.startswith("backfill of claude-code") and "banked 72," in stdout


def test_backfill_off_a_terminal_prints_no_bar_and_the_same_summary(corpus: Path) -> None:
    on_tty, _ = harnesslink("backfill", "--days", "30", home=copy_of(corpus, "tty"), terminal=(100, 30))
    piped, stderr = harnesslink("backfill", "--days", "30", home=copy_of(corpus, "pipe"))
    assert stderr == b"", "no bar, and no carriage return, where stderr is a pipe"
    assert piped == on_tty
    assert re.fullmatch(r"backfill of claude-code, codex, pi, omp, antigravity over 30 days: banked 72, skipped 0, "
                        r"dropped 0, duplicates 0; read \d+\.\d MB\n", piped), piped


def test_reindex_on_a_terminal_shows_the_entries_then_the_vectors(corpus: Path) -> None:
    home = copy_of(corpus, "tty")
    harnesslink("backfill", "--days", "30", home=home)
    stdout, bar = harnesslink("reindex", home=home, terminal=(100, 30), sized=False)
    entries, vectors = bar.index(b"entries:"), bar.index(b"vectors:")
    assert entries < vectors, bar
    assert b"100%|" in bar[entries:vectors] and b"72/72" in bar[entries:vectors]
    assert b"100%|" in bar[vectors:] and ETA.search(bar[vectors:]), bar
    assert re.fullmatch(r"indexed 72 entries in \d+\.\d s \(.*memory-index\.db\)\n", stdout), stdout


def test_reindex_off_a_terminal_prints_only_its_line(corpus: Path) -> None:
    home = copy_of(corpus, "pipe")
    harnesslink("backfill", "--days", "30", home=home)
    stdout, stderr = harnesslink("reindex", home=home)
    assert stderr == b"" and b"\r" not in stdout.encode()
    assert stdout.startswith("indexed 72 entries in ")


def test_off_a_terminal_tqdm_is_not_even_imported(corpus: Path) -> None:
    home = copy_of(corpus, "pipe")
    code = ("import sys\nfrom harnesslink_core.main import main\n"
            "main(['backfill', '--days', '30'])\nmain(['reindex'])\nprint('tqdm' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env_of(home), cwd=ROOT,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == "False"


def test_backfill_knows_the_bytes_it_will_read_before_it_reads_them(isolated_home: Path) -> None:
    write_corpus(isolated_home, sessions=4, turns=3)
    locs = locations()
    names = autobank.widen_window(locs, 30, ["claude-code"])
    waiting = autobank.unread_bytes(locs, names)
    assert waiting == sum(p.stat().st_size for p in (isolated_home / ".claude").rglob("*.jsonl"))
    report = autobank.drain(locs, harnesses=names)
    assert report.bytes_read == waiting
    assert autobank.unread_bytes(locs, names) == 0, "all read: nothing is waiting"
    line = b'{"type":"user","message":{"role":"user","content":"one more"}}\n'
    with next((isolated_home / ".claude").rglob("*.jsonl")).open("ab") as f:
        f.write(line)
    assert autobank.unread_bytes(locs, names) == len(line), "a grown transcript: only what it gained"


def test_backfill_does_not_count_transcripts_older_than_its_window(isolated_home: Path) -> None:
    from datetime import datetime, timedelta, timezone

    write_corpus(isolated_home, sessions=2, turns=2)
    old = ClaudeSession(isolated_home, cwd="/work/old", start=datetime.now(timezone.utc) - timedelta(days=120))
    old.turn("Set up the release checklist", "Tagging, the changelog and the upload. " * 5)
    old.flush()
    then = (datetime.now(timezone.utc) - timedelta(days=119)).timestamp()
    os.utime(old.path, (then, then))
    locs = locations()
    names = autobank.widen_window(locs, 30, ["claude-code"])
    recent = sum(p.stat().st_size for p in (isolated_home / ".claude").rglob("*.jsonl") if p != old.path)
    assert autobank.unread_bytes(locs, names) == recent


def test_a_bar_on_a_terminal_shows_how_far_and_how_long_to_go() -> None:
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    with open(slave, "w", closefd=True) as stream:
        bars = progress.Bars(stream)
        assert bars.shown
        bars.report("vectors", 0, 400)
        bars.bar.mininterval = 0  # draw every report
        bars.report("vectors", 100, 400)
        bars.report("vectors", 500, 400)  # the work outgrew the estimate: the total grows, never past 100%
        bars.close()
        stream.flush()
    drawn = _drain(master)
    assert b" 25%|" in drawn and ETA.search(drawn), drawn
    assert b"500/500" in drawn and b"125%" not in drawn


def test_a_bar_off_a_terminal_draws_nothing(tmp_path: Path) -> None:
    with open(tmp_path / "stderr", "w") as stream:
        bars = progress.Bars(stream)
        assert not bars.shown
        bars.report("entries", 5, 10)
        bars.close()
    assert (tmp_path / "stderr").read_text() == ""


def test_reindex_tells_each_stage_how_far_it_has_come(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harnesslink_core.recall import index

    home = copy_of(corpus, "direct")
    monkeypatch.setenv("HOME", str(home))
    locs = locations()
    autobank.drain(locs, harnesses=autobank.widen_window(locs, 30, ["claude-code"]))
    told: list[tuple[str, int, int]] = []
    assert index.rebuild(locs, progress=lambda *args: told.append(args)) == 72
    entries = [t for t in told if t[0] == "entries"]
    vectors = [t for t in told if t[0] == "vectors"]
    assert [done for _, done, _ in entries] == list(range(1, 73)) and {total for *_, total in entries} == {72}
    assert vectors and vectors[-1] == ("vectors", 72, 72), "the vectors follow, in batches, of all 72"
    assert told.index(vectors[0]) > told.index(entries[-1])


def test_only_the_progress_module_imports_tqdm_and_it_is_a_dependency() -> None:
    import ast
    import tomllib

    package = ROOT / "harnesslink_core"
    importers = set()
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            if any(name.split(".")[0] == "tqdm" for name in names):
                importers.add(path.relative_to(package).as_posix())
    assert importers == {"commands/progress.py"}
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert any(d.startswith("tqdm") for d in dependencies)
