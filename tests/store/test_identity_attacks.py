"""An identity is a folder's, and only a repository git itself would use gives one (SPEC §11 "Identity"):
two folders that share a slug keep their own identities, a `.git` git would refuse (no HEAD, objects or refs;
another user's; a dotfiles repository over the home folder) joins nothing, the hosts that compare owner and
name without case join every spelling, and `history` and `review` scope as recall does."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harnesslink_core import main as cli
from harnesslink_core.banking.autobank import run_pass
from harnesslink_core.errors import ToolError
from harnesslink_core.memory_tools import Session, call
from harnesslink_core.paths import locations
from harnesslink_core.recall.brief import build_brief
from harnesslink_core.store import identity
from harnesslink_core.store.scope import project_slug
from memory_helpers import REPO, run_hook
from memory_helpers import run_cli as run_verb
from tests.claude_builder import ClaudeSession

ALICE = "The private billing ledger reconciles refunds against the acquirer's nightly settlement file. " * 2
BOB = "The public docs site builds its search index with pagefind after the static export step. " * 2


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={"PATH": "/usr/bin:/bin", "HOME": str(cwd), "GIT_CONFIG_NOSYSTEM": "1"})


def repository(path: Path, origin: str) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git("init", "-q", cwd=path)
    git("remote", "add", "origin", origin, cwd=path)
    return path


def bank(home: Path, cwd: Path, prompt: str, answer: str) -> Path:
    """One turn banked by the pass, as a session in `cwd` leaves it; the entry's path."""
    s = ClaudeSession(home, cwd=str(cwd))
    s.turn(prompt, answer, tools=[("Bash", {"command": "make check"})])
    s.flush()
    assert run_pass(locations({"HOME": str(home)})).banked == 1
    entries = sorted((home / ".superpi/agent/memories" / project_slug(str(cwd)) / "bank").glob("*.md"),
                     key=os.path.getmtime)
    return entries[-1]


def prompt_context(home: Path, cwd: Path, prompt: str) -> str:
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)}
    out = run_hook(env, "user-prompt-submit", "--harness", "codex",
                   stdin=json.dumps({"session_id": "fresh", "cwd": str(cwd), "prompt": prompt}))
    assert out.returncode == 0
    return json.loads(out.stdout).get("hookSpecificOutput", {}).get("additionalContext", "")


ASK_ALICE = "how are refunds reconciled against the nightly settlement file of the acquirer"
ASK_BOB = "how does the docs site build its search index with pagefind after export"


def test_folders_that_share_a_slug_keep_their_own_identities(isolated_home: Path, tmp_path: Path) -> None:
    home = isolated_home
    mine = repository(tmp_path / "code" / "my" / "app", "git@github.com:alice/private.git")
    theirs = repository(tmp_path / "code" / "my-app", "git@github.com:bob/public.git")
    assert project_slug(str(mine)) == project_slug(str(theirs))
    alices = bank(home, mine, "Reconcile refunds against the acquirer settlement file", ALICE)
    bobs = bank(home, theirs, "Build the docs search index with pagefind", BOB)
    locs = locations({"HOME": str(home)})
    shared = locs.memories / project_slug(str(mine))

    elsewhere = repository(tmp_path / "elsewhere" / "public", "https://github.com/bob/public")
    bank(home, elsewhere, "Note where the docs deploy goes", "The docs deploy goes to the pages branch. " * 6)
    assert "pagefind" in prompt_context(home, elsewhere, ASK_BOB)
    assert "settlement file" not in prompt_context(home, elsewhere, ASK_ALICE)
    session = Session(locs, str(elsewhere), "codex", "s")
    assert "pagefind" in call("memory_get", {"id": f"{shared.name}/bank/{bobs.name}"}, session)
    for wanted in (f"{shared.name}/bank/{alices.name}", alices.name):
        with pytest.raises(ToolError):
            call("memory_get", {"id": wanted}, session)
    brief = build_brief(locs, str(elsewhere), "codex").text
    assert "pagefind" in brief and "settlement" not in brief
    assert identity.read(str(shared)) == {str(mine): "github.com/alice/private", str(theirs): "github.com/bob/public"}
    assert "repository:" not in (shared / identity.IDENTITY_FILE).read_text()  # no one line holds for both


def test_an_identity_file_of_the_older_form_is_still_read(isolated_home: Path, tmp_path: Path) -> None:
    """A tree written before identities named their folders: its one line stands for the whole slug."""
    home = isolated_home
    pulled = home / ".superpi/agent/memories" / "--laptop-src-app--"
    (pulled / "bank").mkdir(parents=True)
    (pulled / "bank" / "2026-08-28T10-30-00-000Z--export.md").write_text(
        '---\nid: 2026-08-28T10-30-00-000Z\nts: "2026-08-28T10:30:00.000Z"\ntitle: "Nightly export"\ntags: []\n'
        'cwd: "/laptop/src/app"\nsession_id: "s-old"\nharness: codex\nturn_key: "codex:s-old:1"\n'
        f'source: autobank:codex\n---\n\n## Prompt\n\nExport\n\n## Actions\n\n(none)\n\n## Result\n\n{BOB}\n')
    (pulled / identity.IDENTITY_FILE).write_text(
        "# Project identity\n\nWhich repository this project's folder is.\n\nrepository: github.com/Bob/Public\n")
    here = repository(tmp_path / "work" / "public", "git@github.com:bob/public.git")
    assert "pagefind" in prompt_context(home, here, ASK_BOB)


@pytest.mark.parametrize("broken", ["config only", "another user's", "dotfiles at home"])
def test_only_a_repository_git_accepts_gives_an_identity(isolated_home: Path, broken: str) -> None:
    home = isolated_home
    acme, globex = home / "clients" / "acme", home / "clients" / "globex"
    if broken == "dotfiles at home":
        repository(home, "git@github.com:me/dotfiles.git")
        acme.mkdir(parents=True)
        globex.mkdir(parents=True)
    else:
        for folder in (acme, globex):
            repository(folder, "git@github.com:acme/app.git")
            if broken == "config only":
                for name in ("HEAD", "objects", "refs", "hooks", "info", "description"):
                    path = folder / ".git" / name
                    subprocess.run(["rm", "-rf", str(path)], check=True)
            else:
                subprocess.run(["chown", "-R", "12345:12345", str(folder)], check=True)
    bank(home, acme, "Reconcile refunds against the acquirer settlement file", ALICE)
    assert "settlement file" not in prompt_context(home, globex, ASK_ALICE)
    assert identity.repository_of(str(globex)) is None


@pytest.mark.parametrize(("listed", "trusted"), [
    (["*"], True), (["{globex}"], True), (["~/other/*"], True), (["*", ""], False), (["{home}/*"], False),
])
def test_another_users_repository_is_one_only_when_safe_directory_lists_it(isolated_home: Path, listed: list[str],
                                                                           trusted: bool) -> None:
    home = isolated_home
    acme, globex = home / "clients" / "acme", home / "other" / "globex"
    for folder in (acme, globex):
        repository(folder, "git@GitHub.com:Acme/App.git")
    subprocess.run(["chown", "-R", "12345:12345", str(globex)], check=True)  # git's "dubious ownership"
    bank(home, acme, "Reconcile refunds against the acquirer settlement file", ALICE)
    assert "settlement file" not in prompt_context(home, globex, ASK_ALICE)
    values = [value.format(globex=globex, home=home / "clients") for value in listed]
    (home / ".gitconfig").write_text("[user]\n\tname = me\n[safe]\n" + "".join(
        f'\tdirectory = "{value}"  # mine\n' for value in values))
    assert ("settlement file" in prompt_context(home, globex, ASK_ALICE)) is trusted


@pytest.mark.parametrize(("first", "second"), [
    ("git@github.com:Acme/App.git", "https://github.com/acme/app"),
    ("https://GitLab.com/Acme/Group/App.git", "git@gitlab.com:acme/group/APP"),
    ("git@bitbucket.org:Acme/App.git", "https://bitbucket.org/acme/app"),
    ("https://codeberg.org/Acme/App", "git@codeberg.org:acme/app.git"),
])
def test_hosts_that_ignore_case_join_every_spelling_and_others_only_the_hosts(isolated_home: Path, tmp_path: Path,
                                                                             first: str, second: str) -> None:
    home = isolated_home
    one, other = repository(tmp_path / "one" / "app", first), repository(tmp_path / "two" / "app", second)
    bank(home, one, "Reconcile refunds against the acquirer settlement file", ALICE)
    assert "settlement file" in prompt_context(home, other, ASK_ALICE)
    elsewhere = repository(tmp_path / "three" / "app", "git@git.example.com:Acme/App.git")
    bank(home, elsewhere, "Build the docs search index with pagefind", BOB)
    same_host = repository(tmp_path / "four" / "app", "https://GIT.EXAMPLE.COM/Acme/App")
    other_case = repository(tmp_path / "five" / "app", "https://git.example.com/acme/app")
    assert "pagefind" in prompt_context(home, same_host, ASK_BOB)
    assert "pagefind" not in prompt_context(home, other_case, ASK_BOB)


def run_cli(*argv: str, cwd: Path) -> dict:
    printed = io.StringIO()
    before = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(printed):
            assert cli.main(list(argv)) == 0
    finally:
        os.chdir(before)
    return json.loads(printed.getvalue())


def test_history_and_review_list_only_this_folders_entries_of_a_shared_slug(isolated_home: Path,
                                                                           tmp_path: Path) -> None:
    home = isolated_home
    mine, theirs = tmp_path / "code" / "my" / "app", tmp_path / "code" / "my-app"
    mine.mkdir(parents=True)
    theirs.mkdir(parents=True)
    own = bank(home, mine, "Reconcile refunds against the acquirer settlement file", ALICE)
    other = bank(home, theirs, "Build the docs search index with pagefind", BOB)
    locs = locations({"HOME": str(home)})
    for folder, text in ((mine, "Refunds settle a day after the acquirer file."), (theirs, "Pagefind runs last.")):
        call("memory_bank", {"text": text}, Session(locs, str(folder), "codex", f"s-{folder.name}"))
    slug = project_slug(str(mine))

    for where in ([], ["--project", str(mine)]):
        events = run_cli("history", *where, "--json", cwd=mine)["events"]
        entries = {e["entry"] for e in events if e["entry"]}
        assert f"{slug}/bank/{own.name}" in entries and f"{slug}/bank/{other.name}" not in entries
        assert len(entries) == 2  # its banked turn and its recorded learning
        items = run_cli("review", *where, "--json", cwd=mine)["items"]
        assert [i["excerpt"] for i in items] == ["Refunds settle a day after the acquirer file."]
    theirs_history = {e["entry"] for e in run_cli("history", "--json", cwd=theirs)["events"] if e["entry"]}
    assert f"{slug}/bank/{other.name}" in theirs_history and f"{slug}/bank/{own.name}" not in theirs_history
    everything = {e["entry"] for e in run_cli("history", "--all", "--json", cwd=mine)["events"] if e["entry"]}
    assert len(everything) == 4


def shared_world(home: Path, tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    """/x/my/app (alice/private) and /x/my-app (bob/public) sharing a slug, and a third checkout of bob/public;
    (alice's entry, her folder, the shared project folder, the third checkout)."""
    mine = repository(tmp_path / "x" / "my" / "app", "git@github.com:alice/private.git")
    theirs = repository(tmp_path / "x" / "my-app", "git@github.com:bob/public.git")
    alices = bank(home, mine, "Reconcile refunds against the acquirer settlement file", ALICE)
    bank(home, theirs, "Build the docs search index with pagefind", BOB)
    elsewhere = repository(tmp_path / "elsewhere" / "public", "https://github.com/bob/public")
    bank(home, elsewhere, "Note where the docs deploy goes", "The docs deploy goes to the pages branch. " * 6)
    return alices, mine, alices.parent.parent, elsewhere


def mcp_call(home: Path, cwd: Path, tool: str, arguments: dict) -> dict:
    """One memory tool through `harnesslink mcp-call`, as a harness's session in `cwd` calls it."""
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)}
    out = run_verb(env, "mcp-call", tool, stdin=json.dumps({"cwd": str(cwd), "arguments": arguments}), cwd=str(cwd))
    return json.loads(out.stdout)


def test_a_shared_slugs_files_that_name_no_folder_are_not_given_to_a_folder_that_only_shares_it(
        isolated_home: Path, tmp_path: Path) -> None:
    home = isolated_home
    alices, mine, shared, elsewhere = shared_world(home, tmp_path)
    (shared / "MAIN.md").write_text("# Project Memory\n\nAlice's settlement runbook lives in ops/refunds.md.\n"
                                    + (shared / "MAIN.md").read_text().split("\n", 2)[2])
    legacy = shared / "bank" / "2026-08-28T10-30-00-000Z--refund-cutoff.md"
    legacy.write_text('---\nid: 2026-08-28T10-30-00-000Z\nts: "2026-08-28T10:30:00.000Z"\ntitle: "Refund cutoff"\n'
                      f'tags: []\n---\n\n## Prompt\n\nCutoff\n\n## Result\n\n{ALICE}\n')
    files = ["MAIN.md", "IDENTITY.md", "bank/" + legacy.name,
             *(f"summaries/{day.name}" for day in (shared / "summaries").glob("*.md"))]
    for wanted in (*(f"{shared.name}/{rel}" for rel in files), str(shared / "MAIN.md"), legacy.name,
                   legacy.name.split("--")[0]):
        answer = mcp_call(home, elsewhere, "memory_get", {"id": wanted})
        assert answer.get("isError") and "settlement" not in json.dumps(answer), wanted
    assert "settlement" in mcp_call(home, mine, "memory_get", {"id": f"{shared.name}/bank/{alices.name}"})["text"]
    brief = mcp_call(home, mine, "context_brief", {})["text"]
    assert "ops/refunds.md" not in brief  # the shared MAIN.md's notes say not whose they are

    linking = tmp_path / "tools"
    linking.mkdir()
    bank(home, linking, "Note the tool list", "The tools are listed in tools.txt. " * 6)
    (home / ".superpi/agent/memories" / project_slug(str(linking)) / "linked.txt").write_text(
        str(tmp_path / "x" / "my-app") + "\n")
    assert "pagefind" in mcp_call(home, linking, "memory_search", {"query": ASK_BOB})["text"]
    for rel in ("MAIN.md", "IDENTITY.md", "bank/" + legacy.name):
        assert mcp_call(home, linking, "memory_get", {"id": f"{shared.name}/{rel}"}).get("isError"), rel


@pytest.mark.parametrize("case", ["ceiling", "empty HOME", "another port", "relative origin", "file origin",
                                  "GIT_DIR"])
def test_git_environment_and_origins_git_would_not_share_join_nothing(isolated_home: Path, tmp_path: Path,
                                                                      case: str) -> None:
    home = isolated_home
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)}
    origins = {"another port": ("https://git.example.com:3000/acme/app", "https://git.example.com:3001/acme/app"),
               "relative origin": ("../upstream", "../upstream"),
               "file origin": ("file:///srv/git/app.git", "file:///srv/git/app.git")}
    first, second = origins.get(case, ("git@github.com:acme/app.git", "git@github.com:acme/app.git"))
    one = repository(tmp_path / "one" / "app", first)
    other = tmp_path / "two" / "app"
    if case == "ceiling":
        repository(tmp_path / "two", second)
        other.mkdir()
        env["GIT_CEILING_DIRECTORIES"] = str(tmp_path / "two")
    elif case == "empty HOME":  # the password database names the home (the hook's own process sees it so)
        repository(home, second)
        other = home / "clients" / "acme"
        other.mkdir(parents=True)
        env["HOME"] = ""
        env["HARNESSLINK_HOME"] = str(home / ".superpi/agent")
    elif case == "GIT_DIR":
        other.mkdir(parents=True)
        env["GIT_DIR"], env["GIT_WORK_TREE"] = str(one / ".git"), str(other)
    else:
        repository(other, second)
    bank(home, one, "Reconcile refunds against the acquirer settlement file", ALICE)
    payload = json.dumps({"session_id": "fresh", "cwd": str(other), "prompt": ASK_ALICE})
    if case == "empty HOME":
        out = hook_with_password_home(env, home, payload)
    else:
        out = run_hook(env, "user-prompt-submit", "--harness", "codex", stdin=payload)
    assert out.returncode == 0
    assert b"settlement file" not in out.stdout


def hook_with_password_home(env: dict[str, str], home: Path, payload: str) -> subprocess.CompletedProcess:
    """The prompt hook's process, its user's home in the password database `home` (a test may not touch the
    real one): `pwd.getpwuid` answers so before the hook runs, and nothing else is changed."""
    code = ("import pwd, sys\n"
            "real = pwd.getpwuid\n"
            f"pwd.getpwuid = lambda uid: type('Entry', (), {{'pw_dir': {str(home)!r}}})()\n"
            "from harnesslink_core.hooks import process_main\n"
            "process_main(['user-prompt-submit', '--harness', 'codex'])\n")
    return subprocess.run([sys.executable, "-c", code], input=payload.encode(), capture_output=True, env=env,
                          timeout=30, cwd=str(home))
