"""Hostile files in the memory tree and the agent dir: a FIFO at any name we read (or append to) is skipped,
never waited on, so every hook answers at once; a symlinked project or bank folder is never followed, so
nothing outside the tree is indexed, briefed, injected, found, or written into."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from claude_builder import ClaudeSession
from harnesslink_core.recall import index
from harnesslink_core.sessions.handoff import handoff_path
from harnesslink_core.store.scope import project_slug
from memory_helpers import REPO, make_env, make_locs, run_hook, write_entry

PROMPT = "why did signing in stop working after midnight? something with the session cookie"
QUICK = 10.0  # seconds: a hook held by a FIFO waits until its harness kills it
OUTSIDE_SECRET = "the vault unseal key lives in the attic drawer behind the bastion"


@pytest.fixture
def world(tmp_path: Path):
    env, locs = make_env(tmp_path), make_locs(tmp_path)
    project = tmp_path / "shop"
    project.mkdir()
    cwd = str(project)
    write_entry(locs, cwd, title="The login test fails every night around midnight",
                actions=[("bash", {"command": "pytest tests/test_login.py"})],
                result="The session cookie expiry was computed from local time; it now uses UTC, so signing in "
                       "works after midnight.", ts="2026-08-20T09:12:00.000Z", session_id="cc-1")
    write_entry(locs, cwd, title="Make the Docker image smaller", actions=[("edit", {"path": "Dockerfile"})],
                result="A multi-stage build: 1.2 GB down to 180 MB.", ts="2026-08-24T11:05:00.000Z", session_id="cc-2")
    index.refresh(locs)
    session = ClaudeSession(Path(env["HOME"]), cwd=cwd, session_id="s-live")
    session.turn("add a health check endpoint to the api", "Added GET /healthz answering 200 with the version. " * 8,
                 tools=[("Bash", {"command": "pytest tests/test_health.py"})])
    session.flush()
    return env, locs, cwd, session


def fifo_names(env: dict[str, str], locs, cwd: str) -> list[Path]:
    """Every file of the tree and the agent dir a hook, a pass or a verb reads or appends to, but TRUST.md
    and IDENTITY.md (tests/store/test_trust.py, tests/store/test_identity.py)."""
    home, agent = Path(env["HOME"]), locs.agent_dir
    project = locs.memories / project_slug(cwd)
    memory_of = home / ".claude" / "projects" / "".join(c if c.isalnum() else "-" for c in cwd) / "memory"
    names = [agent / "config.yml", agent / "config-cache.json", agent / "switches-cache.json",
             agent / "exclude-cache.json", agent / "forgotten.jsonl", agent / ".last-pass",
             agent / "logs" / "harnesslink.log", agent / "identities.json", agent / "history.jsonl",
             project / "MAIN.md", project / "linked.txt", project / "bank" / "2026-08-30T08-00-00-000Z--newest.md",
             project / "summaries" / "2026-08-20.md",
             home / ".codex" / "memories" / "raw_memories.md", home / ".codex" / "memories" / "rollout_summaries" / "a.md",
             memory_of / "MEMORY.md"]
    for harness in ("claude-code", "codex", "pi", "omp"):
        names += [project / "state" / f"{harness}--s-live.md", Path(handoff_path(locs.agent_path, cwd, harness))]
    return names


def plant_fifos(paths: list[Path]) -> None:
    for path in paths:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists():
            path.unlink()
        os.mkfifo(path)


def timed(run) -> subprocess.CompletedProcess:
    started = time.monotonic()
    try:
        out = run()
    except subprocess.TimeoutExpired:
        pytest.fail("held by a FIFO until the timeout")
    assert time.monotonic() - started < QUICK
    return out


@pytest.mark.parametrize("harness", ["claude-code", "codex", "pi", "omp"])
@pytest.mark.parametrize("event", ["session-start", "user-prompt-submit", "stop", "pre-compact"])
def test_every_hook_answers_at_once_beside_fifos(world, harness: str, event: str) -> None:
    env, locs, cwd, session = world
    plant_fifos(fifo_names(env, locs, cwd))
    payload = {"session_id": "s-live", "cwd": cwd, "prompt": PROMPT, "source": "resume",
               "transcript_path": str(session.path), "hook_event_name": "x"}
    out = timed(lambda: run_hook(env, event, "--harness", harness, stdin=json.dumps(payload), timeout=3 * QUICK))
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout)
    if harness in ("pi", "omp"):
        assert list(answer) == ["additionalContext"]
    elif event in ("stop", "pre-compact"):
        assert answer == {}
    if event in ("session-start", "user-prompt-submit") and harness != "pi":
        text = answer.get("additionalContext") or answer["hookSpecificOutput"]["additionalContext"]
        assert "midnight" in text  # the memory still comes back, the FIFOs skipped


def cli(env: dict[str, str], *argv: str, stdin: bytes = b"", cwd: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harnesslink_core.main", *argv], input=stdin, capture_output=True,
                          env=env, timeout=3 * QUICK, cwd=cwd or env["HOME"])


def test_status_recall_and_the_mcp_search_answer_at_once_beside_fifos(world) -> None:
    env, locs, cwd, _ = world
    plant_fifos(fifo_names(env, locs, cwd))
    status = timed(lambda: cli(env, "status"))
    assert status.returncode == 0, status.stderr
    assert "config.yml" in status.stdout.decode()  # a FIFO as config.yml is a problem it names
    recall = timed(lambda: cli(env, "recall", "session cookie midnight", "--cwd", cwd))
    assert recall.returncode == 0 and b"midnight" in recall.stdout, recall.stderr
    assert "midnight" in json.dumps(mcp_search(env, cwd)), "the memory still comes back, the FIFOs skipped"


def mcp_search(env: dict[str, str], cwd: str) -> dict:
    """memory_search through the MCP server, as a harness calls it: the call's result."""
    frames = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}},
              {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "memory_search", "arguments": {"query": "session cookie midnight"}}}]
    data = b"".join(json.dumps(f).encode() + b"\n" for f in frames)
    served = timed(lambda: cli(env, "mcp", "--harness", "codex", stdin=data, cwd=cwd))
    return [json.loads(line) for line in served.stdout.splitlines()][-1]["result"]


def outside_project(tmp_path: Path, cwd: str) -> Path:
    """A project folder outside the tree, holding one entry (the tree's entries are in the tree)."""
    outside_locs = make_locs(tmp_path / "elsewhere")
    entry = write_entry(outside_locs, cwd, title="Where the vault unseal key lives", result=OUTSIDE_SECRET,
                        ts="2026-08-29T10:00:00.000Z", session_id="other")
    return entry.parent.parent


@pytest.mark.parametrize("linked", ["bank", "project"])
def test_a_symlinked_folder_in_the_tree_is_never_followed(world, tmp_path: Path, linked: str) -> None:
    env, locs, cwd, session = world
    (tmp_path / "elsewhere").mkdir()
    outside = outside_project(tmp_path, cwd)
    project = locs.memories / project_slug(cwd)
    if linked == "bank":
        for entry in (project / "bank").iterdir():
            entry.unlink()
        (project / "bank").rmdir()
        (project / "bank").symlink_to(outside / "bank")
    else:
        for path in sorted(project.rglob("*"), reverse=True):
            path.rmdir() if path.is_dir() else path.unlink()
        project.rmdir()
        project.symlink_to(outside)
    before = sorted(p.name for p in outside.rglob("*"))
    index.rebuild(locs)
    prompt = run_hook(env, "user-prompt-submit", "--harness", "codex", stdin=json.dumps(
        {"session_id": "s-new", "cwd": cwd, "prompt": "where does the vault unseal key live? the attic drawer"}))
    brief = run_hook(env, "session-start", "--harness", "codex", stdin=json.dumps(
        {"session_id": "s-new", "cwd": cwd, "source": "startup"}))
    recall = cli(env, "recall", "vault unseal key attic", "--cwd", cwd, "--all")
    for out in (prompt, brief, recall):
        assert b"bastion" not in out.stdout and b"Where the vault" not in out.stdout, out.stdout
    stop = run_hook(env, "stop", "--harness", "claude-code", stdin=json.dumps(
        {"session_id": "s-live", "cwd": cwd, "transcript_path": str(session.path)}))
    assert stop.returncode == 0
    backfill = cli(env, "backfill", "--days", "3650")  # the linked project's turn cannot be banked: said so
    assert backfill.returncode == 1 and b"nothing is written through it" in backfill.stderr, backfill.stderr
    assert len(backfill.stderr.splitlines()) == 1
    assert sorted(p.name for p in outside.rglob("*")) == before  # nothing written through the link


@pytest.mark.parametrize("kind", ["fifo", "symlink"])
@pytest.mark.parametrize("suffix", ["", "-wal", "-shm", "-journal"])
@pytest.mark.parametrize("database", ["ledger", "index"])
def test_a_database_that_is_not_a_regular_file_is_never_opened(world, tmp_path: Path, database: str, suffix: str,
                                                                kind: str) -> None:
    """The ledger or the index, or one of its side files, as a FIFO (an open waits for a writer) or a link
    (to a file outside, which would be written through): the hooks answer as without it, the verbs say so in
    one line, and nothing is opened."""
    from harnesslink_core.store.ledger import open_ledger

    env, locs, cwd, session = world
    open_ledger(locs).close()
    path = Path((locs.ledger_path if database == "ledger" else locs.index_path) + suffix)
    outside = tmp_path / "outside.db"
    outside.write_bytes(b"")
    if path.exists():
        path.unlink()
    os.mkfifo(path) if kind == "fifo" else path.symlink_to(outside)

    for event in ("session-start", "user-prompt-submit", "stop"):
        payload = {"session_id": "s-live", "cwd": cwd, "prompt": PROMPT, "source": "startup",
                   "transcript_path": str(session.path)}
        out = timed(lambda: run_hook(env, event, "--harness", "codex", stdin=json.dumps(payload), timeout=3 * QUICK))
        assert out.returncode == 0, out.stderr
        answer = json.loads(out.stdout)
        if event == "user-prompt-submit" and database == "ledger":
            assert "midnight" in answer["hookSpecificOutput"]["additionalContext"]  # as with no ledger yet
    status = timed(lambda: cli(env, "status"))
    recall = timed(lambda: cli(env, "recall", "session cookie midnight", "--cwd", cwd))
    searched = mcp_search(env, cwd)

    if database == "ledger":
        assert status.returncode == 1
        assert len(status.stderr.decode().splitlines()) == 1 and str(path) in status.stderr.decode()
    else:
        assert status.returncode == 0, status.stderr
        assert f"search index: unusable, {path} is a" in status.stdout.decode()
    assert recall.returncode == 1 and str(path) in recall.stderr.decode(), recall.stderr
    assert len(recall.stderr.decode().splitlines()) == 1
    assert searched["isError"] and str(path) in searched["content"][0]["text"], searched
    assert outside.read_bytes() == b""  # never written through the link
    assert os.path.islink(path) if kind == "symlink" else stat.S_ISFIFO(os.lstat(path).st_mode)  # left as found


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() if p.is_file() else b"" for p in folder.rglob("*")}


def test_no_writer_goes_through_a_symlinked_project_folder(world, tmp_path: Path) -> None:
    """A repository's project folder in the tree linked out of it: the pass (IDENTITY.md, MAIN.md, state,
    summaries), a backfill and a confirmation write nothing there."""
    env, locs, cwd, session = world
    subprocess.run(["git", "init", "-q", cwd], check=True)
    subprocess.run(["git", "-C", cwd, "remote", "add", "origin", "https://github.com/acme/shop.git"], check=True)
    project = locs.memories / project_slug(cwd)
    outside = tmp_path / "outside-project"
    project.rename(outside)
    project.symlink_to(outside)
    entry = f"{project_slug(cwd)}/bank/{sorted((outside / 'bank').iterdir())[0].name}"
    before = snapshot(outside)

    stop = run_hook(env, "stop", "--harness", "claude-code", stdin=json.dumps(
        {"session_id": "s-live", "cwd": cwd, "transcript_path": str(session.path)}))
    assert stop.returncode == 0
    cli(env, "backfill", "--days", "3650")
    cli(env, "autobank", "--drain")
    cli(env, "confirm", entry, "--cwd", cwd)
    assert snapshot(outside) == before


def test_a_handoff_is_not_written_through_a_linked_folder(world, tmp_path: Path) -> None:
    env, locs, cwd, _ = world
    outside = tmp_path / "outside-handoffs"
    outside.mkdir()
    (locs.agent_dir / "handoffs").symlink_to(outside)
    out = cli(env, "resume", "s-live", "--fresh", "--no-launch", "--cwd", cwd)
    assert out.returncode == 1 and b"handoffs" in out.stderr, out.stderr
    assert list(outside.iterdir()) == []
