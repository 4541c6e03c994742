"""One project on every machine and in every folder (SPEC §11 "Identity"): a repository is its normalised
`origin` URL, read from `.git/config` without git; every slug of one repository is one scope, carried in
the tree (`IDENTITY.md`), so a copy of the tree on another machine finds its past at another path."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from harnesslink_core.banking.autobank import run_pass
from harnesslink_core.memory_tools import Session, call
from harnesslink_core.paths import locations
from harnesslink_core.recall import index
from harnesslink_core.recall.brief import build_brief
from harnesslink_core.store import identity
from harnesslink_core.store.scope import project_slug, scope_for
from memory_helpers import REPO, run_hook
from tests.claude_builder import ClaudeSession

ANSWER = ("The nightly export job now streams invoices through a server side cursor, so memory stays flat "
          "at about 80 MB whatever the month's volume; the old job loaded every row first. ") * 2


@pytest.mark.parametrize("url", [
    "git@github.com:Org/App.git", "https://github.com/Org/App", "https://user:tok@GitHub.com/Org/App.git",
    "ssh://git@github.com/Org/App.git", "ssh://git@github.com:22/Org/App", "https://github.com:443/Org/App/",
    "git://GITHUB.COM/Org/App.git",
])
def test_every_spelling_of_one_remote_is_one_repository(url: str) -> None:
    assert identity.normalise(url) == "github.com/org/app"


def test_different_repositories_stay_different() -> None:
    assert identity.normalise("git@github.com:Org/App.git") != identity.normalise("git@github.com:Other/App.git")
    assert identity.normalise("git@gitlab.com:Org/App.git") != identity.normalise("git@github.com:Org/App.git")


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={"PATH": "/usr/bin:/bin", "HOME": str(cwd), "GIT_CONFIG_NOSYSTEM": "1"})


def repository(path: Path, origin: str | None) -> Path:
    path.mkdir(parents=True)
    git("init", "-q", cwd=path)
    if origin:
        git("remote", "add", "origin", origin, cwd=path)
    return path


def test_a_repository_is_read_from_its_config_in_any_subfolder_and_worktree(tmp_path: Path) -> None:
    main = repository(tmp_path / "src" / "app", "git@github.com:Org/App.git")
    (main / "pkg" / "deep").mkdir(parents=True)
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "x", cwd=main)
    git("worktree", "add", "-q", str(tmp_path / "app-feature"), cwd=main)
    alone = repository(tmp_path / "scratch", None)
    assert identity.repository_of(str(main)) == "github.com/org/app"
    assert identity.repository_of(str(main / "pkg" / "deep")) == "github.com/org/app"
    assert identity.repository_of(str(tmp_path / "app-feature")) == "github.com/org/app"
    assert identity.repository_of(str(alone)) is None
    assert identity.repository_of(str(tmp_path)) is None


def bank_a_turn(home: Path, cwd: Path, prompt: str) -> None:
    s = ClaudeSession(home, cwd=str(cwd))
    s.turn(prompt, ANSWER, tools=[("Bash", {"command": "pytest -x tests/export"})])
    s.flush()
    assert run_pass(locations({"HOME": str(home)})).banked == 1


def prompt_context(home: Path, cwd: Path, prompt: str) -> str:
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)}
    out = run_hook(env, "user-prompt-submit", "--harness", "codex",
                   stdin=json.dumps({"session_id": "fresh", "cwd": str(cwd), "prompt": prompt}))
    return json.loads(out.stdout).get("hookSpecificOutput", {}).get("additionalContext", "")


QUESTION = "how does the nightly invoice export keep its memory flat"


def test_a_tree_pulled_onto_another_machine_finds_its_past_at_another_path(tmp_path: Path, monkeypatch) -> None:
    home_a, home_b = tmp_path / "a", tmp_path / "b"
    laptop = repository(tmp_path / "laptop" / "Users" / "me" / "src" / "app", "git@github.com:Org/App.git")
    bank_a_turn(home_a, laptop, "Make the nightly invoice export stream rows instead of loading them")
    slug_a = project_slug(str(laptop))
    assert identity.read(str(home_a / ".superpi/agent/memories" / slug_a)) == {str(laptop): "github.com/org/app"}
    # what pull-memories does: the memories tree, and nothing else, copied into another HOME
    shutil.copytree(home_a / ".superpi/agent/memories", home_b / ".superpi/agent/memories")
    workstation = repository(tmp_path / "workstation" / "home" / "me" / "work" / "app", "https://github.com/Org/App")
    namesake = repository(tmp_path / "workstation" / "home" / "me" / "other" / "app", "git@github.com:Someone/App.git")

    assert not (home_b / ".superpi/agent/memory-index.db").exists()  # a fresh pull: no index yet
    assert "server side cursor" in prompt_context(home_b, workstation, QUESTION)
    assert "server side cursor" not in prompt_context(home_b, namesake, QUESTION)
    locs_b = locations({"HOME": str(home_b)})
    assert slug_a in scope_for(locs_b, str(workstation)) and slug_a not in scope_for(locs_b, str(namesake))
    assert "stream rows" in build_brief(locs_b, str(workstation), "codex").text
    assert "stream rows" not in build_brief(locs_b, str(namesake), "codex").text
    found = call("memory_search", {"query": "nightly invoice export memory"}, Session(locs_b, str(workstation), "codex"))
    assert "server side cursor" in found
    nothing = call("memory_search", {"query": "nightly invoice export memory"}, Session(locs_b, str(namesake), "codex"))
    assert "server side cursor" not in nothing


def test_two_worktrees_share_memory_and_a_folder_without_a_remote_keeps_its_own(tmp_path: Path) -> None:
    home = tmp_path / "home"
    main = repository(tmp_path / "src" / "app", "git@github.com:Org/App.git")
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "x", cwd=main)
    git("worktree", "add", "-q", str(tmp_path / "app-hotfix"), cwd=main)
    bank_a_turn(home, main, "Make the nightly invoice export stream rows instead of loading them")
    assert "server side cursor" in prompt_context(home, tmp_path / "app-hotfix", QUESTION)
    loose = repository(tmp_path / "src" / "app-notes", None)
    assert "server side cursor" not in prompt_context(home, loose, QUESTION)
    bank_a_turn(home, loose, "Make the nightly invoice export stream rows instead of loading them (notes copy)")
    assert not (home / ".superpi/agent/memories" / project_slug(str(loose)) / identity.IDENTITY_FILE).exists()


def test_resume_lists_the_sessions_of_every_worktree_of_the_repository() -> None:
    import tempfile
    import uuid

    from harnesslink_core.sessions.base import list_sessions

    tmp_path = Path(tempfile.gettempdir()) / f"hlresume{uuid.uuid4().hex}"  # no `_`: Claude Code folds it into `-`
    home = tmp_path / "home"
    main = repository(tmp_path / "src" / "app", "git@github.com:Org/App.git")
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "x", cwd=main)
    hotfix = tmp_path / "app-hotfix"
    git("worktree", "add", "-q", str(hotfix), cwd=main)
    bank_a_turn(home, hotfix, "Make the nightly invoice export stream rows instead of loading them")
    index.rebuild(locations({"HOME": str(home)}))
    try:
        listed = list_sessions(locations({"HOME": str(home)}), str(main), harnesses=("claude-code",))
        assert [os.path.abspath(s.cwd) for s in listed] == [str(hotfix)]
    finally:
        shutil.rmtree(tmp_path, ignore_errors=True)


def test_a_full_pass_drops_the_cached_map_so_a_pulled_identity_counts(tmp_path: Path) -> None:
    """An IDENTITY.md pulled into a folder this machine already knows changes no folder the cache watches."""
    home = tmp_path / "home"
    main = repository(tmp_path / "src" / "app", "git@github.com:Org/App.git")
    bank_a_turn(home, main, "Make the nightly invoice export stream rows instead of loading them")
    locs = locations({"HOME": str(home)})
    other = home / ".superpi/agent/memories" / "--elsewhere-app--"
    (other / "bank").mkdir(parents=True)
    assert "--elsewhere-app--" not in identity.tree_identities(locs)  # cached now, without it
    (other / identity.IDENTITY_FILE).write_text(identity.render({"/elsewhere/app": "github.com/org/app"}))  # pulled later
    assert "--elsewhere-app--" not in identity.tree_identities(locs)
    run_pass(locs)
    assert identity.tree_identities(locs)["--elsewhere-app--"] == {"/elsewhere/app": "github.com/org/app"}
