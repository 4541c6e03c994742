"""The hooks as real subprocesses: the exact JSON each harness gets, memory that comes back after a turn is
banked, and a valid answer with exit code 0 whatever happens."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from conftest import FIXTURES
from harnesslink_core.hooks import answer
from harnesslink_core.recall import index, query
from memory_helpers import (REPO, SHOP, build_corpus, corpus_world, eventually, indexed_entries, make_env, make_locs,
                            run_hook)

PROMPT = "why did signing in stop working right after 12am? something with the session cookie"
LOGIN_ENTRY = "2026-08-20T09-12-00-000Z--the-login-test-fails-every-night-around-midnight.md"


@pytest.fixture
def world(tmp_path):
    return corpus_world(tmp_path)


def hook(env, event, harness, payload=None, *args, stdin=None):
    data = json.dumps(payload) if stdin is None else stdin
    started = time.monotonic()
    out = run_hook(env, event, "--harness", harness, *args, stdin=data)
    elapsed = time.monotonic() - started
    assert out.returncode == 0, out.stderr
    assert out.stderr == b"", out.stderr
    return json.loads(out.stdout), elapsed


def context_of(result):
    if "additionalContext" in result:
        return result["additionalContext"]
    return result.get("hookSpecificOutput", {}).get("additionalContext", "")


# --- golden answers ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("harness", ["claude-code", "codex"])
def test_prompt_hook_golden_json_for_claude_code_and_codex(world, harness):
    env, locs = world
    result, _ = hook(env, "user-prompt-submit", harness,
                     {"session_id": "s-new", "cwd": SHOP, "prompt": PROMPT, "hook_event_name": "UserPromptSubmit"})
    assert list(result) == ["hookSpecificOutput"]
    assert list(result["hookSpecificOutput"]) == ["hookEventName", "additionalContext"]
    assert result["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    text = result["hookSpecificOutput"]["additionalContext"]
    assert text.startswith('<harnesslink-memory kind="matches">\n') and text.endswith("</harnesslink-memory>")
    assert str(locs.memories / "--home-dev-shop--" / "bank" / LOGIN_ENTRY) in text
    assert len(text) <= 2000


@pytest.mark.parametrize("harness", ["pi", "omp"])
def test_prompt_hook_golden_json_for_pi_and_omp(world, harness):
    env, locs = world
    result, _ = hook(env, "user-prompt-submit", harness, {"session_id": "s-new", "cwd": SHOP, "prompt": PROMPT,
                                                         "transcript_path": "/nonexistent.jsonl"})
    assert list(result) == ["additionalContext"]
    assert LOGIN_ENTRY in result["additionalContext"]
    nothing, _ = hook(env, "user-prompt-submit", harness, {"session_id": "s-new", "cwd": SHOP, "prompt": "/help"})
    assert nothing == {"additionalContext": ""}


@pytest.mark.parametrize("harness", ["claude-code", "codex"])
def test_session_start_golden_json(world, harness):
    env, _ = world
    result, _ = hook(env, "session-start", harness,
                     {"session_id": "s-new", "cwd": SHOP, "source": "startup", "hook_event_name": "SessionStart"})
    assert list(result) == ["hookSpecificOutput"]
    assert result["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    text = result["hookSpecificOutput"]["additionalContext"]
    assert text.startswith('<harnesslink-memory kind="brief"') and "Websocket clients should reconnect" in text


def test_nothing_to_say_and_stop_and_pre_compact_answer_an_empty_object():
    assert answer("codex", "user-prompt-submit", "") == {}
    assert answer("claude-code", "session-start", "") == {}
    assert answer("codex", "stop", "anything") == {}
    assert answer("claude-code", "pre-compact", "anything") == {}
    assert answer("omp", "stop", "") == {"additionalContext": ""}


@pytest.mark.parametrize("harness", ["claude-code", "codex", "pi", "omp"])
@pytest.mark.parametrize("event", ["stop", "pre-compact"])
def test_stop_and_pre_compact_print_only_what_the_harness_accepts(world, harness, event):
    env, _ = world
    result, _ = hook(env, event, harness, {"session_id": "s", "cwd": SHOP, "transcript_path": "/missing.jsonl"})
    assert result == ({"additionalContext": ""} if harness in ("pi", "omp") else {})


# --- memory across sessions ------------------------------------------------------------------------------------


def test_an_entry_is_injected_once_per_session(world):
    env, _ = world
    payload = {"session_id": "s-once", "cwd": SHOP, "prompt": PROMPT}
    first, _ = hook(env, "user-prompt-submit", "codex", payload)
    assert LOGIN_ENTRY in context_of(first)
    again, _ = hook(env, "user-prompt-submit", "codex", payload)
    assert LOGIN_ENTRY not in context_of(again)
    other, _ = hook(env, "user-prompt-submit", "codex", {**payload, "session_id": "s-other"})
    assert LOGIN_ENTRY in context_of(other)


def test_dry_run_explains_and_changes_nothing(world):
    env, locs = world
    out = run_hook(env, "user-prompt-submit", "--harness", "claude-code", "--dry-run", "--cwd", SHOP,
                   "--session", "s-dry", "--prompt", PROMPT)
    assert out.returncode == 0
    report = out.stdout.decode()
    assert f"chosen: --home-dev-shop--/bank/{LOGIN_ENTRY}" in report
    assert "session, cookie" in report and "matched:" in report and "score" in report
    assert '"hookEventName": "UserPromptSubmit"' in report
    result, _ = hook(env, "user-prompt-submit", "claude-code", {"session_id": "s-dry", "cwd": SHOP, "prompt": PROMPT})
    assert LOGIN_ENTRY in context_of(result)  # the dry run did not mark it as injected


def test_a_banked_real_transcript_answers_a_question_in_other_words(tmp_path):
    """The fasthooks Claude Code session, moved to yesterday, banked by its own Stop hook, then asked about
    from a Codex session in other words."""
    env = make_env(tmp_path)
    home = Path(env["HOME"])
    session = "c45af7b1-cb7c-4e51-93db-8cbb250a877a"
    yesterday = (datetime.now(timezone.utc) - timedelta(days=1)).strftime("%Y-%m-%d")
    source = (FIXTURES / "claude-code" / "oneryalcin__fasthooks__sample_main_transcript.jsonl").read_text()
    transcript = home / ".claude" / "projects" / "-workspace" / f"{session}.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_text(source.replace("2026-01-02T", f"{yesterday}T"))
    stop, _ = hook(env, "stop", "claude-code", {"session_id": session, "transcript_path": str(transcript),
                                                 "cwd": "/workspace", "hook_event_name": "Stop"})
    assert stop == {}
    bank = home / ".superpi" / "agent" / "memories" / "--workspace--" / "bank"
    assert eventually(lambda: indexed_entries(make_locs(tmp_path)) == 5)  # banked and indexed after the answer
    assert len(list(bank.glob("*.md"))) == 5
    # the turn that ran `cat nonexistent.txt` and got "No such file or directory"
    result, _ = hook(env, "user-prompt-submit", "codex", {
        "session_id": "codex-1", "cwd": "/workspace",
        "prompt": "the cat command on a file that did not exist: what error came back?"})
    text = context_of(result)
    assert "can-you-run-cat-nonexistent-txt.md" in text
    assert "No such file or directory" in text
    # the turn that wrote number_generator.py and reported sum and average
    result, _ = hook(env, "user-prompt-submit", "pi", {
        "session_id": "pi-1", "cwd": "/workspace", "prompt": "the random number generator script: what average did it print?"})
    assert "do-something-requiring-multiple-tools-in-one-turn.md" in result["additionalContext"]
    # the session itself does not get its own turns back
    result, _ = hook(env, "user-prompt-submit", "claude-code", {
        "session_id": session, "cwd": "/workspace", "prompt": "the cat command on a file that did not exist: what error came back?"})
    assert result == {}
    # and another project sees none of it
    result, _ = hook(env, "user-prompt-submit", "codex", {
        "session_id": "codex-2", "cwd": "/elsewhere", "prompt": "the cat command on a file that did not exist: what error came back?"})
    assert result == {}


# --- robustness -------------------------------------------------------------------------------------------------

BAD_INPUTS = [b"", b"not json at all", b'{"session_id": "a", "prom', b"[1, 2, 3]", b'"a string"', b"\xff\xfe\x00garbage",
              b'{"cwd": 42, "prompt": ["x"], "session_id": null}']


@pytest.mark.parametrize("harness", ["claude-code", "codex", "pi", "omp"])
@pytest.mark.parametrize("event", ["session-start", "user-prompt-submit", "stop", "pre-compact"])
def test_garbage_input_gets_a_valid_answer_and_exit_0(world, harness, event):
    env, _ = world
    for data in BAD_INPUTS:
        out = run_hook(env, event, "--harness", harness, stdin=data)
        assert out.returncode == 0
        value = json.loads(out.stdout)
        assert isinstance(value, dict)
        if harness in ("pi", "omp"):
            assert list(value) == ["additionalContext"]


def test_a_missing_tree_answers_empty(tmp_path):
    env = make_env(tmp_path)
    for event in ("session-start", "user-prompt-submit", "stop", "pre-compact"):
        result, _ = hook(env, event, "codex", {"session_id": "s", "cwd": SHOP, "prompt": PROMPT})
        assert result == {}


def test_a_one_megabyte_prompt_is_answered_quickly(world):
    env, _ = world
    prompt = "session cookie midnight " + "x" * (1024 * 1024)
    result, elapsed = hook(env, "user-prompt-submit", "claude-code", {"session_id": "big", "cwd": SHOP, "prompt": prompt})
    assert LOGIN_ENTRY in context_of(result)
    assert elapsed < 2.0


def test_a_corrupt_index_answers_without_it_and_is_rebuilt_in_the_background(world):
    env, locs = world
    for suffix in ("-wal", "-shm"):
        Path(str(locs.index_file) + suffix).unlink(missing_ok=True)
    locs.index_file.write_bytes(b"garbage, not sqlite " * 500)
    result, _ = hook(env, "user-prompt-submit", "codex", {"session_id": "c1", "cwd": SHOP, "prompt": PROMPT})
    assert result == {}
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            conn = index.connect(locs, create=False)
            if query.count(conn) == 11:
                conn.close()
                break
            conn.close()
        except index.IndexUnavailable:
            pass
        time.sleep(0.2)
    else:
        pytest.fail("the index was not rebuilt")
    result, _ = hook(env, "user-prompt-submit", "codex", {"session_id": "c1", "cwd": SHOP, "prompt": PROMPT})
    assert LOGIN_ENTRY in context_of(result)
    assert "rebuilding in the background" in locs.log_file.read_text()


def test_a_locked_index_still_gets_an_answer_in_time(world):
    env, locs = world
    holder = sqlite3.connect(locs.index_file, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        result, elapsed = hook(env, "user-prompt-submit", "codex", {"session_id": "c2", "cwd": SHOP, "prompt": PROMPT})
        assert isinstance(result, dict)
        assert elapsed < 2.0
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_a_missing_index_of_a_small_bank_is_made_by_the_first_prompt(tmp_path):
    """A tree just pulled onto this machine (or a first install) answers its very first prompt."""
    env = make_env(tmp_path)
    locs = make_locs(tmp_path)
    build_corpus(locs)
    result, _ = hook(env, "user-prompt-submit", "omp", {"session_id": "c3", "cwd": SHOP, "prompt": PROMPT})
    assert LOGIN_ENTRY in context_of(result)


def test_a_missing_index_of_a_large_bank_is_built_in_the_background(tmp_path, monkeypatch):
    env = make_env(tmp_path)
    locs = make_locs(tmp_path)
    build_corpus(locs)
    for n in range(60):  # more than FIRST_INDEX_ENTRIES
        (locs.memories / "--home-dev-shop--" / "bank" / f"2020-01-01T00-00-{n:02d}-000Z--filler.md").write_text(
            "---\ntitle: \"filler\"\n---\n\n## Prompt\n\nfiller\n\n## Result\n\nfiller\n")
    result, _ = hook(env, "user-prompt-submit", "omp", {"session_id": "c3", "cwd": SHOP, "prompt": PROMPT})
    assert result == {"additionalContext": ""}
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not context_of(result):
        time.sleep(0.3)
        result, _ = hook(env, "user-prompt-submit", "omp", {"session_id": "c3", "cwd": SHOP, "prompt": PROMPT})
    assert LOGIN_ENTRY in context_of(result)


def test_hook_scripts_are_thin_entry_points(world):
    import subprocess
    import sys

    env, _ = world
    out = subprocess.run([sys.executable, str(REPO / "hooks" / "user-prompt-submit"), "--harness", "codex"],
                         input=json.dumps({"session_id": "s9", "cwd": SHOP, "prompt": PROMPT}).encode(),
                         capture_output=True, env=env)
    assert out.returncode == 0
    assert LOGIN_ENTRY in context_of(json.loads(out.stdout))


def test_main_returns_zero_for_launchers_that_exit_with_it(tmp_path):
    """The --no-venv launcher runs `sys.exit(main())`: anything but 0 makes the harness drop the answer."""
    env = make_env(tmp_path)
    code = "import sys; from harnesslink_core.hooks import main; sys.exit(main())"
    out = subprocess.run([sys.executable, "-c", code, "session-start", "--harness", "codex"], env=env,
                         input=json.dumps({"session_id": "s", "cwd": SHOP}).encode(), capture_output=True, timeout=60)
    assert out.returncode == 0 and out.stderr == b"", out.stderr
    assert isinstance(json.loads(out.stdout), dict)
