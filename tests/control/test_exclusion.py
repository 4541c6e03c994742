"""Projects kept out: `.harnesslink-off` and `memory.exclude` — nothing banked, nothing injected."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import time
from pathlib import Path

from harnesslink_core import hooks, main
from harnesslink_core.banking import autobank
from harnesslink_core.control import exclusion
from harnesslink_core.store.ledger import open_ledger
from harnesslink_core.store.scope import project_slug
from tests.claude_builder import ClaudeSession

ROOT = Path(__file__).resolve().parents[2]
LONG = "A long enough answer to be banked, describing what was done in detail. " * 4


def _entries(locs, cwd: str) -> list[Path]:
    return sorted((locs.memories / project_slug(cwd) / "bank").glob("*.md"))


def _session(home: Path, cwd: Path, sid: str, prompts: list[str]) -> ClaudeSession:
    s = ClaudeSession(home, cwd=str(cwd), session_id=sid)
    for p in prompts:
        s.turn(p, LONG, tools=[("Bash", {"command": "make test"})])
    s.flush()
    return s


def test_off_file_in_a_parent_keeps_the_tree_out_and_the_transcript_unread(locs, isolated_home, tmp_path, monkeypatch):
    secret_proj = tmp_path / "clientwork"
    (secret_proj / "sub").mkdir(parents=True)
    (secret_proj / ".harnesslink-off").write_text("")
    open_proj = tmp_path / "oss"
    open_proj.mkdir()
    _session(isolated_home, secret_proj / "sub", "s-secret", ["Migrate the billing database", "Fix the invoice job"])
    _session(isolated_home, open_proj, "s-open", ["Fix the docs build"])

    read_paths = []
    from harnesslink_core.harnesses.claude_code import reader as claude_code

    real_read = claude_code.read

    def spy(path, *args, **kwargs):
        read_paths.append(str(path))
        return real_read(path, *args, **kwargs)

    monkeypatch.setattr(claude_code, "read", spy)
    report = autobank.run_pass(locs)
    assert report.banked == 1
    assert _entries(locs, str(secret_proj / "sub")) == [] and len(_entries(locs, str(open_proj))) == 1
    assert not any("s-secret" in p for p in read_paths), "a kept-out transcript is never handed to a reader"
    assert not (locs.memories / project_slug(str(secret_proj / "sub"))).exists()  # no state file either

    # later turns there stay out too; the file is not read again
    _session(isolated_home, secret_proj / "sub", "s-secret", ["Rotate the API keys"])
    assert autobank.run_pass(locs, now=time.time() + 3600).banked == 0
    assert not any("s-secret" in p for p in read_paths)


def test_lifting_the_exclusion_banks_only_what_came_after(locs, isolated_home, tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    off = proj / ".harnesslink-off"
    off.write_text("")
    s = _session(isolated_home, proj, "s-1", ["Private work one", "Private work two"])
    autobank.run_pass(locs, now=time.time() + 3600)
    off.unlink()
    s.clock += __import__("datetime").timedelta(seconds=5)
    s.turn("Public work three", LONG, tools=[("Bash", {"command": "ls"})])
    s.flush()
    time.sleep(0.01)
    report = autobank.run_pass(locs, now=time.time() + 3600)
    titles = [p.name for p in _entries(locs, str(proj))]
    assert len(titles) == 1 and "public-work-three" in titles[0], titles
    assert report.excluded == 2
    autobank.widen_window(locs, 90)
    autobank.drain(locs)
    assert len(_entries(locs, str(proj))) == 1, "a backfill does not bank what was done while kept out"


def test_a_backfill_right_after_lifting_the_exclusion_banks_nothing_from_before(locs, isolated_home, tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / ".harnesslink-off").write_text("")
    _session(isolated_home, proj, "s-1", ["Private work one", "Private work two"])
    autobank.run_pass(locs, now=time.time() + 3600)
    (proj / ".harnesslink-off").unlink()
    autobank.widen_window(locs, 90)
    autobank.drain(locs)
    assert _entries(locs, str(proj)) == []
    s = ClaudeSession(isolated_home, cwd=str(proj), session_id="s-1")
    s.turn("Public work three", LONG, tools=[("Bash", {"command": "ls"})])
    s.flush()
    report = autobank.run_pass(locs, now=time.time() + 3600)
    assert [p.name.split("--")[1] for p in _entries(locs, str(proj))] == ["public-work-three.md"]
    assert report.excluded == 2


def test_memory_exclude_globs_with_tilde_and_names(locs, isolated_home):
    acme = isolated_home / "clients" / "acme"
    scratch = isolated_home / "play" / "scratch-42"
    keep = isolated_home / "code" / "app"
    for d in (acme, scratch, keep):
        d.mkdir(parents=True)
    locs.agent_dir.mkdir(parents=True, exist_ok=True)
    locs.config_file.write_text("memory:\n  exclude:\n    - ~/clients/*\n    - scratch-*\n")
    _session(isolated_home, acme / "api", "s-acme", ["Tune the acme API"])
    _session(isolated_home, scratch, "s-scratch", ["Try a scratch idea"])
    _session(isolated_home, keep, "s-keep", ["Improve the app"])
    assert autobank.run_pass(locs).banked == 1
    assert len(_entries(locs, str(keep))) == 1
    assert exclusion.is_excluded(locs, str(acme / "api")) == f"memory.exclude: {isolated_home}/clients/*"
    assert exclusion.is_excluded(locs, str(scratch / "deeper"))
    assert exclusion.is_excluded(locs, str(keep)) is None
    # the cache follows config.yml
    time.sleep(0.01)
    locs.config_file.write_text("memory:\n  exclude: []\n")
    assert exclusion.is_excluded(locs, str(acme / "api")) is None


def test_a_turn_whose_cwd_is_kept_out_is_not_banked_even_mid_file(locs, isolated_home, tmp_path):
    ok, out = tmp_path / "ok", tmp_path / "out"
    ok.mkdir(), out.mkdir()
    (out / ".harnesslink-off").write_text("")
    s = ClaudeSession(isolated_home, cwd=str(ok), session_id="s-mixed")
    s.turn("Work in the open folder", LONG, tools=[("Bash", {"command": "ls"})])
    s.cwd = str(out)
    s.turn("Work in the closed folder", LONG, tools=[("Bash", {"command": "ls"})])
    s.flush()
    report = autobank.run_pass(locs, now=time.time() + 3600)
    assert report.banked == 1 and report.excluded == 1
    assert _entries(locs, str(out)) == []
    ledger = open_ledger(locs)
    try:
        assert ledger.counts("claude-code").get("excluded") == 1
    finally:
        ledger.close()


def test_nothing_is_injected_in_a_kept_out_folder(locs, isolated_home, tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    _session(isolated_home, proj, "s-1", ["Fix the flaky login test in auth", "Fix the login cookie expiry"])
    autobank.run_pass(locs, now=time.time() + 3600)
    payload = {"session_id": "s-2", "cwd": str(proj), "prompt": "why is the login test flaky again?"}

    def ask(event: str) -> dict:
        return hooks.run([event, "--harness", "claude-code"], stdin=io.StringIO(json.dumps(payload))).answer

    assert ask("session-start") and ask("user-prompt-submit"), "injected while not kept out"
    (proj / ".harnesslink-off").write_text("")
    assert ask("session-start") == {} and ask("user-prompt-submit") == {}


def test_the_prompt_hook_checks_exclusion_without_yaml(locs, isolated_home, tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    locs.agent_dir.mkdir(parents=True, exist_ok=True)
    locs.config_file.write_text(f"memory:\n  exclude: ['{proj}']\n")
    env = {"HOME": str(isolated_home), "PYTHONPATH": str(ROOT)}
    code = ("import sys; from harnesslink_core.control import exclusion; from harnesslink_core.paths import locations\n"
            f"r = exclusion.is_excluded(locations(), {str(proj)!r}); print(r); print('yaml' in sys.modules)")
    first = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert first.stdout.split() == ["memory.exclude:", str(proj), "True"]  # the cache is written once
    second = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert second.stdout.split() == ["memory.exclude:", str(proj), "False"]


def test_status_counts_kept_out_and_folds_undetected_harnesses(locs, isolated_home, tmp_path, capsys):
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / ".harnesslink-off").write_text("")
    _session(isolated_home, proj, "s-1", ["Secret work"])
    assert main.main(["autobank"]) == 0
    capsys.readouterr()
    assert main.main(["status", "--json"]) == 0
    cc = json.loads(capsys.readouterr().out)["harnesses"]["claude-code"]
    assert cc["kept_out_transcripts"] == 1 and cc["banked"] == 0
    assert main.main(["status"]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0]: line.split() for line in out.splitlines()[1:] if line.startswith(("claude", "codex"))}
    assert rows["claude-code"][1] == "on"
    assert "claude-code: 1 transcripts are of folders kept out of memory" in out
    folded = [line for line in out.splitlines() if line.startswith("not found")]
    assert len(folded) == 1 and "codex (on)" in folded[0] and "omp" in folded[0]
    assert "codex" not in rows


def test_a_folder_reached_through_a_symlink_is_kept_out_too(locs, isolated_home, tmp_path):
    target = tmp_path / "data" / "projects"
    (target / "client").mkdir(parents=True)
    (tmp_path / "home2").mkdir()
    link = tmp_path / "home2" / "work"
    link.symlink_to(target)
    assert exclusion.is_excluded(locs, str(link / "client")) is None
    (tmp_path / "data" / ".harnesslink-off").write_text("")  # above the link's target: only its real path finds it
    assert exclusion.is_excluded(locs, str(link / "client")) == str(tmp_path / "data" / ".harnesslink-off")
    (tmp_path / "data" / ".harnesslink-off").unlink()
    locs.agent_dir.mkdir(parents=True, exist_ok=True)
    locs.config_file.write_text(f"memory:\n  exclude: ['{target}/cli*']\n")
    assert exclusion.is_excluded(locs, str(link / "client" / "src"))
    assert exclusion.is_excluded(locs, str(link)) is None
