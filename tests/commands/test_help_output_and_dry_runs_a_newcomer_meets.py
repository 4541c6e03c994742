"""What a newcomer meets in the first hour: help that helps, output a pipe can cut, dry runs that fit
on a screen, and words that say what they mean."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from memory_helpers import make_env


def test_context_hook_help_prints_its_usage_and_runs_nothing(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    for argv in (["--help"], ["session-start", "--help"], ["user-prompt-submit", "-h", "--harness", "codex"]):
        out = subprocess.run([sys.executable, "-m", "harnesslink_core.hooks", *argv], env=env, capture_output=True,
                             text=True, timeout=60, input=json.dumps({"cwd": str(tmp_path), "prompt": "x y z"}))
        assert out.returncode == 0 and out.stdout.startswith("usage: context-hook <event>"), out
    assert not (Path(env["HARNESSLINK_HOME"]) / "harness-autobank.db").exists(), "nothing ran"


def test_a_closed_pipe_is_not_an_error(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    out = subprocess.run(f"{sys.executable} -m harnesslink_core.main status --json | head -c 1", shell=True,
                         env=env, capture_output=True, text=True, timeout=60)
    assert out.stdout == "{" and out.stderr == "", out.stderr


def test_a_dry_run_summarises_a_new_file_and_diffs_a_changed_one(tmp_path: Path) -> None:
    from harnesslink_core.wiring.files import FileChange

    made = FileChange(tmp_path / "harnesslink.ts", None, b"line\n" * 363)
    assert made.diff() == f"new file {tmp_path / 'harnesslink.ts'}: 363 lines, 1,815 bytes\n"
    changed = FileChange(tmp_path / "settings.json", b'{"a": 1}\n', b'{"a": 1, "hooks": {}}\n')
    assert changed.diff().startswith("---") and '+{"a": 1, "hooks": {}}' in changed.diff()


def test_uninstall_leaves_nothing_of_ours_and_says_what_stays(tmp_path: Path) -> None:
    from harnesslink_core.wiring import installer, uninstaller

    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text('{"model": "opus"}\n')
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    assert installer.main(["--harness", "claude-code", "--no-venv", "--no-backfill"], env=env, out=open(os.devnull, "w")) == 0
    import io

    first, second = io.StringIO(), io.StringIO()
    assert uninstaller.main(["--purge"], env=env, out=first) == 0
    assert uninstaller.main(["--purge"], env=env, out=second) == 0
    assert not list(home.rglob("*.harnesslink-backup")), "the original is back: its backup is gone"
    assert not (home / ".superpi").exists(), "no empty folder of ours is left"
    assert (home / ".claude" / "settings.json").read_text() == '{"model": "opus"}\n'
    assert "removed" in first.getvalue() and "nothing to remove" in second.getvalue()
    assert "removed" not in second.getvalue().replace("nothing to remove", "")


def test_forget_by_query_takes_only_what_it_is_sure_of_and_shows_why(tmp_path: Path, capsys, monkeypatch) -> None:
    from harnesslink_core.main import main
    from harnesslink_core.paths import locations
    from memory_helpers import write_entry

    env = make_env(tmp_path)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    locs = locations(env)
    listing = write_entry(locs, "/home/dev/shop", title="List the files of the python project",
                          result="Ran ls -la: src, tests, README.md, pyproject.toml.",
                          actions=[("bash", {"command": "ls -la"})])
    hello = write_entry(locs, "/home/dev/shop", title="Print hello world in python",
                        result="Wrote hello.py that prints hello world with python 3.", ts="2026-08-28T11:00:00.000Z",
                        turn_id="h1", actions=[("write", {"path": "hello.py"})])
    forget = ["forget", "--cwd", "/home/dev/shop", "--dry-run", "--query"]
    assert main([*forget, "python deployment pipeline"]) == 1, "one shared word takes nothing"
    assert "surely enough" in capsys.readouterr().out
    assert main([*forget, "hello world python"]) == 0
    out = capsys.readouterr().out
    assert hello.name in out and listing.name not in out and "score " in out and "matched " in out
    assert main([*forget, "hello world python", "--loose"]) == 0
    assert listing.name in capsys.readouterr().out, "--loose takes the recall search's best, however weak"


def test_backfill_says_which_turns_it_left_out_and_what_would_bank_them(capsys, monkeypatch, isolated_home) -> None:
    from datetime import datetime, timedelta, timezone

    from harnesslink_core.main import main
    from tests.claude_builder import ClaudeSession

    old = ClaudeSession(isolated_home, cwd="/work/old", start=datetime.now(timezone.utc) - timedelta(days=120))
    old.turn("Set up the release checklist", "The checklist covers tagging, the changelog and the upload. " * 5,
             tools=[("Bash", {"command": "make release"})])
    old.flush()
    assert main(["backfill", "--days", "90"]) == 0
    out = capsys.readouterr().out
    assert "banked 0" in out and "outside the 90-day window, by each turn's own time" in out
    days = int(out.split("--days ")[1].split("`")[0])
    assert 120 <= days <= 122
    assert main(["backfill", "--days", str(days)]) == 0
    assert "banked 1" in capsys.readouterr().out
