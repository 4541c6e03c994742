"""Memory that stays true (SPEC §11): a superseded entry is never pushed, a pull shows it marked and
below the current ones, `--undo` brings it back, TRUST.md survives hand edits, `--as-of` answers as of then,
and the memory tool's `supersedes` takes only this project's older entries."""

from __future__ import annotations

import json
import os
import time

import pytest

from harnesslink_core import memory_tools
from harnesslink_core.clock import parse_iso
from harnesslink_core.errors import ToolError
from harnesslink_core.main import main
from harnesslink_core.recall import index
from harnesslink_core.store import trust
from harnesslink_core.store.scope import project_slug
from memory_helpers import BLOG, SHARED_LIB, SHOP, corpus_world, run_hook, superseding_world, write_entry

PROMPT = "why did signing in stop working right after 12am? something with the session cookie"
SLUG = project_slug(SHOP)
LOGIN = f"{SLUG}/bank/2026-08-20T09-12-00-000Z--the-login-test-fails-every-night-around-midnight.md"
TRUST_MD = trust.TRUST_FILE


@pytest.fixture
def world(tmp_path):
    return superseding_world(tmp_path)


def injected(env, session="s-trust") -> str:
    out = run_hook(env, "user-prompt-submit", "--harness", "codex",
                   stdin=json.dumps({"session_id": session, "cwd": SHOP, "prompt": PROMPT}))
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout).get("hookSpecificOutput", {}).get("additionalContext", "")


def cli(verb: str, *words: str) -> int:
    """`harnesslink <verb> --cwd SHOP [--undo] -- <ids>` (ids as memory_search shows them start with `--`)."""
    flags = [w for w in words if w == "--undo"]
    return main([verb, "--cwd", SHOP, *flags, "--", *[w for w in words if w != "--undo"]])


def pulled(capsys, query="login test fails at midnight, session cookie expiry", *extra: str) -> list[dict]:
    capsys.readouterr()
    main(["recall", query, "--cwd", SHOP, "--json", "-k", "10", *extra])
    return json.loads(capsys.readouterr().out)["matches"]


def rel(match: dict, locs) -> str:
    return os.path.relpath(match["path"], locs.memories)


# --- never pushed ---------------------------------------------------------------------------------------


def test_a_superseded_entry_is_never_injected_and_undo_restores_it(world):
    env, locs, newer = world
    assert LOGIN.rsplit("/", 1)[1] in injected(env, "s-before")
    assert cli("supersede", LOGIN, newer) == 0
    text = injected(env, "s-after")
    assert LOGIN.rsplit("/", 1)[1] not in text
    assert newer.rsplit("/", 1)[1] in text  # the current entry is given instead
    assert cli("supersede", LOGIN, newer, "--undo") == 0
    assert LOGIN.rsplit("/", 1)[1] in injected(env, "s-undone")


def test_a_superseded_entry_is_not_among_the_briefs_newest(world):
    env, locs, newer = world
    old = f"{SLUG}/bank/2026-08-27T17-45-00-000Z--memory-keeps-growing-in-the-websocket-server.md"
    brief = lambda: json.loads(run_hook(env, "session-start", "--harness", "codex", stdin=json.dumps(  # noqa: E731
        {"session_id": "s-b", "cwd": SHOP, "source": "startup"})).stdout)["hookSpecificOutput"]["additionalContext"]
    assert old.rsplit("/", 1)[1] in brief()
    assert cli("supersede", old, newer) == 0
    assert old.rsplit("/", 1)[1] not in brief()


def test_the_dry_run_says_how_many_superseded_entries_it_left_out(world):
    env, locs, newer = world
    cli("supersede", LOGIN, newer)
    out = run_hook(env, "user-prompt-submit", "--harness", "codex", "--dry-run",
                   stdin=json.dumps({"session_id": "s", "cwd": SHOP, "prompt": PROMPT}))
    assert "superseded by a newer entry (excluded): 1" in out.stdout.decode()


# --- pulled: marked, and below --------------------------------------------------------------------------


def test_the_pull_labels_a_superseded_entry_and_ranks_it_below_the_current_ones(world, capsys):
    _, locs, newer = world
    before = [rel(m, locs) for m in pulled(capsys)]
    assert before[0] == LOGIN  # the better match, while it is current
    assert cli("supersede", LOGIN, newer) == 0
    after = pulled(capsys)
    paths = [rel(m, locs) for m in after]
    old = after[paths.index(LOGIN)]
    assert all(m["trust"] != "superseded" for m in after[:paths.index(LOGIN)])
    assert paths.index(LOGIN) > paths.index(newer)
    assert old["trust"] == "superseded" and old["superseded_by"] == newer
    today = time.strftime("%Y-%m-%d", time.gmtime())
    assert old["why"].startswith(f"superseded by {newer} ({today})")
    capsys.readouterr()
    main(["recall", "login test fails at midnight, session cookie expiry", "--cwd", SHOP, "-k", "10"])
    printed = capsys.readouterr().out
    assert f"superseded by {newer} ({today})" in printed


def test_memory_search_marks_the_superseded_entry_and_names_the_newer(world):
    _, locs, newer = world
    cli("supersede", LOGIN, newer)
    text = memory_tools.call("memory_search", {"query": "login session cookie midnight", "limit": 10},
                             memory_tools.Session(locs, SHOP, "pi", "s"))
    block = text[text.index(f"id: {LOGIN}"):]
    assert f"Superseded by {newer}" in block.split("\n\n")[0]
    assert f"Why here: superseded by {newer} (" in block
    assert text.index(f"id: {newer}") < text.index(f"id: {LOGIN}")


def test_a_confirmed_entry_is_labelled_and_confirm_is_no_memory_tool(world, capsys):
    _, locs, _ = world
    assert cli("confirm", "2026-08-20T09-12-00-000Z") == 0
    login = next(m for m in pulled(capsys) if rel(m, locs) == LOGIN)
    assert login["trust"] == "confirmed" and login["why"].startswith("confirmed (")
    assert cli("confirm", LOGIN, "--undo") == 0
    assert next(m for m in pulled(capsys) if rel(m, locs) == LOGIN)["trust"] == "current"
    assert not [name for name in memory_tools.TOOLS if "confirm" in name]  # people confirm; agents never


# --- the file ---------------------------------------------------------------------------------------------


def test_trust_md_is_appended_to_one_line_per_event_newest_last(world):
    _, locs, newer = world
    cli("supersede", LOGIN, newer)
    cli("supersede", LOGIN, newer, "--undo")
    cli("confirm", LOGIN)
    text = (locs.memories / SLUG / TRUST_MD).read_text()
    assert text.startswith(trust.HEADER)
    events = [line for line in text.splitlines() if line.startswith("- ")]
    assert [e.split(" ", 2)[2] for e in events] == [
        f"superseded `{LOGIN}` by `{newer}` (cli)", f"undo superseded `{LOGIN}` by `{newer}` (cli)",
        f"confirmed `{LOGIN}` (cli)"]


def test_a_hand_edited_trust_file_with_garbage_lines_is_read_past_and_appended_to(world):
    env, locs, newer = world
    other = f"{SLUG}/bank/2026-08-22T08-40-00-000Z--postgres-errors-too-many-clients-already.md"
    (locs.memories / SLUG / TRUST_MD).write_bytes(
        b"# my notes\n\nsome words a person wrote\n- not a time superseded `a` by `b` (cli)\n"
        b"- 2026-08-28T10:00:00Z superseded `../../etc/passwd` by `x` (cli)\n"
        b"- 2026-08-28T10:00:00Z superseded `" + LOGIN.encode() + b"` by `" + newer.encode() + b"` (me)\n"
        b"- 2026-08-28T10:00:00Z superseded `" + LOGIN.encode() + b"` by\n"
        b"- 2026-08-28T10:00:00Z confirmed `--blog--/bank/x.md` (cli)\n"  # another project's entry: not this file's
        b"\xff\xfe binary \x00 junk\n- 2026-08-28T10:00:00Z frobnicated `" + other.encode() + b"` (cli)"  # no newline
    )
    assert trust.superseded_paths(locs, [SLUG]) == {LOGIN}
    assert LOGIN.rsplit("/", 1)[1] not in injected(env)
    assert cli("supersede", other, newer) == 0
    lines = (locs.memories / SLUG / TRUST_MD).read_text(errors="replace").splitlines()
    assert lines[-2].endswith("frobnicated `" + other + "` (cli)")  # the open last line was closed first
    assert trust.superseded_paths(locs, [SLUG]) == {LOGIN, other}


def test_the_last_line_for_a_pair_wins(world):
    _, locs, newer = world
    path = locs.memories / SLUG / TRUST_MD
    path.write_text(f"- 2026-08-28T10:00:00Z superseded `{LOGIN}` by `{newer}` (cli)\n"
                    f"- 2026-08-28T10:01:00Z undo superseded `{LOGIN}` by `{newer}` (cli)\n")
    assert trust.superseded_paths(locs, [SLUG]) == set()
    with path.open("a") as f:
        f.write(f"- 2026-08-28T10:02:00Z superseded `{LOGIN}` by `{newer}` (mcp:pi)\n")
    state = trust.state(locs, [SLUG])
    assert state.superseded_by(LOGIN) == (newer, parse_iso("2026-08-28T10:02:00Z"), "mcp:pi")


# --- the rules --------------------------------------------------------------------------------------------


def test_only_a_newer_entry_supersedes_and_a_circle_is_refused(world, capsys):
    _, locs, newer = world
    assert cli("supersede", newer, LOGIN) == 1
    assert "is not newer than" in capsys.readouterr().err
    assert cli("supersede", LOGIN, LOGIN) == 1
    # a hand edit that says the newer entry is superseded by the older one: the other way round would be a circle
    (locs.memories / SLUG / TRUST_MD).write_text(f"- 2026-08-28T10:00:00Z superseded `{newer}` by `{LOGIN}` (me)\n")
    capsys.readouterr()
    assert cli("supersede", LOGIN, newer) == 1
    assert "circle" in capsys.readouterr().err
    assert LOGIN not in trust.superseded_paths(locs, [SLUG])


def test_entries_outside_this_projects_scope_cannot_be_superseded(world, capsys):
    _, locs, newer = world
    blog = next((locs.memories / project_slug(BLOG) / "bank").iterdir()).name
    assert cli("supersede", f"{project_slug(BLOG)}/bank/{blog}", newer) == 1
    assert "not an entry of this project or of a linked one" in capsys.readouterr().err
    assert not (locs.memories / project_slug(BLOG) / TRUST_MD).exists()


def test_the_verbs_take_the_path_recall_prints_a_file_name_and_a_time_id(world, capsys):
    _, locs, newer = world
    assert main(["supersede", str(locs.memories / LOGIN), newer.rsplit("/", 1)[1], "--cwd", SHOP]) == 0
    assert trust.superseded_paths(locs, [SLUG]) == {LOGIN}
    assert main(["supersede", "2026-08-20T09-12-00-000Z", newer.rsplit("/", 1)[1][:24], "--undo", "--cwd", SHOP]) == 0
    assert trust.superseded_paths(locs, [SLUG]) == set()


def test_undo_of_nothing_says_so(world, capsys):
    _, _, newer = world
    assert cli("supersede", LOGIN, newer, "--undo") == 1
    assert "nothing to undo" in capsys.readouterr().err
    assert cli("confirm", LOGIN, "--undo") == 1


# --- two times --------------------------------------------------------------------------------------------


def test_known_at_answers_with_what_memory_held_then(world, capsys):
    _, locs, newer = world
    banked = parse_iso("2026-08-28T15:05:00Z")
    os.utime(locs.memories / newer, (banked, banked))  # its file was written five minutes after the work
    (locs.memories / SLUG / TRUST_MD).write_text(
        f"- 2026-09-02T08:00:00.000Z superseded `{LOGIN}` by `{newer}` (cli)\n")
    for path in (locs.memories / SLUG / "bank").iterdir():
        if path.name != newer.rsplit("/", 1)[1]:
            os.utime(path, (parse_iso("2026-08-28T00:00:00Z"),) * 2)
    index.delete_index_files(locs)  # made again from these files' times

    def state_of(as_of: str) -> dict[str, str]:
        return {rel(m, locs): m["trust"] for m in pulled(capsys, "login test fails at midnight, session cookie expiry",
                                                         "--known-at", as_of)}

    assert state_of("2026-08-28T15:01:00Z")[LOGIN] == "current"
    assert newer not in state_of("2026-08-28T15:01:00Z")  # its work was done, but it was not yet recorded
    assert state_of("2026-08-30")[LOGIN] == "current" and newer in state_of("2026-08-30")
    assert state_of("2026-09-02")[LOGIN] == "superseded"  # a date counts to its end
    assert state_of("2026-09-01")[LOGIN] == "current"
    assert newer not in state_of("2026-08-27")


def test_memory_search_as_of(world):
    _, locs, newer = world
    session = memory_tools.Session(locs, SHOP, "pi", "s")
    cli("supersede", LOGIN, newer)
    now = memory_tools.call("memory_search", {"query": "login session cookie midnight"}, session)
    then = memory_tools.call("memory_search", {"query": "login session cookie midnight", "as_of": "2026-08-27"},
                             session)
    assert "Superseded by" in now and "Superseded by" not in then
    assert "as of 2026-08-27 23:59 UTC" in then and f"id: {newer}" not in then
    with pytest.raises(ToolError, match="as_of"):
        memory_tools.call("memory_search", {"query": "login", "as_of": "last tuesday"}, session)


# --- the memory tool --------------------------------------------------------------------------------------


def bank(locs, **args) -> str:
    return memory_tools.call("memory_bank", {"text": "Session cookies: the auth service owns their expiry now; "
                                                     "never compute it in session.py.", **args},
                             memory_tools.Session(locs, SHOP, "codex", "thread-9"))


def test_memory_bank_supersedes_an_older_entry_of_its_project(world):
    env, locs, _ = world
    answer = bank(locs, supersedes=[LOGIN])
    assert f"It supersedes {LOGIN}" in answer
    state = trust.state(locs, [SLUG])
    newer, _, actor = state.superseded_by(LOGIN)
    assert actor == "mcp:codex" and newer in answer
    assert LOGIN.rsplit("/", 1)[1] not in injected(env)
    assert "It supersedes" in bank(locs, supersedes=[LOGIN])  # the same text again: nothing new, still said


@pytest.mark.parametrize("ident, why", [
    ("2020-01-01T00-00-00-000Z", "no memory entry"),
    (f"{project_slug(BLOG)}/bank/2026-08-20T12-00-00-000Z--session-cookie-expiry-uses-the-wrong-timezone.md",
     "not an entry of this project or of a linked one"),
    (f"{project_slug(SHARED_LIB)}/bank/2026-08-19T10-00-00-000Z--http-client-should-retry-failed-calls.md",
     "not of this project"),  # a linked project's entry: searchable, but not this project's to supersede
])
def test_memory_bank_refuses_supersedes_it_may_not_apply_and_records_nothing(world, ident, why):
    _, locs, _ = world
    before = sorted(os.listdir(locs.memories / SLUG / "bank"))
    with pytest.raises(ToolError, match=why):
        bank(locs, supersedes=[LOGIN, ident])
    assert sorted(os.listdir(locs.memories / SLUG / "bank")) == before
    assert not (locs.memories / SLUG / TRUST_MD).exists()


def test_memory_bank_refuses_to_supersede_an_entry_newer_than_the_learning(world):
    _, locs, _ = world
    later = write_entry(locs, SHOP, title="A turn dated after now", result="from the future",
                        ts="2099-01-01T00:00:00.000Z")
    with pytest.raises(ToolError, match="not newer than"):
        bank(locs, supersedes=[later.name])
    assert not (locs.memories / SLUG / TRUST_MD).exists()


@pytest.mark.parametrize("args", [{}, {"supersedes": []}])
def test_memory_bank_without_supersedes_supersedes_nothing(world, args):
    _, locs, _ = world
    assert "supersedes" not in bank(locs, **args)
    assert not (locs.memories / SLUG / TRUST_MD).exists()


def test_memory_banks_schema_offers_supersedes_and_memory_search_as_of():
    assert "supersedes" in memory_tools.TOOLS["memory_bank"]["inputSchema"]["properties"]
    assert "as_of" in memory_tools.TOOLS["memory_search"]["inputSchema"]["properties"]
