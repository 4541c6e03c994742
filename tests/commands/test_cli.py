"""The `harnesslink` verbs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harnesslink_core import config
from harnesslink_core.main import build_parser, main
from tests.claude_builder import ClaudeSession

ROOT = Path(__file__).resolve().parents[2]


def verbs() -> list[str]:
    parser = build_parser()
    action = next(a for a in parser._actions if a.dest == "command")
    return sorted(action.choices)


@pytest.mark.parametrize("verb", verbs())
def test_every_command_has_help(verb: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main([verb, "--help"])
    assert exc.value.code == 0
    assert "usage:" in capsys.readouterr().out


def test_enable_and_disable_keep_the_rest_of_config(locs) -> None:
    locs.config_file.parent.mkdir(parents=True)
    locs.config_file.write_text("# mine\nmemory:\n  autoBank: true # keep me\ncloud:\n  token: abc\n")
    assert main(["disable", "codex"]) == 0
    assert config.switches(locs).autobank == ["claude-code", "pi", "omp", "antigravity"]
    assert main(["enable", "codex"]) == 0
    text = locs.config_file.read_text()
    assert text.startswith("# mine\nmemory:\n  autoBank: true # keep me\ncloud:\n")
    assert "  token: abc\n" in text
    assert config.switches(locs).autobank[-1] == "codex"


def test_legacy_cloud_harnesses_is_used_until_autobank_exists(locs) -> None:
    locs.config_file.parent.mkdir(parents=True)
    locs.config_file.write_text("cloud:\n  harnesses: [claude-code]\n")
    assert config.switches(locs).autobank == ["claude-code"]
    locs.config_file.write_text("cloud:\n  harnesses: [claude-code]\n  autobank: []\n")
    assert config.switches(locs).autobank == []


def test_invalid_config_means_defaults_and_a_clear_problem(locs) -> None:
    locs.config_file.parent.mkdir(parents=True)
    locs.config_file.write_text("memory: [unclosed\n")
    switches = config.switches(locs)
    assert switches.auto_bank and "not valid YAML" in (switches.problem or "")


def test_status_json_counts_per_harness(locs, isolated_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    s = ClaudeSession(isolated_home)
    s.turn("task one", "x" * 300)
    s.turn("hi", "hello")
    s.flush()
    assert main(["autobank"]) == 0
    capsys.readouterr()
    assert main(["status", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    cc = data["harnesses"]["claude-code"]
    assert (cc["banked"], cc["skipped"], cc["transcripts"], cc["backlog"]) == (1, 1, 1, 0)
    assert cc["last_pass"] and cc["enabled"]


def test_backfill_runs_as_a_real_command(locs, isolated_home: Path) -> None:
    s = ClaudeSession(isolated_home)
    s.turn("task one", "x" * 300)
    s.flush()
    out = subprocess.run([sys.executable, "-m", "harnesslink_core.main", "backfill", "--days", "30"],
                         capture_output=True, text=True, cwd=ROOT, check=True)
    assert "banked 1" in out.stdout


def test_status_says_what_it_could_not_read(locs, isolated_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    zst = isolated_home / ".codex" / "sessions" / "2026" / "11" / "01" / "rollout-2026-11-01T10-00-00-x.jsonl.zst"
    zst.parent.mkdir(parents=True)
    zst.write_bytes(b"\x28\xb5\x2f\xfd")
    pb = isolated_home / ".gemini" / "antigravity" / "conversations" / "c1.pb"
    pb.parent.mkdir(parents=True)
    pb.write_bytes(b"\x0a\x03abc")
    assert main(["status", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)["harnesses"]
    assert "1 compressed rollouts" in data["codex"]["unreadable"]
    assert "encrypted" in data["antigravity"]["unreadable"]
    assert main(["status"]) == 0
    out = capsys.readouterr().out
    assert "codex: cannot read 1 compressed rollouts" in out
    assert out.splitlines()[0].split() == ["harness", "on", "transcripts", "banked", "skipped", "pending", "dropped",
                                           "errors", "backlog", "last", "pass"]


def test_status_help_explains_every_column(capsys: pytest.CaptureFixture[str]) -> None:
    from harnesslink_core.commands.status import COLUMNS

    with pytest.raises(SystemExit):
        main(["status", "--help"])
    text = capsys.readouterr().out
    assert all(f"\n  {column}" in text for column in COLUMNS[1:]), [c for c in COLUMNS[1:] if f"\n  {c}" not in text]


@pytest.mark.parametrize("argv", [["recall", "x", "-k", "99999999999999999999"], ["recall", "x", "-k", "0"],
                                  ["forget", "--query", "x", "-k", "-3"], ["brief", "--budget", "1e9"],
                                  ["resume", "-n", "99999999999999999999"], ["backfill", "--days", "1e400"],
                                  ["backfill", "--days", "nan"], ["resume", "-n", "9" * 400]])
def test_a_number_out_of_range_is_refused_in_one_line(argv: list[str], locs, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "unexpected" not in err and "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith("harnesslink")
