"""The real thing once: `python install.py` makes a venv, installs the package from PyPI deps, and hooks run from it."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def run(script: str, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(REPO / script), *args], env=env, capture_output=True, text=True, timeout=600
    )


@pytest.mark.slow
def test_install_makes_a_private_environment_the_hooks_run_from(tmp_path: Path) -> None:
    home = tmp_path / "home with space"
    (home / ".claude").mkdir(parents=True)
    settings = home / ".claude" / "settings.json"
    original = b'{"model": "opus"}\n'
    settings.write_bytes(original)
    # a PATH with no python on it: the hooks must not need one
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}

    done = run("install.py", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    venv = home / ".superpi" / "agent" / "venv"
    assert (venv / "pyvenv.cfg").exists()
    deps = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import yaml, frontmatter, filelock, orjson, harnesslink_core.hooks"],
        capture_output=True, text=True,
    )
    assert deps.returncode == 0, deps.stderr
    assert "backfill: started" in done.stdout

    command = json.loads(settings.read_text())["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    payload = json.dumps({"session_id": "s1", "transcript_path": str(tmp_path / "none.jsonl"), "cwd": str(tmp_path),
                          "hook_event_name": "SessionStart", "source": "startup"})
    hook = subprocess.run(["sh", "-c", command], input=payload, env=env, capture_output=True, text=True, timeout=60)
    assert hook.returncode == 0, hook.stderr
    json.loads(hook.stdout)  # one JSON object, whatever it says

    deadline = time.monotonic() + 60
    log = home / ".superpi" / "agent" / "logs" / "harnesslink.log"
    while not log.exists() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert log.exists()  # the detached backfill has started writing

    again = run("install.py", "--no-backfill", env=env)
    assert again.returncode == 0 and "already wired" in again.stdout

    gone = run("uninstall.py", env=env)
    assert gone.returncode == 0, gone.stdout + gone.stderr
    assert settings.read_bytes() == original
    assert not venv.exists()
