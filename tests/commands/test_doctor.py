"""`harnesslink doctor`, through the CLI's main(): each state says what is wrong and the one command that fixes
it, and the exit code says whether something needs the user."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harnesslink_core import __version__
from harnesslink_core.main import main

REPO = Path(__file__).resolve().parents[2]


def doctor(capsys: pytest.CaptureFixture[str]) -> tuple[int, dict]:
    code = main(["doctor", "--json"])
    return code, json.loads(capsys.readouterr().out)


def problems(report: dict) -> list[dict]:
    return [c for checks in [*report["harnesses"].values(), report["general"]] for c in checks if not c["ok"]]


def codex_plugin_installed(home: Path) -> None:
    codex = home / ".codex"
    (codex / "plugins" / "cache" / "harnesslink" / "harnesslink" / __version__).mkdir(parents=True)
    (codex / "config.toml").write_text('[plugins."harnesslink@harnesslink"]\nenabled = true\n')


def codex_plugin_venv_made(locs) -> Path:
    """The Codex plugin's venv as its setup leaves it (stamped), its `harnesslink` running this checkout."""
    venv = locs.agent_dir / "codex-plugin" / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "harnesslink-plugin.stamp").write_text(f"{__version__} /plugin\n")
    cli = venv / "bin" / "harnesslink"
    cli.write_text(f"#!/bin/sh\nPYTHONPATH='{REPO}' exec '{sys.executable}' -m harnesslink_core.main \"$@\"\n")
    cli.chmod(0o755)
    return cli


def test_nothing_wired_is_all_well(locs, capsys, monkeypatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    code, report = doctor(capsys)
    assert code == 0 and report["ok"] and report["harnesses"] == {}, report


def test_a_plugin_whose_hooks_never_ran_names_the_trust_step(locs, isolated_home, capsys, monkeypatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    codex_plugin_installed(isolated_home)
    code, report = doctor(capsys)
    assert code == 1
    [plugin] = [c for c in report["harnesses"]["codex"] if c["name"] == "plugin"]
    assert __version__ in plugin["detail"]
    silent = {c["name"]: c["fix"] for c in problems(report)}
    assert "/hooks" in silent["hook user-prompt-submit"] and "/hooks" in silent["hook session-start"]


def test_hooks_that_ran_are_dated_by_their_own_record(locs, isolated_home, capsys, monkeypatch) -> None:
    codex_plugin_installed(isolated_home)
    codex_plugin_venv_made(locs)
    for event in ("session-start", "user-prompt-submit"):
        done = subprocess.run([sys.executable, "-m", "harnesslink_core.hooks", event, "--harness", "codex"],
                              input="{}", capture_output=True, text=True, timeout=60, cwd=isolated_home,
                              env={**os.environ, "PYTHONPATH": str(REPO)})
        assert done.returncode == 0 and done.stdout.startswith("{")
    monkeypatch.setenv("PATH", "/nonexistent")
    for _ in range(100):  # the record is written after the answer, by a detached process
        code, report = doctor(capsys)
        if code == 0:
            break
        import time

        time.sleep(0.1)
    assert code == 0, problems(report)
    ran = {c["name"]: c["detail"] for c in report["harnesses"]["codex"]}
    assert __version__ in ran["hook user-prompt-submit"] and "ran " in ran["hook session-start"]
    assert "memory_search" in ran["memory server"], "the plugin's own memory server answers"


def test_a_venv_older_than_the_package_says_run_install(locs, capsys) -> None:
    venv = locs.agent_dir / "venv"
    (venv / "lib" / "python3.11" / "site-packages" / "harnesslink_hooks-0.0.1.dist-info").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    code, report = doctor(capsys)
    [check] = [c for c in problems(report) if c["name"] == "private venv"]
    assert code == 1 and "0.0.1" in check["detail"] and "install.py" in check["fix"]


def test_a_broken_index_says_reindex(locs, capsys) -> None:
    locs.agent_dir.mkdir(parents=True, exist_ok=True)
    locs.index_file.write_bytes(b"SQLite format 3\x00" + os.urandom(4096))
    code, report = doctor(capsys)
    [check] = [c for c in problems(report) if c["name"] == "index"]
    assert code == 1 and check["fix"] == "harnesslink reindex"


def test_a_codex_plugin_venv_left_after_remove_is_named(locs, capsys) -> None:
    (locs.agent_dir / "codex-plugin" / "venv").mkdir(parents=True)
    code, report = doctor(capsys)
    [check] = [c for c in problems(report) if c["name"] == "codex plugin venv"]
    assert code == 1 and check["fix"].startswith("rm -rf")


def wired_by_install_py(env: dict[str, str]) -> Path:
    """install.py's wiring of Claude Code (its --no-venv wrappers); the memory server's executable."""
    from harnesslink_core.wiring import installer

    assert installer.main(["--harness", "claude-code", "--no-venv", "--no-backfill"], env=env,
                          out=io.StringIO()) == 0
    return Path(env["HOME"]) / ".superpi" / "agent" / "venv" / "bin" / "harnesslink"


@pytest.mark.parametrize("body", ["exit 3", "exec sleep 60"], ids=["exits at once", "never answers"])
def test_a_memory_server_failing_to_start_says_run_install(locs, capsys, monkeypatch, body: str) -> None:
    from harnesslink_core.commands import doctor as doctor_verb

    server = wired_by_install_py(dict(os.environ))
    [working] = [c for c in doctor(capsys)[1]["harnesses"]["claude-code"] if c["name"] == "memory server"]
    assert working["ok"] and "memory_search" in working["detail"], working
    server.write_text(f"#!/bin/sh\n{body}\n")
    monkeypatch.setattr(doctor_verb, "RPC_TIMEOUT", 2.0)
    started = time.monotonic()
    code, report = doctor(capsys)
    assert time.monotonic() - started < 30, "a server that never answers is given up on"
    [check] = [c for c in problems(report) if c["name"] == "memory server"]
    assert code == 1 and "tools/list" in check["detail"] and "install.py" in check["fix"], check


def test_a_plugin_whose_memory_server_fails_names_its_venv(locs, isolated_home, capsys, monkeypatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    codex_plugin_installed(isolated_home)
    [check] = [c for c in problems(doctor(capsys)[1]) if c["name"] == "memory server"]
    assert "not made yet" in check["detail"] and "session" in check["fix"], check
    codex_plugin_venv_made(locs).write_text("#!/bin/sh\nexit 3\n")
    code, report = doctor(capsys)
    [check] = [c for c in problems(report) if c["name"] == "memory server"]
    assert code == 1 and check["fix"].startswith("rm -rf") and "codex-plugin" in check["fix"], check
