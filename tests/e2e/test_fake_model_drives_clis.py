"""The real harness CLIs run a tool-using turn against the fake model and write their transcripts."""

from __future__ import annotations

import pytest

from .harnesses import DRIVERS, Sandbox
from .marks import E2E

pytestmark = E2E


@pytest.mark.parametrize("harness", sorted(DRIVERS))
def test_a_tool_using_turn_reaches_the_model_and_lands_in_a_transcript(harness: str, sandbox: Sandbox) -> None:
    driver = DRIVERS[harness]
    driver.prepare(sandbox)
    prompt = "Check the marker [[bash: echo e2e-marker-$((6*7))]]"

    run = driver.start(sandbox, prompt).check()

    assert sandbox.server.saw_tool_result(containing="e2e-marker-42"), "the shell ran and its output came back"
    transcripts = [path for path in driver.sessions_root(sandbox).rglob("*.jsonl")
                   if "e2e-marker-42" in path.read_text(encoding="utf-8")]
    assert transcripts, f"no transcript under {driver.sessions_root(sandbox)} holds the tool output"
    assert run.session_id and any(run.session_id in str(path) for path in transcripts)


def test_the_fake_model_answers_a_plain_prompt_without_tools() -> None:
    from .fake_model import Conversation, decide

    reply = decide(Conversation("thanks!", None, {"bash": {}}))

    assert reply.tool_call is None and len(reply.text) < 200


def test_the_fake_model_fills_the_shell_arguments_its_tool_schema_asks_for() -> None:
    from .fake_model import Conversation, decide

    argv_tool = {"shell": {"properties": {"command": {"type": "array"}}}}
    cmd_tool = {"exec_command": {"properties": {"cmd": {"type": "string"}}}}

    assert decide(Conversation("[[bash: ls]]", None, argv_tool)).tool_call.arguments == {
        "command": ["bash", "-lc", "ls"]}
    assert decide(Conversation("[[bash: ls]]", None, cmd_tool)).tool_call.arguments == {"cmd": "ls"}
