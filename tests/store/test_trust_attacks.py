"""TRUST.md under attack: a change the CLI reports as done is in force for every reader whatever the file's
size, a project never writes the trust state of a project it links, writers racing to create the file lose
no event, and a FIFO or a symlink named TRUST.md neither holds nor redirects anyone."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys

import pytest

from harnesslink_core.main import main
from harnesslink_core.store import history, trust
from harnesslink_core.store.scope import project_slug
from memory_helpers import SHARED_LIB, SHOP, corpus_world, run_hook, superseding_world, write_entry

SLUG, LIB = project_slug(SHOP), project_slug(SHARED_LIB)
LOGIN = f"{SLUG}/bank/2026-08-20T09-12-00-000Z--the-login-test-fails-every-night-around-midnight.md"
LEAK = f"{SLUG}/bank/2026-08-27T17-45-00-000Z--memory-keeps-growing-in-the-websocket-server.md"
RETRY = f"{LIB}/bank/2026-08-19T10-00-00-000Z--http-client-should-retry-failed-calls.md"
LOGIN_PROMPT = "why did signing in stop working right after 12am? something with the session cookie"
RETRY_PROMPT = "does the shared http client retry failed calls with exponential backoff and jitter?"


@pytest.fixture
def world(tmp_path):
    return superseding_world(tmp_path)


def name(entry: str) -> str:
    return entry.rsplit("/", 1)[1]


def prompted(env, cwd: str, prompt: str, session: str) -> str:
    out = run_hook(env, "user-prompt-submit", "--harness", "codex", timeout=20,
                   stdin=json.dumps({"session_id": session, "cwd": cwd, "prompt": prompt}))
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout or b"{}").get("hookSpecificOutput", {}).get("additionalContext", "")


def brief(env, cwd: str = SHOP) -> str:
    out = run_hook(env, "session-start", "--harness", "codex", timeout=20,
                   stdin=json.dumps({"session_id": "s-brief", "cwd": cwd, "source": "startup"}))
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout or b"{}").get("hookSpecificOutput", {}).get("additionalContext", "")


def cli(env, cwd: str, verb: str, *words: str) -> subprocess.CompletedProcess:
    """`harnesslink <verb> --cwd CWD [--undo] -- <ids>` in its own process (a hang fails it, not the run)."""
    flags = [w for w in words if w.startswith("--") and "/" not in w]
    ids = [w for w in words if w not in flags]
    return subprocess.run([sys.executable, "-m", "harnesslink_core.main", verb, "--cwd", cwd, *flags, "--", *ids],
                          capture_output=True, text=True, env=env, timeout=30, cwd=env["HOME"])


def trust_of(env, cwd: str, query: str) -> dict[str, dict]:
    """What `harnesslink recall --json` says of each entry it found, by `<slug>/bank/<file>.md`."""
    out = subprocess.run([sys.executable, "-m", "harnesslink_core.main", "recall", query, "--cwd", cwd, "--json",
                          "-k", "10"], capture_output=True, text=True, env=env, timeout=30, cwd=env["HOME"])
    assert out.returncode == 0, out.stderr
    root = os.path.realpath(env["HARNESSLINK_HOME"] + "/memories")
    return {os.path.relpath(os.path.realpath(m["path"]), root): m for m in json.loads(out.stdout)["matches"]}


# --- a change reported as done is in force, whatever the file's size ------------------------------------------


def pad(locs, slug: str, size: int) -> None:
    """A TRUST.md of `size` bytes: the header, then notes that are no events (a hand edit, or a hostile one)."""
    note = "a note that is no event, of the kind a person may leave in the file by hand\n"
    text = trust.HEADER + note * ((size - len(trust.HEADER)) // len(note) + 1)
    (locs.memories / slug / trust.TRUST_FILE).write_text(text[:size - 1] + "\n", "utf-8")


@pytest.mark.parametrize("size", [trust.MAX_READ - 200, trust.MAX_READ + 1000, 3 * trust.MAX_READ])
def test_a_supersession_reported_as_done_is_in_force_for_every_reader_whatever_the_files_size(world, size):
    env, locs, newer = world
    pad(locs, SLUG, size)
    for old in (LOGIN, LEAK):
        done = cli(env, SHOP, "supersede", old, newer)
        again = cli(env, SHOP, "supersede", old, newer)
        if done.returncode == 0:
            assert "already superseded" in again.stdout and again.returncode == 0
            continue
        assert "superseded by" not in done.stdout + again.stdout and again.returncode == 1
        assert "nothing was written" in done.stderr
    claimed = done.returncode == 0
    # each size is past what the hooks read of the trust state in scope: none of the project's entries is pushed
    assert name(LOGIN) not in prompted(env, SHOP, LOGIN_PROMPT, "s-size")
    assert name(LEAK) not in brief(env)
    found = trust_of(env, SHOP, "login test fails at midnight, session cookie expiry")
    assert (found[LOGIN]["trust"] == "superseded") is claimed


# --- a project writes trust state only about its own entries --------------------------------------------------


def test_a_project_cannot_supersede_the_entry_of_a_project_it_links(world):
    env, locs, _ = world
    lib_trust = locs.memories / LIB / trust.TRUST_FILE
    assert name(RETRY) in prompted(env, SHARED_LIB, RETRY_PROMPT, "s-lib-before")
    done = cli(env, SHOP, "supersede", RETRY, LOGIN)
    assert done.returncode == 1 and "its own entries only" in done.stderr
    assert not lib_trust.exists()
    assert name(RETRY) in prompted(env, SHARED_LIB, RETRY_PROMPT, "s-lib-after")
    found = trust_of(env, SHARED_LIB, RETRY_PROMPT)
    assert found[RETRY]["trust"] == "current" and SLUG not in json.dumps(found)


def test_a_project_cannot_undo_or_confirm_in_the_trust_state_of_a_project_it_links(world):
    env, locs, _ = world
    lib_newer = write_entry(locs, SHARED_LIB, title="The HTTP client now retries through the service mesh",
                            result="Retries moved out of the shared HTTP client into the mesh's retry policy.",
                            ts="2026-08-25T10:00:00.000Z", harness="omp", session_id="lib-2")
    lib_newer = f"{LIB}/bank/{lib_newer.name}"
    assert cli(env, SHARED_LIB, "supersede", RETRY, lib_newer).returncode == 0  # the project's own word
    lib_trust = locs.memories / LIB / trust.TRUST_FILE
    before = lib_trust.read_bytes()
    for words in (("supersede", RETRY, lib_newer, "--undo"), ("confirm", RETRY), ("confirm", lib_newer)):
        done = cli(env, SHOP, *words)
        assert done.returncode == 1 and "its own entries only" in done.stderr, words
    assert lib_trust.read_bytes() == before
    assert not any(r.get("actor") == "cli" and r.get("event") in ("restored", "confirmed")
                   for r in history.read(locs))
    assert name(RETRY) not in prompted(env, SHARED_LIB, RETRY_PROMPT, "s-lib")


# --- writers racing to create the file ------------------------------------------------------------------------


WRITERS, TRIALS = 6, 100
RACE = "/home/dev/race"


def _confirm_at_once(barrier, ident: str) -> None:
    barrier.wait()
    with open(os.devnull, "w") as quiet:
        sys.stdout = quiet
        os._exit(main(["confirm", "--cwd", RACE, "--", ident]))


def test_writers_creating_trust_md_at_the_same_moment_lose_no_event(locs):
    ids = [write_entry(locs, RACE, title=f"Race entry {n}", ts=f"2026-08-2{n}T10:00:00.000Z",
                       session_id=f"r-{n}").name for n in range(WRITERS)]
    path = locs.memories / project_slug(RACE) / trust.TRUST_FILE
    fork = multiprocessing.get_context("fork")
    for trial in range(TRIALS):
        path.unlink(missing_ok=True)
        barrier = fork.Barrier(WRITERS)
        children = [fork.Process(target=_confirm_at_once, args=(barrier, ident)) for ident in ids]
        for child in children:
            child.start()
        for child in children:
            child.join(30)
        assert [child.exitcode for child in children] == [0] * WRITERS, trial
        text = path.read_text("utf-8")
        confirmed = sorted(e.entry.rsplit("/", 1)[1] for e in trust.read_events(locs, [project_slug(RACE)]))
        assert confirmed == sorted(ids), f"trial {trial}: an event was lost\n{text}"
        assert text.startswith(trust.HEADER) and text.count(trust.HEADER) == 1, trial
    in_history = [r for r in history.read(locs) if r.get("event") == "confirmed"]
    assert len(in_history) == WRITERS * TRIALS  # the history and TRUST.md agree


# --- a FIFO or a symlink named TRUST.md -----------------------------------------------------------------------


def test_a_fifo_named_trust_md_holds_no_hook_no_verb_and_no_memory_tool(world):
    env, locs, newer = world
    os.mkfifo(locs.memories / SLUG / trust.TRUST_FILE)
    assert name(LOGIN) in prompted(env, SHOP, LOGIN_PROMPT, "s-fifo")
    assert name(LEAK) in brief(env)
    assert LOGIN in trust_of(env, SHOP, "login test fails at midnight, session cookie expiry")
    done = cli(env, SHOP, "supersede", LOGIN, newer)
    assert done.returncode == 1 and "superseded by" not in done.stdout
    served = subprocess.run([sys.executable, "-m", "harnesslink_core.main", "mcp-call", "memory_search", "--harness",
                             "pi"], input=json.dumps({"arguments": {"query": "login session cookie midnight"},
                                                      "cwd": SHOP, "session_id": "s-fifo"}),
                            capture_output=True, text=True, env=env, timeout=30, cwd=env["HOME"])
    answer = json.loads(served.stdout)
    assert not answer["isError"] and f"id: {LOGIN}" in answer["text"], served.stderr


def test_a_symlink_named_trust_md_redirects_neither_a_read_nor_a_write(world, tmp_path):
    env, locs, newer = world
    elsewhere = tmp_path / "elsewhere.md"
    elsewhere.write_text(trust.HEADER + f"- 2026-08-28T16:00:00.000Z superseded `{LOGIN}` by `{newer}` (cli)\n")
    before = elsewhere.read_bytes()
    (locs.memories / SLUG / trust.TRUST_FILE).symlink_to(elsewhere)
    assert name(LOGIN) in prompted(env, SHOP, LOGIN_PROMPT, "s-link")
    assert trust_of(env, SHOP, "login test fails at midnight, session cookie expiry")[LOGIN]["trust"] == "current"
    done = cli(env, SHOP, "confirm", LEAK)
    assert done.returncode == 1 and "cannot be written" in done.stderr
    assert elsewhere.read_bytes() == before


# --- a supersession names only what its reader may see ---------------------------------------------------------


def test_a_project_linking_another_never_learns_the_entry_ids_of_a_project_only_that_one_links(world):
    env, locs, _ = world
    storefront = "/home/dev/storefront"
    write_entry(locs, storefront, title="Storefront checkout page layout", result="The checkout page is laid out.",
                ts="2026-08-21T10:00:00.000Z", harness="claude-code", session_id="sf-1")
    (locs.memories / project_slug(storefront) / "linked.txt").write_text(f"{SHOP}\n")
    by_lib = write_entry(locs, SHARED_LIB, title="Session cookies are issued by the shared auth client",
                         result="The shared auth client issues every session cookie and its expiry.",
                         ts="2026-08-29T09:00:00.000Z", harness="codex", session_id="lib-9")
    by_lib = f"{LIB}/bank/{by_lib.name}"
    done = cli(env, SHOP, "supersede", LOGIN, by_lib)  # the shop's own entry, by the library it links
    assert done.returncode == 0, done.stderr
    assert found_superseded_by(env, SHOP) == by_lib
    from_storefront = trust_of(env, storefront, "login test fails at midnight, session cookie expiry")
    assert from_storefront[LOGIN]["trust"] == "superseded"
    shown = from_storefront[LOGIN]["superseded_by"]
    assert shown == trust.OUT_OF_SCOPE and LIB not in json.dumps(from_storefront)
    tool = subprocess.run([sys.executable, "-m", "harnesslink_core.main", "mcp-call", "memory_search", "--harness",
                           "pi"], input=json.dumps({"arguments": {"query": "login session cookie midnight"},
                                                    "cwd": storefront, "session_id": "s-storefront"}),
                          capture_output=True, text=True, env=env, timeout=30, cwd=env["HOME"])
    text = json.loads(tool.stdout)["text"]
    assert f"id: {LOGIN}" in text and "Superseded by" in text, tool.stderr
    assert LIB not in text and name(by_lib) not in text


def found_superseded_by(env, cwd: str) -> str | None:
    return trust_of(env, cwd, "login test fails at midnight, session cookie expiry")[LOGIN]["superseded_by"]


# --- the hooks read trust state within one budget for the whole scope ------------------------------------------


def full_of_events(locs, slug: str, then: str = "") -> str:
    """A TRUST.md of the largest size a writer lets it reach, of short valid events (confirmations), ending in
    `then`: a project with years of them, or a hostile one. Its path."""
    tail = then + "\n" if then else ""
    lines, size, n = [trust.HEADER], len(trust.HEADER) + len(tail), 0
    while True:
        line = f"- 2026-08-28T10:30:00.000Z confirmed `{slug}/bank/{n:x}.md` (cli)\n"
        if size + len(line) > trust.MAX_READ:
            break
        lines.append(line)
        size, n = size + len(line), n + 1
    path = locs.memories / slug / trust.TRUST_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(lines) + tail, "utf-8")
    return str(path)


def dry_run(env, event: str, payload: dict) -> str:
    out = run_hook(env, event, "--harness", "codex", "--dry-run", timeout=20, stdin=json.dumps(payload))
    assert out.returncode == 0, out.stderr
    return out.stdout.decode()


def test_one_prompt_costs_the_same_however_many_linked_projects_hold_a_full_trust_md(world):
    import time

    env, locs, newer = world
    assert cli(env, SHOP, "supersede", LOGIN, newer).returncode == 0
    linked = [f"/home/dev/lib{k}" for k in range(20)]
    for folder in linked:
        write_entry(locs, folder, title=f"Retries of {folder}", result="Retries failed calls.",
                    ts="2026-08-19T10:00:00.000Z")
        full_of_events(locs, project_slug(folder))
    (locs.memories / SLUG / "linked.txt").write_text("\n".join([SHARED_LIB, *linked]) + "\n")
    start = time.monotonic()
    context = prompted(env, SHOP, LOGIN_PROMPT, "s-cost")
    took = time.monotonic() - start
    assert took < 3, f"one prompt took {took:.1f} s"  # every file parsed on every prompt: 12-16 s
    assert name(newer) in context and name(LOGIN) not in context


def test_a_linked_project_whose_trust_state_does_not_fit_is_not_pushed_and_status_says_what_to_do(world, tmp_path):
    env, locs, _ = world
    assert name(RETRY) in prompted(env, SHOP, RETRY_PROMPT, "s-fits")
    path = full_of_events(locs, LIB)
    assert name(RETRY) not in prompted(env, SHOP, RETRY_PROMPT, "s-over")  # its trust state unread: not pushed
    said = dry_run(env, "user-prompt-submit", {"session_id": "s-dry", "cwd": SHOP, "prompt": RETRY_PROMPT})
    assert f"not pushed: {LIB}" in said and path in said
    assert RETRY in trust_of(env, SHOP, "shared http client retry failed calls backoff")  # a pull reads it whole
    folder = tmp_path / "app"  # status looks at the folder it runs in
    folder.mkdir()
    write_entry(locs, str(folder), title="The app", result="An app that uses the shared library.")
    (locs.memories / project_slug(str(folder)) / "linked.txt").write_text(SHARED_LIB + "\n")
    status = subprocess.run([sys.executable, "-m", "harnesslink_core.main", "status"], capture_output=True,
                            text=True, env=env, timeout=60, cwd=folder)
    assert status.returncode == 0, status.stderr
    assert f"{LIB}: its trust state ({path})" in status.stdout and "move the lines" in status.stdout


def test_an_own_trust_md_that_does_not_fit_leaves_the_brief_and_the_prompt_without_its_entries(world):
    env, locs, newer = world
    full_of_events(locs, SLUG, then=f"- 2026-08-28T16:00:00.000Z superseded `{LEAK}` by `{newer}` (cli)")
    assert name(LOGIN) not in prompted(env, SHOP, LOGIN_PROMPT, "s-own")
    listed = brief(env)
    assert name(LOGIN) not in listed and name(newer) not in listed
    said = dry_run(env, "session-start", {"session_id": "s-dry", "cwd": SHOP, "source": "startup"})
    assert f"not listed: {SLUG}" in said
    assert trust_of(env, SHOP, "memory keeps growing in the websocket server")[LEAK]["trust"] == "superseded"
