"""Regenerate tests/fixtures/generated/<harness>/ by driving the real CLIs against the fake model.

    python tests/generate_transcripts.py            # all harnesses
    python tests/generate_transcripts.py codex pi   # some

For each harness it runs one scripted session (several turns through resume/continue, a tool-using turn, a short
chat turn that must be skipped, a long answer, a Claude subagent, and a fork where the CLI has one), then copies
the transcripts the CLI wrote, keeping their layout below the sessions root, with the temporary HOME replaced by
/home/tester. Hook and extension inputs seen during the run are kept beside them, and EXPECTED.md lists every turn
found in the files with what the banker should do with it. Run it again whenever a pinned CLI version changes.
"""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from e2e import clis  # noqa: E402
from e2e.fake_model import FakeModelServer  # noqa: E402
from e2e.harnesses import DRIVERS, HOOK_LOG, Driver, Sandbox, new_sandbox, remove_sandbox  # noqa: E402

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "generated"
SESSIONS_FOLDER = {"claude-code": "projects", "codex": "sessions", "pi": "sessions", "omp": "sessions"}
EXTRA_LOGS = (HOOK_LOG, "extension-events.jsonl")


@dataclass(frozen=True)
class Step:
    how: str  # "start", "resume" or "fork"
    prompt: str
    verdict: str  # what the banker should do with this turn, and why


SKIP_SHORT = "skip: no tool call and an answer under 200 characters"


def script(harness: str) -> list[Step]:
    steps = [
        Step("start", "Create the setup file for this project [[bash: echo harnesslink-e2e > setup.txt && ls]]",
             "bank: uses bash"),
        Step("resume", "thanks!", SKIP_SHORT),
        Step("resume", "Explain how this project is laid out [[long]]",
             "bank: no tool call but an answer of 200 characters or more"),
    ]
    if harness == "claude-code":
        steps.append(Step("resume", "Ask a helper to look around [[agent: Inspect the project {{bash: ls -a}}]]",
                          "bank: uses the Agent tool (the subagent's own turns are not banked)"))
    steps.append(Step("resume", "Write down a note [[write: notes.txt | the fake model answers on 127.0.0.1]]",
                      "bank: writes a file"))
    steps.append(Step("fork", "In a fork, show the setup file [[bash: cat setup.txt]]",
                      "bank: new turn of the fork (the turns the fork copied are banked once, from the parent)"))
    return steps


def run_session(driver: Driver, sandbox: Sandbox, steps: list[Step]) -> list[tuple[Step, str]]:
    """Run the steps; return each step run with the session id it ran in."""
    done: list[tuple[Step, str]] = []
    session_id = ""
    for step in steps:
        if step.how == "fork" and not driver.can_fork:
            continue
        if step.how == "start":
            run = driver.start(sandbox, step.prompt).check()
        elif step.how == "resume":
            run = driver.resume(sandbox, session_id, step.prompt).check()
        else:
            run = driver.fork(sandbox, session_id, step.prompt).check()
        if not run.session_id:
            raise RuntimeError(f"{driver.harness}: no session id after {step.how!r}\n{run.stdout}\n{run.stderr}")
        if step.how != "fork":
            session_id = run.session_id
        done.append((step, run.session_id))
    return done


def stable(text: str, sandbox: Sandbox) -> str:
    # The test hooks run this interpreter; its path is machine-specific.
    for raw, placeholder in [*sandbox.placeholders(), (shlex.quote(sys.executable), "python3")]:
        text = text.replace(raw, placeholder)
    return text


def copy_transcripts(driver: Driver, sandbox: Sandbox, target: Path) -> list[Path]:
    """Copy every transcript file under the sessions root into target/<sessions folder>/, made stable."""
    root = driver.sessions_root(sandbox)
    copied = []
    for source in sorted(root.rglob("*")):
        if not source.is_file() or source.suffix not in (".jsonl", ".json"):
            continue
        relative = Path(stable(str(source.relative_to(root)), sandbox))
        destination = target / SESSIONS_FOLDER[driver.harness] / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_text(stable(source.read_text(encoding="utf-8"), sandbox), encoding="utf-8")
        copied.append(destination)
    for name in EXTRA_LOGS:
        log = sandbox.home / name
        if log.exists():
            (target / name).write_text(stable(log.read_text(encoding="utf-8"), sandbox), encoding="utf-8")
    return copied


# --- reading the copied files back, to write EXPECTED.md -----------------------------------------------------

@dataclass
class FoundTurn:
    line: int        # 1-based line of the user prompt
    prompt: str
    tools: list[str]
    answer: str      # the last assistant text of the turn


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _text_blocks(content: object, kinds: tuple[str, ...] = ("text", "input_text", "output_text")) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") in kinds)
    return ""


def find_turns(harness: str, path: Path) -> list[FoundTurn]:
    """Each real user prompt in a transcript, with the tools called and the answer before the next prompt."""
    turns: list[FoundTurn] = []
    for number, record in enumerate(_records(path), start=1):
        prompt, tools, answer = _classify(harness, record)
        if prompt is not None:
            turns.append(FoundTurn(number, prompt, [], ""))
        elif turns:
            turns[-1].tools.extend(tools)
            turns[-1].answer = answer or turns[-1].answer
    return turns


def _classify(harness: str, record: dict) -> tuple[str | None, list[str], str]:
    """(prompt if this line is a user prompt, tool names it calls, assistant text it holds)."""
    if harness == "claude-code":
        message = record.get("message") or {}
        if record.get("type") == "user" and isinstance(message.get("content"), str) and not record.get("origin"):
            return message["content"], [], ""
        if record.get("type") == "assistant":
            content = message.get("content") or []
            return None, [b["name"] for b in content if b.get("type") == "tool_use"], _text_blocks(content)
        return None, [], ""
    if harness == "codex":
        payload = record.get("payload") or {}
        if record.get("type") != "response_item":
            return None, [], ""
        if payload.get("type") == "message" and payload.get("role") == "user":
            text = _text_blocks(payload.get("content"))
            return (None if text.lstrip().startswith("<") else text), [], ""
        if payload.get("type") == "function_call":
            return None, [payload.get("name", "")], ""
        if payload.get("type") == "message" and payload.get("role") == "assistant":
            return None, [], _text_blocks(payload.get("content"))
        return None, [], ""
    message = record.get("message") or {}
    if record.get("type") != "message":
        return None, [], ""
    if message.get("role") == "user":
        return _text_blocks(message.get("content")), [], ""
    if message.get("role") == "assistant":
        content = message.get("content") or []
        return None, [b["name"] for b in content if b.get("type") == "toolCall"], _text_blocks(content)
    return None, [], ""


def expected_markdown(harness: str, target: Path, ran: list[tuple[Step, str]]) -> str:
    verdicts = {step.prompt: step for step, _ in ran}
    parent_prompts = {step.prompt for step, _ in ran if step.how != "fork"}
    version = clis.CLIS[harness]
    lines = [
        f"# {harness}: what the generated transcripts hold",
        "",
        f"Generated by `python tests/generate_transcripts.py {harness}` with {version.package}@{version.version}",
        "against the scripted fake model (tests/e2e/fake_model.py). The temporary HOME is replaced by",
        "`/home/tester`; the project folder is `/home/tester/project`. Turn rows below were checked by reading",
        "the files: the line is the user prompt's line (1-based).",
        "",
        "Hook / extension inputs seen during the run: " + ", ".join(
            f"`{name}`" for name in EXTRA_LOGS if (target / name).exists()) + ".",
        "",
    ]
    for path in sorted(p for p in target.rglob("*.jsonl") if p.name not in EXTRA_LOGS):
        relative = path.relative_to(target)
        is_subagent = "subagents" in relative.parts or (harness in ("pi", "omp") and len(relative.parts) > 3)
        turns = find_turns(harness, path)
        forked = any(step.how == "fork" and step.prompt in (t.prompt for t in turns) for step, _ in ran)
        kind = "subagent transcript" if is_subagent else "fork" if forked else "session"
        lines += [f"## `{relative}` ({kind})", ""]
        if not turns:
            lines += ["No user prompt lines.", ""]
            continue
        lines += ["| line | prompt | tools | answer chars | banker |", "| --- | --- | --- | --- | --- |"]
        for turn in turns:
            if is_subagent:
                verdict = "not banked: subagent turn"
            elif forked and turn.prompt in parent_prompts:
                verdict = "not banked here: copied from the parent session"
            elif turn.prompt in verdicts:
                verdict = verdicts[turn.prompt].verdict
            else:
                verdict = "? (not a scripted prompt)"
            prompt = turn.prompt.replace("|", "\\|").replace("\n", " ")
            tools = ", ".join(turn.tools) or "—"
            lines.append(f"| {turn.line} | {prompt} | {tools} | {len(turn.answer)} | {verdict} |")
        lines.append("")
    return "\n".join(lines)


def generate(harness: str) -> Path:
    driver = DRIVERS[harness]
    target = FIXTURES / harness
    with FakeModelServer() as server:
        sandbox = new_sandbox(server)
        try:
            driver.prepare(sandbox)
            ran = run_session(driver, sandbox, script(harness))
            if target.exists():
                shutil.rmtree(target)
            target.mkdir(parents=True)
            copy_transcripts(driver, sandbox, target)
        finally:
            remove_sandbox(sandbox)
    (target / "EXPECTED.md").write_text(expected_markdown(harness, target, ran), encoding="utf-8")
    return target


def main(argv: list[str] | None = None) -> int:
    harnesses = (argv if argv is not None else sys.argv[1:]) or list(DRIVERS)
    for harness in harnesses:
        print(f"{harness}: {generate(harness)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
