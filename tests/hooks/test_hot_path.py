"""What each hook imports, held to an allow-list: a later import must not quietly put the cost back.

Each hook runs as its own process with `python -S` and the package and its dependencies on PYTHONPATH, so
nothing that `site` or an editable install loads at start-up hides what the hook itself imports. The
allowed set is what that interpreter loads for `pass`, plus the modules named here.
"""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import time

import pytest

from memory_helpers import REPO, SHOP, corpus_world

# Never on the prompt or session-start path (unless a pass must really start).
HEAVY = {
    "pathlib", "dataclasses", "enum", "inspect", "typing", "logging", "subprocess", "urllib", "yaml",
    "frontmatter", "filelock", "orjson", "re", "json", "datetime", "sqlite3", "argparse", "hashlib",
    "harnesslink_core.banking.autobank", "harnesslink_core.store.ledger", "harnesslink_core.harnesses",
    "harnesslink_core.store.entries", "harnesslink_core.clock", "harnesslink_core.config", "harnesslink_core.store.bank",
    "functools", "collections",  # what _sqlite3 would import, but for harnesslink_core.fastsqlite
    "numpy", "onnxruntime", "onnx", "tokenizers", "socket", "selectors",  # the resident encoder's, never a hook's
    "harnesslink_core.recall.encoder", "harnesslink_core.recall.nearby",
}
CORE = {"harnesslink_core", "harnesslink_core.paths", "harnesslink_core.banking", "harnesslink_core.banking.background",
        "harnesslink_core.log", "harnesslink_core.wirejson", "harnesslink_core.safefile",
        "harnesslink_core.hooks", "_json", "__future__", "gc",
        "harnesslink_core.store", "harnesslink_core.store.hook_runs"}  # when it ran: a stat before the answer
DECIDE = {"harnesslink_core.store", "harnesslink_core.store.scope", "harnesslink_core.store.identity", "harnesslink_core.recall", "harnesslink_core.recall.terms",
          "harnesslink_core.recall.lexicon", "harnesslink_core.recall.tokens", "harnesslink_core.control",
          "harnesslink_core.control.exclusion"}
SEARCH = {"_sqlite3", "harnesslink_core.fastsqlite", "harnesslink_core.errors", "harnesslink_core.recall.index", "harnesslink_core.recall.columns", "harnesslink_core.recall.query", "harnesslink_core.recall.matches",
          "harnesslink_core.recall.candidates", "harnesslink_core.recall.decide",
          "harnesslink_core.recall.framing", "harnesslink_core.store.injected", "harnesslink_core.recall.fingerprint",
          "harnesslink_core.store.trust", "math", "_blake2", "_functools",
          "harnesslink_core.recall.encoder_client", "_socket", "harnesslink_core.recall.encoded"}  # asking the encoder
BRIEF = {"harnesslink_core.recall.brief", "harnesslink_core.store.main_md", "harnesslink_core.sessions",
         "harnesslink_core.sessions.handoff", "harnesslink_core.store.deadline"}  # the hook's one deadline

# What the bookkeeping after the answer may add (the forked child of `hooks.process_main`): the history's
# `given` records, which import neither `re` nor `json` (store/history.py)
AFTER_ANSWER = {"harnesslink_core.store.history",
                "harnesslink_core.recall.encoded"}  # whether to start the encoder, when none took the request

PROMPT = "why did signing in stop working right after 12am? something with the session cookie"


def hook_modules(env: dict[str, str], *argv: str, payload: dict) -> set[str]:
    """What the hook has imported when its answer is out."""
    return hook_run(env, *argv, payload=payload)[0]


def hook_run(env: dict[str, str], *argv: str, payload: dict) -> tuple[set[str], set[str]]:
    """The hook run as `hooks.process_main` runs it (the answer, then the work left for after it): the
    modules imported when the answer is out, and those imported once that work is done."""
    code = ("import sys\nfrom harnesslink_core.hooks import answer_and_leave\n"
            "deferred = answer_and_leave(sys.argv[1:])\n"
            "sys.stderr.write('\\nMODULES ' + ' '.join(sorted(sys.modules)))\n"
            "for work in deferred: work()\n"
            "sys.stderr.write('\\nAFTER ' + ' '.join(sorted(sys.modules)))\n")
    out = subprocess.run([sys.executable, "-S", "-c", code, *argv], input=json.dumps(payload).encode(),
                         capture_output=True, env=_bare(env), timeout=60, cwd=env["HOME"])
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(b"{"), out.stdout
    answered, _, after = out.stderr.decode().rsplit("MODULES ", 1)[1].partition("\nAFTER ")
    return set(answered.split()), set(after.split())


# what `site` imports at every start, which `-S` leaves out
SITE = {"os", "os.path", "posixpath", "genericpath", "stat", "_stat", "_collections_abc", "_sitebuiltins"}


def startup_modules(env: dict[str, str]) -> set[str]:
    out = subprocess.run([sys.executable, "-S", "-c", "import sys; print(' '.join(sys.modules))"],
                         capture_output=True, env=_bare(env), check=True)
    return set(out.stdout.decode().split()) | SITE


def _bare(env: dict[str, str]) -> dict[str, str]:
    """The package from this checkout, its dependencies from this interpreter's site-packages (no .pth files run)."""
    return {**env, "PYTHONPATH": os.pathsep.join([str(REPO), *site.getsitepackages()])}


def heavy_in(modules: set[str]) -> set[str]:
    return {m for m in modules if m in HEAVY or any(m.startswith(h + ".") for h in HEAVY)}


@pytest.fixture
def world(tmp_path):
    env, locs = corpus_world(tmp_path)
    from harnesslink_core.banking import autobank

    autobank.run_pass(locs)  # the ledger exists, as on any machine where the hooks have run
    return env, locs


def fresh_stamp(locs) -> None:
    """A pass ran a moment ago: the hooks have no reason to start one."""
    from harnesslink_core.banking import background

    background.mark_pass(locs)


@pytest.mark.parametrize("prompt, why", [
    ("/compact", "a command"),
    ("!ls -la", "a shell escape"),
    ("thanks, looks good", "fewer than two meaningful words"),
])
def test_a_skipped_prompt_decides_before_sqlite3_is_imported(world, prompt, why):
    env, locs = world
    fresh_stamp(locs)
    modules = hook_modules(env, "user-prompt-submit", "--harness", "claude-code",
                           payload={"session_id": "s", "cwd": SHOP, "prompt": prompt})
    extra = modules - startup_modules(env)
    assert extra <= CORE | DECIDE, (why, sorted(extra - CORE - DECIDE))


def test_a_project_without_memory_decides_before_sqlite3_is_imported(world):
    env, locs = world
    fresh_stamp(locs)
    modules = hook_modules(env, "user-prompt-submit", "--harness", "codex",
                           payload={"session_id": "s", "cwd": "/home/dev/never-used", "prompt": PROMPT})
    extra = modules - startup_modules(env)
    assert extra <= CORE | DECIDE, sorted(extra - CORE - DECIDE)


def test_a_prompt_that_searches_imports_only_the_search(world):
    env, locs = world
    fresh_stamp(locs)
    payload = {"session_id": "s-allow", "cwd": SHOP, "prompt": PROMPT}
    modules, after = hook_run(env, "user-prompt-submit", "--harness", "claude-code", payload=payload)
    extra = modules - startup_modules(env)
    assert extra <= CORE | DECIDE | SEARCH, sorted(extra - CORE - DECIDE - SEARCH)
    assert not heavy_in(modules)
    assert after - modules <= AFTER_ANSWER, sorted(after - modules - AFTER_ANSWER)
    assert not heavy_in(after)
    # and it did search, inject and remember (the ledger is written without opening it the heavy way)
    from harnesslink_core.store import history
    from harnesslink_core.store.injected import injected_ids

    given = injected_ids(locs, "claude-code", "s-allow")
    assert given
    assert {r["entry"] for r in history.read(locs) if r["event"] == "given" and r["session"] == "s-allow"} == given


@pytest.mark.parametrize("harness", ["claude-code", "codex", "pi", "omp"])
def test_session_start_imports_only_the_brief(world, harness):
    env, locs = world
    fresh_stamp(locs)
    modules = hook_modules(env, "session-start", "--harness", harness,
                           payload={"session_id": "s", "cwd": SHOP, "source": "startup"})
    extra = modules - startup_modules(env)
    allowed = CORE | DECIDE | SEARCH | BRIEF
    assert extra <= allowed, sorted(extra - allowed)
    assert not heavy_in(modules)


# stop and pre-compact run a pass (they must: the turn just ended): they may import the pass (dataclasses,
# pathlib, filelock and with it logging), but not what no pass needs.
PASS_NEVER = {"argparse", "subprocess", "email", "http", "asyncio", "ssl", "json.tool", "unittest",
              "harnesslink_core.recall.matches", "harnesslink_core.recall.brief", "harnesslink_core.wiring"}
HARNESS_ROLES_NEVER = (".sessions", ".wiring", ".plugin")  # of a harness's folder, the pass may import only its reader


@pytest.mark.parametrize("event", ["stop", "pre-compact"])
def test_stop_and_pre_compact_import_the_pass_but_nothing_it_does_not_use(world, event, tmp_path):
    env, locs = world
    transcript = tmp_path / "home" / "none.jsonl"
    answered, after = hook_run(env, event, "--harness", "claude-code",
                               payload={"session_id": "s", "cwd": SHOP, "transcript_path": str(transcript)})
    modules = answered | after
    assert "harnesslink_core.banking.autobank" in modules
    never = {m for m in modules if m in PASS_NEVER or any(m.startswith(n + ".") for n in PASS_NEVER)
             or m.startswith("harnesslink_core.harnesses.") and m.endswith(HARNESS_ROLES_NEVER)}
    assert not never, sorted(never)


def test_reading_what_a_session_was_given_leaves_no_connection_to_carry_across_the_fork(world):
    """The hook forks after its answer; a ledger connection open at that moment made the child's
    record vanish (SQLite's lock bookkeeping is per process), one run in three on this machine."""
    from harnesslink_core.store.injected import Given

    _, locs = world
    writer = Given(locs, "codex", "s-read")
    writer.add(["shop/bank/a.md"])
    writer.close()
    reader = Given(locs, "codex", "s-read")
    assert reader.ids() == {"shop/bank/a.md"}
    assert reader._db is None


def test_the_given_entries_are_recorded_after_the_answer_and_never_given_twice(world):
    """A hook process answers first; a forked child records what the session was given."""
    from harnesslink_core.store.injected import injected_ids
    from memory_helpers import run_hook

    env, locs = world
    fresh_stamp(locs)
    payload = json.dumps({"session_id": "s-after", "cwd": SHOP, "prompt": PROMPT})
    first = run_hook(env, "user-prompt-submit", "--harness", "codex", stdin=payload)
    assert first.returncode == 0 and json.loads(first.stdout)["hookSpecificOutput"]["additionalContext"]
    deadline = time.monotonic() + 5
    while not injected_ids(locs, "codex", "s-after") and time.monotonic() < deadline:
        time.sleep(0.01)
    given = injected_ids(locs, "codex", "s-after")
    assert given
    second = run_hook(env, "user-prompt-submit", "--harness", "codex", stdin=payload)
    assert second.returncode == 0
    text = json.loads(second.stdout).get("hookSpecificOutput", {}).get("additionalContext", "")
    assert not any(path in text for path in given)
