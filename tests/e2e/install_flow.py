"""The install proof, shared by tests/e2e/test_install_<harness>.py: install.py wired into a real CLI.

In a throwaway HOME with the user's own hooks already configured (the drivers'
`prepare`), run `install.py` (a real private venv), run a tool-using turn with
the real CLI against the fake model, and check: the turn is banked as soon as
the CLI exits (our stop hook, no backfill); a new session asking about that
work gets the entry in a framed, budgeted block; the user's hooks still ran;
`uninstall.py` puts the settings back byte for byte.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harnesslink_core.recall.matches import BUDGET as MATCHES_BUDGET

from .harnesses import DRIVERS, Driver, Sandbox

REPO = Path(__file__).resolve().parents[2]
FRAMED = re.compile(r'<harnesslink-memory kind="(\w+)"[^>]*>.*?</harnesslink-memory>', re.DOTALL)


@dataclass
class Flow:
    harness: str
    sandbox: Sandbox

    @property
    def driver(self) -> Driver:
        return DRIVERS[self.harness]

    @property
    def agent_dir(self) -> Path:
        return self.sandbox.home / ".superpi" / "agent"

    def env(self) -> dict[str, str]:
        env = dict(self.driver.env(self.sandbox))  # type: ignore[attr-defined]
        env["PIP_CACHE_DIR"] = str(REPO / ".cache" / "pip")  # one download of the deps for all four tests
        env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
        return env

    def run_script(self, script: str, *args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [sys.executable, str(REPO / script), *args],
            env=self.env(), capture_output=True, text=True, timeout=600,
        )
        assert done.returncode == 0, f"{script} failed:\n{done.stdout}\n{done.stderr}"
        return done

    def user_files(self) -> dict[str, bytes | None]:
        """The files install may touch for this harness, and the folder it writes into: to compare after uninstall."""
        files: dict[str, bytes | None] = {}
        if self.harness in ("claude-code", "codex"):
            folder = self.sandbox.home / (".claude" if self.harness == "claude-code" else ".codex")
            names = ["settings.json"] if self.harness == "claude-code" else ["hooks.json", "config.toml"]
        else:
            folder = self.sandbox.home / f".{self.harness}" / "agent" / "extensions"
            names = sorted(p.name for p in folder.iterdir())
            files["listing"] = "\n".join(names).encode()
        for name in names:
            path = folder / name
            files[name] = path.read_bytes() if path.exists() else None
        return files

    def bank_entries(self, containing: str) -> list[Path]:
        return [p for p in self.agent_dir.glob("memories/*/bank/*.md") if containing in p.read_text(encoding="utf-8")]

    def settled(self, seconds: float = 120) -> None:
        """Once no hook of this sandbox is still at work: the stop hook banks after its answer, in a detached
        process, so a CLI that has exited may still have a pass running for it (whose files come and go)."""
        venv = str(self.agent_dir / "venv")
        deadline = time.monotonic() + seconds
        while any(venv in line and "context-hook" in line for line in _command_lines()):
            if time.monotonic() > deadline:
                raise AssertionError(f"a hook of {venv} was still running after {seconds} s")
            time.sleep(0.2)

    def settled_entries(self, containing: str) -> list[Path]:
        """`bank_entries` once every hook of the sandbox is done: what the turns made, all of it."""
        self.settled()
        return self.bank_entries(containing)

    def banked(self, containing: str, seconds: float = 120) -> list[Path]:
        """The entries holding `containing`, once the stop hook's pass has written one: it runs after the
        hook's answer, detached, so a CLI that does not wait for it exits before the entry is there."""
        deadline = time.monotonic() + seconds
        while not self.bank_entries(containing) and time.monotonic() < deadline:
            time.sleep(0.2)
        return self.bank_entries(containing)

    def framed_blocks(self, since: int) -> Iterator[tuple[str, str]]:
        """(kind, block) for every memory block we framed in the model requests from request `since` on."""
        for request in self.sandbox.server.model_requests()[since:]:
            for text in strings_in(request.body):
                for found in FRAMED.finditer(text):
                    yield found.group(1), found.group(0)


def prove_plugin_memory(flow: Flow, tools: str, banking_seconds: float = 120) -> tuple[str, list[Path]]:
    """What a plugin's wiring gives a user, once its setup is done: a tool-using turn is banked (by the stop
    hook's detached pass), the next prompt about it gets it in a budgeted match and the session start names
    it in the brief, the user's own hooks ran, and `memory_search` answers through the plugin's MCP server
    (whose tools the harness names with the prefix `tools`). Returns the turn's topic and its entries (one)."""
    from .fake_model import tool_result_of

    sandbox = flow.sandbox
    topic = f"quasar{secrets.token_hex(3)}"
    flow.driver.start(sandbox, f"Calibrate the {topic} flux capacitor [[bash: echo calibrated-$((40+2))]]").check()
    entries = flow.banked(topic, banking_seconds)
    assert len(entries) == 1, f"expected one entry about {topic}: {entries}\n{_log(flow)}"

    since = len(sandbox.server.model_requests())
    flow.driver.start(sandbox, f"How did we calibrate the {topic} flux capacitor before?").check()
    blocks = list(flow.framed_blocks(since))
    matches = [block for kind, block in blocks if kind == "matches"]
    assert any(topic in block and entries[0].name in block for block in matches), [k for k, _ in blocks]
    assert all(len(block) <= MATCHES_BUDGET for block in matches)
    assert any(kind == "brief" and topic in block for kind, block in blocks), "the session-start brief names it"
    assert {"SessionStart", "UserPromptSubmit", "Stop"} <= user_hooks_ran(flow)

    since = len(sandbox.server.model_requests())
    flow.driver.start(sandbox, f'Use memory. [[tool: memory_search | {{"query": "{topic} calibration"}}]]').check()
    requests = sandbox.server.model_requests()[since:]
    call = next((r.reply.tool_call for r in requests if r.reply and r.reply.tool_call), None)
    offered = [t.get("name") for r in requests[:1] for t in (r.body.get("tools") or [])]
    assert call and call.name.startswith(tools) and "memory_search" in call.name, f"the plugin's memory tools were not offered: {call}; {offered}"
    result = next((tool_result_of(r) for r in requests if tool_result_of(r)), None)
    assert result and topic in result, result
    return topic, entries


def assert_plugin_gone(flow: Flow, topic: str, entry: Path) -> None:
    """Once the plugin is removed, no memory reaches a session, and the memory itself stays (it is the user's)."""
    since = len(flow.sandbox.server.model_requests())
    flow.driver.start(flow.sandbox, f"How did we calibrate the {topic} flux capacitor before?").check()
    assert not list(flow.framed_blocks(since)), "no memory reaches a session once the plugin is gone"
    assert entry.exists(), "the memory itself stays, as with uninstall.py (it is the user's)"


def strings_in(value: Any) -> Iterator[str]:
    """Every string in a JSON value (a request body), depth first."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_in(item)


def user_hooks_ran(flow: Flow) -> set[str]:
    """Which events the user's own pre-existing hooks (or extension) saw."""
    if flow.harness in ("claude-code", "codex"):
        log = flow.sandbox.hook_log
        lines = log.read_text().splitlines() if log.exists() else []
        return {json.loads(line).get("hook_event_name", "") for line in lines}
    log = flow.sandbox.home / "extension-events.jsonl"
    lines = log.read_text().splitlines() if log.exists() else []
    return {json.loads(line)["event"] for line in lines}


def _command_lines() -> list[str]:
    """Every process's command line (a zombie's is empty), as one string each."""
    lines = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    lines.append(f.read().replace(b"\0", b" ").decode("utf-8", "replace"))
            except OSError:
                continue
    return lines


def prove_install(harness: str, sandbox: Sandbox) -> None:
    flow = Flow(harness, sandbox)
    flow.driver.prepare(sandbox)
    originals = flow.user_files()

    installed = flow.run_script("install.py", "--harness", harness, "--no-backfill")
    assert f"{harness}: wired" in installed.stdout, installed.stdout
    assert (flow.agent_dir / "venv" / "pyvenv.cfg").exists()

    topic = f"quasar{secrets.token_hex(3)}"
    first = flow.driver.start(sandbox, f"Calibrate the {topic} flux capacitor [[bash: echo calibrated-$((40+2))]]")
    first.check()
    assert sandbox.server.saw_tool_result(containing="calibrated-42")
    entries = flow.settled_entries(topic)
    assert len(entries) == 1, f"expected one bank entry about {topic}, found {entries}; log:\n{_log(flow)}"
    entry = entries[0].read_text(encoding="utf-8")
    assert f"harness: {harness}" in entry and "calibrated-42" in entry

    since = len(sandbox.server.model_requests())
    second = flow.driver.start(sandbox, f"How did we calibrate the {topic} flux capacitor before?")
    second.check()
    blocks = list(flow.framed_blocks(since))
    matches = [block for kind, block in blocks if kind == "matches"]
    assert matches, f"no framed matches reached the model; blocks: {[k for k, _ in blocks]}; log:\n{_log(flow)}"
    assert any(topic in block and entries[0].name in block for block in matches)
    assert all(len(block) <= MATCHES_BUDGET for block in matches)
    assert any(kind == "brief" and topic in block for kind, block in blocks), "the session-start brief names it"

    expected = {"SessionStart", "UserPromptSubmit", "Stop"} if harness in ("claude-code", "codex") else {
        "session_start", "before_agent_start", "agent_end"}
    assert expected <= user_hooks_ran(flow), user_hooks_ran(flow)

    just_before = flow.user_files()
    flow.run_script("uninstall.py")
    assert_restored(flow, originals, just_before)
    assert not (flow.agent_dir / "venv").exists()


def assert_restored(flow: Flow, originals: dict[str, bytes | None], just_before: dict[str, bytes | None]) -> None:
    """Uninstall gives back the original bytes; where the harness itself changed its settings file meanwhile
    (Claude Code rewrites settings.json with keys of its own), our hooks are gone and its changes stay."""
    after = flow.user_files()
    for name, original in originals.items():
        if original is None or name == "listing" or not name.endswith(".json"):
            assert after[name] == original, name
            continue
        if after[name] == original:
            continue
        old, now, before = (json.loads(v or b"{}") for v in (original, after[name], just_before[name]))
        assert now.get("hooks") == old.get("hooks"), f"{name}: the user's hooks are not back as they were"
        assert now.get("permissions") == old.get("permissions"), f"{name}: permissions are not back as they were"
        assert _theirs(now) == _theirs(before)
        assert _theirs(before) != _theirs(old), (
            f"{name}: nothing but our hooks and permission changed, so the original bytes should be back")


def _theirs(settings: dict[str, Any]) -> dict[str, Any]:
    """Settings without what install adds: hooks, and the memory tools' permission (`permissions`)."""
    return {k: v for k, v in settings.items() if k not in ("hooks", "permissions")}


def _log(flow: Flow) -> str:
    log = flow.agent_dir / "logs" / "harnesslink.log"
    return log.read_text(encoding="utf-8")[-3000:] if log.exists() else "(no log)"
