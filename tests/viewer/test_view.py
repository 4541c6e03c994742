"""`harnesslink view`: a local, read-only page over the memory, under a private token.

The server runs for real (a socket on 127.0.0.1) in these tests, in a thread for the pages and as
the `harnesslink view` process for its lifecycle; the browser test drives Debian's Chromium."""

from __future__ import annotations

import ast
import fnmatch
import hashlib
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import tomllib
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest

from harnesslink_core.commands import view
from harnesslink_core.recall.brief import build_brief
from harnesslink_core.store.injected import Given
from memory_helpers import REPO, make_env, make_locs, write_entry

SHOP, LIB = "/code/shop", "/code/lib"
SHOP_SLUG, LIB_SLUG = "--code-shop--", "--code-lib--"
HOSTILE_TITLE = "<script>window.pwned=1</script> hostile title"
HOSTILE_RESULT = "</pre><script>window.pwned=2</script><img src=x onerror=\"window.pwned=3\">"
CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = REPO / ".ci" / "artifacts"


def seed(tmp_path: Path):
    """Two linked projects: a checkout fix, a hostile entry, a run of routine days in three harnesses."""
    locs = make_locs(tmp_path)
    fix = write_entry(locs, SHOP, title="Fix the checkout rounding bug", prompt="why is the checkout total off by a cent?",
                      actions=[("Bash", {"command": "pytest tests/test_cart.py"})],
                      result="Rounded cents with Decimal in applyDiscount; the cart tests pass.",
                      ts="2026-11-20T10:00:00.000Z", harness="codex", session_id="s-fix")
    hostile = write_entry(locs, SHOP, title=HOSTILE_TITLE, prompt="<img src=x onerror=alert(1)> rounding probe",
                          result=HOSTILE_RESULT, ts="2026-11-21T09:00:00.000Z", harness="claude-code", session_id="s-h")
    for day in range(1, 10):
        write_entry(locs, SHOP, title=f"Routine change {day}", result="docs only",
                    ts=f"2026-11-{day:02d}T12:00:00.000Z", harness=("pi", "omp", "codex")[day % 3], session_id=f"s-{day}")
    write_entry(locs, LIB, title="Library release notes", result="Released 2.3.1", ts="2026-11-25T12:00:00.000Z",
                harness="pi", session_id="s-lib")
    (locs.memories / SHOP_SLUG / "linked.txt").write_text(LIB + "\n")
    return locs, fix, hostile


def entry_id(path: Path) -> str:
    return f"{path.parent.parent.name}/bank/{path.name}"


class Served:
    """`view.make_server` on a free loopback port, serving from a thread."""

    def __init__(self, locs, start: str | None = None) -> None:
        self.token = "tok-" + "x" * 28
        self.server = view.make_server(locs, self.token, 0, start)
        self.port = self.server.server_port
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def get(self, path: str, *, method: str = "GET", token: bool = True, host: str | None = None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            conn.putrequest(method, (f"/{self.token}" if token else "") + path, skip_host=True)
            conn.putheader("Host", host or f"127.0.0.1:{self.port}")
            conn.endheaders()
            response = conn.getresponse()
            return response.status, response.read().decode("utf-8", "replace"), dict(response.getheaders())
        finally:
            conn.close()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    for key, value in make_env(tmp_path).items():
        monkeypatch.setenv(key, value)
    locs, fix, hostile = seed(tmp_path)
    server = Served(locs, SHOP)
    yield server, locs, fix, hostile
    server.close()


def pages(fix: Path) -> list[str]:
    return ["/", f"/p/{SHOP_SLUG}", f"/p/{LIB_SLUG}", "/search?q=checkout+rounding", f"/search?q=rounding&p={SHOP_SLUG}",
            f"/entry/{SHOP_SLUG}/bank/{quote(fix.name)}", f"/p/{SHOP_SLUG}/brief", f"/p/{SHOP_SLUG}/brief?harness=codex",
            "/given", f"/given?p={SHOP_SLUG}", "/static/view.css"]


def test_every_page_answers_under_its_token(served) -> None:
    server, _, fix, _ = served
    for path in pages(fix):
        status, body, headers = server.get(path)
        assert status == 200, (path, body[:300])
        assert headers["Cache-Control"] == "no-store" and "default-src 'none'" in headers["Content-Security-Policy"]


def test_a_request_without_the_token_is_refused(served) -> None:
    server, _, fix, _ = served
    for path in [*pages(fix), "", "/static/view.css"]:
        assert server.get(path, token=False)[0] == 404, path
        assert server.get(f"/{'y' * len(server.token)}{path}", token=False)[0] == 404, path
    status, body, _ = server.get("/static/view.css", token=False)
    assert (status, body) == (404, "not found\n")
    assert server.get("/", token=False, host=None)[0] == 404
    assert server.get(f"/{server.token[:-1]}/", token=False)[0] == 404  # one character short


def test_a_request_naming_another_host_is_refused(served) -> None:
    """A page on another site that rebinds its name to 127.0.0.1 sends its own Host: refused even with the token."""
    server, *_ = served
    assert server.get("/", host=f"attacker.example:{server.port}")[0] == 404
    assert server.get("/", host=f"localhost:{server.port}")[0] == 200


def snapshot(locs) -> dict[str, str]:
    """Every file of the memory tree and the ledger, by content."""
    files = [p for p in locs.memories.rglob("*") if p.is_file()]
    if Path(locs.ledger_path).exists():
        files.append(Path(locs.ledger_path))
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}


def test_no_request_changes_the_memory(served) -> None:
    server, locs, fix, _ = served
    Given(locs, "codex", "s-given").add([entry_id(fix)])
    before = snapshot(locs)
    for path in pages(fix):
        assert server.get(path)[0] == 200
        for method in ("POST", "PUT", "DELETE", "PATCH"):
            assert server.get(path, method=method)[0] == 405, (method, path)
    assert snapshot(locs) == before


def test_hostile_entry_text_is_escaped_on_every_page(served) -> None:
    server, locs, _, hostile = served
    Given(locs, "claude-code", "s-given").add([entry_id(hostile)])
    shown = [f"/p/{SHOP_SLUG}", f"/entry/{SHOP_SLUG}/bank/{quote(hostile.name)}", "/search?q=rounding+probe",
             "/given", f"/p/{SHOP_SLUG}/brief", "/search?q=%3Cscript%3Ewindow.pwned%3D9%3C%2Fscript%3E+rounding"]
    for path in shown:
        status, body, _ = server.get(path)
        assert status == 200, path
        assert "<script" not in body.lower() and "<img" not in body.lower(), path
        assert "&lt;script&gt;" in body, path
    body = server.get(f"/entry/{SHOP_SLUG}/bank/{quote(hostile.name)}")[1]
    assert "&lt;/pre&gt;&lt;script&gt;window.pwned=2&lt;/script&gt;" in body


def test_a_hostile_folder_name_is_escaped_and_its_project_still_opens(served) -> None:
    server, locs, *_ = served
    folder = '/code/"><script>x()</script>'
    write_entry(locs, folder, title="A folder named to break out", result="fine", ts="2026-11-22T09:00:00.000Z")
    slug = next(p.name for p in locs.memories.iterdir() if "script" in p.name)
    for path in ["/", f"/p/{quote(slug, safe='')}", f"/search?q=folder+named+break&p={quote(slug, safe='')}"]:
        status, body, _ = server.get(path)
        assert status == 200 and "<script" not in body and "&quot;&gt;&lt;script&gt;x()" in body, path
    assert "A folder named to break out" in server.get(f"/p/{quote(slug, safe='')}")[1]


def test_search_finds_what_recall_finds(served, capsys: pytest.CaptureFixture[str]) -> None:
    """The page runs the memory tools' recall: the same entries, in the same order, over the same scope."""
    from harnesslink_core.main import main

    server, _, fix, _ = served
    assert main(["recall", "checkout", "rounding", "--cwd", SHOP, "--json", "-k", "20"]) == 0
    wanted = [Path(m["path"]).name for m in json.loads(capsys.readouterr().out)["matches"]]
    body = server.get(f"/search?q=checkout+rounding&p={SHOP_SLUG}")[1]
    found = [m.rsplit("/", 1)[1] for m in re.findall(r'class="entry" href="([^"]+)"', body)]
    assert found == [quote(name) for name in wanted] and quote(fix.name) in found
    assert "Library release notes" in server.get(f"/search?q=library+release+notes&p={SHOP_SLUG}")[1]  # linked


def test_search_marks_a_superseded_entry_and_shows_it_below_the_current_one(served) -> None:
    from harnesslink_core.main import main

    server, locs, fix, _ = served
    newer = write_entry(locs, SHOP, title="Checkout rounding now happens in the payment service",
                        result="The cart no longer rounds cents itself.", ts="2026-11-26T10:00:00.000Z")
    assert main(["supersede", "--cwd", SHOP, "--", entry_id(fix), entry_id(newer)]) == 0
    body = server.get(f"/search?q=checkout+rounding&p={SHOP_SLUG}")[1]
    assert body.index(quote(newer.name)) < body.index(quote(fix.name))
    assert f"superseded by {entry_id(newer)} (" in body


def test_search_in_a_project_does_not_reach_an_unlinked_one(served) -> None:
    server, *_ = served
    body = server.get(f"/search?q=checkout+rounding&p={LIB_SLUG}")[1]
    assert "Nothing matches" in body and "Fix the checkout" not in body
    assert "Fix the checkout rounding bug" in server.get("/search?q=checkout+rounding")[1]  # every project


def test_the_brief_page_shows_the_brief_a_session_gets(served) -> None:
    import html

    server, locs, *_ = served
    body = server.get(f"/p/{SHOP_SLUG}/brief?harness=codex")[1]
    brief = build_brief(locs, SHOP, "codex").text
    assert brief and html.escape(brief, quote=False) in body.replace("&#039;", "'").replace("&quot;", '"')
    assert server.get(f"/p/{SHOP_SLUG}/brief?harness=nope")[0] == 404


def test_the_given_page_lists_what_each_session_was_given(served) -> None:
    server, locs, fix, hostile = served
    Given(locs, "codex", "s-codex-1").add([entry_id(fix)])
    Given(locs, "pi", "s-pi-1").add([entry_id(fix), entry_id(hostile)])
    body = server.get("/given")[1]
    assert "s-codex-1" in body and "s-pi-1" in body
    assert body.count("Fix the checkout rounding bug") == 2
    assert "Nothing given yet" in server.get(f"/given?p={LIB_SLUG}")[1]


def test_the_given_page_says_which_entries_each_session_opened(served) -> None:
    """What the pass recorded as opened (a memory_get of the entry, a read of its file): per entry, and in all."""
    from harnesslink_core.store.ledger import open_ledger

    server, locs, fix, hostile = served
    Given(locs, "codex", "s-codex-1").add([entry_id(fix)])
    Given(locs, "pi", "s-pi-1").add([entry_id(fix), entry_id(hostile)])
    ledger = open_ledger(locs)
    try:
        ledger.note_opened("pi", "s-pi-1", [entry_id(fix)], 1_790_000_000.0)
    finally:
        ledger.close()
    body = server.get("/given")[1]
    assert "3 given, 1 opened (33 %)" in body
    assert body.count('class="opened"') == 1 and body.count('class="unopened"') == 2
    pi = body.split("s-pi-1", 1)[1].split("</section>", 1)[0].split("<li>")[1:]
    assert [("Fix the checkout" in li, 'class="opened"' in li) for li in pi] in (
        [(True, True), (False, False)], [(False, False), (True, True)])


def test_the_timeline_lists_a_projects_entries_newest_first(served) -> None:
    server, *_ = served
    body = server.get(f"/p/{SHOP_SLUG}")[1]
    titles = re.findall(r'class="entry" href="[^"]+">([^<]+)</a>', body)
    assert titles[:2] == ["&lt;script&gt;window.pwned=1&lt;/script&gt; hostile title", "Fix the checkout rounding bug"]
    assert titles[-1] == "Routine change 1" and len(titles) == 11
    assert "--code-lib--" in body.split("<dt>linked</dt>")[1].split("</dd>")[0]


def test_the_chart_counts_entries_per_day_per_harness(served) -> None:
    server, *_ = served
    body = server.get(f"/p/{SHOP_SLUG}")[1]
    tips = re.findall(r"<rect class=\"bar\"[^>]*><title>([^<]+)</title>", body)
    assert "2026-11-20 · codex: 1" in tips and "2026-11-21 · claude-code: 1" in tips and len(tips) == 11
    assert "codex 4" in body and "pi 3" in body and "omp 3" in body  # the legend's totals


def test_an_entry_outside_the_bank_or_behind_a_link_is_not_shown(served, tmp_path: Path) -> None:
    server, locs, fix, _ = served
    secret = tmp_path / "secret.md"
    secret.write_text("top secret")
    (locs.memories / SHOP_SLUG / "bank" / "link.md").symlink_to(secret)
    for path in [f"/entry/{SHOP_SLUG}/bank/link.md", f"/entry/{SHOP_SLUG}/bank/..%2F..%2F..%2Fsecret.md",
                 f"/entry/{SHOP_SLUG}/bank/missing.md", f"/entry/..%2F{SHOP_SLUG}/bank/{quote(fix.name)}",
                 f"/entry/{SHOP_SLUG}/bank/.hidden.md", "/static/..%2F..%2Fcommands%2Fview.py", "/p/nope"]:
        status, body, _ = server.get(path)
        assert status == 404 and "top secret" not in body, path


def test_a_forgotten_entry_is_not_shown(served) -> None:
    from harnesslink_core.main import main

    server, _, fix, _ = served
    assert main(["forget", str(fix), "--yes"]) == 0 and not fix.exists()
    assert server.get(f"/entry/{SHOP_SLUG}/bank/{quote(fix.name)}")[0] == 404
    assert "Fix the checkout rounding bug" not in server.get(f"/p/{SHOP_SLUG}")[1]


def test_the_server_listens_on_loopback_only(served) -> None:
    server, *_ = served
    assert server.server.server_address[0] == "127.0.0.1"


def test_the_browser_is_opened_through_a_private_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A command line is readable by every local user (`ps`): the token goes in a 0600 file instead."""
    import webbrowser

    opened: list[str] = []
    launched = threading.Event()
    monkeypatch.setattr(webbrowser, "open", lambda url: opened.append(url) or launched.set() or True)
    url = "http://127.0.0.1:5/secret-token/"
    folder = view._open_browser(url)
    assert launched.wait(10)
    page = Path(urlsplit(opened[0]).path)
    assert "secret-token" not in opened[0] and page.parent == Path(folder)
    assert page.stat().st_mode & 0o077 == 0 and Path(folder).stat().st_mode & 0o077 == 0
    assert url in page.read_text()
    view._remove(folder)
    assert not Path(folder).exists()


# --- the command, as a process --------------------------------------------------------------------------------

def start_view(tmp_path: Path, *args: str) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "harnesslink_core.main", "view", *args], env=make_env(tmp_path),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    line = proc.stdout.readline()
    match = re.search(r"http://127\.0\.0\.1:\d+/\S+", line)
    if not match:
        proc.kill()
        raise AssertionError(f"no URL printed: {line!r} {proc.stderr.read()}")
    return proc, match.group(0)


def listening_addresses(port: int) -> list[str]:
    """The local addresses listening on `port` (from /proc/net/tcp and tcp6)."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            local, state = line.split()[1], line.split()[3]
            address, _, hex_port = local.partition(":")
            if state == "0A" and int(hex_port, 16) == port:
                found.append(address)
    return found


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_view_prints_a_url_serves_it_and_leaves_no_listener(tmp_path: Path, stop: signal.Signals) -> None:
    seed(tmp_path)
    proc, url = start_view(tmp_path, "--no-open", "--project", SHOP)
    try:
        parts = urlsplit(url)
        assert parts.path.endswith(f"/p/{SHOP_SLUG}")
        if Path("/proc/net/tcp").exists():
            assert listening_addresses(parts.port) == ["0100007F"]  # 127.0.0.1, nothing else
        conn = http.client.HTTPConnection("127.0.0.1", parts.port, timeout=10)
        conn.request("GET", parts.path)
        response = conn.getresponse()
        assert response.status == 200 and "Fix the checkout rounding bug" in response.read().decode()
        conn.request("GET", f"/p/{SHOP_SLUG}")
        refused = conn.getresponse()
        assert refused.status == 404 and refused.read() == b"not found\n"
        conn.close()
        proc.send_signal(stop)
        assert proc.wait(timeout=15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", parts.port), timeout=5).close()
    assert "stopped" in proc.stdout.read()
    assert proc.stderr.read() == ""  # nothing of the requests (nor their token) is logged


def test_without_bottle_the_verb_says_how_to_get_it(locs, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from harnesslink_core.main import main

    monkeypatch.setitem(sys.modules, "bottle", None)  # what an environment without it gives: ImportError
    assert main(["view", "--no-open"]) == 1
    assert "needs the `bottle` package" in capsys.readouterr().err


# --- what the verb brings in --------------------------------------------------------------------------------

def test_only_the_view_verb_imports_bottle() -> None:
    package = REPO / "harnesslink_core"
    importers = set()
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            if any(name.split(".")[0] == "bottle" for name in names):
                importers.add(path.relative_to(package).as_posix())
    assert importers == {"commands/view.py"}


def test_the_templates_and_static_files_are_package_data() -> None:
    """A non-editable install (install.py's) carries every file the page needs."""
    settings = tomllib.loads((REPO / "pyproject.toml").read_text())
    globs = settings["tool"]["setuptools"]["package-data"]["harnesslink_core"]
    assets = [p.relative_to(REPO / "harnesslink_core").as_posix() for p in (REPO / "harnesslink_core" / "viewer").rglob("*")
              if p.is_file()]
    assert assets and [a for a in assets if not any(fnmatch.fnmatch(a, g) for g in globs)] == []
    assert "bottle" in " ".join(settings["project"]["dependencies"])


# --- in a real browser ----------------------------------------------------------------------------------------

BROWSER_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.mark.browser
@pytest.mark.skipif(not os.access(CHROMIUM, os.X_OK), reason=f"no Chromium at {CHROMIUM}: apt-get install chromium")
def test_in_a_browser_search_finds_an_entry_and_opens_it_in_full(tmp_path: Path) -> None:
    from playwright import sync_api  # the test extra's: a missing one fails, it does not skip

    seed(tmp_path)
    proc, url = start_view(tmp_path, "--no-open")
    console: list[str] = []
    try:
        with sync_api.sync_playwright() as pw:
            browser = pw.chromium.launch_persistent_context(
                str(tmp_path / "chromium-profile"), executable_path=CHROMIUM, headless=True, args=BROWSER_FLAGS,
                viewport={"width": 1100, "height": 900})
            try:
                page = browser.new_page()
                page.on("console", lambda message: console.append(message.text))
                page.goto(url)
                assert page.title() == "Memory · HarnessLink memory"
                assert page.locator("table.projects tbody tr").count() == 2
                assert page.locator("figure.chart rect.bar").count() == 12  # shop's 11 days and lib's one
                page.click(f"table.projects a[title='{SHOP_SLUG}']")  # named by its folder, the slug its title
                page.fill("input[name=q]", "checkout rounding")
                page.click("form.search button")
                page.wait_for_selector("ol.hits")
                assert page.locator("ol.hits a.entry").first.inner_text() == "Fix the checkout rounding bug"
                page.click("ol.hits a.entry >> text=Fix the checkout rounding bug")
                page.wait_for_selector("h1.entry-title")
                assert page.inner_text("h1.entry-title") == "Fix the checkout rounding bug"
                assert "Rounded cents with Decimal in applyDiscount" in page.inner_text("pre[data-section=result]")
                assert "pytest tests/test_cart.py" in page.inner_text("pre[data-section=actions]")
                page.click("details summary")
                assert page.locator("details pre.raw").inner_text().startswith("---\nid: ")
                # the stylesheet loaded under the token (the page's own CSP lets only it in)
                assert page.evaluate("getComputedStyle(document.querySelector('header')).borderBottomStyle") == "solid"
                ARTIFACTS.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(ARTIFACTS / "view-entry.png"), full_page=True)

                page.goto(url + f"p/{SHOP_SLUG}")
                page.click("ol.timeline a.entry >> nth=0")  # the hostile entry, newest
                page.wait_for_selector("h1.entry-title")
                assert page.inner_text("h1.entry-title") == HOSTILE_TITLE  # shown as text
                assert HOSTILE_RESULT in page.inner_text("pre[data-section=result]")
                assert page.evaluate("typeof window.pwned") == "undefined"  # and never run
                assert page.locator("main script, main img").count() == 0
                page.goto(url + f"p/{SHOP_SLUG}")
                page.screenshot(path=str(ARTIFACTS / "view-project.png"), full_page=True)
            finally:
                browser.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=15)
    assert not [line for line in console if "Content Security Policy" in line], console


def test_a_page_that_fails_says_so_in_one_line_and_logs_the_traceback(served, monkeypatch: pytest.MonkeyPatch) -> None:
    from harnesslink_core.recall import overview

    server, locs, *_ = served

    def broken(conn):
        raise RuntimeError("the index fell over")

    monkeypatch.setattr(overview, "projects", broken)
    status, body, _ = server.get("/")
    assert status == 500 and "the index fell over" in body and "Traceback" not in body
    logged = Path(locs.log_file).read_text()
    assert "harnesslink view: /: " in logged and "Traceback" in logged and server.token not in logged
