"""The brief: SPEC §6 sections in order, each whole or dropped under the budget, with a note for what was dropped."""

from __future__ import annotations

import re

from harnesslink_core.recall.brief import DEFAULT_BUDGET, build_brief
from harnesslink_core.store.scope import project_slug
from memory_helpers import SHOP, build_corpus, make_locs, write_entry


def setup_world(tmp_path, *, notes="Deploys go through `make release`; never push to main."):
    locs = make_locs(tmp_path)
    build_corpus(locs)
    folder = locs.memories / project_slug(SHOP)
    (folder / "MAIN.md").write_text(
        f"# Project Memory\n\n{notes}\n\n<!-- superpi:index:start -->\n- x\n<!-- superpi:index:end -->\n")
    (folder / "state").mkdir()
    (folder / "state" / "codex--sess-42.md").write_text(
        "---\nharness: codex\nsession_id: sess-42\n---\n\n## Todos\n\n- [x] write the migration\n- [ ] backfill rows\n")
    codex_mem = locs.home / ".codex" / "memories"
    codex_mem.mkdir(parents=True)
    (codex_mem / "raw_memories.md").write_text("Prefers ruff over flake8.\n")
    claude_mem = locs.home / ".claude" / "projects" / "-home-dev-shop" / "memory"
    claude_mem.mkdir(parents=True)
    (claude_mem / "MEMORY.md").write_text("Use uv for virtualenvs in this repo.\n")
    return locs


def section_names(text):
    return re.findall(r"^## (.+)$", text, re.M)


def test_sections_come_in_spec_order(tmp_path):
    locs = setup_world(tmp_path)
    brief = build_brief(locs, SHOP, "codex", session_id="sess-42", with_state=True, query="docker image size",
                        budget=20000)
    assert section_names(brief.text) == [
        "Project notes (MAIN.md)",
        "Newest 9 turns banked in this project",
        "Codex raw memories",
        "Claude Code project memory (MEMORY.md)",
        "This session's saved state (todos, plan, checkpoints)",
        "Recall: docker image size",
    ]
    assert "make release" in brief.text and "- [ ] backfill rows" in brief.text
    assert "Make the Docker image smaller" in brief.text.split("## Recall", 1)[1]
    assert len(build_brief(locs, SHOP, "codex").text) <= DEFAULT_BUDGET


def test_newest_entries_are_newest_first_with_time_harness_and_path(tmp_path):
    locs = setup_world(tmp_path)
    text = build_brief(locs, SHOP, "claude-code", budget=20000).text
    recent = text.split("## Newest", 1)[1]
    assert recent.index("Websocket clients should reconnect") < recent.index("Memory keeps growing")
    assert "2026-08-29 09:00 UTC · claude-code · Websocket clients should reconnect with backoff" in recent
    assert f"(files in {locs.memories / project_slug(SHOP) / 'bank'})" in recent
    assert "— 2026-08-29T09-00-00-000Z--websocket-clients-should-reconnect-with-backoff.md" in recent


def test_claude_code_does_not_get_its_own_memory_file_back(tmp_path):
    locs = setup_world(tmp_path)
    assert "Use uv for virtualenvs" not in build_brief(locs, SHOP, "claude-code", budget=20000).text
    assert "Use uv for virtualenvs" in build_brief(locs, SHOP, "pi", budget=20000).text


def test_state_only_after_resume_or_compaction(tmp_path):
    locs = setup_world(tmp_path)
    assert "backfill rows" not in build_brief(locs, SHOP, "codex", session_id="sess-42").text
    assert "backfill rows" in build_brief(locs, SHOP, "codex", session_id="sess-42", with_state=True).text


def test_a_section_that_does_not_fit_is_dropped_whole_and_named(tmp_path):
    locs = setup_world(tmp_path, notes="Architecture notes. " * 300)  # ~6,000 characters
    brief = build_brief(locs, SHOP, "pi", budget=4000)
    assert len(brief.text) <= 4000
    assert "Project notes (MAIN.md)" in brief.dropped
    assert "Architecture notes" not in brief.text
    assert re.search(r"- Project notes \(MAIN.md\) \(\d+ characters\): dropped .* see .*MAIN.md", brief.text)
    assert "Newest 9 turns banked in this project" in brief.included  # later sections still get their turn


def test_every_budget_is_respected(tmp_path):
    locs = setup_world(tmp_path)
    for budget in (0, 200, 500, 1000, 1500, 2500, 4000, 9000):
        text = build_brief(locs, SHOP, "omp", budget=budget).text
        assert len(text) <= budget


def test_an_empty_project_gets_no_brief(tmp_path):
    locs = make_locs(tmp_path)
    assert build_brief(locs, "/nowhere", "claude-code").text == ""


def test_the_default_main_md_header_is_not_repeated(tmp_path):
    locs = make_locs(tmp_path)
    write_entry(locs, SHOP, title="one", result="r")
    (locs.memories / project_slug(SHOP) / "MAIN.md").write_text(
        "# Project Memory\n\nAdd context, architecture notes, or reminders here.\n"
        "Everything above the markers is untouched by the banker.\n\n<!-- superpi:index:start -->\n")
    assert "Project notes" not in build_brief(locs, SHOP, "codex").text
