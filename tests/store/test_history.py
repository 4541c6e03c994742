"""History (SPEC §11): every change to memory and every use of it is one redacted record with its actor,
listed by `harnesslink history`; a session that opened an entry it was given counts as having used it."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import time
import uuid
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

import pytest

from harnesslink_core import main as cli
from harnesslink_core import memory_tools
from harnesslink_core.banking import autobank
from harnesslink_core.commands import status
from harnesslink_core.paths import locations
from harnesslink_core.store import history
from harnesslink_core.store.scope import project_slug
from memory_helpers import REPO, given_and_opened, make_env, run_hook
from tests.claude_builder import ClaudeSession
from tests.harnesses.test_codex import Rollout, uuid7
from tests.harnesses.test_pi import Session as PiSession

SHOP = "/home/dev/shop"
PROMPT = "why did signing in stop working right after 12am? something with the session cookie"
SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def bank_the_login_fix(home: Path) -> None:
    """A Claude Code session that fixed the nightly login failure: real work, worth an entry."""
    s = ClaudeSession(home, cwd=SHOP)
    s.prompt("The login test fails every night around midnight, find out why")
    s.tool("Bash", {"command": "pytest tests/test_login.py -x"}, output="1 failed: user logged out")
    s.tool("Edit", {"file_path": f"{SHOP}/src/auth/session.py", "old_string": "datetime.now()",
                    "new_string": "datetime.now(timezone.utc)"})
    s.answer("The session cookie expiry was computed from local time instead of UTC, so shortly after midnight "
             "the cookie was already expired and the login test saw a logged-out user. session.py now uses "
             "datetime.now(timezone.utc) for the cookie expiry; signing in works at any hour.")
    s.end_of_turn()
    s.flush()


def a_banked_login_fix(tmp_path: Path) -> tuple[dict[str, str], Path, object, Path, str]:
    """A HOME whose bank holds the login fix: (env, home, locs, its file, its id)."""
    env = make_env(tmp_path)
    home, locs = Path(env["HOME"]), locations(env)
    bank_the_login_fix(home)
    [path] = autobank.run_pass(locs).entries
    return env, home, locs, path, history.entry_id(path)


def ask_the_prompt_hook(env: dict[str, str], harness: str, session_id: str) -> None:
    """The real prompt hook process; it records what it gave after its answer, in a child of its own."""
    out = run_hook(env, "user-prompt-submit", "--harness", harness,
                   stdin=json.dumps({"session_id": session_id, "cwd": SHOP, "prompt": PROMPT}))
    assert out.returncode == 0, out.stderr
    assert "harnesslink-memory" in out.stdout.decode()


def given_to(locs, session_id: str, wait: float = 10.0) -> list[str]:
    deadline = time.monotonic() + wait
    while True:
        given = [r["entry"] for r in history.read(locs) if r["event"] == "given" and r["session"] == session_id]
        if given or time.monotonic() > deadline:
            return given
        time.sleep(0.02)


def harnesslink(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli.main(list(argv))
    return code, out.getvalue()


def codex_rollout(home: Path, thread_id: str, calls: list[dict]) -> Path:
    t0 = time.time() - 600
    rollout = Rollout(thread_id, cwd=SHOP, t0=t0)
    rollout.turn(uuid7(int(t0 * 1000) + 1000), PROMPT, answer="The cookie expiry is UTC now.", calls=calls)
    day = time.strftime("%Y/%m/%d", time.gmtime(t0))
    folder = home / ".codex" / "sessions" / day
    folder.mkdir(parents=True, exist_ok=True)
    return rollout.write(folder / f"rollout-{time.strftime('%Y-%m-%dT%H-%M-%S', time.gmtime(t0))}-{thread_id}.jsonl")


def test_every_change_and_use_is_listed_once_with_its_actor(tmp_path: Path, monkeypatch) -> None:
    env = make_env(tmp_path)
    monkeypatch.setenv("HARNESSLINK_HOME", env["HARNESSLINK_HOME"])
    home, locs = Path(env["HOME"]), locations(env)

    # banked: a real pass over a transcript
    bank_the_login_fix(home)
    report = autobank.run_pass(locs)
    [banked] = [history.entry_id(p) for p in report.entries]

    # recorded: an agent's learning, through the memory tools (as Codex's MCP client calls them)
    answer = memory_tools.call("memory_bank", {"text": "Deploys to staging need the VPN up first."},
                               memory_tools.Session(locs, SHOP, "codex", "cx-recorder"))
    recorded = answer.split(" as ", 1)[1].split(".md", 1)[0] + ".md"

    # given: the real prompt hook, in a Claude Code session and in a Codex one
    claude = ClaudeSession(home, cwd=SHOP)
    codex_thread = uuid7(int(time.time() * 1000))
    ask_the_prompt_hook(env, "claude-code", claude.session_id)
    ask_the_prompt_hook(env, "codex", codex_thread)
    assert banked in given_to(locs, claude.session_id) and banked in given_to(locs, codex_thread)

    # opened: each session then calls memory_get on the entry it was given
    claude.prompt(PROMPT)
    claude.tool("mcp__harnesslink__memory_get", {"id": banked}, output="<harnesslink-memory>...")
    claude.answer("The cookie expiry is UTC now.")
    claude.end_of_turn()
    claude.flush()
    codex_rollout(home, codex_thread, [
        {"kind": "function_call", "name": "memory_get", "namespace": "mcp__harnesslink",
         "arguments": json.dumps({"id": banked.rsplit("/", 1)[1]}), "call_id": "c1"},
        {"kind": "function_call_output", "call_id": "c1", "output": "<harnesslink-memory>..."}])
    autobank.run_pass(locs)
    autobank.run_pass(locs)  # read again: nothing new is recorded twice

    # forgotten: on the command line
    assert harnesslink("forget", "--yes", "--", recorded)[0] == 0

    code, out = harnesslink("history", "--all", "--json")
    assert code == 0
    events = json.loads(out)["events"]
    seen = Counter((e["event"], e["actor"], e["entry"], e["session"]) for e in events)
    assert [key for key, n in seen.items() if n > 1] == []
    assert {("banked", "autobank:claude-code", banked), ("recorded", "mcp:codex", recorded),
            ("given", "hook:claude-code", banked), ("given", "hook:codex", banked),
            ("opened", "autobank:claude-code", banked), ("opened", "autobank:codex", banked),
            ("forgotten", "cli", recorded)} <= {(e, a, entry) for e, a, entry, _ in seen}
    opened = {(e["actor"], e["session"], e["detail"]) for e in events if e["event"] == "opened"}
    assert opened == {("autobank:claude-code", claude.session_id, "memory_get"),
                      ("autobank:codex", codex_thread, "memory_get")}
    assert [e["at"] for e in events] == sorted((e["at"] for e in events), reverse=True)
    assert [e["detail"] for e in events if e["event"] == "forgotten"] == [f"ids: {recorded}"]

    # per entry: given, opened, last used; per harness in status: given N, opened M (k %)
    code, out = harnesslink("history", "--all", f"--entry={banked}")
    assert out.splitlines()[0].startswith(f"{banked}: given to 2 sessions, opened by 2, last on ")
    data = status.collect(locs)
    given_cc = len(given_to(locs, claude.session_id))
    assert (data["harnesses"]["claude-code"]["given"], data["harnesses"]["claude-code"]["opened"]) == (given_cc, 1)
    assert f"claude-code: given {given_cc}, opened 1 ({round(100 / given_cc)} %)" in status.use_lines(data)


def test_the_default_scope_is_this_folders_project_and_since_cuts_older_records(tmp_path: Path, monkeypatch) -> None:
    env = make_env(tmp_path)
    locs = locations(env)
    monkeypatch.setenv("HARNESSLINK_HOME", env["HARNESSLINK_HOME"])
    history.append(locs, [history.event("banked", "autobank:pi", entry="--w-shop--/bank/a.md", at=1_780_000_000),
                          history.event("banked", "autobank:pi", entry="--w-blog--/bank/b.md", at=1_790_000_000),
                          history.event("banked", "autobank:pi", entry="--w-shop--/bank/c.md", at=1_790_000_000)])
    monkeypatch.chdir(tmp_path)
    code, out = harnesslink("history", "--project", "/w/shop", "--json")
    assert [e["entry"] for e in json.loads(out)["events"]] == ["--w-shop--/bank/c.md", "--w-shop--/bank/a.md"]
    code, out = harnesslink("history", "--all", "--since", "2026-06-01", "--json")
    assert [e["entry"] for e in json.loads(out)["events"]] == ["--w-shop--/bank/c.md", "--w-blog--/bank/b.md"]
    assert harnesslink("history", "--since", "not a date")[0] == 2


def test_a_secret_in_a_recorded_learning_never_reaches_the_history(tmp_path: Path, monkeypatch) -> None:
    env = make_env(tmp_path)
    monkeypatch.setenv("HARNESSLINK_HOME", env["HARNESSLINK_HOME"])
    locs = locations(env)
    memory_tools.call("memory_bank", {"text": f"The deploy bot authenticates with {SECRET} from the vault.",
                                      "title": f"deploy token {SECRET}"},
                      memory_tools.Session(locs, SHOP, "claude-code", f"s-{SECRET}"))
    assert harnesslink("forget", "--all", "--query", f"deploy token {SECRET}", "--loose", "--yes")[0] == 0
    text = Path(history.history_path(locs)).read_text()
    assert [json.loads(line)["event"] for line in text.splitlines()] == ["recorded", "forgotten"]
    assert SECRET not in text and SECRET[:12] not in text
    assert "[redacted:" in text


def test_a_session_that_ignored_what_it_was_given_did_not_open_it(tmp_path: Path, monkeypatch) -> None:
    """Only a call that names the entry counts, and only for the session it was given to."""
    env, home, locs, path, entry = a_banked_login_fix(tmp_path)
    ignoring, other = ClaudeSession(home, cwd=SHOP), ClaudeSession(home, cwd=SHOP)
    for s in (ignoring, other):
        Given(locs, "claude-code", s.session_id).add([entry])
    ignoring.prompt(PROMPT)
    ignoring.tool("Bash", {"command": "grep -rn expiry src/auth"}, output="src/auth/session.py: expiry")
    ignoring.tool("mcp__harnesslink__memory_search", {"query": "session cookie"}, output="...")
    ignoring.answer("Found it in session.py.")
    ignoring.end_of_turn()
    ignoring.flush()
    stranger = ClaudeSession(home, cwd=SHOP)  # opens it, but was never given it
    stranger.prompt(PROMPT)
    stranger.tool("Read", {"file_path": str(path)})
    stranger.answer("Read it.")
    stranger.end_of_turn()
    stranger.flush()
    autobank.run_pass(locs)
    assert [r for r in history.read(locs) if r["event"] == "opened"] == []
    assert given_and_opened(history.read(locs)) == {"claude-code": (2, 0)}


def pi_session(home: Path, harness: str, sid: str, call: tuple[str, dict]) -> None:
    t = time.time() - 600
    s = PiSession(sid=sid, cwd=SHOP)
    s.entries[0]["timestamp"] = history.stamp(t)
    s.user(PROMPT, t + 1)
    s.assistant(t + 2, calls=(("call_1", *call),), stop="toolUse")
    s.result(t + 3, "call_1", call[0], text="...")
    s.assistant(t + 4, text="The cookie expiry is UTC now.")
    folder = ".pi/agent/sessions/--home-dev-shop--" if harness == "pi" else ".omp/agent/sessions/-home-dev-shop"
    s.write(home / folder / f"{history.stamp(t).replace(':', '-')}_{sid}.jsonl")


@pytest.mark.parametrize("harness, how", [
    ("claude-code", "read"), ("codex", "shell"), ("pi", "read"), ("omp", "memory_get"), ("pi", "shell"),
])
def test_a_session_that_read_or_fetched_its_given_entry_opened_it(tmp_path: Path, harness: str, how: str) -> None:
    env, home, locs, path, entry = a_banked_login_fix(tmp_path)
    shell = f"sed -n 1,80p {path} | head -40"
    if harness == "claude-code":
        s = ClaudeSession(home, cwd=SHOP)
        sid = s.session_id
        s.prompt(PROMPT)
        s.tool("Read", {"file_path": str(path)})
        s.answer("The cookie expiry is UTC now.")
        s.end_of_turn()
        s.flush()
    elif harness == "codex":
        sid = uuid7(int(time.time() * 1000))
        codex_rollout(home, sid, [
            {"kind": "function_call", "name": "exec_command", "arguments": json.dumps({"cmd": shell}), "call_id": "c1"},
            {"kind": "function_call_output", "call_id": "c1", "output": "---"}])
    else:
        sid = str(uuid.uuid4())
        call = {"read": ("read", {"path": str(path)}), "shell": ("bash", {"command": shell}),
                "memory_get": ("memory_get", {"id": entry.rsplit("/", 1)[1].split("--", 1)[0]})}[how]
        pi_session(home, harness, sid, call)
    Given(locs, harness, sid).add([entry])
    autobank.run_pass(locs)
    [opened] = [r for r in history.read(locs) if r["event"] == "opened"]
    assert (opened["actor"], opened["entry"], opened["session"], opened["detail"]) == (
        f"autobank:{harness}", entry, sid, how)


def Given(locs, harness: str, session_id: str):
    from harnesslink_core.store.injected import Given as given

    return given(locs, harness, session_id)


APPENDER = """
import sys
from harnesslink_core.paths import locations
from harnesslink_core.store import history
from harnesslink_core.store.scope import project_slug
locs = locations({"HOME": sys.argv[1], "HARNESSLINK_HOME": sys.argv[2]})
for n in range(int(sys.argv[4])):
    history.append(locs, [history.event("given", "hook:" + sys.argv[3], entry=f"--p--/bank/{n}.md", session="s" + str(n)),
                          history.event("opened", "autobank:" + sys.argv[3], entry=f"--p--/bank/{n}.md",
                                        detail="x" * 250)])
"""


def test_concurrent_appends_from_several_processes_lose_nothing(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    locs = locations(env)
    writers = [subprocess.Popen([sys.executable, "-c", APPENDER, env["HOME"], env["HARNESSLINK_HOME"], f"w{i}", "200"],
                                env={**env, "PYTHONPATH": str(REPO)}) for i in range(6)]
    assert [w.wait(timeout=120) for w in writers] == [0] * 6
    # a writer that looks at the end while another one writes may start on a fresh line: an empty line, no loss
    lines = [line for line in Path(history.history_path(locs)).read_text().splitlines() if line]
    assert len(lines) == 6 * 200 * 2
    records = history.read(locs)
    assert len(records) == len(lines)  # every line whole: none cut into by another writer
    assert Counter(r["actor"] for r in records) == {f"{kind}:w{i}": 200 for i in range(6) for kind in ("hook", "autobank")}


def test_a_line_torn_by_a_crash_is_skipped_and_the_next_record_is_whole(tmp_path: Path) -> None:
    locs = locations(make_env(tmp_path))
    history.append(locs, [history.event("banked", "autobank:pi", entry="--p--/bank/a.md")])
    with open(history.history_path(locs), "a") as f:
        f.write('{"at": "2026-01-01T00:00:00.000Z", "event": "ban')  # a writer died mid-line
    history.append(locs, [history.event("recorded", "mcp:pi", entry="--p--/bank/b.md")])
    assert [r["entry"] for r in history.read(locs)] == ["--p--/bank/a.md", "--p--/bank/b.md"]


def test_history_survives_a_lost_ledger(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    home, locs = Path(env["HOME"]), locations(env)
    bank_the_login_fix(home)
    autobank.run_pass(locs)
    os.unlink(locs.ledger_path)
    assert [r["event"] for r in history.read(locs)] == ["banked"]


def test_supersede_restore_and_confirm_are_listed_once_with_their_actors(tmp_path: Path, monkeypatch) -> None:
    from memory_helpers import corpus_world, write_entry

    env, locs = corpus_world(tmp_path)
    monkeypatch.setenv("HARNESSLINK_HOME", env["HARNESSLINK_HOME"])
    slug = project_slug(SHOP)
    login = f"{slug}/bank/2026-08-20T09-12-00-000Z--the-login-test-fails-every-night-around-midnight.md"
    newer = write_entry(locs, SHOP, title="Session cookie expiry now comes from the auth service",
                        result="The auth service sets the cookie expiry now.", ts="2026-08-28T15:00:00.000Z")
    newer_id = f"{slug}/bank/{newer.name}"
    for argv in (["supersede", "--cwd", SHOP, "--", login, newer_id],
                 ["supersede", "--cwd", SHOP, "--undo", "--", login, newer_id],
                 ["confirm", "--cwd", SHOP, "--", newer_id]):
        assert harnesslink(*argv)[0] == 0
    answer = memory_tools.call("memory_bank", {"text": "Cookie expiry: the auth service owns it.", "supersedes": [login]},
                               memory_tools.Session(locs, SHOP, "codex", "cx-1"))
    learning = answer.split(" as ", 1)[1].split(".md", 1)[0] + ".md"
    events = [(r["event"], r["actor"], r["entry"], r["detail"]) for r in history.read(locs)]
    assert events == [("superseded", "cli", login, f"by {newer_id}"),
                      ("restored", "cli", login, f"no longer superseded by {newer_id}"),
                      ("confirmed", "cli", newer_id, ""),
                      ("recorded", "mcp:codex", learning, "Cookie expiry: the auth service owns it."),
                      ("superseded", "mcp:codex", login, f"by {learning}")]


# --- use from an answer, and what a brief lists ---------------------------------------------------------

FACTFUL_ANSWER = ("From memory: the fix was in session.py, which computes the cookie expiry with "
                  "datetime.now(timezone.utc); tests/test_login.py is the test that caught it.")


def answering(home: Path, answer: str, calls: tuple[tuple[str, dict], ...] = ()) -> ClaudeSession:
    """A session whose turn starts now: after it was given what a test gives it."""
    s = ClaudeSession(home, cwd=SHOP, start=datetime.now(timezone.utc))
    s.prompt(PROMPT)
    for tool, args in calls:
        s.tool(tool, args, output="...")
    s.answer(answer)
    s.end_of_turn()
    return s


def test_an_answer_that_repeats_a_given_entrys_facts_used_it(tmp_path: Path) -> None:
    env, home, locs, path, entry = a_banked_login_fix(tmp_path)
    s = answering(home, FACTFUL_ANSWER)
    Given(locs, "claude-code", s.session_id).add([entry])
    s.flush()
    autobank.run_pass(locs)
    [opened] = [r for r in history.read(locs) if r["event"] == "opened"]
    assert (opened["entry"], opened["session"], opened["detail"]) == (entry, s.session_id, "answer")


def test_facts_are_the_names_and_values_of_a_text_not_its_words():
    from harnesslink_core.banking import use

    assert use.facts("Set pool_size=50 (was `pool_size: 20`) in config/database.yml; RedisStore, v2.3.1 and "
                     "e.g. the README stay, as do plain words like connection and timeout.") == {
        "pool_size", "config/database.yml", "RedisStore", "v2.3.1"}


@pytest.mark.parametrize("case", ["found by itself", "never given", "too few facts", "its own entry"])
def test_an_answer_with_the_facts_from_elsewhere_did_not_use_the_entry(tmp_path: Path, case: str) -> None:
    """Facts the turn's own tool calls or prompt hold came from there; an entry the session was never
    given, or one of its own earlier turns, was not used from memory; two facts are not enough."""
    env = make_env(tmp_path)
    home, locs = Path(env["HOME"]), locations(env)
    if case == "its own entry":
        s = ClaudeSession(home, cwd=SHOP, start=datetime.now(timezone.utc))
        s.prompt("The login test fails every night around midnight, find out why")
        s.tool("Bash", {"command": "pytest tests/test_login.py -x"}, output="1 failed: user logged out")
        s.tool("Edit", {"file_path": f"{SHOP}/src/auth/session.py", "old_string": "datetime.now()",
                        "new_string": "datetime.now(timezone.utc)"})
        s.answer("The session cookie expiry was computed from local time instead of UTC; session.py now uses "
                 "datetime.now(timezone.utc) for the cookie expiry, so signing in works at any hour." + "." * 200)
        s.end_of_turn()
        s.flush()
        [path] = autobank.run_pass(locs).entries
        Given(locs, "claude-code", s.session_id).add([history.entry_id(path)])
        s.prompt("and which test caught it?")
        s.answer(FACTFUL_ANSWER)
        s.end_of_turn()
        s.flush()
        autobank.run_pass(locs)
        assert [r for r in history.read(locs) if r["event"] == "opened"] == []
        return
    bank_the_login_fix(home)
    [path] = autobank.run_pass(locs).entries
    answer = FACTFUL_ANSWER if case != "too few facts" else "The fix was in session.py, using datetime.now(timezone.utc)."
    calls = ((("Bash", {"command": "grep -n 'datetime.now(timezone.utc)' src/auth/session.py"}),)
             if case == "found by itself" else ())
    s = answering(home, answer, calls)
    if case != "never given":
        Given(locs, "claude-code", s.session_id).add([history.entry_id(path)])
    s.flush()
    autobank.run_pass(locs)
    assert [r for r in history.read(locs) if r["event"] == "opened"] == []


def test_the_entries_a_brief_lists_are_given_and_a_later_open_counts(tmp_path: Path) -> None:
    """The real session-start hook records what its brief listed (after its answer), apart from what the
    prompt hook gives: the prompt hook may still give the entry in full, and status counts each apart."""
    env, home, locs, path, entry = a_banked_login_fix(tmp_path)
    s = ClaudeSession(home, cwd=SHOP)
    out = run_hook(env, "session-start", "--harness", "claude-code",
                   stdin=json.dumps({"session_id": s.session_id, "cwd": SHOP, "source": "startup"}))
    assert out.returncode == 0, out.stderr
    assert path.name in out.stdout.decode()
    deadline = time.monotonic() + 10
    while not [r for r in history.read(locs) if r["event"] == "given"] and time.monotonic() < deadline:
        time.sleep(0.02)
    [given] = [r for r in history.read(locs) if r["event"] == "given"]
    assert (given["actor"], given["entry"], given["session"], given["detail"]) == (
        "hook:claude-code", entry, s.session_id, "brief")
    ask_the_prompt_hook(env, "claude-code", s.session_id)  # the brief's one line does not keep the entry back
    deadline = time.monotonic() + 10
    while given_to(locs, s.session_id).count(entry) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert given_to(locs, s.session_id).count(entry) == 2
    s.prompt(PROMPT)
    s.tool("Read", {"file_path": str(path)})
    s.answer("Read it.")
    s.end_of_turn()
    s.flush()
    autobank.run_pass(locs)
    data = status.collect(locs)["harnesses"]["claude-code"]
    assert (data["given"], data["opened"], data["briefed"], data["briefed_opened"]) == (1, 1, 1, 1)
    assert "claude-code: given 1, opened 1 (100 %); listed in briefs 1, opened 1 (100 %)" in status.use_lines(
        status.collect(locs))


def test_a_dry_run_of_the_brief_records_nothing(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    home, locs = Path(env["HOME"]), locations(env)
    bank_the_login_fix(home)
    autobank.run_pass(locs)
    out = run_hook(env, "session-start", "--harness", "claude-code", "--dry-run",
                   stdin=json.dumps({"session_id": "s-dry", "cwd": SHOP, "source": "startup"}))
    assert out.returncode == 0, out.stderr
    time.sleep(0.3)
    assert [r for r in history.read(locs) if r["event"] == "given"] == []


def test_what_a_brief_listed_is_counted_apart_and_never_makes_an_entry_unopened_for_review(tmp_path: Path) -> None:
    env, home, locs, path, entry = a_banked_login_fix(tmp_path)
    for n in range(6):
        Given(locs, "codex", f"s-{n}").add([entry], in_brief=True)
    [use] = history.usage(history.read(locs)).values()
    assert (len(use.given), len(use.listed), len(use.opened)) == (0, 6, 0)
    code, out = harnesslink("history", "--all", f"--entry={entry}")
    assert out.splitlines()[0] == f"{entry}: given to 0 sessions, listed in 6 briefs, opened by 0"
    from harnesslink_core.commands import review

    assert review.collect(locs, [entry.split("/")[0]]) == []
    for n in range(review.GIVEN_OFTEN):  # given by the prompt hook as often: worth a look
        Given(locs, "codex", f"s-{n}").add([entry])
    assert [i.entry for i in review.collect(locs, [entry.split("/")[0]])] == [entry]
