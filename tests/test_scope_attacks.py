"""A project never sees another project's memory unless it links it, whatever an agent asks for:
`memory_get` reads only the session's scope, `all_projects` is not an agent's argument, a forget in
one project hides nothing of another, and nothing reached through a symlink is indexed or returned."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from harnesslink_core.control import forget
from harnesslink_core.errors import ToolError
from harnesslink_core.memory_tools import Session, call
from harnesslink_core.recall import index, query
from harnesslink_core.recall.brief import build_brief
from harnesslink_core.store.scope import project_slug
from memory_helpers import make_locs, write_entry

A, B = "/work/a", "/work/b"
SECRET_OF_B = "the staging database of project b lives on port 6543 behind the bastion"


@pytest.fixture
def world(tmp_path: Path):
    locs = make_locs(tmp_path)
    own = write_entry(locs, A, title="Fix the flaky checkout test", result="A retry around the payment mock.",
                      ts="2026-08-28T10:30:00.000Z", turn_id="a1")
    other = write_entry(locs, B, title="Where the staging database lives", result=SECRET_OF_B,
                        ts="2026-08-28T11:30:00.000Z", session_id="s-b", turn_id="b1")
    index.rebuild(locs)
    return locs, own, other


def get(locs, wanted: str, cwd: str = A) -> str:
    return call("memory_get", {"id": wanted}, Session(locs, cwd, "codex", "s"))


def test_memory_get_opens_this_projects_entries_by_every_id_form(world) -> None:
    locs, own, _ = world
    slug = project_slug(A)
    for wanted in (f"{slug}/bank/{own.name}", str(own), own.name, own.name.split("--")[0],
                   f"{slug}\\bank\\{own.name}", os.path.realpath(own)):
        assert "flaky checkout" in get(locs, wanted), wanted


@pytest.mark.parametrize("form", ["relative", "absolute", "traversal", "backslash", "main", "dotted", "name"])
def test_memory_get_never_opens_another_projects_files(world, form: str) -> None:
    locs, _, other = world
    a, b = project_slug(A), project_slug(B)
    (locs.memories / b / "MAIN.md").write_text(f"# Project b\n{SECRET_OF_B}\n")
    wanted = {"relative": f"{b}/bank/{other.name}", "absolute": str(other),
              "traversal": f"{a}/bank/../../{b}/bank/{other.name}", "backslash": f"{b}\\bank\\{other.name}",
              "main": f"{b}/MAIN.md", "dotted": f"./{b}/./bank/{other.name}", "name": other.name}[form]
    with pytest.raises(ToolError):
        get(locs, wanted)


def test_a_linked_project_is_in_scope(world) -> None:
    locs, _, other = world
    (locs.memories / project_slug(A) / "linked.txt").write_text(f"{B}\n")
    assert "port 6543" in get(locs, f"{project_slug(B)}/bank/{other.name}")


def test_all_projects_is_not_an_argument_an_agent_may_set(world) -> None:
    locs, _, _ = world
    session = Session(locs, A, "codex", "s")
    for value in (True, "true"):
        with pytest.raises(ToolError, match="unknown argument"):
            call("memory_search", {"query": "staging database port", "all_projects": value}, session)
    assert "6543" not in call("memory_search", {"query": "staging database bastion"}, session)


def test_a_forget_in_one_project_hides_nothing_of_another(world) -> None:
    locs, _, other = world
    copy = locs.memories / project_slug(A) / "bank" / other.name  # the same turn, copied into project a
    shutil.copy(other, copy)
    index.rebuild(locs)
    forget.forget(locs, forget.select(locs, ids=[f"{project_slug(A)}/bank/{other.name}"], projects=[project_slug(A)]))
    index.rebuild(locs)
    conn = index.connect(locs)
    try:
        hits = query.search(conn, ["staging", "database"], [project_slug(B)], limit=5)
    finally:
        conn.close()
    assert [h.path for h in hits] == [f"{project_slug(B)}/bank/{other.name}"]
    assert "staging database" in build_brief(locs, B, "codex").text.lower()
    assert "staging database" not in build_brief(locs, A, "codex").text.lower()


def test_a_symlink_in_a_bank_folder_is_neither_indexed_nor_returned(world, tmp_path: Path) -> None:
    locs, _, _ = world
    outside = tmp_path / "outside.md"
    outside.write_text("---\nid: 2026-08-29T00-00-00-000Z\nts: \"2026-08-29T00:00:00.000Z\"\ntitle: \"Leaked notes\"\n"
                       "---\n\n## Prompt\n\nleaked passphrase\n\n## Result\n\nthe leaked passphrase is horse battery\n")
    link = locs.memories / project_slug(A) / "bank" / "2026-08-29T00-00-00-000Z--leaked-notes.md"
    link.symlink_to(outside)
    index.rebuild(locs)
    for wanted in (link.name, "2026-08-29T00-00-00-000Z", f"{project_slug(A)}/bank/{link.name}", str(link)):
        with pytest.raises(ToolError):
            get(locs, wanted)
    session = Session(locs, A, "codex", "s")
    assert call("memory_search", {"query": "leaked passphrase horse battery"}, session).startswith("No memory entries")
    assert "Leaked notes" not in build_brief(locs, A, "codex").text
    linked_folder = locs.memories / project_slug(A) / "bank-elsewhere"
    linked_folder.mkdir()
    with pytest.raises(ToolError):
        get(locs, f"{project_slug(A)}/bank-elsewhere/../../{project_slug(B)}/MAIN.md")


def test_unicode_tags_are_kept_and_values_the_schema_forbids_are_refused(world) -> None:
    locs, _, _ = world
    session = Session(locs, A, "codex", "s")
    reply = call("memory_bank", {"text": "Release notes are written in the docs folder before tagging.",
                                 "tags": ["ünï", "日本", "Release Notes"]}, session)
    name = reply.split("/bank/", 1)[1].split(".md", 1)[0] + ".md"
    head = (locs.memories / project_slug(A) / "bank" / name).read_text().split("\n---\n", 1)[0]
    assert "ünï" in head and "日本" in head and "release-notes" in head
    with pytest.raises(ToolError):
        call("memory_search", {"query": "release notes", "limit": "3"}, session)
    with pytest.raises(ToolError):
        call("context_brief", {"budget": "5000"}, session)


MINE, THEIRS = "/home/me/code/my/app", "/home/me/code/my-app"  # one slug: --home-me-code-my-app--


def test_two_folders_that_share_a_slug_never_see_each_others_entries(tmp_path: Path) -> None:
    from harnesslink_core.commands import recall as recall_command
    from memory_helpers import make_env, run_hook

    assert project_slug(MINE) == project_slug(THEIRS)
    locs = make_locs(tmp_path)
    write_entry(locs, MINE, title="Invoice export streams rows through a server side cursor",
                result="The invoice export now streams rows through a server side cursor.", turn_id="m1")
    theirs = write_entry(locs, THEIRS, title="Invoice export retries the payment webhook",
                         result="The invoice export retries the payment webhook with backoff.",
                         ts="2026-08-28T12:00:00.000Z", session_id="s-2", turn_id="t1")
    index.rebuild(locs)
    env = make_env(tmp_path)
    import json

    out = run_hook(env, "user-prompt-submit", "--harness", "codex", stdin=json.dumps(
        {"session_id": "new", "cwd": MINE, "prompt": "how does the invoice export handle rows and the webhook"}))
    context = json.loads(out.stdout).get("hookSpecificOutput", {}).get("additionalContext", "")
    assert "server side cursor" in context and "retries the payment webhook" not in context
    session = Session(locs, MINE, "codex", "s")
    found = call("memory_search", {"query": "invoice export payment webhook"}, session)
    assert "retries the payment webhook" not in found
    assert "retries the payment webhook" not in build_brief(locs, MINE, "codex").text
    assert "retries the payment webhook" in build_brief(locs, THEIRS, "codex").text
    for wanted in (theirs.name, f"{project_slug(THEIRS)}/bank/{theirs.name}"):
        with pytest.raises(ToolError):
            get(locs, wanted, cwd=MINE)
    assert "retries the payment webhook" in get(locs, theirs.name, cwd=THEIRS)

    class Args:
        query, cwd, all, json, k, as_of, known_at = ["invoice", "export", "webhook"], MINE, False, True, 5, None, None
    import contextlib
    import io

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        recall_command.run(Args, locs)
    assert "retries the payment webhook" not in printed.getvalue()


def test_a_forget_in_one_of_two_folders_that_share_a_slug_forgets_nothing_of_the_other(tmp_path: Path) -> None:
    locs = make_locs(tmp_path)
    theirs = write_entry(locs, THEIRS, title="Invoice export retries the payment webhook",
                         result="The invoice export retries the payment webhook with backoff.", turn_id="t1")
    with pytest.raises(ToolError):
        call("memory_forget", {"ids": [theirs.name]}, Session(locs, MINE, "codex", "s"))
    assert theirs.exists()
    assert not forget.select(locs, query="invoice export payment webhook", projects=[project_slug(MINE)],
                             folders={project_slug(MINE): MINE})
