"""The search index: built from the Markdown, kept current cheaply, rebuilt when broken, safe against query syntax."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time

import pytest

from harnesslink_core.recall import index, query
from harnesslink_core.store.entries import read_entry
from harnesslink_core.store.scope import linked_projects, project_slug, scope_for
from memory_helpers import REPO, SHOP, make_env, make_locs, write_entry

LEGACY = """---
id: 2025-11-02T08-15-00-000Z
ts: "2025-11-02T08:15:00.000Z"
title: "Speed up the image thumbnailer"
tags:
  - bash
cwd: "/home/dev/shop"
session_id: "old-agent-17"
source: superpi-autobank
---

## Prompt

Speed up the image thumbnailer

## Actions

- bash: {"command":"python -m cProfile thumbs.py"}

## Result

Thumbnails are now generated with Pillow's draft mode, 6x faster.
"""


def search(locs, words, cwd=SHOP):
    conn = index.connect(locs)
    try:
        return [h.path.rsplit("/", 1)[1] for h in query.search(conn, words, scope_for(locs, cwd))]
    finally:
        conn.close()


def test_schema_has_the_documented_tables(tmp_path):
    locs = make_locs(tmp_path)
    conn = index.connect(locs)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"docs", "projects", "fts", "vocab_keys", "vocab_groups", "meta"} <= tables
    cols = [r[1] for r in conn.execute("PRAGMA table_info(fts)")]
    assert cols == ["title", "tags", "prompt", "actions", "result", "keys", "detail_keys", "scope"]
    assert "sketch" in [r[1] for r in conn.execute("PRAGMA table_info(docs)")]
    assert conn.execute("PRAGMA user_version").fetchone()[0] == index.SCHEMA_VERSION


def test_legacy_superpi_autobank_entries_are_read_and_indexed(tmp_path):
    locs = make_locs(tmp_path)
    bank = locs.memories / project_slug(SHOP) / "bank"
    bank.mkdir(parents=True)
    path = bank / "2025-11-02T08-15-00-000Z--speed-up-the-image-thumbnailer.md"
    path.write_text(LEGACY)
    entry = read_entry(path)
    assert entry.title == "Speed up the image thumbnailer"
    assert entry.harness == "" and entry.turn_key == "" and entry.source == "superpi-autobank"
    assert entry.origin == "superpi-autobank"
    assert "draft mode" in entry.result and "cProfile" in entry.actions
    index.refresh(locs)
    assert search(locs, ["thumbnails", "pillow"]) == [path.name]


def test_entry_without_sections_or_frontmatter_is_still_searchable(tmp_path):
    locs = make_locs(tmp_path)
    bank = locs.memories / project_slug(SHOP) / "bank"
    bank.mkdir(parents=True)
    (bank / "2025-01-01T00-00-00-000Z--note.md").write_text("# Queue notes\nRabbitMQ prefetch set to 10.\n")
    entry = read_entry(bank / "2025-01-01T00-00-00-000Z--note.md")
    assert entry.title == "Queue notes" and entry.ts > 0
    index.refresh(locs)
    assert search(locs, ["rabbitmq", "prefetch"]) == ["2025-01-01T00-00-00-000Z--note.md"]


def test_a_heading_inside_the_answer_stays_in_the_result(tmp_path):
    locs = make_locs(tmp_path)
    path = write_entry(locs, SHOP, title="t", result="Intro\n\n## Steps\n\n1. did x\n\n## Prompt\n\nnot a prompt")
    entry = read_entry(path)
    assert entry.prompt == "t"
    assert "## Steps" in entry.result and "not a prompt" in entry.result


def test_refresh_follows_added_changed_and_removed_entries(tmp_path):
    locs = make_locs(tmp_path)
    first = write_entry(locs, SHOP, title="Nginx returns 502 behind the load balancer", result="keepalive timeout")
    assert index.refresh(locs) == 1
    assert index.refresh(locs) == 0  # nothing changed: nothing done
    second = write_entry(locs, SHOP, title="Grafana dashboard for queue depth", ts="2026-08-29T10:00:00.000Z")
    assert index.refresh(locs, {project_slug(SHOP)}) >= 1
    assert search(locs, ["grafana", "queue"]) == [second.name]
    first.write_text(first.read_text().replace("keepalive timeout", "upstream keepalive was too short"))
    os.utime(first.parent, ns=(time.time_ns(), time.time_ns() + 1_000_000))
    index.refresh(locs)
    assert search(locs, ["upstream", "keepalive"]) == [first.name]
    second.unlink()
    index.refresh(locs)
    assert search(locs, ["grafana", "queue"]) == []


def test_two_writes_in_the_same_clock_tick_are_both_seen(tmp_path):
    locs = make_locs(tmp_path)
    write_entry(locs, SHOP, title="Alpha release checklist", ts="2026-08-01T00:00:00.000Z")
    index.refresh(locs)
    bank = locs.memories / project_slug(SHOP) / "bank"
    mtime = bank.stat().st_mtime_ns
    late = write_entry(locs, SHOP, title="Beta release checklist", ts="2026-08-02T00:00:00.000Z")
    os.utime(bank, ns=(mtime, mtime))  # the folder looks unchanged
    index.refresh(locs)
    assert late.name in search(locs, ["beta", "release"])


def test_query_syntax_in_user_text_is_never_interpreted(tmp_path):
    locs = make_locs(tmp_path)
    write_entry(locs, SHOP, title="Quote handling in the CSV parser", result='Handles "quoted" fields and NEAR rows')
    index.refresh(locs)
    for words in (['"quoted"', "csv"], ["NEAR(", "csv*"], ["title:csv", "-parser"], ["AND", "OR", "NOT"], ["^", '"']):
        search(locs, words)  # must not raise
    assert search(locs, ['"quoted"']) != []


def test_a_corrupt_index_is_rebuilt_from_the_markdown(tmp_path):
    locs = make_locs(tmp_path)
    path = write_entry(locs, SHOP, title="Terraform state lock stuck", result="force-unlock after checking")
    index.refresh(locs)
    locs.index_file.write_bytes(b"this is not a database" * 100)
    with pytest.raises(index.IndexCorrupt):
        index.connect(locs, create=False)
    assert index.rebuild(locs) == 1
    assert search(locs, ["terraform", "lock"]) == [path.name]


def test_reindex_command_rebuilds_everything(tmp_path):
    env = make_env(tmp_path)
    locs = make_locs(tmp_path)
    write_entry(locs, SHOP, title="Sentry alerts are noisy", result="grouped by fingerprint")
    write_entry(locs, "/home/dev/blog", title="RSS feed is empty", result="fixed the date filter")
    out = subprocess.run([sys.executable, "-m", "harnesslink_core.main", "reindex"], env=env, capture_output=True,
                         text=True, cwd=REPO)
    assert out.returncode == 0, out.stderr
    assert "indexed 2 entries" in out.stdout
    conn = sqlite3.connect(locs.index_file)
    assert conn.execute("SELECT count(*) FROM docs").fetchone()[0] == 2


def test_recall_command_searches_this_project_unless_all(tmp_path):
    env = make_env(tmp_path)
    locs = make_locs(tmp_path)
    write_entry(locs, SHOP, title="Sentry alerts are noisy", result="grouped by fingerprint")
    write_entry(locs, "/home/dev/blog", title="Sentry release tracking", result="set the release in CI")
    run = lambda *a: subprocess.run([sys.executable, "-m", "harnesslink_core.main", "recall", *a], env=env,  # noqa: E731
                                    capture_output=True, text=True, cwd=REPO)
    mine = run("sentry", "alerts", "--cwd", SHOP, "--json")
    assert mine.returncode == 0, mine.stderr
    import json

    titles = [m["title"] for m in json.loads(mine.stdout)["matches"]]
    assert titles == ["Sentry alerts are noisy"]
    every = json.loads(run("sentry", "--cwd", SHOP, "--all", "--json").stdout)
    assert {m["title"] for m in every["matches"]} == {"Sentry alerts are noisy", "Sentry release tracking"}
    text = run("sentry", "alerts", "--cwd", SHOP)
    assert "Sentry alerts are noisy" in text.stdout


def test_linked_txt_accepts_slugs_and_paths_and_nothing_outside(tmp_path):
    locs = make_locs(tmp_path)
    own = project_slug(SHOP)
    (locs.memories / own).mkdir(parents=True)
    (locs.memories / own / "linked.txt").write_text(
        "--home-dev-lib--\n/home/dev/tools\n~/notes\n../../etc\n..\n/\n# comment\n\n" + own + "\n"
    )
    assert linked_projects(locs, own) == [
        "--home-dev-lib--", "--home-dev-tools--", project_slug(str(locs.home) + "/notes"), "--unknown-project--",
    ]




def test_the_scope_token_alone_keeps_other_projects_out(tmp_path):
    # `web` is a prefix of `web-frontend`, and their slugs share every word: the FTS5 filter
    # by itself (no join on docs.project) must still return only the asked project's rows
    locs = make_locs(tmp_path)
    for cwd in ("/home/dev/web", "/home/dev/web-frontend", "/home/dev/web/frontend"):
        write_entry(locs, cwd, title="Tailwind classes missing", result="content globs", session_id=cwd)
    index.refresh(locs)
    conn = index.connect(locs)
    for cwd in ("/home/dev/web", "/home/dev/web-frontend", "/home/dev/web/frontend"):
        slug = project_slug(cwd)
        rows = conn.execute("SELECT d.project FROM fts JOIN docs d ON d.id = fts.rowid WHERE fts MATCH ?",
                            (query.scoped_query(["tailwind"], [slug]),)).fetchall()
        assert rows == [(slug,)]
    both = [project_slug("/home/dev/web"), project_slug("/home/dev/web-frontend")]
    assert sorted(h.project for h in query.search(conn, ["tailwind"], both)) == sorted(both)


def test_an_index_of_the_old_schema_is_rebuilt_from_the_markdown(tmp_path):
    locs = make_locs(tmp_path)
    write_entry(locs, SHOP, title="Postgres runs out of connections", result="pool_size is 20 now")
    locs.index_file.parent.mkdir(parents=True, exist_ok=True)
    old = sqlite3.connect(locs.index_file)
    old.executescript("CREATE TABLE docs (id INTEGER PRIMARY KEY, path TEXT);"
                      "CREATE VIRTUAL TABLE fts USING fts5(title, tags, prompt, actions, result);"
                      "PRAGMA user_version = 1;")
    old.close()
    with pytest.raises(index.IndexUnavailable):  # the prompt hook: unusable, rebuild in the background
        index.connect(locs, create=False)
    assert index.rebuild(locs) == 1
    conn = index.connect(locs, create=False)
    assert [r[1] for r in conn.execute("PRAGMA table_info(fts)")][-1] == "scope"
    assert [h.title for h in query.search(conn, ["postgres", "connections"], scope_for(locs, SHOP))] == [
        "Postgres runs out of connections"]
