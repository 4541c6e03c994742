"""`harnesslink resume`: the listing, its JSON, and resuming one session natively or through a handoff."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from harnesslink_core.commands import resume
from harnesslink_core.main import main
from harnesslink_core.sessions import handoff
from tests.claude_builder import ClaudeSession
from tests.session_builders import CodexWriter
from sessions.test_sessions import _install_fixture_world

CWD = "/work/app"
BIG_CODEX = "019c8bfe-0000-7000-8000-0000000000bb"


def _big_codex(home: Path, cwd: str = CWD) -> Path:
    writer = CodexWriter(home / ".codex" / "sessions" / "2026" / "11" / "30" /
                         f"rollout-2026-11-30T10-00-00-{BIG_CODEX}.jsonl", cwd, BIG_CODEX)
    for n in range(30):
        writer.turn(n, output_chars=8_000)
    return writer.write()


def _json(capsys, *args: str) -> dict:
    assert main(["resume", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_json_lists_each_harness_with_a_runnable_command_and_offers_the_brief_only_when_big(
        locs, isolated_home: Path, capsys, tmp_path: Path) -> None:
    cwd = str(tmp_path / "app")
    Path(cwd).mkdir()
    _install_fixture_world(isolated_home, cwd)
    _big_codex(isolated_home, cwd)
    listing = _json(capsys, "--cwd", cwd, "-n", "20")
    rows = listing["sessions"]
    assert {r["harness"] for r in rows} == {"claude-code", "codex", "pi", "omp"} and len(rows) == 8
    for row in rows:
        assert {"harness", "session_id", "cwd", "replay_tokens", "resume_command", "brief_offered"} <= row.keys()
        assert row["cwd"] == cwd and row["run_in"] == cwd
        assert row["resume_command"] == f"cd {shlex.quote(cwd)} && {shlex.join(row['resume_argv'])}"
        assert row["session_id"] in row["resume_argv"]
    big = next(r for r in rows if r["session_id"] == BIG_CODEX)
    assert big["brief_offered"] and big["replay_tokens"] >= 50_000
    assert 0 < big["fresh_tokens"] < 5_000 and big["fresh_command"] == f"harnesslink resume {BIG_CODEX} --fresh"
    small = [r for r in rows if r["session_id"] != BIG_CODEX]
    assert all(not r["brief_offered"] and r["replay_tokens"] < 50_000 and "fresh_tokens" not in r for r in small)
    assert [r["harness"] for r in _json(capsys, "--cwd", cwd, "--harness", "omp")["sessions"]] == ["omp"]
    assert len(_json(capsys, "--cwd", cwd, "-n", "2")["sessions"]) == 2


def test_the_listing_marks_a_big_session_and_offers_the_fresh_start(locs, isolated_home: Path, capsys) -> None:
    _big_codex(isolated_home)
    s = ClaudeSession(isolated_home, cwd=CWD)
    s.turn("Small talk about the parser", "Sure.")
    s.flush()
    assert main(["resume", "--cwd", CWD]) == 0
    out = capsys.readouterr().out
    assert f"codex  {BIG_CODEX}" in out and "50,000+: a fresh start is cheaper" in out
    assert f"native: cd {CWD} && codex resume {BIG_CODEX}" in out
    assert f"fresh:  harnesslink resume {BIG_CODEX} --fresh" in out
    assert f"claude --resume {s.session_id}" in out and out.count("fresh:") == 1


def test_an_empty_folder_says_so(locs, capsys) -> None:
    assert main(["resume", "--cwd", "/nowhere"]) == 0
    assert "No sessions" in capsys.readouterr().out


def test_an_unknown_prefix_is_a_clear_error(locs, isolated_home: Path, capsys) -> None:
    _big_codex(isolated_home)
    assert main(["resume", "ffff"]) == 2
    assert "no session id starts with 'ffff'" in capsys.readouterr().err


def test_an_ambiguous_prefix_lists_the_candidates(locs, isolated_home: Path, capsys, tmp_path: Path) -> None:
    cwd = str(tmp_path / "app")
    Path(cwd).mkdir()
    _install_fixture_world(isolated_home, cwd)
    assert main(["resume", "01a228f1", "--no-launch", "--native"]) == 2
    err = capsys.readouterr().err
    assert "matches 5 sessions" in err
    assert err.count("01a228f1-") == 5 and "codex" in err and "omp" in err and "pi" in err


def test_a_folder_that_is_gone_is_a_clear_error(locs, isolated_home: Path, capsys) -> None:
    _big_codex(isolated_home, "/gone/app")
    assert main(["resume", BIG_CODEX[:13], "--native", "--no-launch"]) == 2
    assert "no longer exists: /gone/app" in capsys.readouterr().err


def test_a_harness_that_is_not_installed_is_a_clear_error(locs, isolated_home: Path, capsys, tmp_path,
                                                           monkeypatch) -> None:
    cwd = tmp_path / "app"
    cwd.mkdir()
    _big_codex(isolated_home, str(cwd))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert main(["resume", BIG_CODEX, "--in", "omp"]) == 2
    assert "omp is not installed here (`omp` is not on PATH)" in capsys.readouterr().err
    assert main(["resume", BIG_CODEX, "--native"]) == 2
    assert "codex is not installed" in capsys.readouterr().err


def test_no_launch_prepares_the_handoff_and_prints_the_command(locs, isolated_home: Path, capsys, tmp_path) -> None:
    cwd = tmp_path / "app"
    cwd.mkdir()
    _big_codex(isolated_home, str(cwd))
    assert main(["resume", BIG_CODEX[:10], "--in", "claude-code", "--no-launch"]) == 0
    out = capsys.readouterr().out
    assert f"Run:  cd {cwd} && claude" in out and "taken once" in out
    waiting = handoff.pending(locs.agent_dir, str(cwd), "claude-code")
    assert waiting is not None and waiting["source"]["session_id"] == BIG_CODEX
    assert "Step 29: fix the parser" in waiting["text"]
    assert main(["resume", BIG_CODEX, "--native", "--no-launch"]) == 0
    assert capsys.readouterr().out.strip() == f"cd {cwd} && codex resume {BIG_CODEX}"


def test_launching_runs_the_harness_in_the_sessions_folder(locs, isolated_home: Path, tmp_path, monkeypatch) -> None:
    cwd = tmp_path / "app"
    cwd.mkdir()
    _big_codex(isolated_home, str(cwd))
    calls = []
    monkeypatch.setattr(resume.shutil, "which", lambda name, **_: f"/opt/bin/{name}")
    monkeypatch.setattr(resume.subprocess, "call", lambda argv, cwd: calls.append((argv, cwd)) or 0)
    assert main(["resume", BIG_CODEX, "--native"]) == 0
    assert main(["resume", BIG_CODEX, "--fresh"]) == 0
    assert main(["resume", BIG_CODEX, "--in", "pi"]) == 0
    assert calls == [(["/opt/bin/codex", "resume", BIG_CODEX], str(cwd)), (["/opt/bin/codex"], str(cwd)),
                     (["/opt/bin/pi"], str(cwd))]
    assert handoff.pending(locs.agent_dir, str(cwd), "codex") and handoff.pending(locs.agent_dir, str(cwd), "pi")


def test_without_a_flag_off_a_terminal_it_says_what_it_would_do(locs, isolated_home: Path, capsys, tmp_path) -> None:
    cwd = tmp_path / "app"
    cwd.mkdir()
    _big_codex(isolated_home, str(cwd))
    assert main(["resume", BIG_CODEX]) == 0
    out = capsys.readouterr().out
    assert "[n] native resume, replays ≈" in out and "[f] fresh codex session" in out
    assert "Nothing started" in out and "fresh is the cheaper" in out
    assert handoff.pending(locs.agent_dir, str(cwd), "codex") is None


def test_on_a_terminal_it_asks_with_both_costs(locs, isolated_home: Path, capsys, tmp_path, monkeypatch) -> None:
    cwd = tmp_path / "app"
    cwd.mkdir()
    _big_codex(isolated_home, str(cwd))
    calls = []
    monkeypatch.setattr(resume.sys.stdin, "isatty", lambda: True, raising=False)
    monkeypatch.setattr(resume.sys.stdout, "isatty", lambda: True, raising=False)
    monkeypatch.setattr("builtins.input", lambda prompt: "")
    monkeypatch.setattr(resume.shutil, "which", lambda name, **_: f"/opt/bin/{name}")
    monkeypatch.setattr(resume.subprocess, "call", lambda argv, cwd: calls.append(argv) or 0)
    assert main(["resume", BIG_CODEX]) == 0
    assert calls == [["/opt/bin/codex"]], "the default is the cheaper fresh start"
    assert handoff.pending(locs.agent_dir, str(cwd), "codex") is not None


@pytest.mark.parametrize("flags", [["--fresh"], ["--native"], ["--in", "pi"], ["--no-launch"]])
def test_session_flags_need_a_session(flags: list[str], locs, capsys) -> None:
    assert main(["resume", *flags]) == 2
    assert "need a SESSION" in capsys.readouterr().err


def test_a_folder_kept_out_of_memory_gets_no_handoff(locs, isolated_home: Path, capsys, tmp_path) -> None:
    cwd = tmp_path / "app"
    cwd.mkdir()
    (cwd / ".harnesslink-off").write_text("")
    _big_codex(isolated_home, str(cwd))
    assert main(["resume", BIG_CODEX, "--in", "pi", "--no-launch"]) == 2
    err = capsys.readouterr().err
    assert "kept out of HarnessLink memory" in err and f"codex resume {BIG_CODEX}" in err
    assert not (locs.agent_dir / handoff.FOLDER).exists()
