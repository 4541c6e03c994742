"""Bank entries written straight into a memories tree, in the SPEC §3 format,
for the search, brief, match and hook tests (no pass needed)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from harnesslink_core.clock import file_safe, iso, parse_iso
from harnesslink_core.paths import Locations, locations
from harnesslink_core.store.scope import project_slug

REPO = Path(__file__).resolve().parent.parent


def make_env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HARNESSLINK", "CLAUDE", "CODEX", "PI_"))}
    env["HOME"] = str(home)
    env["HARNESSLINK_HOME"] = str(home / ".superpi" / "agent")
    env["PYTHONPATH"] = str(REPO)
    return env


def make_locs(tmp_path: Path) -> Locations:
    return locations(make_env(tmp_path))


def write_entry(
    locs: Locations,
    cwd: str,
    *,
    title: str,
    prompt: str | None = None,
    actions: list[tuple[str, dict]] = (),  # type: ignore[assignment]
    result: str = "",
    ts: str = "2026-08-28T10:30:00.000Z",
    harness: str = "claude-code",
    session_id: str = "s-1",
    turn_id: str | None = None,
    legacy: bool = False,
) -> Path:
    slug = project_slug(cwd)
    bank = locs.memories / slug / "bank"
    bank.mkdir(parents=True, exist_ok=True)
    tags: list[str] = []
    for tool, _ in actions:
        if tool not in tags:
            tags.append(tool)
    front = [
        "---",
        f"id: {file_safe(ts)}",
        f"ts: {json.dumps(ts)}",
        f"title: {json.dumps(title)}",
    ]
    if tags:
        front.append("tags:")
        front += [f"  - {t}" for t in tags]
    else:
        front.append("tags: []")
    front.append(f"cwd: {json.dumps(cwd)}")
    front.append(f"session_id: {json.dumps(session_id)}")
    if legacy:
        front.append("source: superpi-autobank")
    else:
        key = f"{harness}:{session_id}:{turn_id or file_safe(ts)}"
        front += [f"harness: {harness}", f"turn_key: {json.dumps(key)}", f"source: autobank:{harness}"]
    front.append("---")
    body = ["", "## Prompt", "", prompt or title, "", "## Actions", ""]
    body += [f"- {tool}: {json.dumps(args, separators=(',', ':'))}" for tool, args in actions] or ["(none)"]
    body += ["", "## Result", "", result, ""]
    name = f"{file_safe(ts)}--{re.sub(r'[^a-z0-9]+', '-', title.lower()).strip('-')[:60]}.md"
    path = bank / name
    path.write_text("\n".join(front + body), "utf-8")
    return path


def at(ts: str, seconds: float) -> str:
    value = parse_iso(ts)
    assert value is not None
    return iso(value + seconds)


def run_hook(env: dict[str, str], *args: str, stdin: str | bytes = "", timeout: float = 30) -> subprocess.CompletedProcess:
    data = stdin.encode() if isinstance(stdin, str) else stdin
    return subprocess.run(
        [sys.executable, "-m", "harnesslink_core.hooks", *args],
        input=data, capture_output=True, env=env, timeout=timeout, cwd=env["HOME"],
    )


SHOP = "/home/dev/shop"
BLOG = "/home/dev/blog"
SHARED_LIB = "/home/dev/shared-lib"


def build_corpus(locs: Locations) -> dict[str, Path]:
    """A small, realistic bank: eight turns of one project, one of another
    project, one of a linked project, and one from the session that is running now."""
    e = {}
    e["login"] = write_entry(
        locs, SHOP, title="The login test fails every night around midnight",
        actions=[("bash", {"command": "pytest tests/test_login.py -x"}), ("read", {"path": "src/auth/session.py"}),
                 ("edit", {"path": "src/auth/session.py", "old": "datetime.now()", "new": "datetime.now(timezone.utc)"})],
        result="The session cookie expiry was computed from local time instead of UTC, so shortly after midnight "
               "the cookie was already expired and the login test saw a logged-out user. session.py now uses "
               "datetime.now(timezone.utc) for the expiry; the login tests pass at any hour.",
        ts="2026-08-20T09:12:00.000Z", harness="claude-code", session_id="cc-101")
    e["csv"] = write_entry(
        locs, SHOP, title="Add an endpoint that exports orders as CSV",
        actions=[("write", {"path": "src/api/export.py"}), ("bash", {"command": "pytest tests/test_export.py"})],
        result="Added GET /orders/export.csv. It streams rows with csv.writer over a server-side cursor so large "
               "exports do not load every order into memory.",
        ts="2026-08-21T14:02:00.000Z", harness="codex", session_id="cx-7")
    e["pool"] = write_entry(
        locs, SHOP, title="Postgres errors: too many clients already",
        prompt="Postgres errors: too many clients already. Happens under load in staging.",
        actions=[("bash", {"command": "grep -rn create_engine src"}), ("edit", {"path": "src/db.py"})],
        result="The database connection pool was exhausted under heavy traffic: request handlers opened "
               "connections without returning them on errors. Each handler now uses a context manager so the "
               "connection goes back to the pool, and pool_size is 20 with max_overflow 10.",
        ts="2026-08-22T08:40:00.000Z", harness="pi", session_id="pi-3")
    e["flaky"] = write_entry(
        locs, SHOP, title="CI is red but everything passes on my machine",
        actions=[("bash", {"command": "pytest -p randomly --randomly-seed=1234"}), ("edit", {"path": "tests/conftest.py"})],
        result="The tests depended on their order: test_cart mutated a module-level fixture that test_checkout "
               "read later. Running with a random order reproduced the failure locally. The fixture is now "
               "function-scoped, so the suite passes in any order on CI.",
        ts="2026-08-23T16:20:00.000Z", harness="omp", session_id="omp-9")
    e["docker"] = write_entry(
        locs, SHOP, title="Make the Docker image smaller",
        actions=[("edit", {"path": "Dockerfile"}), ("bash", {"command": "docker build -t shop ."})],
        result="The container image went from 1.2 GB to 180 MB: a multi-stage build compiles wheels in a builder "
               "stage and copies only the virtualenv into python:3.12-slim.",
        ts="2026-08-24T11:05:00.000Z", harness="claude-code", session_id="cc-102")
    e["ratelimit"] = write_entry(
        locs, SHOP, title="Limit how many requests one API key can make",
        actions=[("write", {"path": "src/api/ratelimit.py"}), ("bash", {"command": "pytest tests/test_ratelimit.py"})],
        result="Added a token-bucket rate limiter backed by Redis: 100 requests per minute per API key, "
               "answering 429 with a Retry-After header when a client goes over.",
        ts="2026-08-25T10:00:00.000Z", harness="codex", session_id="cx-8")
    e["pyproject"] = write_entry(
        locs, SHOP, title="Move packaging from setup.py to pyproject.toml",
        actions=[("write", {"path": "pyproject.toml"}), ("bash", {"command": "pip install -e ."})],
        result="Packaging metadata now lives in pyproject.toml with setuptools as the build backend; setup.py "
               "and setup.cfg are gone and editable installs still work.",
        ts="2026-08-26T13:30:00.000Z", harness="claude-code", session_id="cc-103")
    e["leak"] = write_entry(
        locs, SHOP, title="Memory keeps growing in the websocket server",
        actions=[("bash", {"command": "python -m tracemalloc_report"}), ("edit", {"path": "src/ws/hub.py"})],
        result="Every websocket connection registered a listener on the hub and never removed it on disconnect, "
               "so memory grew with each reconnect. The hub now unregisters listeners in the close handler.",
        ts="2026-08-27T17:45:00.000Z", harness="pi", session_id="pi-4")
    e["live"] = write_entry(
        locs, SHOP, title="Websocket clients should reconnect with backoff",
        actions=[("edit", {"path": "web/ws.ts"})],
        result="The browser websocket client now reconnects with exponential backoff capped at 30 seconds.",
        ts="2026-08-29T09:00:00.000Z", harness="claude-code", session_id="live-session")
    e["blog_cookie"] = write_entry(
        locs, BLOG, title="Session cookie expiry uses the wrong timezone",
        actions=[("edit", {"path": "blog/auth.py"})],
        result="The blog's session cookie expiry used local time after midnight; switched to UTC.",
        ts="2026-08-20T12:00:00.000Z", harness="codex", session_id="blog-1")
    e["retry"] = write_entry(
        locs, SHARED_LIB, title="HTTP client should retry failed calls",
        actions=[("write", {"path": "shared/http.py"})],
        result="The shared HTTP client retries idempotent calls up to 3 times with exponential backoff and jitter "
               "on connection errors and 5xx answers.",
        ts="2026-08-19T10:00:00.000Z", harness="omp", session_id="lib-1")
    (locs.memories / project_slug(SHOP) / "linked.txt").write_text(f"# libraries we share\n{SHARED_LIB}\n")
    return e


def corpus_world(tmp_path: Path) -> tuple[dict[str, str], Locations]:
    """The environment and locations of a world holding `build_corpus`'s entries, indexed."""
    from harnesslink_core.recall import index

    env = make_env(tmp_path)
    locs = make_locs(tmp_path)
    build_corpus(locs)
    index.refresh(locs)
    return env, locs


def eventually(check, seconds: float = 5.0, every: float = 0.01):
    """`check()`'s first truthy value within `seconds`, else its last: for what a hook does after its answer."""
    import time

    deadline = time.monotonic() + seconds
    while True:
        value = check()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(every)


def a_long_history(locs: Locations, records: int) -> dict[str, tuple[int, int, int, int]]:
    """`records` history records written as the writers write them (`history.append`), with the ledger rows the
    same writers keep beside them: sessions of three harnesses, each given five entries by the prompt hook (one
    of them twice), two listed in its brief, and opening one of each kind (every other session) or banking a
    turn. Per harness: (given, opened of those, listed in briefs, opened of those), each (session, entry) once."""
    from harnesslink_core.store import history
    from harnesslink_core.store.ledger import open_ledger

    harnesses = ("claude-code", "codex", "pi")
    figures = {h: [0, 0, 0, 0] for h in harnesses}
    batch: list[dict[str, str]] = []
    rows: dict[str, list[tuple[str, str, str, float]]] = {"injected": [], "briefed": [], "opened": []}
    at = 1_780_000_000.0
    for number in range(records // 10):
        harness, session = harnesses[number % 3], f"019c8bfe-0000-7000-8000-{number:012d}"
        given = [f"--w-shop--/bank/2026-08-28T10-30-00-{(number * 7 + j) % 2000:03d}Z--fix-login.md" for j in range(7)]
        briefed, given = given[5:], given[:5]
        opened = [given[1]] + ([briefed[1]] if number % 2 == 0 else [])
        for entry, detail in [(e, "") for e in given + given[:1]] + [(e, history.BRIEF) for e in briefed]:
            batch.append(history.event("given", f"hook:{harness}", entry=entry, session=session, detail=detail, at=at))
        for entry in opened:
            batch.append(history.event("opened", f"autobank:{harness}", entry=entry, session=session,
                                       detail="memory_get", at=at))
        if len(opened) == 1:
            batch.append(history.event("banked", f"autobank:{harness}", entry=given[0], session=session, at=at))
        rows["injected"] += [(harness, session, e, at) for e in given]
        rows["briefed"] += [(harness, session, e, at) for e in briefed]
        rows["opened"] += [(harness, session, e, at) for e in opened]
        figures[harness] = [n + more for n, more in zip(figures[harness], (5, 1, 2, len(opened) - 1))]
        at += 10
        if len(batch) >= 10_000:
            history.append(locs, batch)
            batch = []
    history.append(locs, batch)
    ledger = open_ledger(locs)
    try:
        with ledger.write():
            for table, values in rows.items():
                ledger.db.executemany(f"INSERT OR IGNORE INTO {table} VALUES (?,?,?,?)", values)
    finally:
        ledger.close()
    return {h: tuple(counts) for h, counts in figures.items()}  # type: ignore[misc]


def indexed_entries(locs: Locations) -> int:
    """How many entries the search index holds (0 while there is none, or it is busy)."""
    from harnesslink_core.recall import index, query

    try:
        conn = index.connect(locs, create=False, busy_ms=50)
    except index.IndexUnavailable:
        return 0
    try:
        return query.count(conn)
    except index.sqlite3.OperationalError:
        return 0
    finally:
        conn.close()


def run_cli(env: dict[str, str], *args: str, stdin: str = "", cwd: str | None = None,
            timeout: float = 60) -> subprocess.CompletedProcess:
    """`harnesslink <args>` as a user runs it: its own process, text in and out."""
    return subprocess.run([sys.executable, "-m", "harnesslink_core.main", *args], input=stdin, capture_output=True,
                          text=True, env=env, timeout=timeout, cwd=cwd or env["HOME"])


# runs the command as its child and reports that child's own figures: a child forked from a big process
# (pytest, a benchmark that built a world) would count its parent's pages until it execs
MEASURE = ("import os, subprocess, sys, time\n"
           "start = time.perf_counter()\n"
           "child = subprocess.Popen(sys.argv[1:])\n"
           "_, status, usage = os.wait4(child.pid, 0)\n"
           "sys.stderr.write(f'\\nMEASURED {time.perf_counter() - start} {usage.ru_maxrss}\\n')\n"
           "sys.exit(os.waitstatus_to_exitcode(status))\n")


def measured(env: dict[str, str], *argv: str, lines: int | None = None) -> tuple[float, int, str]:
    """(seconds, peak RSS in MB, the first `lines` lines of its output or all of it) of `harnesslink argv` run
    as its own process; with `lines`, the pipe is closed once they are read, as `| head` does."""
    runner = subprocess.Popen([sys.executable, "-c", MEASURE, sys.executable, "-m", "harnesslink_core.main", *argv],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=env["HOME"], text=True)
    assert runner.stdout is not None and runner.stderr is not None
    out = runner.stdout.read() if lines is None else "".join(runner.stdout.readline() for _ in range(lines))
    runner.stdout.close()
    err = runner.stderr.read()
    runner.wait()
    if "MEASURED " not in err or (lines is None and runner.returncode):
        raise RuntimeError(f"harnesslink {' '.join(argv)} failed: {err}")
    seconds, kilobytes = err.rsplit("MEASURED ", 1)[1].split()
    return float(seconds), int(kilobytes) // 1024, out


def start_encoder(env: dict[str, str], idle_seconds: float = 120) -> subprocess.Popen:
    """`harnesslink encoder serve` for this world, once it answers (the caller ends it: `end_encoder`)."""
    from harnesslink_core.recall import encoder_client

    server = subprocess.Popen([sys.executable, "-m", "harnesslink_core.main", "encoder", "serve", "--idle-seconds",
                               str(idle_seconds)], env=env, cwd=env["HOME"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    ready = eventually(lambda: encoder_client.status(locations(env)) or server.poll() is not None, 30)
    assert ready and server.poll() is None, "the encoder never came up"
    return server


def end_encoder(server: subprocess.Popen) -> None:
    if server.poll() is None:
        server.kill()
    server.wait(10)


def superseding_world(tmp_path: Path) -> tuple[dict[str, str], Locations, str]:
    """`corpus_world`, plus a newer entry of the shop on the login work (the one that supersedes its midnight
    logout entry): the environment, the locations and the newer entry's id."""
    env, locs = corpus_world(tmp_path)
    newer = write_entry(
        locs, SHOP, title="Session cookie expiry now comes from the auth service",
        actions=[("edit", {"path": "src/auth/session.py"})],
        result="The login session cookie no longer computes its own expiry at all: the auth service sets it, so "
               "the midnight logout cannot come back whatever the server's timezone.",
        ts="2026-08-28T15:00:00.000Z", harness="codex", session_id="cx-20")
    return env, locs, f"{project_slug(SHOP)}/bank/{newer.name}"


def given_and_opened(records, *, in_brief: bool = False) -> dict[str, tuple[int, int]]:
    """What `status` counts, read from the history itself (the ledger keeps these counts as pairs are added):
    per harness, (entries the prompt hook gave its sessions, how many of those the session then opened), each
    (session, entry) once; `in_brief`: the same of what the session-start briefs listed."""
    from harnesslink_core.store import history

    given: dict[str, set[tuple[str, str]]] = {}
    opened: dict[str, set[tuple[str, str]]] = {}
    for r in records:
        if r["event"] == "opened" or (r["event"] == "given" and (r.get("detail") == history.BRIEF) == in_brief):
            into = given if r["event"] == "given" else opened
            into.setdefault(history.harness_of(r["actor"]), set()).add((r["session"], r["entry"]))
    return {h: (len(pairs), len(pairs & opened.get(h, set()))) for h, pairs in given.items()}
