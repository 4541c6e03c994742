"""Nothing we persist holds a secret the bank would redact, or a <private> span: every byte under
the agent dir (bank, MAIN.md, summaries, state files, ledger, index, logs) is searched.

One secret of each kind is planted in real transcripts of all four harnesses (prompts, tool
inputs, answers, todos, plans, compaction summaries), then passes, all four hooks, a compaction,
state updates, logged errors and a failing CLI command run over them."""

from __future__ import annotations

import io
import json
import shutil
import time
from pathlib import Path

import pytest

from harnesslink_core import hooks, log, main
from harnesslink_core.banking import autobank
from harnesslink_core.redact import PATTERNS
from harnesslink_core.store.ledger import open_ledger
from tests.test_all_harnesses import GENERATED, HOMES

# kind -> (text planted, the part that must never be stored)
SECRETS = {
    "private-key": ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAplantedKeyBody0123\n-----END RSA PRIVATE KEY-----",
                    "MIIEowIBAAKCAQEAplantedKeyBody0123"),
    "jwt": ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJwbGFudGVkIn0.c2lnbmF0dXJlcGxhbnRlZA",) * 2,
    "aws-access-key": ("AKIAPLANTEDKEY123456",) * 2,
    "github-token": ("ghp_PlantedToken0123456789abcdefghijklmn",) * 2,
    "gitlab-token": ("glpat-Planted0123456789abcd",) * 2,
    "slack-token": ("xoxb-1234567890-planted-slacktoken",) * 2,
    "slack-webhook": ("https://hooks.slack.com/services/T000PLANT/B000PLANT/plantedWebhookSecret",
                      "plantedWebhookSecret"),
    "anthropic-key": ("sk-ant-api03-plantedAnthropicKey0123456789",) * 2,
    "openai-key": ("sk-proj-plantedOpenaiKey0123456789abcd",) * 2,
    "google-api-key": ("AIza" + "PlantedGoogle0123456789abcdefghijklmnop"[:35],) * 2,
    "stripe-key": ("sk_live_PlantedStripe0123456789",) * 2,
    "bearer-token": ("Authorization: Bearer plantedBearerToken0123456789", "plantedBearerToken0123456789"),
    "url-password": ("postgres://admin:PlantedUrlPass99@db.example.com/app", "PlantedUrlPass99"),
    "aws-secret-key": ("aws_secret_access_key=PlantedAwsSecret0123456789abcdefghijklmn",
                       "PlantedAwsSecret0123456789abcdefghijklmn"),
    "cli-secret": ("--password PlantedCliPass77", "PlantedCliPass77"),
    "secret-assignment": ("DB_PASSWORD=PlantedDbPass55", "PlantedDbPass55"),
    "private-span": ("<private>PlantedPrivateSpan</private>", "PlantedPrivateSpan"),
    "unclosed-private-span": ("<private>PlantedUnclosedSpan", "PlantedUnclosedSpan"),
}
PLANT = " ".join(text for text, _ in SECRETS.values() if "Unclosed" not in text)
ONE_LINE = " ".join(text for kind, (text, _) in SECRETS.items() if "\n" not in text and "private" not in kind)
NEVER = [needle for _, needle in SECRETS.values()]


def test_every_pattern_kind_is_planted():
    assert {kind for kind, _ in PATTERNS} <= set(SECRETS)


def _esc(text: str) -> str:
    return json.dumps(text)[1:-1]


def _plant(home: Path) -> None:
    for harness, (base, sub) in HOMES.items():
        shutil.copytree(GENERATED / harness / sub, home / base / sub, dirs_exist_ok=True)
    for path in home.rglob("*.jsonl"):
        text = path.read_text("utf-8")
        text = text.replace("Create the setup file for this project", "Create the setup file for this project "
                            + _esc(PLANT))
        # tool inputs: on one line (Codex nests the arguments as a JSON string inside JSON)
        text = text.replace("echo harnesslink-e2e > setup.txt && ls", "echo harnesslink-e2e > setup.txt && ls # "
                            + ONE_LINE.replace('"', ""))
        text = text.replace("Done. The tool said:", "Done. " + _esc(PLANT) + " The tool said:")
        text = text.replace("Here is a longer explanation", "Here is a longer explanation "
                            + _esc(SECRETS["unclosed-private-span"][0]) + " ")
        lines = text.splitlines(keepends=True)
        lines += _states(path, lines)
        path.write_text("".join(lines), "utf-8")


def _states(path: Path, lines: list[str]) -> list[str]:
    """Todos, a plan and a compaction carrying secrets, in each harness's own shape."""
    first = json.loads(lines[0] if '"session' in lines[0] else lines[1])
    ts = "2026-11-29T20:14:30.000Z"
    todo = f"rotate {ONE_LINE}"
    if ".claude" in path.parts:
        sid = first.get("sessionId")
        tool = {"type": "assistant", "sessionId": sid, "cwd": first.get("cwd"), "timestamp": ts, "uuid": "u-todo-1",
                "isSidechain": False, "message": {"id": "m-todo", "role": "assistant", "content": [
                    {"type": "tool_use", "id": "toolu_todo", "name": "TodoWrite",
                     "input": {"todos": [{"content": todo, "status": "pending", "activeForm": todo}]}}]}}
        compact = {"type": "system", "subtype": "compact_boundary", "sessionId": sid, "cwd": first.get("cwd"),
                   "timestamp": ts, "uuid": "u-compact-1", "content": "Conversation compacted " + ONE_LINE}
        base = {"sessionId": sid, "cwd": first.get("cwd"), "timestamp": ts, "isSidechain": False}
        # a turn still waiting on its last tool, after todos and a task list (kept in the carried facts)
        task_call = dict(base, type="assistant", uuid="u-task-1", message={"id": "m-task", "role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_task", "name": "TaskCreate", "input": {"subject": todo}}]})
        task_done = dict(base, type="user", uuid="u-task-2", toolUseResult={"task": {"id": "7", "subject": todo}},
                         message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_task",
                                                               "content": "created"}]})
        pending_prompt = dict(base, type="user", uuid="u-open-1", message={"role": "user", "content": "Deploy " + PLANT})
        pending_call = dict(base, type="assistant", uuid="u-open-2", message={"id": "m-open", "role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_open", "name": "Bash", "input": {"command": "deploy # " + ONE_LINE}}]})
        return [json.dumps(x) + "\n" for x in (compact, pending_prompt, tool, task_call, task_done, pending_call)]
    if ".codex" in path.parts:
        plan = {"timestamp": ts, "type": "response_item", "payload": {
            "type": "function_call", "name": "update_plan", "call_id": "call_plan",
            "arguments": json.dumps({"explanation": "plan " + PLANT, "plan": [{"step": todo, "status": "pending"}]})}}
        return [json.dumps(plan) + "\n"]
    last_id = json.loads(lines[-1]).get("id")
    todo_edit = {"type": "custom", "customType": "user_todo_edit", "data": {"todos": [{"content": todo, "status": "pending"}]},
                 "id": "todo0001", "parentId": last_id, "timestamp": ts}
    compaction = {"type": "compaction", "summary": "Summary " + PLANT, "id": "comp0001", "parentId": "todo0001",
                  "timestamp": ts}
    return [json.dumps(todo_edit) + "\n", json.dumps(compaction) + "\n"]


def _hook(event: str, harness: str, payload: dict) -> dict:
    answer = hooks.run([event, "--harness", harness], stdin=io.StringIO(json.dumps(payload))).answer
    return answer


def _every_byte(root: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_no_secret_reaches_any_file_we_write(locs, isolated_home, monkeypatch, capsys):
    _plant(isolated_home)
    autobank.widen_window(locs, 4000)
    later = time.time() + 3600
    for _ in range(10):
        if autobank.run_pass(locs, now=later).bytes_read == 0:
            break
    cwd = "/home/tester/project"
    for harness in HOMES:
        session = {"session_id": "sess-" + harness, "cwd": cwd, "prompt": "why did the setup fail? " + PLANT,
                   "last_assistant_message": "Done " + PLANT, "transcript_path": str(isolated_home / "none.jsonl")}
        for event in ("session-start", "user-prompt-submit", "stop", "pre-compact"):
            _hook(event, harness, session)
    # errors that quote what they were given: the log and the ledger's error rows
    log.error(locs, "could not parse " + PLANT, ValueError("bad value " + PLANT))
    ledger = open_ledger(locs)
    try:
        ledger.error("reader failed on " + PLANT, "codex", "/x")
    finally:
        ledger.close()
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    code = main.main(["forget", "--session", PLANT.split()[4], "--yes"])  # fails: nothing matches
    err = capsys.readouterr().err
    assert code == 1 and not any(n in err for n in NEVER)

    banked = list(locs.memories.glob("*/bank/*.md"))
    states = list(locs.memories.glob("*/state/*.md"))
    assert len({p.read_text().split("harness: ")[1].split()[0] for p in banked}) == 4, "every harness banked"
    assert states and any("[redacted:github-token]" in p.read_text() for p in states)
    assert any("[private]" in p.read_text() for p in banked)
    ledger = open_ledger(locs)
    try:
        carried = [r.carry_json for r in ledger.files("claude-code").values()]
        assert any("[redacted:github-token]" in c for c in carried), "the task list is carried, redacted"
        assert sum(r.open_turns for r in ledger.files("claude-code").values()) >= 1, "a turn is still pending"
    finally:
        ledger.close()
    files = _every_byte(locs.agent_dir)
    assert any(p.name == "harness-autobank.db" for p in files) and any(p.name == "memory-index.db" for p in files)
    assert any(p.suffix == ".log" for p in files)
    leaks = [(str(p.relative_to(locs.agent_dir)), needle) for p, data in files.items() for needle in NEVER
             if needle.encode() in data]
    assert leaks == []


@pytest.mark.parametrize("text,expected", [
    ("keep <private>hide me</private> this", "keep [private] this"),
    ("a <PRIVATE>x</PRIVATE> b <private>y</private> c", "a [private] b [private] c"),
    ("start <private>everything after an unclosed tag\nacross lines", "start [private]"),
    ("no tags here", "no tags here"),
])
def test_private_spans(text, expected):
    from harnesslink_core.redact import redact

    assert redact(text) == expected
