"""Two times (SPEC §11): `--as-of` answers by the time the work happened, an entry in force from its `ts`
until the `ts` of the entry that superseded it, however late either was recorded (a backfill records
months of work today); `--known-at` answers with what memory held at a moment, by record time. The CLI
and the memory tool alike, through their processes."""

from __future__ import annotations

import json
import os
import time

import pytest

from memory_helpers import SHOP, make_env, make_locs, run_cli, write_entry

QUERY = "session store"


@pytest.fixture
def world(tmp_path):
    """Redis work of 2026-11-10 superseded by Postgres work of 2026-12-01, both recorded today."""
    env, locs = make_env(tmp_path), make_locs(tmp_path)
    redis = write_entry(locs, SHOP, title="Moved the session store to Redis", ts="2026-11-10T10:00:00.000Z",
                        result="Sessions now live in Redis (src/session/store.py): the session store is RedisStore.")
    postgres = write_entry(locs, SHOP, title="Moved the session store from Redis to Postgres",
                           ts="2026-12-01T09:00:00.000Z", session_id="s-2",
                           result="The session store is a Postgres table now; Redis is gone.")
    ids = [f"{path.parent.parent.name}/bank/{path.name}" for path in (redis, postgres)]
    said = run_cli(env, "supersede", "--cwd", SHOP, "--", *ids)
    assert said.returncode == 0, said.stderr
    return env, ids


def recalled(env, *when: str) -> dict[str, str]:
    """The trust of each entry `recall --json` finds, by the name of its file."""
    result = run_cli(env, "recall", QUERY, "--cwd", SHOP, "--json", *when)
    assert result.returncode == 0, result.stderr
    return {os.path.basename(m["path"]): m["trust"] for m in json.loads(result.stdout)["matches"]}


def name(entry_id: str) -> str:
    return entry_id.rsplit("/", 1)[1]


def test_as_of_is_the_time_the_work_happened(world):
    env, (redis, postgres) = world
    assert recalled(env, "--as-of", "2026-11-12") == {name(redis): "current"}  # Postgres work not done yet
    assert recalled(env, "--as-of", "2026-12-02") == {name(redis): "superseded", name(postgres): "current"}
    assert recalled(env, "--as-of", "2026-11-09") == {}


def test_as_of_is_current_until_the_superseding_work_not_until_its_record(world):
    env, (redis, postgres) = world
    just_before = recalled(env, "--as-of", "2026-12-01T08:59:59Z")
    assert just_before[name(redis)] == "current" and name(postgres) not in just_before
    assert recalled(env, "--as-of", "2026-12-01T09:00:00Z")[name(redis)] == "superseded"


def test_known_at_is_what_memory_held_then(world):
    env, (redis, postgres) = world
    result = run_cli(env, "recall", QUERY, "--cwd", SHOP, "--known-at", "2026-11-12")
    assert result.returncode == 1 and "no matches" in result.stdout  # nothing was recorded before today
    tomorrow = time.strftime("%Y-%m-%d", time.gmtime(time.time() + 86400))
    assert recalled(env, "--known-at", tomorrow) == {name(redis): "superseded", name(postgres): "current"}


def test_memory_search_takes_both_times(world):
    env, (redis, postgres) = world

    def search(**when: str) -> str:
        result = run_cli(env, "mcp-call", "memory_search",
                         stdin=json.dumps({"cwd": SHOP, "arguments": {"query": QUERY, **when}}))
        answer = json.loads(result.stdout)
        assert not answer["isError"], answer
        return answer["text"]

    then = search(as_of="2026-11-12")
    assert f"id: {redis}" in then and f"id: {postgres}" not in then and "Superseded by" not in then
    assert "Superseded by" in search(as_of="2026-12-02")
    assert f"id: {redis}" not in search(known_at="2026-11-12")
