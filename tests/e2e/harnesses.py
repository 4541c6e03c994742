"""Run each real harness CLI non-interactively against the fake model, inside a throwaway HOME.

A `Sandbox` is one temporary HOME (with the project folder and TMPDIR inside it, so every path a CLI writes can be
mapped to the stable `/home/tester`) plus a running `FakeModelServer`. Each `Driver` knows how to configure its
CLI in that HOME, start a session, continue it, and fork it where the CLI can do that from the command line.

Every run is bounded by a timeout, gets a minimal environment (nothing inherited but PATH), and is configured to
make no network call but to 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from . import clis
from .fake_model import FakeModelServer

RUN_TIMEOUT_SECONDS = 180
PLACEHOLDER_HOME = "/home/tester"
MEMORY = "<harnesslink-memory>hello</harnesslink-memory>"
START_MEMORY = "<harnesslink-memory>session-start</harnesslink-memory>"
HOOK_LOG = "hook-inputs.jsonl"  # under HOME: every hook's stdin, one JSON line per call


@dataclass
class Sandbox:
    home: Path
    server: FakeModelServer

    @property
    def project(self) -> Path:
        return self.home / "project"

    @property
    def tmp(self) -> Path:
        return self.home / "tmp"

    @property
    def hook_log(self) -> Path:
        return self.home / HOOK_LOG

    def placeholders(self) -> list[tuple[str, str]]:
        """(sandbox text, stable text) pairs: the raw HOME path and the dash-encoded forms CLIs use in folder names."""
        raw = str(self.home)
        encoded = re.sub(r"[^A-Za-z0-9]", "-", raw)
        return [(raw, PLACEHOLDER_HOME), (encoded, re.sub(r"[^A-Za-z0-9]", "-", PLACEHOLDER_HOME))]


def new_sandbox(server: FakeModelServer) -> Sandbox:
    # Our own name (hex only) so the dash-encoded path is predictable; mkdtemp may add "_".
    home = Path(tempfile.gettempdir()) / f"harnesslink-e2e-{secrets.token_hex(4)}" / "home"
    sandbox = Sandbox(home, server)
    for folder in (sandbox.project, sandbox.tmp):
        folder.mkdir(parents=True)
    return sandbox


def remove_sandbox(sandbox: Sandbox) -> None:
    shutil.rmtree(sandbox.home.parent, ignore_errors=True)


@dataclass
class Run:
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    session_id: str | None = None

    def check(self) -> Run:
        if self.returncode != 0:
            raise RuntimeError(f"{self.argv[:3]}… exited {self.returncode}\nstdout:\n{self.stdout[-3000:]}\n"
                               f"stderr:\n{self.stderr[-3000:]}")
        return self


class Driver(Protocol):
    harness: str
    can_fork: bool

    def prepare(self, sandbox: Sandbox) -> None: ...
    def start(self, sandbox: Sandbox, prompt: str) -> Run: ...
    def resume(self, sandbox: Sandbox, session_id: str, prompt: str) -> Run: ...
    def fork(self, sandbox: Sandbox, session_id: str, prompt: str) -> Run: ...
    def sessions_root(self, sandbox: Sandbox) -> Path: ...


def _base_env(sandbox: Sandbox, extra_path: list[Path] | None = None) -> dict[str, str]:
    path = os.pathsep.join([*(str(p) for p in extra_path or []), os.environ.get("PATH", "/usr/bin:/bin")])
    return {"HOME": str(sandbox.home), "PATH": path, "TMPDIR": str(sandbox.tmp), "LANG": "C.UTF-8",
            "USER": "tester", "TERM": "dumb", "NO_COLOR": "1"}


def _run(argv: list[str], sandbox: Sandbox, env: dict[str, str]) -> Run:
    try:
        done = subprocess.run(argv, cwd=sandbox.project, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, timeout=RUN_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired as timeout:
        return Run(argv, -9, _text(timeout.stdout), _text(timeout.stderr) + "\n[timed out]")
    return Run(argv, done.returncode, done.stdout, done.stderr)


def _text(data: str | bytes | None) -> str:
    return data.decode("utf-8", "replace") if isinstance(data, bytes) else data or ""


def _hook_command(sandbox: Sandbox, event: str, context: str | None) -> str:
    """A shell hook that logs its stdin as one JSON line and, if given, returns additionalContext."""
    log = (f"{shlex.quote(sys.executable)} -c 'import json,sys; print(json.dumps(json.load(sys.stdin)))'"
           f" >> {shlex.quote(str(sandbox.hook_log))}")
    if context is None:
        return log
    reply = json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}})
    return f"{log}; echo '{reply}'"


def _claude_style_hooks(sandbox: Sandbox) -> dict[str, object]:
    return {
        "SessionStart": [{"hooks": [{"type": "command", "command": _hook_command(sandbox, "SessionStart",
                                                                                   START_MEMORY)}]}],
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": _hook_command(sandbox, "UserPromptSubmit",
                                                                                       MEMORY)}]}],
        "Stop": [{"hooks": [{"type": "command", "command": _hook_command(sandbox, "Stop", None)}]}],
    }


class ClaudeCode:
    harness = "claude-code"
    can_fork = True
    allowed_tools = "Bash,Write,Read,Agent,Task"

    def prepare(self, sandbox: Sandbox) -> None:
        claude_dir = sandbox.home / ".claude"
        claude_dir.mkdir(parents=True, exist_ok=True)
        settings = {"hooks": _claude_style_hooks(sandbox), "permissions": {"allow": self.allowed_tools.split(",")}}
        (claude_dir / "settings.json").write_text(json.dumps(settings, indent=2))
        # Skip first-run onboarding and the folder-trust prompt.
        (sandbox.home / ".claude.json").write_text(json.dumps({
            "hasCompletedOnboarding": True, "bypassPermissionsModeAccepted": True,
            "projects": {str(sandbox.project): {"hasTrustDialogAccepted": True}}}))

    def env(self, sandbox: Sandbox) -> dict[str, str]:
        return {**_base_env(sandbox), "ANTHROPIC_API_KEY": "dummy-key", "ANTHROPIC_BASE_URL": sandbox.server.url,
                "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_NON_ESSENTIAL_MODEL_CALLS": "1"}

    def _claude(self, sandbox: Sandbox, *args: str) -> Run:
        argv = [str(clis.cli_path(self.harness)), *args, "--output-format", "json",
                "--allowedTools", self.allowed_tools]
        run = _run(argv, sandbox, self.env(sandbox))
        try:
            run.session_id = json.loads(run.stdout)["session_id"]
        except (ValueError, KeyError, TypeError):
            pass
        return run

    def start(self, sandbox: Sandbox, prompt: str) -> Run:
        return self._claude(sandbox, "-p", prompt)

    def resume(self, sandbox: Sandbox, session_id: str, prompt: str) -> Run:
        return self._claude(sandbox, "-p", prompt, "--resume", session_id)

    def fork(self, sandbox: Sandbox, session_id: str, prompt: str) -> Run:
        return self._claude(sandbox, "-p", prompt, "--resume", session_id, "--fork-session")

    def sessions_root(self, sandbox: Sandbox) -> Path:
        return sandbox.home / ".claude" / "projects"


class Codex:
    harness = "codex"
    can_fork = True
    # --dangerously-bypass-hook-trust: user hooks are otherwise skipped until trusted in the TUI.
    exec_flags = ("--skip-git-repo-check", "--dangerously-bypass-hook-trust")

    def codex_home(self, sandbox: Sandbox) -> Path:
        return sandbox.home / ".codex"

    def prepare(self, sandbox: Sandbox) -> None:
        codex_home = self.codex_home(sandbox)
        codex_home.mkdir(parents=True, exist_ok=True)
        (codex_home / "config.toml").write_text(f"""\
model = "fake-model"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[analytics]
enabled = false

[model_providers.fake]
name = "Fake"
base_url = "{sandbox.server.url}/v1"
wire_api = "responses"
env_key = "FAKE_MODEL_API_KEY"
request_max_retries = 0
stream_max_retries = 0
""")
        (codex_home / "hooks.json").write_text(json.dumps({"hooks": _claude_style_hooks(sandbox)}, indent=2))

    def env(self, sandbox: Sandbox) -> dict[str, str]:
        return {**_base_env(sandbox), "CODEX_HOME": str(self.codex_home(sandbox)), "FAKE_MODEL_API_KEY": "dummy"}

    def _codex(self, sandbox: Sandbox, *args: str) -> Run:
        run = _run([str(clis.cli_path(self.harness)), "exec", *self.exec_flags, *args], sandbox, self.env(sandbox))
        found = re.search(r"session id: (\S+)", run.stderr + run.stdout)
        run.session_id = found.group(1) if found else None
        return run

    def start(self, sandbox: Sandbox, prompt: str) -> Run:
        return self._codex(sandbox, prompt)

    def resume(self, sandbox: Sandbox, session_id: str, prompt: str) -> Run:
        return self._codex(sandbox, "resume", session_id, prompt)

    def fork(self, sandbox: Sandbox, session_id: str, prompt: str) -> Run:
        return self._codex(sandbox, "fork", session_id, prompt)

    def sessions_root(self, sandbox: Sandbox) -> Path:
        return self.codex_home(sandbox) / "sessions"


# A pi/omp extension that logs which events fire and injects memory the way HarnessLink's extension will:
# a custom message persisted once per prompt, and an addition to the system prompt (string in pi, string[] in omp).
EVENT_LOGGER_EXTENSION = """\
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { homedir } from "node:os";

const log = (event: string, data: unknown) =>
  appendFileSync(join(homedir(), "extension-events.jsonl"), JSON.stringify({ event, ...(data as object) }) + "\\n");

export default function (pi: any) {
  const events = ["session_start", "session_switch", "session_fork", "session_branch", "session_shutdown",
    "input", "agent_start", "agent_end", "turn_start", "turn_end", "session_stop"];
  for (const name of events) {
    pi.on(name, async (event: any, ctx: any) => {
      let sessionFile: unknown = null, sessionId: unknown = null;
      try { sessionFile = ctx?.sessionManager?.getSessionFile?.(); sessionId = ctx?.sessionManager?.getSessionId?.(); } catch {}
      log(name, { keys: Object.keys(event ?? {}), reason: event?.reason ?? null, sessionId, sessionFile });
    });
  }
  pi.on("before_agent_start", async (event: any) => {
    const systemPromptType = Array.isArray(event?.systemPrompt) ? "string[]" : typeof event?.systemPrompt;
    log("before_agent_start", { keys: Object.keys(event ?? {}), prompt: event?.prompt, systemPromptType });
    const extra = "<harnesslink-memory>system-prompt</harnesslink-memory>";
    return {
      message: { customType: "harnesslink", content: "<harnesslink-memory>hello</harnesslink-memory>", display: false },
      systemPrompt: Array.isArray(event.systemPrompt) ? [...event.systemPrompt, extra] : event.systemPrompt + "\\n\\n" + extra,
    };
  });
}
"""


@dataclass
class _PiFamily:
    """pi and omp share the CLI shape: -p, --continue, sessions/<encoded cwd>/<ts>_<uuid>.jsonl."""

    harness: str
    config_dir: str
    can_fork: bool
    extra_env: dict[str, str] = field(default_factory=dict)

    def agent_dir(self, sandbox: Sandbox) -> Path:
        return sandbox.home / self.config_dir / "agent"

    def prepare(self, sandbox: Sandbox) -> None:
        agent_dir = self.agent_dir(sandbox)
        (agent_dir / "extensions").mkdir(parents=True, exist_ok=True)
        (agent_dir / "extensions" / "harnesslink-e2e.ts").write_text(EVENT_LOGGER_EXTENSION)
        provider = {
            "baseUrl": f"{sandbox.server.url}/v1", "api": "openai-completions", "apiKey": "dummy",
            "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
            "models": [{"id": "fake-model", "name": "Fake model", "reasoning": False, "input": ["text"],
                        "contextWindow": 128000, "maxTokens": 4096,
                        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}}],
        }
        if self.harness == "pi":
            (agent_dir / "models.json").write_text(json.dumps({"providers": {"fake": provider}}, indent=2))
            (agent_dir / "settings.json").write_text(json.dumps(
                {"defaultProvider": "fake", "defaultModel": "fake-model", "enableInstallTelemetry": False}))
        else:
            # JSON is valid YAML, so models.yml can be written with json.dumps.
            (agent_dir / "models.yml").write_text(json.dumps({"providers": {"fake": provider}}, indent=2))

    def env(self, sandbox: Sandbox) -> dict[str, str]:
        extra_path = [clis.bun_dir()] if self.harness == "omp" else []
        return {**_base_env(sandbox, extra_path), **self.extra_env}

    def _run(self, sandbox: Sandbox, *args: str) -> Run:
        argv = [str(clis.cli_path(self.harness)), "--model", "fake/fake-model", *args]
        before = set(self._session_files(sandbox))
        run = _run(argv, sandbox, self.env(sandbox))
        files = self._session_files(sandbox)
        newest = [f for f in files if f not in before] or sorted(files, key=lambda f: f.stat().st_mtime)[-1:]
        if newest:
            run.session_id = newest[-1].stem.split("_", 1)[-1]
        return run

    def _session_files(self, sandbox: Sandbox) -> list[Path]:
        return sorted(self.sessions_root(sandbox).glob("*/*.jsonl"))

    def start(self, sandbox: Sandbox, prompt: str) -> Run:
        return self._run(sandbox, "-p", prompt)

    def resume(self, sandbox: Sandbox, session_id: str, prompt: str) -> Run:
        return self._run(sandbox, "-p", "--continue", prompt)

    def fork(self, sandbox: Sandbox, session_id: str, prompt: str) -> Run:
        if not self.can_fork:
            raise NotImplementedError(f"{self.harness} has no non-interactive fork")
        return self._run(sandbox, "--fork", session_id, "-p", prompt)

    def sessions_root(self, sandbox: Sandbox) -> Path:
        return self.agent_dir(sandbox) / "sessions"


DRIVERS: dict[str, Driver] = {
    "claude-code": ClaudeCode(),
    "codex": Codex(),
    "pi": _PiFamily("pi", ".pi", can_fork=True,
                    extra_env={"PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1", "PI_TELEMETRY": "0"}),
    # omp has no --fork flag (fork is the interactive /fork command only).
    "omp": _PiFamily("omp", ".omp", can_fork=False, extra_env={"PI_NO_TITLE": "1", "OTEL_SDK_DISABLED": "1"}),
}
