"""With the real CLIs: memory that stays true, and proof that it was used.

One sandbox, one install (install.py, the three harnesses at once). Then:

1. a pi session sets the session store up on Redis: the stop hook banks that turn;
2. a Claude Code session's model searches memory for the session store (memory_search), and records,
   from the id the search showed, a learning that the store moved to Postgres and supersedes it
   (memory_bank {supersedes});
3. the next session in that folder runs in Codex: asked about the session store, the model is given
   the new entry and never the old one (neither at session start nor with the prompt);
4. the model opens the entry it was given (memory_get, by the path the block showed); once the stop
   hook's pass has run, `harnesslink history --json` lists the old entry's `banked`, the new one's
   `recorded`, the `superseded`, the `given` and the `opened`, each with its actor and session.
"""

from __future__ import annotations

import json
import re
import secrets
import subprocess

from harnesslink_core.store.history import entry_id

from .fake_model import tool_result_of
from .harnesses import Sandbox
from .install_flow import Flow, _log
from .marks import SLOW_E2E

pytestmark = SLOW_E2E

BANKS_THE_OLD, SUPERSEDES, IS_GIVEN = "pi", "claude-code", "codex"
SEARCH_ID = re.compile(r"· id: (\S+/bank/\S+\.md)")
BLOCK_PATH = re.compile(r"(/\S+/bank/\S+\.md)")


def tool_prompt(tool: str, arguments: dict) -> str:
    return f"Please use HarnessLink memory. [[tool: {tool} | {json.dumps(arguments)}]]"


def test_a_superseding_learning_is_given_in_another_harness_opened_and_all_of_it_in_history(
        sandbox: Sandbox) -> None:
    flows = {name: Flow(name, sandbox) for name in (BANKS_THE_OLD, SUPERSEDES, IS_GIVEN)}
    for flow in flows.values():
        flow.driver.prepare(sandbox)
    flows[BANKS_THE_OLD].run_script("install.py", "--no-venv", "--no-backfill",
                                    *(a for h in flows for a in ("--harness", h)))
    app = f"orbit{secrets.token_hex(3)}"

    # 1. the older entry, banked from a real session's turn
    flows[BANKS_THE_OLD].driver.start(sandbox, f"Set up the {app} session store: the {app} session store is Redis "
                                               f"[[bash: echo {app}-sessions-on-redis]]").check()
    [old_path] = flows[BANKS_THE_OLD].settled_entries(f"{app}-sessions-on-redis")
    old = entry_id(old_path)

    # 2. an agent finds it by searching, then records what replaced it
    claude = flows[SUPERSEDES]
    since = len(sandbox.server.model_requests())
    search = claude.driver.start(sandbox, tool_prompt("memory_search", {"query": f"{app} session store"})).check()
    found = [tool_result_of(r) for r in sandbox.server.model_requests()[since:]]
    shown = [m.group(1) for result in found if result for m in SEARCH_ID.finditer(result)]
    assert old in shown, f"the search did not show the older entry {old}: {found}; log:\n{_log(claude)}"
    assert search.session_id
    learning = f"The {app} session store moved from Redis to Postgres: sessions now live in Postgres."
    claude.driver.resume(sandbox, search.session_id, tool_prompt("memory_bank", {
        "text": learning, "title": f"{app} session store is Postgres now", "supersedes": [shown[0]]})).check()
    [new_path] = claude.settled_entries("moved from Redis to Postgres")
    new = entry_id(new_path)
    assert f"source: mcp:{SUPERSEDES}" in new_path.read_text(encoding="utf-8")

    # 3. the next session, in another harness, is given the new entry and not the old one
    codex = flows[IS_GIVEN]
    since = len(sandbox.server.model_requests())
    asked = codex.driver.start(sandbox, f"Which database holds the {app} session store now?").check()
    blocks = list(codex.framed_blocks(since))
    matches = [block for kind, block in blocks if kind == "matches"]
    assert any(new_path.name in block for block in matches), (
        f"the prompt was not given the new entry: {blocks}; log:\n{_log(codex)}")
    assert not any(old_path.name in block for _, block in blocks), "a superseded entry is never given"
    assert asked.session_id

    # 4. it opens what it was given, by the path the block showed
    [given_path] = {m.group(1) for block in matches for m in BLOCK_PATH.finditer(block) if new_path.name in m.group(1)}
    since = len(sandbox.server.model_requests())
    codex.driver.resume(sandbox, asked.session_id, tool_prompt("memory_get", {"id": given_path})).check()
    opened = [tool_result_of(r) for r in sandbox.server.model_requests()[since:]]
    assert any(result and learning in result for result in opened), f"memory_get did not return it: {opened}"
    assert not any(old_path.name in block for kind, block in codex.framed_blocks(since) if kind != "entry")

    events = history(codex)["events"]
    assert_once(events, "banked", old, f"autobank:{BANKS_THE_OLD}")
    assert_once(events, "recorded", new, f"mcp:{SUPERSEDES}")
    superseded = assert_once(events, "superseded", old, f"mcp:{SUPERSEDES}")
    assert new in superseded["detail"]
    prompt_given = [e for e in events if e["detail"] != "brief"]
    assert_once(prompt_given, "given", new, f"hook:{IS_GIVEN}", session=asked.session_id)
    assert_once(events, "opened", new, f"autobank:{IS_GIVEN}", session=asked.session_id)
    briefs = [e for e in events if e["event"] == "given" and e["detail"] == "brief" and e["entry"] == new]
    assert briefs and {e["session"] for e in briefs} == {asked.session_id}, "its session-start brief listed it"
    assert not [e for e in events if e["event"] == "given" and e["entry"] == old
                and e["actor"] == f"hook:{IS_GIVEN}"], "the old entry was given after it was superseded"


def history(flow: Flow) -> dict:
    harnesslink = flow.agent_dir / "venv" / "bin" / "harnesslink"
    done = subprocess.run([str(harnesslink), "history", "--json"], cwd=flow.sandbox.project, env=flow.env(),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def assert_once(events: list[dict], name: str, entry: str, actor: str, *, session: str | None = None) -> dict:
    """The one `name` event of `entry` (by `actor`, in `session` when given)."""
    found = [e for e in events if e["event"] == name and e["entry"] == entry and e["actor"] == actor
             and (session is None or e["session"] == session)]
    assert len(found) == 1, (f"expected one {name} of {entry} by {actor}"
                             f"{f' in session {session}' if session else ''}; history:\n{json.dumps(events, indent=1)}")
    return found[0]
