"""With the real Codex CLI: this repository as a Codex plugin marketplace.

`codex plugin marketplace add <this checkout>` and `codex plugin add harnesslink@harnesslink` wire Codex without
install.py: the first session makes the private venv (in the background, in the agent dir, since Codex keeps a
plugin's data folder after removing it), a tool-using turn is banked when the CLI exits, a new session gets the
brief and the prompt's match, `memory_search` answers through the plugin's MCP server, the user's own hooks still
run, and `codex plugin remove` plus `codex plugin marketplace remove` leave no file or line of ours in ~/.codex.
The hooks run with `--dangerously-bypass-hook-trust`, which stands for the user's trust step in `/hooks`;
`harnesslink doctor` asks Codex itself and says they are not trusted yet, with that step as the fix.

The marketplace is a clean copy of HEAD, as a clone has it: the plugin's venv is built from the marketplace's
folder, and the live checkout may hold uncommitted work of others (and pip's in-tree build writes build/ into
it). pip's cache is the checkout's (.cache/pip), so only the first run downloads the dependencies. Each step
waits for what the one before it started in the background (the setup, then its first backfill, which holds the
pass lock a stop hook must get), so a loaded machine makes it slower, not different.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harnesslink_core.harnesses.claude_code import plugin as claude_plugin

from . import clis
from .fake_model import FakeModelServer
from .harnesses import Sandbox, new_sandbox
from .install_flow import REPO, Flow, assert_plugin_gone, prove_plugin_memory
from .marks import SLOW_E2E

pytestmark = SLOW_E2E

PLUGIN = "harnesslink@harnesslink"
SETUP_TIMEOUT_SECONDS = 300
BANKING_TIMEOUT_SECONDS = 120


@pytest.fixture
def sandbox(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    """A sandbox whose HOME is kept when the test fails (its path printed): the setup log, the hooks' log,
    hook-runs/ and Codex's own files say why. What the run left in the background (a pass, the encoder) ends
    first, so nothing writes into the HOME once it is gone."""
    with FakeModelServer() as server:
        box = new_sandbox(server)
        failures = request.session.testsfailed
        yield box
        end_processes_of(box.home)
        if request.session.testsfailed > failures:
            print(f"\nkept the failed run's HOME: {box.home}")
        else:
            shutil.rmtree(box.home.parent, ignore_errors=True)


def end_processes_of(home: Path) -> None:
    """SIGTERM to each process (started by this run) whose HOME is the sandbox's."""
    wanted = f"HOME={home}".encode() + b"\0"
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and wanted in (proc / "environ").read_bytes():
                os.kill(int(proc.name), signal.SIGTERM)
        except OSError:
            continue


def codex(flow: Flow, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(clis.cli_path("codex")), *args], env=flow.env(), cwd=flow.sandbox.project,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"codex {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done


def clean_copy(folder: Path) -> Path:
    """HEAD of this repository in `folder`, as a clone holds it (the plugin's symlinks included)."""
    folder.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", "HEAD"], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    return folder


def share_pip_cache(sandbox: Sandbox) -> None:
    """The sandbox's pip cache is the checkout's: the setup pip runs inside a hook sees only the sandbox's HOME."""
    shared = REPO / ".cache" / "pip"
    shared.mkdir(parents=True, exist_ok=True)
    (sandbox.home / ".cache").mkdir(exist_ok=True)
    (sandbox.home / ".cache" / "pip").symlink_to(shared)


def wait_until(done, seconds: float, every: float = 0.5) -> bool:
    deadline = time.monotonic() + seconds
    while not done():
        if time.monotonic() > deadline:
            return False
        time.sleep(every)
    return True


def wait_for_setup(flow: Flow) -> str:
    """The setup's log, once the venv is ready and the first backfill it started has finished."""
    data = flow.agent_dir / "codex-plugin"
    stamp = data / "venv" / claude_plugin.STAMP
    log, hooks_log = data / "setup.log", flow.agent_dir / "logs" / "harnesslink.log"

    def read(path: Path) -> str:
        return path.read_text(encoding="utf-8") if path.exists() else f"(no {path.name})"

    assert wait_until(stamp.exists, SETUP_TIMEOUT_SECONDS), (
        f"the plugin's setup did not finish in {SETUP_TIMEOUT_SECONDS} s:\n{read(log)[-3000:]}")
    assert wait_until(lambda: "backfill of codex over" in read(hooks_log), SETUP_TIMEOUT_SECONDS), (
        f"the first backfill did not finish in {SETUP_TIMEOUT_SECONDS} s:\n{read(hooks_log)[-3000:]}")
    return read(log)


def doctor(flow: Flow) -> tuple[int, dict]:
    """`harnesslink doctor --json` of the plugin's venv, with Codex on PATH (it asks Codex about trust)."""
    cli = flow.agent_dir / "codex-plugin" / "venv" / "bin" / "harnesslink"
    env = flow.env()
    env["PATH"] = os.pathsep.join([str(clis.cli_path("codex").parent), env["PATH"]])
    done = subprocess.run([str(cli), "doctor", "--json"], env=env, cwd=flow.sandbox.project, capture_output=True,
                          text=True, timeout=120)
    return done.returncode, json.loads(done.stdout)


def user_files(home: Path) -> dict[str, bytes | None]:
    return {name: (home / name).read_bytes() if (home / name).exists() else None for name in ("config.toml", "hooks.json")}


def ours_in(home: Path) -> list[str]:
    """Every file or folder under ~/.codex that names HarnessLink or holds its name, but the user's two
    (compared whole), the session transcripts and Codex's own databases (which record what the sessions did,
    the plugin's tools included), and the empty folder plugins/cache/harnesslink, which Codex itself leaves."""
    found = []
    for path in sorted(home.rglob("*")):
        relative = path.relative_to(home)
        if relative.parts[0] == "sessions" or ".sqlite" in path.name or str(relative) in ("config.toml", "hooks.json"):
            continue
        if path.is_dir():
            if "harnesslink" in str(relative) and (str(relative) != "plugins/cache/harnesslink" or any(path.iterdir())):
                found.append(f"{relative}/")
        elif "harnesslink" in str(relative) or b"harnesslink" in path.read_bytes():
            found.append(str(relative))
    return found


def test_the_plugin_from_a_local_marketplace_wires_codex_and_removes_clean(sandbox: Sandbox) -> None:
    flow = Flow("codex", sandbox)
    flow.driver.prepare(sandbox)  # the user's own hooks and config.toml, which must keep running and stay
    codex_home = sandbox.home / ".codex"
    before = user_files(codex_home)

    share_pip_cache(sandbox)
    marketplace = clean_copy(sandbox.home.parent / "marketplace")

    codex(flow, "plugin", "marketplace", "add", str(marketplace))
    codex(flow, "plugin", "add", PLUGIN)
    assert not (flow.agent_dir / "venv").exists(), "the plugin does not use install.py's environment"

    flow.driver.start(sandbox, "hello").check()  # the first session starts the setup
    log = wait_for_setup(flow)
    assert "making" in log and "ready" in log and "cloud.autobank: codex" in log, log

    topic, entries = prove_plugin_memory(flow, "", BANKING_TIMEOUT_SECONDS)
    assert "harness: codex" in entries[0].read_text(encoding="utf-8")

    code, report = doctor(flow)  # the hooks ran (trust bypassed for each run), yet Codex does not trust them
    checks = {c["name"]: c for c in report["harnesses"]["codex"]}
    assert code == 1 and not checks["codex trust"]["ok"], checks
    assert "not trusted" in checks["codex trust"]["detail"] and "/hooks" in checks["codex trust"]["fix"], checks
    assert all(checks[f"hook {event}"]["detail"].startswith("ran ") for event in ("session-start", "user-prompt-submit",
                                                                                 "stop")), checks
    assert checks["plugin"]["ok"] and checks["last banked"]["detail"] != "no turn banked yet", checks
    assert checks["memory server"]["ok"] and "memory_search" in checks["memory server"]["detail"], checks

    codex(flow, "plugin", "remove", PLUGIN)
    codex(flow, "plugin", "marketplace", "remove", "harnesslink")
    assert user_files(codex_home) == before, "config.toml and hooks.json are back byte for byte"
    assert not ours_in(codex_home), ours_in(codex_home)
    assert_plugin_gone(flow, topic, entries[0])
