"""The autobank pass: what gets banked, when, where, and only once."""

from __future__ import annotations

import os
import shutil
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import frontmatter
import pytest

from harnesslink_core import clock, config
from harnesslink_core.banking import autobank, settle
from harnesslink_core.banking.autobank import StopSignal, run_pass, widen_window
from harnesslink_core.store.ledger import open_ledger
from tests.claude_builder import ClaudeSession
from tests.conftest import FIXTURES

LONG = "This is a detailed answer. " * 12  # over 200 characters: never skipped


def entries(locs, slug: str | None = None) -> list[Path]:
    root = locs.memories
    pattern = f"{slug}/bank/*.md" if slug else "*/bank/*.md"
    return sorted(root.glob(pattern))


def turn_keys(locs) -> list[str]:
    return [frontmatter.load(p)["turn_key"] for p in entries(locs)]


def age(path: Path, seconds: float) -> None:
    t = time.time() - seconds
    os.utime(path, (t, t))


def test_backfill_banks_every_real_fixture_turn_once(locs, isolated_home: Path) -> None:
    project = isolated_home / ".claude" / "projects" / "-workspace"
    project.mkdir(parents=True)
    for src in (FIXTURES / "claude-code").glob("*.jsonl"):
        name = src.name if "agent" not in src.name else "agent-" + src.name  # real subagent files are agent-*.jsonl
        shutil.copy(src, project / name)
    widen_window(locs, 4000)
    first = autobank.drain(locs)
    assert first.banked == 7
    titles = sorted(frontmatter.load(p)["title"] for p in entries(locs))
    assert titles == sorted([
        "can you run a command ls -la",
        "ok can you create a hello_world.py file and add a minimal code in it?",
        "can you read it back with Read tool?",
        "can you run `cat nonexistent.txt`",
        "do something requiring multiple tools in one turn,",
        "mix phx.server doesnt seem to start",
        "/orchestrator @CLAUDE.md を最新の状態にアップデートしてください",
    ])
    # the entries land in the projects named by the cwd inside the transcripts
    assert {p.parent.parent.name for p in entries(locs)} == {
        "--workspace--", "--home-marco-projects-spotter--", "--path-to-Demo--"}
    widen_window(locs, 4000)
    again = autobank.drain(locs)
    assert again.banked == 0
    assert len(turn_keys(locs)) == len(set(turn_keys(locs))) == 7


def test_entry_has_the_exact_frontmatter_and_sections(locs, isolated_home: Path) -> None:
    s = ClaudeSession(isolated_home, cwd="/Users/me/Workspace/myapp")
    s.turn("Fix the authentication bug\nmore detail", LONG, tools=[("Bash", {"command": "npm test"}),
                                                                    ("Write", {"path": "/src/auth.ts", "content": "x"})])
    s.flush()
    run_pass(locs)
    (path,) = entries(locs, "--Users-me-Workspace-myapp--")
    text = path.read_text()
    post = frontmatter.loads(text)
    assert list(post.metadata) == ["id", "ts", "title", "tags", "cwd", "session_id", "harness", "turn_key", "source"]
    assert post["title"] == "Fix the authentication bug"
    assert post["tags"] == ["bash", "write"]
    assert post["harness"] == "claude-code" and post["source"] == "autobank:claude-code"
    assert post["turn_key"].startswith(f"claude-code:{s.session_id}:")
    assert path.name == f"{post['id']}--fix-the-authentication-bug.md"
    assert post["id"] == post["ts"].replace(":", "-").replace(".", "-")
    assert '- bash: {"command":"npm test"}' in text
    assert text.index("## Prompt") < text.index("## Actions") < text.index("## Result")
    assert text.startswith("---\nid: ")


def test_short_conversational_turn_is_skipped(locs, isolated_home: Path) -> None:
    s = ClaudeSession(isolated_home)
    s.turn("thanks!", "You're welcome.")
    s.turn("explain the cache", LONG)
    s.flush()
    report = run_pass(locs)
    assert (report.banked, report.skipped) == (1, 1)
    assert [frontmatter.load(p)["title"] for p in entries(locs)] == ["explain the cache"]


def test_last_turn_settles_on_stop_signal(locs, isolated_home: Path) -> None:
    s = ClaudeSession(isolated_home, start=datetime.now(timezone.utc) - timedelta(seconds=30))
    s.turn("first task", LONG)
    s.turn("second task", LONG, closed=False)  # no end-of-turn line yet: the transcript may lag the hook
    s.flush()
    assert run_pass(locs).banked == 1
    report = run_pass(locs, paths=[s.path], stop=StopSignal("claude-code", s.session_id, str(s.path), time.time()))
    assert report.banked == 1
    assert len(entries(locs)) == 2


def test_last_turn_settles_after_five_quiet_minutes(locs, isolated_home: Path) -> None:
    s = ClaudeSession(isolated_home, start=datetime.now(timezone.utc) - timedelta(seconds=20))
    s.turn("open ended question about caching", LONG, closed=False)
    s.flush()
    assert run_pass(locs).banked == 0
    age(s.path, 200)
    assert run_pass(locs).banked == 0  # quiet for the file, but its last line is recent
    s2 = ClaudeSession(isolated_home, start=datetime.now(timezone.utc) - timedelta(minutes=10))
    s2.turn("older question", LONG, closed=False)
    s2.flush()
    age(s2.path, 400)
    assert run_pass(locs).banked == 1


def test_turn_waiting_on_a_tool_is_never_banked_by_quiet_and_dropped_after_7_days(locs, isolated_home: Path) -> None:
    s = ClaudeSession(isolated_home, start=datetime.now(timezone.utc) - timedelta(days=8))
    s.prompt("deploy it")
    s._line(type="assistant", message={"id": "m1", "role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "deploy"}}]})
    s.flush()
    age(s.path, 3600)
    assert run_pass(locs).banked == 0
    age(s.path, 8 * 86400)
    ledger = open_ledger(locs)
    ledger.db.execute("UPDATE files SET next_check=0")
    ledger.close()
    widen_window(locs, 30)
    report = run_pass(locs)
    assert (report.banked, report.dropped) == (0, 1)


def test_first_pass_banks_only_the_last_30_days(locs, isolated_home: Path) -> None:
    old = ClaudeSession(isolated_home, start=datetime.now(timezone.utc) - timedelta(days=45))
    old.turn("ancient work", LONG)
    old.flush()
    age(old.path, 45 * 86400)
    mixed = ClaudeSession(isolated_home, start=datetime.now(timezone.utc) - timedelta(days=40))
    mixed.turn("old turn in a live file", LONG)
    mixed.clock = datetime.now(timezone.utc) - timedelta(days=2)
    mixed.turn("recent turn", LONG)
    mixed.flush()
    run_pass(locs)
    assert [frontmatter.load(p)["title"] for p in entries(locs)] == ["recent turn"]
    widen_window(locs, 60)
    autobank.drain(locs)
    assert sorted(frontmatter.load(p)["title"] for p in entries(locs)) == [
        "ancient work", "old turn in a live file", "recent turn"]


def test_truncated_and_regrown_transcript_banks_each_turn_once(locs, isolated_home: Path) -> None:
    s = ClaudeSession(isolated_home)
    s.turn("task one", LONG)
    s.turn("task two", LONG)
    s.flush()
    assert run_pass(locs).banked == 2
    saved = s.path.read_bytes()
    s.path.write_bytes(b"")
    run_pass(locs)
    # regrow past the old length with the old turns and a new one
    s.path.write_bytes(saved)
    s.turn("task three", LONG)
    s.turn("task four", LONG)
    s.flush()
    assert run_pass(locs).banked == 2
    # replaced by different content of the same length and beyond
    other = ClaudeSession(isolated_home, session_id=s.session_id)
    other.path.unlink()
    other.turn("task five " + "y" * 50, LONG)
    other.flush()
    with s.path.open("ab") as f:
        f.write(saved)
    run_pass(locs)
    keys = turn_keys(locs)
    assert len(keys) == len(set(keys)) == 5


def test_partial_last_line_completed_later(locs, isolated_home: Path) -> None:
    s = ClaudeSession(isolated_home, start=datetime.now(timezone.utc) - timedelta(seconds=20))
    text = s.turn("write the parser", LONG)
    s.lines.clear()
    cut = len(text) - 30
    s.path.write_text(text[:cut])
    assert run_pass(locs).banked == 0
    with s.path.open("a") as f:
        f.write(text[cut:])
    assert run_pass(locs).banked == 1
    assert run_pass(locs).banked == 0


def test_garbage_non_utf8_and_huge_lines_are_survived(locs, isolated_home: Path) -> None:
    s = ClaudeSession(isolated_home)
    s.turn("before the garbage", LONG)
    s.flush()
    with s.path.open("ab") as f:
        f.write(b"not json at all\n\xff\xfe\xfa broken utf8 \x00\n[1,2,3]\n")
        f.write(b'{"type":"user","message":' + b'"' + b"a" * (20 * 1024 * 1024) + b'"}\n')
    s.turn("after the garbage", LONG)
    s.flush()
    first = run_pass(locs)
    assert first.banked == 1 and first.backlog == 1  # the 20 MB line is over one pass's budget
    assert autobank.drain(locs).banked == 1
    from harnesslink_core.commands.status import collect

    assert collect(locs)["harnesses"]["claude-code"]["bad_lines"] >= 2


def test_deleted_transcript_is_forgotten_without_losing_entries(locs, isolated_home: Path) -> None:
    s = ClaudeSession(isolated_home)
    s.turn("keep me", LONG)
    s.flush()
    run_pass(locs)
    s.path.unlink()
    report = run_pass(locs)
    assert report.errors == 0
    assert len(entries(locs)) == 1


def test_resumed_or_forked_session_repeating_turns_banks_them_once(locs, isolated_home: Path) -> None:
    s = ClaudeSession(isolated_home)
    s.turn("original work", LONG)
    s.flush()
    run_pass(locs)
    fork = ClaudeSession(isolated_home)
    fork.path.write_text(s.path.read_text().replace(s.session_id, fork.session_id))  # copied lines keep their uuids
    fork.turn("new work in the fork", LONG)
    fork.flush()
    report = run_pass(locs)
    assert report.banked == 1 and report.duplicates == 1
    assert sorted(frontmatter.load(p)["title"] for p in entries(locs)) == ["new work in the fork", "original work"]


def test_turns_from_one_folder_share_a_project(locs, isolated_home: Path) -> None:
    a = ClaudeSession(isolated_home, cwd="/srv/app")
    b = ClaudeSession(isolated_home, cwd="/srv/app")
    a.turn("task a", LONG)
    b.turn("task b", LONG)
    a.flush(), b.flush()
    run_pass(locs)
    assert len(entries(locs, "--srv-app--")) == 2


def test_autobank_false_stops_everything(locs, isolated_home: Path) -> None:
    locs.config_file.parent.mkdir(parents=True, exist_ok=True)
    locs.config_file.write_text("memory:\n  autoBank: false\n")
    s = ClaudeSession(isolated_home)
    s.turn("task", LONG)
    s.flush()
    report = run_pass(locs)
    assert report.disabled and not entries(locs) and not list(locs.memories.glob("*/state/*"))


def test_disabled_harness_pauses_and_reenabled_banks_only_last_30_days(locs, isolated_home: Path) -> None:
    s = ClaudeSession(isolated_home, start=datetime.now(timezone.utc) - timedelta(days=3))
    s.turn("before pause", LONG)
    s.flush()
    run_pass(locs)
    config.set_autobank(locs, ["codex"])
    s.clock = datetime.now(timezone.utc) - timedelta(days=2)
    s.turn("while paused", LONG)
    s.flush()
    assert run_pass(locs).banked == 0
    config.set_autobank(locs, ["codex", "claude-code"])
    assert run_pass(locs).banked == 1
    assert len(entries(locs)) == 2


def test_main_md_keeps_the_human_part_byte_for_byte(locs, isolated_home: Path) -> None:
    project = locs.memories / "--work-app--"
    project.mkdir(parents=True)
    human = "# My notes\r\n\nuse  pnpm, not npm  \n\n<!-- superpi:index:start -->\nstale\n<!-- superpi:index:end -->\ntail notes\n"
    (project / "MAIN.md").write_bytes(human.encode())
    s = ClaudeSession(isolated_home, cwd="/work/app")
    s.turn("add the login page", LONG)
    s.flush()
    run_pass(locs)
    text = (project / "MAIN.md").read_bytes().decode()
    assert text.startswith("# My notes\r\n\nuse  pnpm, not npm  \n\n<!-- superpi:index:start -->\n- ")
    assert "stale" not in text and text.endswith("<!-- superpi:index:end -->\ntail notes\n")
    assert "— add the login page (bank/" in text


def test_main_md_without_markers_gets_them_appended(locs, isolated_home: Path) -> None:
    project = locs.memories / "--work-app--"
    project.mkdir(parents=True)
    (project / "MAIN.md").write_text("just my notes")
    s = ClaudeSession(isolated_home, cwd="/work/app")
    s.turn("add the login page", LONG)
    s.flush()
    run_pass(locs)
    text = (project / "MAIN.md").read_text()
    assert text.startswith("just my notes\n\n<!-- superpi:index:start -->\n")


def test_daily_summaries_are_written_once_and_never_rewritten(locs, isolated_home: Path) -> None:
    day = datetime.now(timezone.utc) - timedelta(days=2)
    s = ClaudeSession(isolated_home, cwd="/work/app", start=day.replace(hour=10))
    s.turn("morning work", LONG, tools=[("Bash", {"command": "make"})])
    s.flush()
    run_pass(locs)
    summary = locs.memories / "--work-app--" / "summaries" / f"{day:%Y-%m-%d}.md"
    assert summary.read_text() == f"# {day:%Y-%m-%d}\n\n- morning work [bash]\n"
    summary.write_text("edited by a person\n")
    s.turn("afternoon work", LONG)
    s.flush()
    run_pass(locs)
    assert summary.read_text() == "edited by a person\n"
    today = locs.memories / "--work-app--" / "summaries" / f"{datetime.now(timezone.utc):%Y-%m-%d}.md"
    assert not today.exists()


def test_state_file_shows_todos_plan_and_checkpoints(locs, isolated_home: Path) -> None:
    s = ClaudeSession(isolated_home, cwd="/work/app")
    s.prompt("plan the migration")
    s.tool("TodoWrite", {"todos": [
        {"content": "write schema", "status": "completed", "activeForm": "Writing schema"},
        {"content": "migrate data", "status": "in_progress", "activeForm": "Migrating"},
        {"content": "drop old table", "status": "pending", "activeForm": "Dropping"}]})
    s.tool("ExitPlanMode", {"plan": "1. schema\n2. data"})
    s.answer(LONG)
    s.end_of_turn()
    s.flush()
    run_pass(locs)
    (path,) = (locs.memories / "--work-app--" / "state").glob("*.md")
    assert path.name == f"claude-code--{s.session_id}.md"
    text = path.read_text()
    assert "- [x] write schema\n- [~] migrate data\n- [ ] drop old table" in text
    assert "## Plan\n\n1. schema\n2. data" in text
    assert "Turn finished: plan the migration" in text
    post = frontmatter.loads(text)
    assert post["kinds"] == ["todos", "plan", "checkpoints"] and post["harness"] == "claude-code"
    mtime = path.stat().st_mtime_ns
    time.sleep(0.01)
    s.prompt("unrelated")  # transcript grows, state content does not change
    s.flush()
    run_pass(locs)
    assert path.stat().st_mtime_ns == mtime


def test_backlog_drains_over_passes_within_the_budget(locs, isolated_home: Path) -> None:
    for n in range(6):
        s = ClaudeSession(isolated_home)
        for k in range(5):
            s.turn(f"session {n} task {k}", LONG, tools=[("Write", {"content": "z" * 2000})])
        s.flush()
    first = run_pass(locs, budget=20_000)
    assert 0 < first.banked < 30 and first.backlog > 0
    total = autobank.drain(locs)
    assert first.banked + total.banked == 30


def test_a_second_pass_does_not_wait_for_the_first(locs, isolated_home: Path) -> None:
    from filelock import FileLock

    locs.agent_dir.mkdir(parents=True, exist_ok=True)
    with FileLock(str(locs.pass_lock)):
        started = time.monotonic()
        report = run_pass(locs)
        assert report.locked and time.monotonic() - started < 1.0


def test_a_pass_with_nothing_new_reads_nothing(locs, isolated_home: Path) -> None:
    s = ClaudeSession(isolated_home)
    s.turn("task", LONG)
    s.flush()
    run_pass(locs)
    assert run_pass(locs).bytes_read == 0


def test_full_disk_is_a_log_line_not_a_crash(locs, isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harnesslink_core.store import durable

    def no_space(*args, **kwargs):
        raise OSError(28, "No space left on device")

    s = ClaudeSession(isolated_home)
    s.turn("task", LONG)
    s.flush()
    monkeypatch.setattr(durable, "write", no_space)
    report = run_pass(locs)
    assert report.errors == 1 and report.banked == 0
    assert "No space left" in locs.log_file.read_text()
    monkeypatch.undo()
    # the turn was not lost: once its reservation lapses a later pass banks it
    assert run_pass(locs, now=time.time() + 601).banked == 1


def test_stop_waits_briefly_for_a_transcript_that_lags_the_hook(locs, isolated_home: Path) -> None:
    import threading

    s = ClaudeSession(isolated_home, start=datetime.now(timezone.utc) - timedelta(seconds=30))
    s.prompt("summarise the incident")
    s.tool("Read", {"file_path": "/var/log/app.log"})
    s.answer("Let me look at the log first.")
    s.flush()
    final = "The incident was caused by an expired certificate; renewing it fixed the outage. " * 3

    def late_writer() -> None:
        time.sleep(0.4)
        s.answer(final)
        s.flush()

    writer = threading.Thread(target=late_writer)
    writer.start()
    report = run_pass(locs, paths=[s.path],
                      stop=StopSignal("claude-code", s.session_id, str(s.path), time.time(), last_message=final))
    writer.join()
    assert report.banked == 1
    (path,) = entries(locs)
    assert final.strip() in path.read_text()


def test_stop_settles_at_once_a_turn_whose_answer_quotes_memory(locs, isolated_home: Path) -> None:
    # the reader takes our memory out of the answer it banks; the harness's last message keeps it
    s = ClaudeSession(isolated_home, start=datetime.now(timezone.utc) - timedelta(seconds=30))
    s.prompt("where do sessions live now?")
    s.tool("mcp__harnesslink__memory_get", {"id": "2026-11-20T10-00-00-000Z"})
    final = ('The entry says: <harnesslink-memory kind="entry" id="x">The session store moved to Postgres.'
             '</harnesslink-memory> So the sessions live in Postgres now.')
    s.answer(final)
    s.flush()
    started = time.monotonic()
    report = run_pass(locs, paths=[s.path],
                      stop=StopSignal("claude-code", s.session_id, str(s.path), time.time(), last_message=final))
    assert report.open_turns == 0 and not report.stop_waiting
    assert time.monotonic() - started < autobank.STOP_RETRIES * autobank.STOP_RETRY_DELAY / 2, "it did not wait"


def test_codex_stop_hook_settles_its_turn_before_task_complete_is_written(locs, isolated_home: Path) -> None:
    import json

    generated = Path(__file__).resolve().parents[1] / "fixtures" / "generated" / "codex" / "sessions"
    parent = next(p for p in generated.rglob("rollout-*.jsonl") if b"forked_from_id" not in p.read_bytes()[:2000])
    lines = parent.read_bytes().splitlines(keepends=True)
    last_complete = max(i for i, l in enumerate(lines) if b'"task_complete"' in l)
    payload = json.loads(lines[last_complete])["payload"]
    target = isolated_home / ".codex" / "sessions" / "2026" / "11" / "29" / parent.name
    target.parent.mkdir(parents=True)
    target.write_bytes(b"".join(lines[:last_complete]))  # the hook runs before this line is written
    widen_window(locs, 4000)
    # a minute after the turn's last line, whenever the fixture was recorded: a turn left waiting for a week is
    # given up (settle.GIVE_UP), and that is not what this test is about
    now = max(clock.parse_iso(json.loads(line).get("timestamp")) or 0.0 for line in lines[:last_complete]) + 60
    before = run_pass(locs, now=now)
    assert before.open_turns == 1
    session_id = json.loads(lines[0])["payload"]["id"]
    wrong_turn = StopSignal("codex", session_id, str(target), now, payload["last_agent_message"], "other")
    assert run_pass(locs, paths=[target], stop=wrong_turn, now=now).banked == 0
    stop = StopSignal("codex", session_id, str(target), now, payload["last_agent_message"], payload["turn_id"])
    assert run_pass(locs, paths=[target], stop=stop, now=now).banked == 1
    with target.open("ab") as f:
        f.write(lines[last_complete])  # task_complete arrives: nothing is banked twice
    assert run_pass(locs, now=now + 60).banked == 0


def test_settle_banks_the_codex_turn_its_stop_hook_names_before_task_complete() -> None:
    from harnesslink_core.model import Turn

    def codex_turn(**facts) -> Turn:
        return Turn(harness="codex", session_id="s1", turn_id="t1", cwd="/work/app", prompt="Fix the build",
                    offset=0, started=1_780_000_000.0, ended=1_780_000_060.0, result=LONG, needs_end_marker=True,
                    **facts)

    turn = codex_turn()
    assert settle.settle(turn, True, None, 0.0) == "open"  # no task_complete yet
    assert settle.settle(turn, True, None, 0.0, stop_named=True) == "bank"
    assert settle.settle(turn, True, None, settle.GIVE_UP, stop_named=True) == "bank"
    assert settle.settle(turn, True, None, settle.GIVE_UP) == "drop"
    # a tool call still waiting, an aborted turn, a turn a later one followed: the hook's word is not enough
    assert settle.settle(codex_turn(pending_tools=1), True, None, 0.0, stop_named=True) == "open"
    assert settle.settle(codex_turn(aborted=True), True, None, 0.0, stop_named=True) == "drop"
    assert settle.settle(turn, False, None, 0.0, stop_named=True) == "drop"


def test_an_entry_with_a_revision_is_rewritten_in_place_only_when_it_changes(locs, monkeypatch) -> None:
    from harnesslink_core.banking import commit
    from harnesslink_core.banking.autobank import _Pass
    from harnesslink_core.model import Turn

    def conversation(steps: int) -> Turn:
        return Turn(harness="antigravity", session_id="c1", turn_id="c1", cwd="/work/app", prompt="Build the page",
                    offset=0, started=1_780_000_000.0, ended=1_780_000_000.0, result=f"{steps} steps",
                    closed=True, always_bank=True, revision=f"r{steps}")

    ledger = open_ledger(locs)
    p = _Pass(locs, ledger, 10**6, time.time())

    def bank(turn: Turn) -> list[Turn]:
        return commit.bank_prepared(p, settle.prepare(p, [(turn, "bank")], 0.0, ""))

    assert bank(conversation(3)) == []
    (path,) = entries(locs)
    assert "3 steps" in path.read_text()
    mtime = path.stat().st_mtime_ns
    assert bank(conversation(3)) == []
    assert path.stat().st_mtime_ns == mtime
    assert bank(conversation(5)) == []
    assert entries(locs) == [path] and "5 steps" in path.read_text()
    ledger.close()


def test_a_pass_remembers_redactions_only_while_it_runs(locs, isolated_home: Path) -> None:
    from harnesslink_core import redact

    s = ClaudeSession(isolated_home, cwd="/Users/me/Workspace/myapp")
    s.turn("Deploy with DB_PASS=DbPassValue123 set", LONG, tools=[("Bash", {"command": "DB_PASS=DbPassValue123 make"})])
    s.turn("And again with DB_PASS=DbPassValue123", LONG, tools=[("Bash", {"command": "DB_PASS=DbPassValue123 make"})])
    s.flush()
    assert run_pass(locs).banked == 2
    kept = [name for name, value in vars(redact).items() if "DbPassValue123" in repr(value)]
    assert kept == [], "the pass's redactions are its own, gone with it"
    for path in entries(locs):
        assert "DbPassValue123" not in path.read_text()
