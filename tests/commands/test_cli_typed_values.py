"""What a user types comes back only redacted, and an id comes back in as it was printed.

Every value a verb takes, given a real token's shape, is nowhere in what the verb prints (its error lines,
argparse's, a value echoed back); a memory tool's error does not quote one either. Every id and slug a verb
prints (they start with `--`) is taken back, pasted as printed, by each verb that takes one. All through
the CLI process."""

from __future__ import annotations

import json
import os
import re

import pytest

from memory_helpers import make_env, run_cli

TOKENS = {
    "github": ("ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", "A1b2C3d4E5f6G7h8I9j0"),
    "aws": ("AKIAZ7QW3RT5YU2IO4PL", "Z7QW3RT5YU2IO4PL"),
    "jwt": ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJwbGFudGVkIn0.c2lnbmF0dXJlcGxhbnRlZA", "c2lnbmF0dXJlcGxhbnRlZA"),
    "password": ("password=Tr0ub4dor-and-3", "Tr0ub4dor-and-3"),
}

# every value slot of every verb (T: the token); each is refused, finds nothing or errs, and must not echo T
TYPED = [
    ["recall", "T"], ["recall", "login", "--as-of", "T"], ["recall", "login", "--known-at", "T"],
    ["recall", "login", "-k", "T"], ["recall", "login", "--cwd", "T"], ["recall", "--T", "login"],
    ["history", "--since", "T"], ["history", "--entry", "T"], ["history", "--project", "T"],
    ["forget", "--dry-run", "T"], ["forget", "--dry-run", "--query", "T"], ["forget", "--dry-run", "--session", "T"],
    ["forget", "--dry-run", "--before", "T"], ["forget", "--dry-run", "--project", "T", "--query", "x"],
    ["forget", "--dry-run", "-k", "T", "--query", "x"],
    ["resume", "T"], ["resume", "--harness", "T"], ["resume", "-n", "T"], ["resume", "x", "--in", "T"],
    ["resume", "--cwd", "T"],
    ["supersede", "T", "x"], ["supersede", "x", "T"], ["confirm", "T"], ["confirm", "x", "--cwd", "T"],
    ["brief", "--budget", "T"], ["brief", "--session", "T"], ["brief", "--harness", "T", "--query", "T"],
    ["backfill", "--days", "T"], ["enable", "T"], ["disable", "T"], ["view", "--project", "T", "--port", "T"],
    ["review", "--project", "T"], ["mcp-call", "T"], ["status", "T"], ["T"], ["install", "--T"],
]


@pytest.fixture
def env(tmp_path):
    return make_env(tmp_path)


def leaks(result, token: str, body: str) -> list[str]:
    said = result.stdout + result.stderr
    return [part for part in (token, body) if part in said]


@pytest.mark.parametrize("kind", TOKENS)
def test_no_typed_value_is_printed_back(env, kind):
    """Each token shape through a share of the slots (every slot takes one shape: a process each)."""
    token, body = TOKENS[kind]
    share = TYPED[list(TOKENS).index(kind)::len(TOKENS)]
    for words in share:
        result = run_cli(env, *[w.replace("T", token) if w in ("T", "--T") else w for w in words])
        assert leaks(result, token, body) == [], (words, result.stdout, result.stderr)
        assert result.stdout + result.stderr, "the verb said something: a refusal, an error, or that nothing matched"


@pytest.mark.parametrize("kind", TOKENS)
def test_a_memory_tools_error_quotes_no_secret(env, tmp_path, kind):
    token, body = TOKENS[kind]
    calls = [("memory_search", {"query": "login", "as_of": token}), ("memory_search", {"query": "x", token: 1}),
             ("memory_get", {"id": token}), ("memory_forget", {"ids": [token]}),
             ("memory_bank", {"text": "a learning", "supersedes": [token]})]
    for tool, arguments in calls:
        result = run_cli(env, "mcp-call", tool, stdin=json.dumps({"cwd": str(tmp_path), "arguments": arguments}))
        answer = json.loads(result.stdout)
        assert answer["isError"], (tool, answer)
        assert leaks(result, token, body) == [], (tool, answer)


# --- ids as printed ------------------------------------------------------------------------------------------


@pytest.fixture
def banked(env, tmp_path):
    """A project folder with two learnings banked through the memory tool, as an agent banks them."""
    app = tmp_path / "app"
    app.mkdir()
    ids = []
    for text in ("The session store lives in Redis, keyed by the user id.",
                 "The session store moved from Redis to Postgres: one database fewer to run."):
        result = run_cli(env, "mcp-call", "memory_bank",
                         stdin=json.dumps({"cwd": str(app), "arguments": {"text": text}}))
        ids.append(re.search(r"as (\S+\.md)", json.loads(result.stdout)["text"]).group(1))
    return str(app), ids


def printed_ids(text: str) -> list[str]:
    return re.findall(r"--[\w.-]+--/bank/[\w.-]+\.md", text)


def ok(env, *argv: str, cwd: str) -> str:
    result = run_cli(env, *argv, cwd=cwd)
    assert result.returncode == 0, (argv, result.stdout, result.stderr)
    return result.stdout


def test_an_id_memory_search_prints_is_taken_by_supersede_confirm_history_and_forget(env, banked):
    app, _ = banked
    search = run_cli(env, "mcp-call", "memory_search",
                     stdin=json.dumps({"cwd": app, "arguments": {"query": "session store Redis Postgres"}}))
    old, new = sorted(set(printed_ids(json.loads(search.stdout)["text"])))
    assert old.startswith("--")
    said = ok(env, "supersede", old, new, cwd=app)
    assert "superseded" in said
    for id_as_printed in printed_ids(said) or [old]:
        ok(env, "history", "--entry", id_as_printed, cwd=app)
    ok(env, "supersede", old, new, "--undo", cwd=app)
    ok(env, "confirm", new, cwd=app)
    assert new in ok(env, "forget", "--dry-run", new, cwd=app)


def test_the_ids_and_slugs_history_prints_are_taken_back_by_history_forget_and_review(env, banked):
    app, _ = banked
    listing = ok(env, "history", cwd=app)
    entry = printed_ids(listing)[0]
    assert "recorded" in ok(env, "history", "--entry", entry, cwd=app)
    slug = json.loads(ok(env, "history", "--json", cwd=app))["projects"][0]
    assert slug.startswith("--")
    assert entry in ok(env, "history", "--project", slug, cwd=os.path.dirname(app))
    review = json.loads(ok(env, "review", "--json", "--project", slug, cwd=app))
    assert review, "the agent's learnings wait for a person"
    assert entry in ok(env, "forget", "--dry-run", entry, "--project", slug, cwd=app)


def test_the_ids_forget_and_recall_print_are_taken_back_by_forget_and_history(env, banked):
    app, ids = banked
    dry = ok(env, "forget", "--dry-run", "--query", "session store Redis", "--loose", cwd=app)
    entry = printed_ids(dry)[0]
    ok(env, "forget", "--dry-run", entry, cwd=app)
    recall = json.loads(ok(env, "recall", "session", "store", "--json", cwd=app))
    match = recall["matches"][0]
    ok(env, "history", "--entry", match["path"], "--project", match["project"], cwd=app)
    ok(env, "forget", "--yes", entry, cwd=app)
    assert "forgotten" in ok(env, "history", "--entry", entry, cwd=app)


@pytest.mark.parametrize("kind", TOKENS)
def test_a_hooks_dry_run_prints_no_typed_value_back(env, kind):
    """`context-hook … --dry-run` echoes its command line and notes on what it was given: redacted."""
    from memory_helpers import run_hook

    token, body = TOKENS[kind]
    folder = os.path.join(env["HOME"], "app")
    os.makedirs(folder, exist_ok=True)
    for words in (["user-prompt-submit", "--harness", token], [token, "--harness", "codex"],
                  ["user-prompt-submit", "--harness", "codex", "--prompt", f"deploy it with {token} please"],
                  ["session-start", "--harness", "pi", "--cwd", os.path.join(folder, token)],
                  ["user-prompt-submit", f"--harness={token}", "--session", token, "--source", token]):
        done = run_hook(env, *words, "--dry-run", "--cwd", folder) if "--cwd" not in words else run_hook(
            env, *words, "--dry-run")
        said = (done.stdout + done.stderr).decode("utf-8", "replace")
        assert done.returncode == 0 and said.startswith("# context-hook"), (words, said)
        assert token not in said and body not in said, (words, said)


def test_the_mcp_servers_own_errors_quote_no_typed_value(env):
    """The server's protocol errors (an unknown tool, an unknown method) quote what the client sent."""
    import subprocess
    import sys

    token, body = TOKENS["github"]
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "memory_" + token, "arguments": {}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/" + token, "params": {}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": token, "arguments": {"query": token}}},
    ]
    done = subprocess.run([sys.executable, "-m", "harnesslink_core.main", "mcp"],
                          input="".join(json.dumps(m) + "\n" for m in messages), capture_output=True, text=True,
                          env=env, cwd=env["HOME"], timeout=60)
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r.get("id") for r in replies] == [1, 2, 3, 4] and all("error" in r for r in replies[1:]), done.stdout
    assert token not in done.stdout + done.stderr and body not in done.stdout + done.stderr
