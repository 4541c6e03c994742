"""Hook latency and search speed, measured the way users run the hooks.

    python benchmarks/hook_latency.py [--entries 10000] [--runs 40] [--search-entries 100000] [--keep DIR]

1. Every hook as a whole process, as install.py installs it: the private venv's
   `context-hook` (benchmarks/installed.py builds that venv with the installer's
   own code), interleaved with that venv's `python -c pass`, the baseline of
   every ratio. The base interpreter's `python -c pass` is shown for information
   only: with `.pth` files in its site-packages it starts several times slower,
   and would hide our cost. Cases: a prompt against `--entries` realistic
   entries; the same against a worst-case bank written from a 40-word vocabulary
   (every prompt word in ~95 % of the entries); the first case again with a
   resident encoder answering and every entry's encoder vector made; a
   `/command` prompt; session start; stop and pre-compact.
   Targets: prompt <= 2.2x (no encoder), with the encoder answering <= 3.0x,
   worst-case prompt <= 2.5x, /command <= 1.5x, session start <= 2.5x; stop and
   pre-compact reported.
2. In-process search (the prompt hook's `find_matches`) over `--search-entries`
   index rows of both corpora: p50 / p95. Target: p95 < 10 ms at 100,000.

Everything happens in temporary folders; nothing outside them is touched.
Runs from any interpreter, in or out of a venv.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks import installed  # noqa: E402
from benchmarks.installed import Case, clean_env, interleaved, pct  # noqa: E402
from harnesslink_core.clock import file_safe, iso  # noqa: E402
from harnesslink_core.paths import locations  # noqa: E402
from harnesslink_core.recall import candidates, index  # noqa: E402
from harnesslink_core.recall.matches import find_matches  # noqa: E402
from harnesslink_core.store.scope import project_slug  # noqa: E402

TOPICS = [
    "login session cookie expiry timezone midnight", "postgres connection pool exhausted traffic",
    "docker image multi stage build size", "flaky test order fixture ci", "redis rate limiter token bucket",
    "websocket listener memory leak reconnect", "pyproject packaging setuptools editable",
    "csv export streaming cursor", "kafka consumer lag rebalance", "nginx upstream keepalive 502",
    "terraform state lock unlock", "graphql resolver n+1 dataloader", "react hydration mismatch server",
    "s3 upload multipart retry", "jwt refresh token rotation", "celery task retry backoff",
    "elasticsearch mapping reindex alias", "oauth callback redirect uri", "stripe webhook signature verify",
    "sentry alert grouping fingerprint", "prometheus histogram buckets latency", "grpc deadline exceeded",
    "typescript generic inference error", "rust borrow checker lifetime", "go goroutine leak context cancel",
]
FILLER = ("the a and we it then so because after before when was were is now uses added changed moved fixed "
          "found error failing passing tests build deploy config module handler request response value file "
          "function class method server client database query cache user api endpoint service worker").split()
PROMPTS = [
    "why does the login cookie expire right after midnight in some timezones?",
    "the postgres pool runs out of connections when traffic spikes",
    "make the docker image smaller with a multi stage build",
    "kafka consumers keep lagging after each rebalance",
    "the websocket server leaks memory whenever clients reconnect",
    "stripe webhook signature verification fails in staging",
]


# The worst case for the prompt hook: one project whose entries all use the same 40 words, so every
# word of a prompt is in ~95 % of them and nothing tells one entry from another. The prompts use no two
# words that the vocabulary knows as a phrase ("release branch"): a phrase is rarer than its words.
WORST_VOCAB = ("deploy build test server client cache query user config error fix update service worker "
               "request response database login session token queue retry timeout memory file module "
               "handler endpoint schema migration index job task log metric alert branch release").split()
WORST_PROMPTS = ["why does the deploy build fail on the server cache", "the login session token retry timeout",
                 "database query memory error in the worker", "branch release migration schema job fails"]


def words(rng: random.Random, topic: str, n: int) -> str:
    vocab = topic.split()
    return " ".join(rng.choice(vocab) if rng.random() < 0.3 else rng.choice(FILLER) for _ in range(n))


def worst_words(rng: random.Random, _topic: str, n: int) -> str:
    return " ".join(rng.choice(WORST_VOCAB) for _ in range(n))


def build_bank(locs, n: int, cwd: str, *, worst: bool = False) -> None:
    rng = random.Random(4)
    write = worst_words if worst else words
    bank = locs.memories / project_slug(cwd) / "bank"
    bank.mkdir(parents=True, exist_ok=True)
    start = 1_780_000_000.0
    for i in range(n):
        topic = rng.choice(TOPICS)
        ts = iso(start + i * 60)
        title = (" ".join(rng.sample(WORST_VOCAB, 3)) if worst else f"{topic.split()[0]} {topic.split()[1]}") + f" issue {i}"
        text = (
            f"---\nid: {file_safe(ts)}\nts: \"{ts}\"\ntitle: \"{title}\"\ntags:\n  - bash\n  - edit\n"
            f"cwd: \"{cwd}\"\nsession_id: \"s-{i // 8}\"\nharness: claude-code\n"
            f"turn_key: \"claude-code:s-{i // 8}:{i}\"\nsource: autobank:claude-code\n---\n\n"
            f"## Prompt\n\n{write(rng, topic, 25)}\n\n## Actions\n\n- bash: {{\"command\":\"pytest -x\"}}\n"
            f"- edit: {{\"path\":\"src/{topic.split()[0]}.py\"}}\n\n## Result\n\n{write(rng, topic, 120)}\n"
        )
        (bank / f"{file_safe(ts)}--{title.replace(' ', '-')}.md").write_text(text)


def world(root: Path, entries: int, *, worst: bool) -> tuple[dict[str, str], Path]:
    """A HOME with `entries` banked entries in one project, indexed, a pass run: the steady state."""
    home = root / ("worst" if worst else "realistic") / "home"
    home.mkdir(parents=True)
    env = clean_env(home)
    locs = locations(env)
    build_bank(locs, entries, CWD, worst=worst)
    index.rebuild(locs)
    from harnesslink_core.banking import autobank

    autobank.run_pass(locs)  # the ledger exists, as wherever the hooks have run before
    return env, locs.agent_dir / ".last-pass"


CWD = "/home/dev/bench"


def prompt_case(hook: Path, env: dict[str, str], stamp: Path, prompts: list[str], seed: int) -> Case:
    """The prompt hook, a new session and one of `prompts` each run (nothing excluded as already injected)."""
    rng = random.Random(seed)
    runs = iter(range(10**9))

    def payload() -> bytes:
        return json.dumps({"session_id": f"bench-{seed}-{next(runs)}", "cwd": CWD, "prompt": rng.choice(prompts),
                           "transcript_path": str(Path(env["HOME"]) / "none.jsonl")}).encode()

    return Case([str(hook), "user-prompt-submit", "--harness", "claude-code"], env, payload, stamp.touch)


def encoder_for(env: dict[str, str]) -> subprocess.Popen:
    """A resident encoder for this world, once it answers, with every entry's vector made."""
    from harnesslink_core.recall import encoded, encoder_client

    server = subprocess.Popen([sys.executable, "-m", "harnesslink_core.recall.encoder", "serve", "--idle-seconds",
                               "3600"], env={**env, "PYTHONPATH": str(REPO)}, stderr=subprocess.DEVNULL)
    locs = locations(env)
    while encoder_client.status(locs, 100) is None:
        if server.poll() is not None:
            raise SystemExit("the encoder did not start")
        time.sleep(0.05)
    conn = index.connect(locs)
    try:
        encoded.fill(conn, locs, start=False)
    finally:
        conn.close()
    return server


def hook_latency(entries: int, runs: int, root: Path, venv_root: Path, *, with_encoder: bool = True) -> dict:
    """Every case; `with_encoder`: the prompt with the encoder answering too (its entries' vectors are made
    first: minutes at 10,000)."""
    env_of = installed.build(venv_root)
    realistic_env, realistic_stamp = world(root, entries, worst=False)
    worst_env, worst_stamp = world(root, entries, worst=True)
    if not with_encoder:
        return _hook_latency(env_of, entries, runs, (realistic_env, realistic_stamp), (worst_env, worst_stamp), None)
    encoded_env, encoded_stamp = world(root / "encoder", entries, worst=False)
    server = encoder_for(encoded_env)
    try:
        return _hook_latency(env_of, entries, runs, (realistic_env, realistic_stamp), (worst_env, worst_stamp),
                             (encoded_env, encoded_stamp))
    finally:
        server.kill()
        server.wait(10)


def _hook_latency(env_of, entries: int, runs: int, realistic, worst, encoded) -> dict:
    (realistic_env, realistic_stamp), (worst_env, worst_stamp) = realistic, worst
    hook = str(env_of.hook)

    def fixed(event: str, env, stamp, body: dict, harness: str = "claude-code", touch: bool = True) -> Case:
        payload = json.dumps({"cwd": CWD, "transcript_path": str(Path(env["HOME"]) / "none.jsonl"), **body}).encode()
        return Case([hook, event, "--harness", harness], env, payload, stamp.touch if touch else None)

    cases = {
        "bare (venv python -c pass)": Case([str(env_of.python), "-c", "pass"], realistic_env),
        "base interpreter -c pass (info)": Case([installed.base_interpreter(), "-c", "pass"], realistic_env),
        "prompt": prompt_case(env_of.hook, realistic_env, realistic_stamp, PROMPTS, 1),
        "prompt (worst-case bank)": prompt_case(env_of.hook, worst_env, worst_stamp, WORST_PROMPTS, 2),
        "prompt /command": fixed("user-prompt-submit", realistic_env, realistic_stamp,
                                 {"session_id": "cmd", "prompt": "/compact"}),
        "session-start": fixed("session-start", realistic_env, realistic_stamp,
                               {"session_id": "start", "source": "startup"}),
        "stop": fixed("stop", realistic_env, realistic_stamp, {"session_id": "stop"}, touch=False),
        "pre-compact": fixed("pre-compact", realistic_env, realistic_stamp, {"session_id": "pc"}, touch=False),
    }
    if encoded is not None:
        cases["prompt (encoder answering)"] = prompt_case(env_of.hook, *encoded, PROMPTS, 3)
    result = interleaved(cases, runs, baseline="bare (venv python -c pass)")
    result["injected_chars"] = {
        "prompt": _injected(hook, realistic_env, PROMPTS[0]),
        "prompt (worst-case bank)": _injected(hook, worst_env, WORST_PROMPTS[0]),
    }
    result["entries"] = entries
    result["runs"] = runs
    return result


def _injected(hook: str, env: dict[str, str], prompt: str) -> int:
    out = subprocess.run([hook, "user-prompt-submit", "--harness", "codex"], env=env, capture_output=True,
                         input=json.dumps({"session_id": "check", "cwd": CWD, "prompt": prompt}).encode())
    return len(json.loads(out.stdout or b"{}").get("hookSpecificOutput", {}).get("additionalContext", ""))


TARGETS = {"prompt": 2.2, "prompt (worst-case bank)": 2.5, "prompt (encoder answering)": 3.0, "prompt /command": 1.5,
           "session-start": 2.5}


def search_speed(entries: int, queries: int = 300, *, worst: bool = False) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="hl-search-"))
    env = {"HOME": str(tmp), "HARNESSLINK_HOME": str(tmp / "agent")}
    try:
        return _search_speed(env, entries, queries, worst_words if worst else words,
                             WORST_PROMPTS if worst else PROMPTS, worst)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _search_speed(env, entries, queries, write, prompts, worst) -> dict:
    locs = locations(env)
    conn = index.connect(locs)
    rng = random.Random(7)
    projects = [project_slug(f"/home/dev/p{n}") for n in range(10)]
    started = time.perf_counter()
    conn.execute("BEGIN")
    for i in range(entries):
        topic = rng.choice(TOPICS)
        project = projects[0] if i % 2 == 0 else rng.choice(projects)  # half of everything in one project
        cur = conn.execute(
            "INSERT INTO docs(path, project, mtime_ns, size, ts, title, harness, source, session_id, turn_key, cwd)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (f"{project}/bank/{i}.md", project, 0, 0, 1_780_000_000 + i, f"{topic} {i}", "codex", "autobank:codex",
             f"s-{i // 8}", f"codex:s:{i}", "/x"))
        conn.execute("INSERT INTO fts(rowid, title, tags, prompt, actions, result, scope) VALUES (?,?,?,?,?,?,?)",
                     (cur.lastrowid, f"{topic.split()[0]} {topic.split()[1]} issue {i}", "bash edit",
                      write(rng, topic, 25), "bash: pytest -x", write(rng, topic, 120), index.scope_token(project)))
    conn.executemany("INSERT INTO projects(slug, dir_mtime_ns, entries)"
                     " VALUES (?, 0, (SELECT count(*) FROM docs WHERE project = ?))", [(p, p) for p in projects])
    conn.execute("COMMIT")
    conn.execute("INSERT INTO fts(fts) VALUES('optimize')")
    build_s = time.perf_counter() - started

    def run(n: int) -> list[float]:
        times = []
        for i in range(n):
            prompt = prompts[i % len(prompts)]
            t = time.perf_counter()
            decision = find_matches(conn, prompt, [projects[0], projects[1]], session_id="now", already_injected=set())
            times.append((time.perf_counter() - t) * 1000)
            assert bool(decision.hits) != worst, (prompt, decision)
        return times

    times = run(queries)
    window = candidates.RECENT_WINDOW
    candidates.RECENT_WINDOW = 10**9  # worst case: nothing recent qualifies, every entry is ranked
    full = run(queries // 3)
    candidates.RECENT_WINDOW = window
    conn.close()
    return {"entries": entries, "insert_s": round(build_s, 1), "search_p50_ms": round(pct(times, 0.5), 2),
            "search_p95_ms": round(pct(times, 0.95), 2), "search_max_ms": round(max(times), 2),
            "all_entries_ranked_p50_ms": round(pct(full, 0.5), 2), "all_entries_ranked_p95_ms": round(pct(full, 0.95), 2)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--search-entries", type=int, default=100_000)
    parser.add_argument("--venv", type=Path, help="folder for the private venv (kept and reused across runs)")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="hl-hooks-"))
    try:
        hooks = hook_latency(args.entries, args.runs, root, args.venv or root / "install")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    search = {"realistic": search_speed(args.search_entries),
              "worst-case vocabulary": search_speed(args.search_entries, worst=True)}
    print(json.dumps({"hooks": hooks, "search": search}, indent=2))
    print()
    print(summary(hooks, search))
    return 0


def summary(hooks: dict, search: dict) -> str:
    bare = hooks["bare (venv python -c pass)"]["median_ms"]
    lines = [f"Hooks as installed, {hooks['entries']:,} entries, {hooks['runs']} interleaved runs; baseline: the "
             f"private venv's `python -c pass` ({bare} ms median)"]
    for name, r in hooks.items():
        if isinstance(r, dict) and "x" in r:
            target = TARGETS.get(name)
            verdict = "" if target is None else f"  [target <= {target}x: {'met' if r['x'] <= target else 'MISSED'}]"
            lines.append(f"  {name:34} median {r['median_ms']:6} ms  p95 {r['p95_ms']:6} ms  {r['x']:5}x{verdict}")
    lines.append(f"  injected characters: {hooks['injected_chars']}")
    for name, s in search.items():
        lines.append(f"search at {s['entries']:,} ({name}): p50 {s['search_p50_ms']} ms, p95 {s['search_p95_ms']} ms  "
                     f"[target p95 < 10 ms: {'met' if s['search_p95_ms'] < 10 else 'MISSED'}]")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
