"""`harnesslink forget`: an entry the user takes back is gone everywhere and never comes back."""

from __future__ import annotations

import io
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from harnesslink_core import main
from harnesslink_core.banking import autobank
from harnesslink_core.control import forget
from harnesslink_core.recall import brief, index, query
from harnesslink_core.store.ledger import open_ledger
from harnesslink_core.store.scope import project_slug
from tests.claude_builder import ClaudeSession

APP = "/work/app"
OTHER = "/work/other"
TWO_DAYS_AGO = datetime.now(timezone.utc) - timedelta(days=2)


def _bank_three(home: Path, locs) -> ClaudeSession:
    s = ClaudeSession(home, cwd=APP, session_id="sess-app-1", start=TWO_DAYS_AGO)
    s.turn("Fix the flaky login test in the auth module", "The cookie expiry used local time. " * 10,
           tools=[("Bash", {"command": "pytest tests/test_login.py"})])
    s.turn("Add a cache to the pricing service", "Added an LRU cache around the price lookup. " * 10,
           tools=[("Edit", {"file_path": "/work/app/pricing.py"})])
    s.turn("Document the deploy script", "Wrote docs/deploy.md describing each step. " * 10,
           tools=[("Write", {"file_path": "/work/app/docs/deploy.md"})])
    s.flush()
    o = ClaudeSession(home, cwd=OTHER, session_id="sess-other-1", start=TWO_DAYS_AGO)
    o.turn("Fix the flaky login test in the other project", "Other project answer. " * 15,
           tools=[("Bash", {"command": "make test"})])
    o.flush()
    report = autobank.run_pass(locs)
    assert report.banked == 4, report
    return s


def _bank_files(locs, cwd: str = APP) -> list[Path]:
    return sorted((locs.memories / project_slug(cwd) / "bank").glob("*.md"))


def _titles(locs, cwd: str = APP) -> list[str]:
    return [p.name.split("--", 1)[1] for p in _bank_files(locs, cwd)]


def test_forget_removes_file_index_row_main_line_and_summary_line(isolated_home, locs):
    _bank_three(isolated_home, locs)
    project = locs.memories / project_slug(APP)
    index.refresh(locs)
    target_path = next(p for p in _bank_files(locs) if "pricing" in p.name)
    summary_file = project / "summaries" / f"{target_path.name[:10]}.md"
    assert "Add a cache to the pricing service" in summary_file.read_text()
    assert f"(bank/{target_path.name})" in (project / "MAIN.md").read_text()

    targets = forget.select(locs, ids=[str(target_path)])
    assert [t.name for t in targets] == [target_path.name]
    done = forget.forget(locs, targets)

    assert [t.name for t in done.forgotten] == [target_path.name] and not done.failed
    assert not target_path.exists()
    assert done.index_rows == 1 and done.main_lines == 1 and done.summary_lines == 1 and done.checkpoints == 1
    state_text = next((project / "state").glob("*.md")).read_text()
    assert "pricing" not in state_text and "Fix the flaky login test" in state_text
    main_md = (project / "MAIN.md").read_text()
    assert target_path.name not in main_md and "flaky-login" in main_md
    text = summary_file.read_text()
    assert "pricing" not in text and "Fix the flaky login test" in text
    conn = index.connect(locs)
    try:
        assert not conn.execute("SELECT 1 FROM docs WHERE path LIKE ?", ("%pricing%",)).fetchall()
        assert conn.execute("SELECT count(*) FROM docs").fetchone()[0] == 3
    finally:
        conn.close()


def test_forgotten_turn_is_never_banked_again_by_a_pass_or_a_backfill(isolated_home, locs):
    _bank_three(isolated_home, locs)
    targets = forget.select(locs, query="pricing cache", projects=[project_slug(APP)], limit=1)
    assert len(targets) == 1 and "pricing" in targets[0].name
    forget.forget(locs, targets)
    autobank.widen_window(locs, 90)
    autobank.drain(locs)
    autobank.run_pass(locs, now=autobank.clock.now() + 3600)
    assert len(_bank_files(locs)) == 2
    assert not any("pricing" in name for name in _titles(locs))
    ledger = open_ledger(locs)
    try:
        assert ledger.turn_status(targets[0].turn_key)[0] == "forgotten"
        assert ledger.counts("claude-code").get("forgotten") == 1
    finally:
        ledger.close()


def test_an_entry_pulled_back_from_the_cloud_is_never_indexed_or_injected(isolated_home, locs, tmp_path):
    _bank_three(isolated_home, locs)
    target = next(p for p in _bank_files(locs) if "pricing" in p.name)
    saved = tmp_path / "cloud-copy.md"
    shutil.copy(target, saved)
    forget.forget(locs, forget.select(locs, ids=[target.name]))
    shutil.copy(saved, target)  # the cloud pull rehydrates it

    index.rebuild(locs)
    conn = index.connect(locs)
    try:
        hits = query.search(conn, ["pricing", "cache"], None)
        assert not any("pricing" in h.path for h in hits)
    finally:
        conn.close()
    text = brief.build_brief(locs, APP, "codex").text
    assert "pricing" not in text.lower() and "flaky login" in text.lower()
    # a later pass that touches the project does not list it in MAIN.md either
    s = ClaudeSession(isolated_home, cwd=APP, session_id="sess-app-2")
    s.turn("Refactor the session store", "Moved it into its own module. " * 10, tools=[("Bash", {"command": "ls"})])
    s.flush()
    assert autobank.run_pass(locs).banked == 1
    assert target.name not in (locs.memories / project_slug(APP) / "MAIN.md").read_text()


def test_select_by_session_before_and_project_scope(isolated_home, locs):
    _bank_three(isolated_home, locs)
    app, other = project_slug(APP), project_slug(OTHER)
    assert len(forget.select(locs, session="sess-app-1")) == 3
    assert len(forget.select(locs, session="sess-other-1")) == 1
    assert len(forget.select(locs, before="2200-01-01", projects=[app])) == 3
    assert forget.select(locs, before="2000-01-01", projects=[app]) == []
    # the MCP tool passes the session's scope: an entry of another project cannot be selected
    other_entry = _bank_files(locs, OTHER)[0]
    with pytest.raises(forget.NoMatch):
        forget.select(locs, ids=[str(other_entry)], projects=[app])
    assert forget.select(locs, query="flaky login test", projects=[app], limit=5)[0].project == app
    assert all(t.project == app for t in forget.select(locs, query="flaky login test", projects=[app]))
    with pytest.raises(forget.ForgetError):
        forget.select(locs)
    with pytest.raises(forget.ForgetError):
        forget.select(locs, before="last tuesday", projects=[app])
    assert len(forget.select(locs, projects=[other])) == 1


def _cli(argv: list[str], monkeypatch, capsys, stdin: str = "") -> tuple[int, str, str]:
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code = main.main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_dry_run_changes_nothing_and_asks_before_forgetting(isolated_home, locs, monkeypatch, capsys):
    _bank_three(isolated_home, locs)
    monkeypatch.chdir(isolated_home)
    code, out, _ = _cli(["forget", "--session", "sess-app-1", "--dry-run"], monkeypatch, capsys)
    assert code == 0 and "would forget 3 entries" in out and "dry run" in out
    assert len(_bank_files(locs)) == 3

    code, out, _ = _cli(["forget", "--session", "sess-app-1"], monkeypatch, capsys, stdin="n\n")
    assert code == 1 and "nothing forgotten" in out and len(_bank_files(locs)) == 3

    code, out, _ = _cli(["forget", "--session", "sess-app-1"], monkeypatch, capsys, stdin="y\n")
    assert code == 0 and "forgot 3 entries" in out and "stays in the cloud store" in out
    assert _bank_files(locs) == [] and len(_bank_files(locs, OTHER)) == 1


def test_cli_project_and_yes(isolated_home, locs, monkeypatch, capsys):
    _bank_three(isolated_home, locs)
    code, out, _ = _cli(["forget", "--project", OTHER, "--yes"], monkeypatch, capsys)
    assert code == 0 and "forgot 1 entry" in out
    assert _bank_files(locs, OTHER) == [] and len(_bank_files(locs)) == 3


def test_cli_query_defaults_to_this_folder_and_unknown_id_is_one_line(isolated_home, locs, monkeypatch, capsys):
    _bank_three(isolated_home, locs)
    code, out, _ = _cli(["forget", "--query", "flaky login test", "--cwd", OTHER, "-k", "5", "--yes"],
                        monkeypatch, capsys)
    assert code == 0 and "forgot 1 entry" in out and len(_bank_files(locs)) == 3
    code, out, err = _cli(["forget", "2001-01-01T00-00-00-000Z", "--yes"], monkeypatch, capsys)
    assert code == 1 and err.count("\n") == 1 and "no entry matches" in err and "Traceback" not in err


def test_tombstones_survive_a_lost_ledger(isolated_home, locs):
    _bank_three(isolated_home, locs)
    forget.forget(locs, forget.select(locs, query="pricing cache", projects=[project_slug(APP)], limit=1))
    locs.ledger_file.rename(str(locs.ledger_file) + ".damaged")
    for suffix in ("-wal", "-shm"):
        Path(str(locs.ledger_file) + suffix).unlink(missing_ok=True)
    autobank.widen_window(locs, 90)
    autobank.drain(locs)
    assert len(_bank_files(locs)) == 2 and not any("pricing" in n for n in _titles(locs))


def test_a_legacy_entry_without_turn_key_is_forgotten_by_name(isolated_home, locs, tmp_path):
    from tests.memory_helpers import write_entry

    path = write_entry(locs, APP, title="Old superpi note about the deploy key rotation", legacy=True,
                       result="Rotated the deploy key. " * 20)
    saved = tmp_path / "copy.md"
    shutil.copy(path, saved)
    done = forget.forget(locs, forget.select(locs, ids=[path.name]))
    assert [t.name for t in done.forgotten] == [path.name] and not path.exists()
    shutil.copy(saved, path)  # pulled back from the cloud
    index.rebuild(locs)
    conn = index.connect(locs)
    try:
        assert query.count(conn) == 0
    finally:
        conn.close()


def test_cli_json(isolated_home, locs, monkeypatch, capsys):
    import json

    _bank_three(isolated_home, locs)
    code, out, _ = _cli(["forget", "--session", "sess-other-1", "--json", "--dry-run"], monkeypatch, capsys)
    data = json.loads(out)
    assert code == 0 and data["dry_run"] and [t["session_id"] for t in data["targets"]] == ["sess-other-1"]
    code, out, err = _cli(["forget", "--session", "sess-other-1", "--json"], monkeypatch, capsys)
    assert code == 2 and "--yes" in err
    code, out, _ = _cli(["forget", "--session", "sess-other-1", "--json", "--yes"], monkeypatch, capsys)
    data = json.loads(out)
    assert code == 0 and len(data["forgotten"]) == 1 and "cloud" in data["note"]


def test_a_main_md_without_an_index_is_left_alone_and_none_is_created(isolated_home, locs):
    from tests.memory_helpers import write_entry

    notes = write_entry(locs, APP, title="Deploy notes", result="The deploy runs on Fridays. " * 10)
    project = notes.parent.parent
    forget.forget(locs, forget.select(locs, ids=[notes.name]))
    assert not (project / "MAIN.md").exists()
    kept = write_entry(locs, APP, title="Release notes", result="Releases are tagged on main. " * 10)
    (project / "MAIN.md").write_bytes(b"# My own notes\r\nno index here\r\n")
    done = forget.forget(locs, forget.select(locs, ids=[kept.name]))
    assert done.main_lines == 0 and (project / "MAIN.md").read_bytes() == b"# My own notes\r\nno index here\r\n"


def test_indexed_names_are_the_entries_main_md_lists(tmp_path):
    from harnesslink_core.store import projectfiles

    assert projectfiles.indexed_names(tmp_path) is None
    (tmp_path / "MAIN.md").write_text("# Notes (bank/not-an-entry.md)\n")
    assert projectfiles.indexed_names(tmp_path) is None
    (tmp_path / "MAIN.md").write_text(
        "# Notes (bank/above.md)\n" + projectfiles.START + "\n"
        "- 2026-08-28T10:30:00.000Z — Fix it (see (bank/x)) (bank/2026-08-28T10-30-00-000Z--fix-it.md)\r\n"
        "- 2026-08-27T10:30:00.000Z — Older (bank/2026-08-27T10-30-00-000Z--older.md)\n" + projectfiles.END + "\n")
    assert projectfiles.indexed_names(tmp_path) == {"2026-08-28T10-30-00-000Z--fix-it.md",
                                                    "2026-08-27T10-30-00-000Z--older.md"}


def test_drop_summary_lines_removes_one_line_each_and_an_empty_summary(tmp_path):
    from harnesslink_core.store import projectfiles

    summaries = tmp_path / "summaries"
    summaries.mkdir()
    one = {"title": "Fix the login test", "tags": ["bash"]}
    two = {"title": "Add a cache", "tags": ["edit", "bash"]}
    (summaries / "2026-08-28.md").write_text(
        "# 2026-08-28\n\n- Fix the login test [bash]\n- Add a cache [edit, bash]\n")
    (summaries / "2026-08-29.md").write_text("# 2026-08-29\n\n- Add a cache [edit, bash]\n")
    dropped = projectfiles.drop_summary_lines(tmp_path, {
        "2026-08-28T10-30-00-000Z--fix-the-login-test.md": one, "2026-08-29T09-00-00-000Z--add-a-cache.md": two,
        "2026-08-30T09-00-00-000Z--no-summary-yet.md": two, "2026-08-28T11-00-00-000Z--not-listed.md": {"title": "x"}})
    assert dropped == 2
    assert (summaries / "2026-08-28.md").read_text() == "# 2026-08-28\n\n- Add a cache [edit, bash]\n"
    assert not (summaries / "2026-08-29.md").exists()


def test_drop_checkpoints_drops_only_the_forgotten_turns_checkpoints():
    from harnesslink_core.store import state

    current = {"plan": "p", "checkpoints": [[100.0004, "turn", "Fix it"], [100.0, "compaction", ""],
                                            [200.5, "turn", "Add a cache"], [300.0, "turn", "Docs"]]}
    kept, dropped = state.drop_checkpoints(current, [100.0, 200.499])
    assert dropped == 2 and kept == {"plan": "p", "checkpoints": [[100.0, "compaction", ""], [300.0, "turn", "Docs"]]}
    assert len(current["checkpoints"]) == 4, "the state handed in is not changed"
    same, none = state.drop_checkpoints(current, [150.0])
    assert none == 0 and same is current
    assert state.drop_checkpoints({}, [100.0]) == ({}, 0)


def test_an_entrys_time_is_read_from_its_name():
    from harnesslink_core.clock import parse_iso
    from harnesslink_core.store.entries import ts_from_name

    assert ts_from_name("2026-08-28T10-30-00-250Z--fix-it.md") == parse_iso("2026-08-28T10:30:00.250Z")
    assert ts_from_name("2026-08-28T10-30-00Z--legacy.md") == parse_iso("2026-08-28T10:30:00Z")
    assert ts_from_name("notes.md") is None and ts_from_name("2026-08-28--x.md") is None
