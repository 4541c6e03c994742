"""With the real CLIs: `harnesslink resume` hands a session over to another harness, and lists them all.

In a throwaway HOME with HarnessLink installed (`install.py --no-venv`) into the harnesses involved:
a session with a plan and a todo list runs in one CLI; `harnesslink resume <id> --in <other> --no-launch`
prepares the handoff; the first model request of the other CLI's next session in that folder carries the
todos and the last turn inside `<harnesslink-memory kind="handoff">`; the session after that does not.
Then `resume --json` on a folder with sessions of all four harnesses lists each with a command that runs.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from . import clis
from .harnesses import DRIVERS, ClaudeCode, Driver, Run, Sandbox, _run
from .install_flow import Flow, strings_in
from .marks import SLOW_E2E

pytestmark = SLOW_E2E

PLAN = {"explanation": "Fix the quasar parser, then document it", "plan": [
    {"step": "Fix the quasar tokenizer", "status": "completed"},
    {"step": "Add quasar parser tests", "status": "in_progress"},
    {"step": "Document the quasar flags", "status": "pending"}]}
LAST_PROMPT = "Check the quasar build [[bash: echo quasar-build-$((40+2))]]"


class ClaudeWithTodos(ClaudeCode):
    """Claude Code with its todo tools offered up front (2.1.332 defers them in `-p`)."""

    allowed_tools = "Bash,Write,Read,Agent,Task,TaskCreate,TaskUpdate"

    def env(self, sandbox: Sandbox) -> dict[str, str]:
        return {**super().env(sandbox), "CLAUDE_CODE_ENABLE_TODO_TOOLS": "true", "ENABLE_TOOL_SEARCH": "false"}


def _drivers() -> dict[str, Driver]:
    return {**DRIVERS, "claude-code": ClaudeWithTodos()}


def _install(sandbox: Sandbox, harnesses: list[str]) -> Flow:
    drivers = _drivers()
    for harness in harnesses:
        drivers[harness].prepare(sandbox)
    codex_config = sandbox.home / ".codex" / "config.toml"
    if codex_config.exists():  # `codex exec` offers update_plan only when asked to
        codex_config.write_text(codex_config.read_text() + "\n[tools.update_plan]\nenabled = true\n")
    flow = Flow(harnesses[0], sandbox)
    flow.run_script("install.py", "--no-venv", "--no-backfill", *[a for h in harnesses for a in ("--harness", h)])
    return flow


def harnesslink(flow: Flow, *args: str) -> subprocess.CompletedProcess[str]:
    """The installed `harnesslink` command, run in the project folder."""
    env = {**flow.env(), "PATH": os.pathsep.join([*(str(clis.cli_path(h).parent) for h in DRIVERS),
                                                  str(clis.bun_dir()), os.environ.get("PATH", "")])}
    return subprocess.run([str(flow.agent_dir / "venv" / "bin" / "harnesslink"), *args], cwd=flow.sandbox.project,
                          env=env, capture_output=True, text=True, timeout=120)


def _source_session(sandbox: Sandbox, harness: str) -> str:
    """A two-turn session with a plan/todo list, ending on a shell turn; its id."""
    driver = _drivers()[harness]
    if harness == "codex":
        first = driver.start(sandbox, f"Plan the quasar work [[call: update_plan | {json.dumps(PLAN)}]]").check()
    elif harness == "claude-code":
        task = {"subject": "Add quasar parser tests", "description": "Cover the quasar tokenizer edge cases",
                "activeForm": "Adding quasar parser tests"}
        first = driver.start(sandbox, f"Plan the quasar work [[call: TaskCreate | {json.dumps(task)}]]").check()
    else:
        first = driver.start(sandbox, "Plan the quasar work [[long]]").check()
    assert first.session_id
    driver.resume(sandbox, first.session_id, LAST_PROMPT).check()
    assert sandbox.server.saw_tool_result(containing="quasar-build-42")
    return first.session_id


def _first_request_after(sandbox: Sandbox, since: int) -> list[str]:
    requests = sandbox.server.model_requests()[since:]
    assert requests, "the CLI sent no request"
    return list(strings_in(requests[0].body))


def _handoff_blocks(sandbox: Sandbox, since: int) -> list[str]:
    return [text for request in sandbox.server.model_requests()[since:] for text in strings_in(request.body)
            if 'kind="handoff"' in text]


def _hand_over(sandbox: Sandbox, source: str, target: str, todo_marks: list[str]) -> None:
    flow = _install(sandbox, sorted({source, target}))
    session_id = _source_session(sandbox, source)
    prepared = harnesslink(flow, "resume", session_id[:13], "--in", target, "--no-launch")
    assert prepared.returncode == 0, prepared.stderr
    assert f"cd {sandbox.project} && " in prepared.stdout and "Handoff of" in prepared.stdout

    target_driver = _drivers()[target]
    since = len(sandbox.server.model_requests())
    target_driver.start(sandbox, "Carry on where we left off").check()
    first = _first_request_after(sandbox, since)
    blocks = _handoff_blocks(sandbox, since)
    assert blocks, f"no handoff reached {target}'s model; first request: {json.dumps(first)[:2000]}"
    block = blocks[0]
    assert any('kind="handoff"' in text for text in first), "the very first request carries it"
    assert session_id in block and source in block
    assert "Check the quasar build" in block and "quasar-build-42" in block, "the last turn and its answer"
    for mark in todo_marks:
        assert mark in block, (mark, block)

    since = len(sandbox.server.model_requests())
    target_driver.start(sandbox, "And now something else").check()
    assert not _handoff_blocks(sandbox, since), "a second session start does not get it again"
    assert harnesslink(flow, "resume", session_id, "--in", target, "--no-launch").returncode == 0


def test_a_codex_plan_and_todos_are_handed_to_claude_code(sandbox: Sandbox) -> None:
    _hand_over(sandbox, "codex", "claude-code", ["- [x] Fix the quasar tokenizer", "- [~] Add quasar parser tests",
                                                 "- [ ] Document the quasar flags",
                                                 "Fix the quasar parser, then document it"])


def test_a_claude_code_session_with_todos_is_handed_to_codex(sandbox: Sandbox) -> None:
    _hand_over(sandbox, "claude-code", "codex", ["- [ ] Add quasar parser tests"])


@pytest.mark.parametrize("target", ["pi", "omp"])
def test_a_codex_session_is_handed_to_pi_and_omp(target: str, sandbox: Sandbox) -> None:
    _hand_over(sandbox, "codex", target, ["- [~] Add quasar parser tests"])


def test_resume_json_lists_all_four_harnesses_with_runnable_commands(sandbox: Sandbox) -> None:
    harnesses = ["claude-code", "codex", "omp", "pi"]
    flow = _install(sandbox, harnesses)
    sandbox.server.usage_from_size = True  # a context that grows with the conversation
    drivers = _drivers()
    ids = {h: drivers[h].start(sandbox, f"Say hello from {h} [[bash: echo hello-{h}]]").check().session_id
           for h in harnesses}
    # a session of about 60,000 tokens: two prompts of 100 KB (one argument may not exceed 128 KB)
    bulk = " ".join(f"word{n % 997}" for n in range(14_000))
    big = drivers["codex"].start(sandbox, "Read this log: " + bulk).check().session_id
    drivers["codex"].resume(sandbox, big, "And this one: " + bulk).check()

    listed = harnesslink(flow, "resume", "--json", "-n", "20")
    assert listed.returncode == 0, listed.stderr
    rows = {row["session_id"]: row for row in json.loads(listed.stdout)["sessions"]}
    assert set(ids.values()) | {big} <= set(rows), (ids, big, list(rows))
    assert rows[big]["brief_offered"] and rows[big]["replay_tokens"] >= 50_000
    assert 0 < rows[big]["fresh_tokens"] < 10_000
    for harness, session_id in ids.items():
        row = rows[session_id]
        assert row["harness"] == harness and row["cwd"] == str(sandbox.project)
        assert not row["brief_offered"] and row["replay_tokens"] < 50_000
        resumed = _run_native(sandbox, drivers[harness], row)
        assert resumed.returncode == 0, (harness, resumed.stderr[-2000:])
        assert f"hello-{harness}" in json.dumps(sandbox.server.model_requests()[-1].body), (
            f"{harness}'s native resume replayed the session")


def _run_native(sandbox: Sandbox, driver: Driver, row: dict) -> Run:
    """The listed command, headless: the same executable, id and folder, plus the CLI's one-shot flag."""
    argv = [str(clis.cli_path(row["harness"])), *row["resume_argv"][1:]]
    if row["harness"] == "codex":  # `codex resume <id>` is the TUI; `codex exec resume <id>` the same, headless
        argv = [argv[0], "exec", *driver.exec_flags, *row["resume_argv"][1:], "One more thing"]  # type: ignore
    elif row["harness"] == "claude-code":
        argv += ["-p", "One more thing", "--allowedTools", driver.allowed_tools]  # type: ignore[attr-defined]
    else:
        argv = [argv[0], "--model", "fake/fake-model", *argv[1:], "-p", "One more thing"]
    assert Path(row["run_in"]).is_dir()
    return _run(argv, sandbox, driver.env(sandbox))  # type: ignore[attr-defined]
