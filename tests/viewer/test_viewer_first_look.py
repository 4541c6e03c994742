"""The viewer's first look, and a plugin's failed setup tried again with a backoff.

The first page names each project by its folder (and its repository, as IDENTITY.md records it), not by its
slug, and lists the newest entries across the projects it shows: none from a project folder that is a link
out of the tree, as the rest of the viewer. Driven in Debian's Chromium through the `harnesslink view` process.

A plugin whose private venv cannot be made (here: a plugin folder pip cannot build) does not start the setup
again on every hook call, but after 1 minute, then 5, then 30: through the launcher, as the harness calls it."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harnesslink_core.store import identity
from harnesslink_core.store.scope import project_slug
from harnesslink_core.harnesses.claude_code import plugin as claude_plugin
from memory_helpers import REPO, eventually, make_env, make_locs, write_entry
from viewer.test_view import BROWSER_FLAGS, CHROMIUM, start_view

SHOP, TOOLS, ELSEWHERE = "/home/dev/projects/viewshop", "/home/dev/code/devtools", "/home/dev/elsewhere/linked"
REPOSITORY = "github.com/acme/viewshop"
NEWEST = "Ship the gift card checkout"


def seed(tmp_path: Path) -> None:
    """Two projects, the shop a repository; a third whose project folder is a link out of the tree, newest of all."""
    locs = make_locs(tmp_path)
    write_entry(locs, SHOP, title="Fix the cart rounding", result="Decimal cents", ts="2026-11-20T10:00:00.000Z",
                harness="codex", session_id="s-1")
    write_entry(locs, SHOP, title=NEWEST, result="gift cards pay", ts="2026-11-28T10:00:00.000Z", session_id="s-2")
    write_entry(locs, TOOLS, title="Pin the linter version", result="ruff pinned", ts="2026-11-25T10:00:00.000Z",
                harness="pi", session_id="s-3")
    identity.record(str(locs.memories / project_slug(SHOP)), SHOP, REPOSITORY)
    outside = tmp_path / "outside"
    outside.mkdir()
    write_entry(make_locs(outside), ELSEWHERE, title="Behind a link", result="not ours", ts="2026-11-30T10:00:00.000Z")
    os.symlink(make_locs(outside).memories / project_slug(ELSEWHERE), locs.memories / project_slug(ELSEWHERE))


@pytest.mark.browser
@pytest.mark.skipif(not os.access(CHROMIUM, os.X_OK), reason=f"no Chromium at {CHROMIUM}: apt-get install chromium")
def test_the_first_page_names_projects_by_folder_and_shows_the_newest_entries(tmp_path: Path) -> None:
    from playwright import sync_api

    seed(tmp_path)
    proc, url = start_view(tmp_path, "--no-open")
    try:
        with sync_api.sync_playwright() as pw:
            browser = pw.chromium.launch_persistent_context(
                str(tmp_path / "chromium-profile"), executable_path=CHROMIUM, headless=True, args=BROWSER_FLAGS)
            try:
                page = browser.new_page()
                page.goto(url)
                projects = page.locator("table.projects a.project")
                assert sorted(projects.all_inner_texts()) == ["devtools", "viewshop"]
                shop = page.locator("table.projects tr", has=page.locator("a.project", has_text="viewshop"))
                assert shop.locator("small.repository").inner_text() == REPOSITORY
                assert shop.locator("small.folder").inner_text() == SHOP
                assert project_slug(SHOP) not in page.inner_text("main"), "the slug is no name a person knows"

                newest = page.locator("ol.newest li")
                assert newest.count() == 3, newest.all_inner_texts()  # across both projects, none behind the link
                assert newest.first.locator("a.entry").inner_text() == NEWEST
                assert newest.first.locator("a.project").inner_text() == "viewshop"
                assert "Pin the linter version" in newest.nth(1).inner_text()
                assert "Behind a link" not in page.inner_text("main")

                projects.filter(has_text="viewshop").click()
                page.wait_for_selector("ol.timeline")
                assert page.inner_text("main h1") == "viewshop" and REPOSITORY in page.inner_text("dl.facts")
                page.go_back()

                newest.first.locator("a.entry").click()
                page.wait_for_selector("h1.entry-title")
                assert page.inner_text("h1.entry-title") == NEWEST
            finally:
                browser.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=15)


# --- a failed setup, tried again with a backoff ---------------------------------------------------------------


def unbuildable_plugin(tmp_path: Path) -> Path:
    """A plugin folder with the launcher and the package but no pyproject.toml: pip cannot install it."""
    root = tmp_path / "plugin"
    root.mkdir()
    shutil.copy(REPO / "plugins" / "harnesslink" / "launch.py", root / "launch.py")
    (root / "harnesslink_core").symlink_to(REPO / "harnesslink_core")
    return root


def hook(env: dict[str, str], root: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-I", "-S", str(root / "launch.py"), "hook", "user-prompt-submit"],
                          input="{}", env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == "", done
    return done


def setups_started(log: Path) -> int:
    return log.read_text(encoding="utf-8").count(": making ") if log.exists() else 0


def setups_failed(log: Path) -> int:
    lines = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    return sum(line.startswith("failed") for line in lines)


def test_a_failed_plugin_setup_is_tried_again_after_1_then_5_minutes(tmp_path: Path) -> None:
    root, data = unbuildable_plugin(tmp_path), tmp_path / "data"
    env = {**make_env(tmp_path), "CLAUDE_PLUGIN_ROOT": str(root), "CLAUDE_PLUGIN_DATA": str(data)}
    env.pop("PYTHONPATH")
    plugin = claude_plugin.Plugin(str(root), str(data))
    log = data / "setup.log"

    def failed_after(hook_calls: int) -> None:
        for _ in range(hook_calls):
            hook(env, root)
        time.sleep(2)  # a setup a call started has taken its lock and said so by now
        assert eventually(settled, seconds=240, every=0.2)

    def settled() -> bool:  # every setup started has ended, in a failure
        return setups_failed(log) == setups_started(log) and not claude_plugin._setup_running(plugin)

    def age_failure(seconds: float) -> None:
        when = os.stat(plugin.failed).st_mtime - seconds
        os.utime(plugin.failed, (when, when))

    failed_after(1)
    assert setups_started(log) == 1
    failed_after(3)
    assert setups_started(log) == 1, "a failed setup is not started again on every hook call"
    said = hook(env, root).stderr
    assert "could not be made" in said and "next try is in 1 min" in said, said

    age_failure(61)
    failed_after(1)
    assert setups_started(log) == 2, "after a minute it is tried again"
    age_failure(61)
    failed_after(2)
    assert setups_started(log) == 2, "the second failure waits 5 minutes"
    age_failure(300)
    failed_after(1)
    assert setups_started(log) == 3
    assert "next try is in 30 min" in hook(env, root).stderr
