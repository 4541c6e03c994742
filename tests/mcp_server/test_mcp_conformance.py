"""`harnesslink mcp` driven over stdio by the official MCP SDK's client (`mcp`, a test-only dependency):
the handshake, the tool list, each tool, bad input, redaction, dedupe, project scope and a huge query."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

# the official MCP SDK: a test dependency (the `test` extra), so a missing one fails rather than skips
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError as McpError

from memory_helpers import make_env, make_locs, write_entry

pytestmark = pytest.mark.anyio

READ_TOOLS = {"memory_search", "memory_get", "context_brief", "recall_memory"}
WRITE_TOOLS = {"memory_bank", "record_learning", "memory_forget"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def world(tmp_path: Path) -> dict:
    env = make_env(tmp_path)
    project = tmp_path / "home" / "work" / "webapp"
    other = tmp_path / "home" / "work" / "billing"
    project.mkdir(parents=True)
    other.mkdir(parents=True)
    return {"env": env, "project": project, "other": other, "locs": make_locs(tmp_path)}


@asynccontextmanager
async def server(world: dict, cwd: Path | None = None, harness: str = "codex") -> AsyncIterator[Client]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "harnesslink_core.main", "mcp", "--harness", harness],
        env=world["env"], cwd=str(cwd or world["project"]),
    )
    async with Client(params) as client:
        yield client


def text_of(result) -> str:
    assert len(result.content) == 1 and result.content[0].type == "text"
    return result.content[0].text


def bank_files(world: dict, cwd: Path | None = None) -> list[Path]:
    from harnesslink_core.store.scope import project_slug

    return sorted((world["locs"].memories / project_slug(str(cwd or world["project"])) / "bank").glob("*.md"))


async def test_the_sdk_client_connects_and_lists_every_tool_with_its_hints(world: dict) -> None:
    async with server(world) as client:
        assert client.server_info is not None and client.server_info.name == "harnesslink"
        assert client.protocol_version in ("2025-11-25", "2025-06-18")
        assert client.server_capabilities.tools is not None
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}

    assert set(tools) == READ_TOOLS | WRITE_TOOLS
    for name, tool in tools.items():
        assert tool.description and tool.input_schema["type"] == "object"
        assert tool.annotations is not None and tool.annotations.read_only_hint is (name in READ_TOOLS)
        assert tool.annotations.destructive_hint is (name == "memory_forget")
        assert tool.output_schema is None, "plain text only: Claude Code shows structured output as raw JSON"
    assert tools["memory_search"].input_schema["required"] == ["query"]
    assert tools["memory_bank"].input_schema["required"] == ["text"]


async def test_a_learning_banked_is_found_fetched_and_briefed_at_once(world: dict) -> None:
    async with server(world) as client:
        banked = await client.call_tool("memory_bank", {
            "text": "The payment webhook retries thrice; idempotency keys live in redis for 24h.",
            "title": "Webhook retry policy", "tags": ["Payments", "redis"]})
        assert not banked.is_error, text_of(banked)
        [entry] = bank_files(world)
        assert entry.name in text_of(banked)

        found = await client.call_tool("memory_search", {"query": "webhook idempotency redis"})
        assert not found.is_error
        found_text = text_of(found)
        assert found_text.startswith('<harnesslink-memory kind="recall"') and found_text.endswith("</harnesslink-memory>")
        assert "records" in found_text and "Webhook retry policy" in found_text
        rel_id = f"{entry.parent.parent.name}/bank/{entry.name}"
        assert f"id: {rel_id}" in found_text

        alias = await client.call_tool("recall_memory", {"query": "webhook retries", "limit": 1})
        assert not alias.is_error and "Webhook retry policy" in text_of(alias)

        for wanted in (rel_id, entry.name, entry.name.split("--")[0], str(entry)):
            got = await client.call_tool("memory_get", {"id": wanted})
            assert not got.is_error, (wanted, text_of(got))
            assert "idempotency keys live in redis" in text_of(got)
            assert text_of(got).startswith('<harnesslink-memory kind="entry"')

        brief = await client.call_tool("context_brief", {"budget": 3000})
        assert not brief.is_error and "Webhook retry policy" in text_of(brief) and len(text_of(brief)) <= 3000

    text = entry.read_text()
    assert "source: mcp:codex" in text and "harness: codex" in text
    assert "  - payments\n  - redis\n" in text
    assert (entry.parent.parent / "MAIN.md").read_text().count(entry.name) == 1


async def test_record_learning_is_memory_bank_and_unknown_harness_is_plain_mcp(world: dict) -> None:
    params = StdioServerParameters(command=sys.executable, args=["-m", "harnesslink_core.main", "mcp"],
                                   env=world["env"], cwd=str(world["project"]))
    async with Client(params) as client:
        result = await client.call_tool("record_learning", {"text": "Use pnpm, not npm, in this repository."})
    assert not result.is_error
    [entry] = bank_files(world)
    text = entry.read_text()
    assert "source: mcp\n" in text and "\nharness:" not in text


async def test_bad_arguments_get_a_clear_tool_error_and_the_server_keeps_serving(world: dict) -> None:
    bad_calls = [
        ("memory_search", {}, "`query` is required"),
        ("memory_search", {"query": 42}, "`query` must be a string"),
        ("memory_search", {"query": "x", "limit": 0}, "`limit` must be from 1 to 20"),
        ("memory_search", {"query": "x", "limit": "many"}, "`limit` must be an integer"),
        ("memory_search", {"query": "x", "all_projects": True}, "unknown argument 'all_projects'"),
        ("memory_search", {"query": "x", "limit": "3"}, "`limit` must be an integer"),
        ("memory_search", {"query": "x", "colour": "red"}, "unknown argument 'colour'"),
        ("memory_get", {"id": "../../../etc/passwd"}, "outside the memory folder"),
        ("memory_get", {"id": "/etc/passwd"}, "outside the memory folder"),
        ("memory_get", {"id": "2020-01-01T00-00-00-000Z"}, "no memory entry"),
        ("memory_bank", {"text": "   "}, "`text` is empty"),
        ("memory_bank", {"text": "x" * 5000}, "at most 4000"),
        ("memory_bank", {"text": "ok", "tags": [1, 2]}, "`tags` must be a list of strings"),
        ("context_brief", {"budget": 10}, "`budget` must be from 500"),
    ]
    async with server(world) as client:
        for name, arguments, message in bad_calls:
            result = await client.call_tool(name, arguments)
            assert result.is_error, (name, arguments)
            assert message in text_of(result), (name, arguments, text_of(result))
        with pytest.raises(McpError, match="unknown tool: memory_delete_everything"):  # a protocol error, per the spec
            await client.call_tool("memory_delete_everything", {})
        still = await client.call_tool("memory_search", {"query": "anything at all"})
        assert not still.is_error and "No memory entries match" in text_of(still)
    assert bank_files(world) == []


async def test_a_secret_in_banked_text_never_reaches_the_file_or_a_search(world: dict) -> None:
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    async with server(world) as client:
        banked = await client.call_tool("memory_bank", {
            "text": f"Deploys need the GitHub token {secret} and DB_PASSWORD=hunter2hunter2 in the env. "
                    "<private>The staging box is at my flat, 12 Elm Road.</private>",
            "title": f"Deploy credentials {secret}", "tags": ["deploy", secret]})
        assert not banked.is_error and "redacted" in text_of(banked)
        found = await client.call_tool("memory_search", {"query": "deploys github token"})
    [entry] = bank_files(world)
    text = entry.read_text()
    assert secret not in text and "hunter2hunter2" not in text and "Elm Road" not in text
    assert secret.lower() not in text
    assert "[redacted:github-token]" in text and "[redacted:secret-assignment]" in text
    assert secret not in text_of(found) and secret not in text_of(banked)


async def test_the_same_text_twice_in_one_project_is_one_entry(world: dict) -> None:
    learning = "Run the migrations before the seed script, or the seed fails on missing tables."
    async with server(world) as client:
        first = await client.call_tool("memory_bank", {"text": learning})
        second = await client.call_tool("record_learning", {"text": "  " + learning.replace(" ", "\n", 3) + "\n"})
        assert not first.is_error and not second.is_error
        assert "Already recorded" in text_of(second)
    async with server(world, cwd=world["other"]) as client:  # another project may keep its own copy
        elsewhere = await client.call_tool("memory_bank", {"text": learning})
        assert "Already recorded" not in text_of(elsewhere)
    assert len(bank_files(world)) == 1 and len(bank_files(world, world["other"])) == 1


async def test_another_projects_entry_is_not_returned_unless_linked(world: dict) -> None:
    write_entry(world["locs"], str(world["other"]), title="Invoice rounding uses banker's rounding",
                result="Rounding of invoice totals switched to banker's rounding in the billing service.")
    write_entry(world["locs"], str(world["project"]), title="Navbar collapses on mobile",
                result="Fixed the navbar collapse breakpoint.")
    query = {"query": "invoice rounding banker"}
    async with server(world) as client:
        own = await client.call_tool("memory_search", query)
        assert "No memory entries match" in text_of(own) and "Invoice rounding" not in text_of(own)
        other_id = f"{bank_files(world, world['other'])[0].name}"
        not_here = await client.call_tool("memory_get", {"id": other_id})
        assert not_here.is_error, "a bare file name is looked up in this project's scope only"
        by_path = await client.call_tool("memory_get", {"id": str(bank_files(world, world["other"])[0])})
        assert by_path.is_error, "nor by its path"

    from harnesslink_core.store.scope import project_slug

    (world["locs"].memories / project_slug(str(world["project"])) / "linked.txt").write_text(f"{world['other']}\n")
    async with server(world) as client:
        linked = await client.call_tool("memory_search", query)
    assert "Invoice rounding" in text_of(linked)


async def test_a_huge_query_is_answered(world: dict) -> None:
    write_entry(world["locs"], str(world["project"]), title="Cache warmup script", result="Warms the CDN cache.")
    huge = "cache warmup " + " ".join(f"word{n}" for n in range(150_000))  # ~1.2 MB of JSON
    async with server(world) as client:
        result = await client.call_tool("memory_search", {"query": huge, "limit": 20})
        assert not result.is_error and "Cache warmup script" in text_of(result)
        assert len(text_of(result)) < 20_000
        banked = await client.call_tool("memory_bank", {"text": huge})
        assert banked.is_error and "at most 4000" in text_of(banked)


async def test_claude_codes_project_dir_decides_the_project(world: dict) -> None:
    env = {**world["env"], "CLAUDE_PROJECT_DIR": str(world["other"]), "CLAUDE_CODE_SESSION_ID": "sess-123"}
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "harnesslink_core.main", "mcp", "--harness", "claude-code"],
                                   env=env, cwd=str(world["project"]))
    async with Client(params) as client:
        result = await client.call_tool("memory_bank", {"text": "Billing runs on the 1st of each month."})
    assert not result.is_error
    [entry] = bank_files(world, world["other"])
    assert 'session_id: "sess-123"' in entry.read_text() and bank_files(world) == []


async def test_codex_turn_metadata_decides_the_project(world: dict) -> None:
    import json

    async with server(world) as client:
        result = await client.call_tool(
            "memory_bank", {"text": "The billing cron is in UTC."},
            meta={"x-codex-turn-metadata": json.dumps({"cwd": str(world["other"]), "session_id": "thread-9"})})
    assert not result.is_error, text_of(result)
    [entry] = bank_files(world, world["other"])
    assert 'session_id: "thread-9"' in entry.read_text()


async def test_memory_forget_forgets_only_this_projects_own_entries(world: dict) -> None:
    from harnesslink_core.store.scope import project_slug

    theirs = write_entry(world["locs"], str(world["other"]), title="Billing export runs nightly",
                         result="The billing export cron runs nightly at 02:00.")
    own_folder = world["locs"].memories / project_slug(str(world["project"]))
    own_folder.mkdir(parents=True)
    (own_folder / "linked.txt").write_text(f"{world['other']}\n")
    learning = "The nightly export must finish before the 03:00 backup window."
    async with server(world) as client:
        await client.call_tool("memory_bank", {"text": learning})
        await client.call_tool("memory_bank", {"text": "Keep the export batch size at 500 rows."})
        mine = bank_files(world)
        assert len(mine) == 2
        linked = await client.call_tool("memory_search", {"query": "billing export nightly"})
        assert "Billing export runs nightly" in text_of(linked), "the linked project is searchable..."

        their_id = f"{theirs.parent.parent.name}/bank/{theirs.name}"
        for attempt in (their_id, str(theirs), theirs.name):
            refused = await client.call_tool("memory_forget", {"ids": [attempt]})
            assert refused.is_error and "nothing was forgotten" in text_of(refused), attempt
        assert theirs.exists(), "... but only this project's own entries can be forgotten"

        target = next(p for p in mine if "nightly-export" in p.name)
        rel_id = f"{target.parent.parent.name}/bank/{target.name}"
        both = await client.call_tool("memory_forget", {"ids": [rel_id, their_id]})
        assert both.is_error and target.exists(), "one id out of scope: nothing is forgotten"

        forgotten_text = target.read_text()
        done = await client.call_tool("memory_forget", {"ids": [rel_id]})
        assert not done.is_error and rel_id in text_of(done)
        assert not target.exists()
        after = await client.call_tool("memory_search", {"query": "nightly export backup window"})
        assert "03:00 backup window" not in text_of(after)
        gone = await client.call_tool("memory_get", {"id": rel_id})
        assert gone.is_error
        target.write_text(forgotten_text)  # the uploader pulls a copy back from the cloud
        pulled_back = await client.call_tool("memory_get", {"id": rel_id})
        assert pulled_back.is_error and "was forgotten" in text_of(pulled_back)
        still_gone = await client.call_tool("memory_search", {"query": "nightly export backup window"})
        assert "03:00 backup window" not in text_of(still_gone)
        again = await client.call_tool("memory_bank", {"text": learning})
        assert again.is_error and "forgotten" in text_of(again)
        bad = await client.call_tool("memory_forget", {"ids": []})
        assert bad.is_error and "`ids`" in text_of(bad)
    assert len(bank_files(world)) == 2  # the other learning, and the copy pulled back (never shown)


async def test_a_folder_kept_out_of_memory_gets_nothing_and_gives_nothing(world: dict) -> None:
    write_entry(world["locs"], str(world["project"]), title="Navbar collapses on mobile", result="Fixed it.")
    (world["project"] / ".harnesslink-off").write_text("")
    async with server(world) as client:
        for name, arguments in [("memory_bank", {"text": "Secret client detail."}),
                                ("memory_search", {"query": "navbar mobile"}), ("context_brief", {})]:
            result = await client.call_tool(name, arguments)
            assert result.is_error and "kept out of HarnessLink memory" in text_of(result), name
    assert [p.name for p in bank_files(world)] == [p.name for p in bank_files(world) if "navbar" in p.name]
