"""The MCP server's own promises, below what an SDK client shows: the JSON-RPC loop survives any input,
stdout carries only protocol frames, and start-up imports only what answering `tools/list` needs."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from harnesslink_core import mcp_server
from memory_helpers import make_env, make_locs

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}


def frames(*messages: object) -> bytes:
    return b"".join((m if isinstance(m, bytes) else json.dumps(m).encode()) + b"\n" for m in messages)


def run_loop(tmp_path: Path, data: bytes, harness: str = "codex") -> list:
    out = io.BytesIO()
    mcp_server.Server(make_locs(tmp_path), harness, out).serve(io.BytesIO(data))
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_initialize_echoes_a_known_protocol_version_and_offers_the_newest_otherwise(tmp_path: Path) -> None:
    replies = run_loop(tmp_path, frames(
        INIT, {**INIT, "id": 2, "params": {"protocolVersion": "2024-11-05"}},
        {**INIT, "id": 3, "params": {"protocolVersion": "1999-01-01"}}, {**INIT, "id": 4, "params": {}}))
    versions = [r["result"]["protocolVersion"] for r in replies]
    assert versions == ["2025-06-18", "2024-11-05", mcp_server.PROTOCOL_VERSIONS[0], mcp_server.PROTOCOL_VERSIONS[0]]
    assert replies[0]["result"]["serverInfo"]["name"] == "harnesslink"
    assert replies[0]["result"]["capabilities"] == {"tools": {"listChanged": False}}


def test_notifications_get_no_answer_and_unknown_methods_get_method_not_found(tmp_path: Path) -> None:
    replies = run_loop(tmp_path, frames(
        INIT, {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}},
        {"jsonrpc": "2.0", "id": "d", "method": "server/discover", "params": {}},
        {"jsonrpc": "2.0", "id": 5, "method": "resources/list"},
        {"jsonrpc": "2.0", "id": 6, "method": "ping"}))
    assert [r["id"] for r in replies] == [1, "d", 5, 6]
    assert replies[1]["error"]["code"] == replies[2]["error"]["code"] == -32601
    assert replies[3] == {"jsonrpc": "2.0", "id": 6, "result": {}}


GARBAGE = [
    b"not json", b"{", b"[]", b"[1, 2]", b"null", b"42", b'"text"', b"\xff\xfe\x00garbage",
    b'{"jsonrpc": "1.0", "id": 1, "method": "ping"}', b'{"id": 1, "method": "ping"}',
    b'{"jsonrpc": "2.0", "id": {"x": 1}, "method": "ping"}', b'{"jsonrpc": "2.0", "id": true, "method": "ping"}',
    b'{"jsonrpc": "2.0", "id": 7, "method": 12}', b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": []}',
    b'{"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": null}}',
    b'{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "memory_search", "arguments": "q"}}',
    b'{"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": {"name": "nope"}}',
    b'{"jsonrpc": "2.0", "id": 11, "result": {}}', b"[" * 100_000 + b"]" * 100_000,
    b'{"jsonrpc": "2.0", "id": 12, "method": "tools/call", "params": {"name": "memory_get", "arguments": {"id": "a\\u0000b"}}}',
]


def test_no_input_stops_the_loop_and_every_request_gets_an_answer(tmp_path: Path) -> None:
    answers = run_loop(tmp_path, frames(*GARBAGE, {"jsonrpc": "2.0", "id": "last", "method": "ping"}))
    replies = [r for answer in answers for r in (answer if isinstance(answer, list) else [answer])]

    assert replies[-1] == {"jsonrpc": "2.0", "id": "last", "result": {}}
    assert all(r.get("jsonrpc") == "2.0" and ("result" in r or "error" in r) for r in replies)
    assert all(r.get("id", "absent") is not None for r in replies), "an unknown id is left out, never null"
    by_id = {r["id"]: r for r in replies if "id" in r}
    assert by_id[7]["error"]["code"] == -32602
    assert by_id[8]["error"]["code"] == -32602
    assert by_id[9]["result"]["isError"] and "must be a JSON object" in by_id[9]["result"]["content"][0]["text"]
    assert by_id[10]["error"]["code"] == -32602
    assert by_id[12]["result"]["isError"]
    assert 11 not in by_id, "an answer to nothing we asked gets no answer"


def test_a_batch_gets_a_batch_of_answers_only_in_the_protocol_that_has_batches(tmp_path: Path) -> None:
    init_2025_03 = {**INIT, "params": {**INIT["params"], "protocolVersion": "2025-03-26"}}
    batch = json.dumps([{"jsonrpc": "2.0", "method": "notifications/initialized"},
                        {"jsonrpc": "2.0", "id": 2, "method": "ping"}, {"jsonrpc": "2.0", "id": 3, "method": "ping"}])
    _, replies = run_loop(tmp_path, frames(init_2025_03, batch.encode()))
    assert [r["id"] for r in replies] == [2, 3]
    for first in (INIT, {**INIT, "params": {**INIT["params"], "protocolVersion": "2025-11-25"}}):
        _, refused = run_loop(tmp_path, frames(first, batch.encode()))
        assert refused == {"jsonrpc": "2.0", "error": {"code": -32600, "message": refused["error"]["message"]}}
    [refused] = run_loop(tmp_path, frames(json.dumps([init_2025_03]).encode()))
    assert refused["error"]["code"] == -32600 and "id" not in refused, "initialize is never part of a batch"


def test_an_invalid_cursor_is_an_invalid_params_error(tmp_path: Path) -> None:
    _, listed, refused = run_loop(tmp_path, frames(
        INIT, {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"cursor": None}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"cursor": "page-2"}}))
    assert listed["result"]["tools"] and refused["error"]["code"] == -32602


def test_a_lone_surrogate_in_a_request_is_replaced_not_an_internal_error(tmp_path: Path) -> None:
    text = b'{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "memory_bank", "arguments": ' \
           b'{"text": "The deploy script needs bash 5 \\ud800 for mapfile -d; noted for the release runbook."}}}'
    _, reply = run_loop(tmp_path, frames(INIT, text))
    assert not reply["result"]["isError"], reply


def test_an_oversized_line_is_skipped_with_a_parse_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mcp_server, "MAX_LINE", 1000)
    replies = run_loop(tmp_path, frames(b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "x": "' + b"a" * 5000 + b'"}',
                                        {"jsonrpc": "2.0", "id": 2, "method": "ping"}))
    assert replies[0]["error"]["code"] == -32700 and replies[1] == {"jsonrpc": "2.0", "id": 2, "result": {}}


def test_a_failing_tool_is_a_tool_error_and_logged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harnesslink_core import memory_tools

    def broken(args: dict, session: object) -> str:
        raise RuntimeError("disk on fire")

    monkeypatch.setitem(memory_tools._IMPLEMENTATIONS, "context_brief", broken)
    [reply] = run_loop(tmp_path, frames({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                         "params": {"name": "context_brief", "arguments": {}}}))
    assert reply["result"]["isError"] and "internal error" in reply["result"]["content"][0]["text"]
    assert "disk on fire" in make_locs(tmp_path).log_file.read_text()


SERVER_WITH_A_CHATTY_TOOL = """
import sys
from harnesslink_core import memory_tools, main
def chatty(args, session):
    print("debug output that would corrupt the protocol")
    return "fine"
memory_tools._IMPLEMENTATIONS["context_brief"] = chatty
sys.exit(main.main(["mcp"]))
"""


def test_stdout_carries_only_protocol_frames_even_when_something_prints(tmp_path: Path) -> None:
    data = frames(INIT, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                         "params": {"name": "context_brief", "arguments": {}}})
    done = subprocess.run([sys.executable, "-c", SERVER_WITH_A_CHATTY_TOOL], input=data, capture_output=True,
                          env=make_env(tmp_path), cwd=tmp_path, timeout=60)
    assert done.returncode == 0
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["id"] for r in replies] == [1, 2] and replies[1]["result"]["content"][0]["text"] == "fine"
    assert b"debug output" in done.stderr


STARTUP_IMPORTS = """
import io, json, sys
sys.stdin = io.TextIOWrapper(io.BytesIO(sys.argv[1].encode()))
from harnesslink_core import main
main.main(["mcp", "--harness", "claude-code"])
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def test_answering_tools_list_imports_nothing_it_does_not_need(tmp_path: Path) -> None:
    data = frames(INIT, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).decode()
    done = subprocess.run([sys.executable, "-c", STARTUP_IMPORTS, data], capture_output=True, text=True,
                          env=make_env(tmp_path), cwd=tmp_path, timeout=60)
    assert done.returncode == 0, done.stderr
    assert [json.loads(line)["id"] for line in done.stdout.splitlines()] == [1, 2]
    modules = set(json.loads(done.stderr.strip().splitlines()[-1]))
    unwanted = {"yaml", "frontmatter", "filelock", "orjson", "sqlite3", "argparse", "subprocess", "logging",
                "harnesslink_core.recall.index", "harnesslink_core.store.entries", "harnesslink_core.banking.autobank",
                "harnesslink_core.harnesses", "harnesslink_core.recall.brief", "harnesslink_core.recall.matches"}
    assert not modules & unwanted, modules & unwanted


def test_harnesslink_mcp_with_bad_flags_is_refused_by_argparse(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "harnesslink_core.main", "mcp", "--harness", "vim"],
                          input=b"", capture_output=True, env=make_env(tmp_path), timeout=60)
    assert done.returncode == 2 and b"invalid choice" in done.stderr and done.stdout == b""


def test_mcp_call_runs_one_tool_for_the_pi_family_extension(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    project = tmp_path / "proj"
    project.mkdir()

    def call(tool: str, request: object) -> dict:
        done = subprocess.run([sys.executable, "-m", "harnesslink_core.main", "mcp-call", tool, "--harness", "pi"],
                              input=json.dumps(request).encode(), capture_output=True, env=env, timeout=60)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    banked = call("record_learning", {"arguments": {"text": "Storybook runs on port 6006."},
                                      "cwd": str(project), "session_id": "pi-sess"})
    assert not banked["isError"] and "Recorded" in banked["text"]
    found = call("memory_search", {"arguments": {"query": "storybook port"}, "cwd": str(project)})
    assert not found["isError"] and "Storybook runs on port 6006." in found["text"]
    assert call("memory_search", {"arguments": {}, "cwd": str(project)})["isError"]
    assert call("no_such_tool", {})["isError"]
    assert call("memory_search", "not an object")["isError"]
    [entry] = (make_locs(tmp_path).memories).glob("*/bank/*.md")
    assert "source: mcp:pi" in entry.read_text() and 'session_id: "pi-sess"' in entry.read_text()


def _bank_learning(tmp_path: Path, text: str, **kw: str) -> str:
    from harnesslink_core import memory_tools

    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    session = memory_tools.Session(make_locs(tmp_path), str(project), kw.pop("harness", "codex"), "thread-1")
    return memory_tools.call("memory_bank", {"text": text, **kw}, session)


def test_memory_bank_writes_the_entry_bytes_it_always_wrote(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harnesslink_core import clock
    from harnesslink_core.store.scope import project_slug

    monkeypatch.setattr(clock, "now", lambda: 1_790_000_122.123)
    reply = _bank_learning(tmp_path, "Billing runs on the 1st of each month.", harness="")
    [entry] = make_locs(tmp_path).memories.glob("*/bank/*.md")
    slug = project_slug(str(tmp_path / "proj"))
    assert reply == f"Recorded in this project's memory as {slug}/bank/{entry.name}."
    assert entry.name == "2026-09-21T14-15-22-123Z--billing-runs-on-the-1st-of-each-month.md"
    text = entry.read_text()
    turn_key = text.split("turn_key: ", 1)[1].split("\n", 1)[0]
    assert text == (
        "---\nid: 2026-09-21T14-15-22-123Z\nts: \"2026-09-21T14:15:22.123Z\"\n"
        "title: \"Billing runs on the 1st of each month.\"\ntags: []\n"
        f"cwd: \"{tmp_path / 'proj'}\"\nsession_id: \"thread-1\"\nturn_key: {turn_key}\nsource: mcp\n---\n\n"
        "## Prompt\n\nBilling runs on the 1st of each month.\n\n"
        "## Actions\n\n(a learning recorded with memory_bank)\n\n"
        "## Result\n\nBilling runs on the 1st of each month.\n"
    )


def test_memory_bank_records_the_learning_in_the_ledger(tmp_path: Path) -> None:
    from harnesslink_core.store.ledger import open_ledger

    _bank_learning(tmp_path, "The export batch size stays at 500 rows.")
    [entry] = make_locs(tmp_path).memories.glob("*/bank/*.md")
    turn_key = json.loads(entry.read_text().split("turn_key: ", 1)[1].split("\n", 1)[0])
    ledger = open_ledger(make_locs(tmp_path))
    try:
        assert ledger.turn_status(turn_key)[0] == "banked"
        assert ledger.counts("mcp") == {"banked": 1} and ledger.counts("codex") == {}
    finally:
        ledger.close()


def test_memory_bank_knows_a_learning_the_ledger_never_saw_and_rewrites_one_deleted_by_hand(tmp_path: Path) -> None:
    from harnesslink_core.store import bank, durable

    project = tmp_path / "proj"
    project.mkdir()
    pulled = bank.render_learning("Staging deploys need the VPN.", title="", tags=[], at=1_700_000_000.0,
                                  cwd=str(project), session_id="other-machine", harness="pi", source="mcp:pi")
    path = durable.write(make_locs(tmp_path).memories / bank.project_slug(str(project)) / "bank", pulled)
    assert f"/bank/{path.name}. Nothing new written." in _bank_learning(tmp_path, "Staging deploys  need the VPN.")
    path.unlink()
    assert "Recorded" in _bank_learning(tmp_path, "Staging deploys need the VPN.")
    assert "Already recorded" in _bank_learning(tmp_path, "Staging deploys need the VPN.")
    assert len(list(path.parent.glob("*.md"))) == 1


def test_memory_bank_takes_the_pass_lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import fcntl
    import os

    from harnesslink_core import memory_tools

    monkeypatch.setattr(memory_tools, "PASS_LOCK_WAIT", 0.2)
    locs = make_locs(tmp_path)
    locs.agent_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(locs.pass_lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # as a running pass holds it
        with pytest.raises(memory_tools.ToolError, match="autobank pass is running"):
            _bank_learning(tmp_path, "Written only once the pass is done.")
    finally:
        os.close(fd)
    assert not list(locs.memories.glob("*/bank/*.md"))
    assert "Recorded" in _bank_learning(tmp_path, "Written only once the pass is done.")
