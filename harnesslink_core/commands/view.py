"""`harnesslink view [--project DIR] [--no-open]`: a local, read-only web page over the memory.

It shows the projects (and the ones each links), a timeline of each project's entries, one entry
in full, a search through the same recall the memory tools use, the brief a session would start
with, what the prompt hook gave each session, and a chart of entries per day per harness.

Who may read it: the server listens on 127.0.0.1 only, on a port the system picks, and answers
only under a random token (`http://127.0.0.1:PORT/TOKEN/`); any other path, a static file's
included, gets a bare 404, and so does a request naming another host (a DNS-rebinding page).
The browser is opened through a private redirect file, so the token is never on a command line
that other local users can read in the process list. Every page is a GET (any other method is
refused), reads the Markdown tree and the ledger without writing them, and brings only the
search index, a cache of the tree, up to date. Templates escape whatever they print: entries
hold text from anywhere. No local client can stall the server (`loopback`: deadlines, bounds, a cap on
connections), and it stops with the command (Ctrl-C, SIGTERM) within a second, closing its socket.

bottle (one module, no dependencies) is imported by this verb alone, when it runs: the hooks never
load it, and the other verbs (which import every verb's module for their parser) only this module.
"""

from __future__ import annotations

import argparse
import functools
import os
import signal
import stat
import sys
import threading
import time
from pathlib import Path
from urllib.parse import quote, urlencode

from .. import errors, log
from ..harnesses import registry
from ..paths import Locations
from ..recall import index, overview
from ..recall.ask import ask
from ..recall.brief import DEFAULT_BUDGET, build_brief
from ..recall.pull import query_terms
from ..safefile import is_regular, read_regular
from ..store import trust
from ..store.entries import MAX_ENTRY_BYTES, parse_entry
from ..store.injected import given_log, opened_log
from ..store.ledger import tombstones
from ..store.scope import (all_projects, folder_key, holds_whole, is_safe_slug, linked_projects, project_slug,
                           scope_folders)
from .options import whole_number

ASSETS = Path(__file__).resolve().parent.parent / "viewer"
TIMELINE_PAGE = 100
NEWEST_ENTRIES = 15  # on the first page, across the projects
SEARCH_LIMIT = 20
CHART_DAYS = 60
HARNESSES = registry.WIRED  # a brief is for a harness that starts sessions
COLOURS = registry.COLOURS
OTHER_COLOUR = "#8c959f"
# the page's own stylesheet and forms, nothing else: no script runs, whatever an entry holds
POLICY = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
HEADERS = [
    ("Content-Security-Policy", POLICY),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
    ("Cache-Control", "no-store"),
]


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "view", help="Look at the memory in your browser: a local, read-only page (127.0.0.1, a private token)")
    parser.add_argument("--project", metavar="DIR", default=None, help="start on this folder's project")
    parser.add_argument("--no-open", action="store_true", help="print the address only; do not open a browser")
    parser.add_argument("--port", type=whole_number(0, 65535), default=0,
                        help="the port on 127.0.0.1 (default: a free one)")


def run(args: argparse.Namespace, locs: Locations) -> int:
    try:
        import bottle  # noqa: F401
    except ImportError:
        print("harnesslink view: needs the `bottle` package, which install.py puts in the private environment; "
              "run `python install.py` again (or `pip install bottle`)", file=sys.stderr)
        return 1
    import secrets

    start = os.path.abspath(os.path.expanduser(args.project)) if args.project else None
    token = secrets.token_urlsafe(24)
    server = make_server(locs, token, args.port, start)
    url = f"http://127.0.0.1:{server.server_port}/{token}/"
    if start:
        url += "p/" + quote(project_slug(start), safe="")
    stop = threading.Event()
    # Ctrl-C and SIGTERM only raise the flag, which this thread polls; Ctrl-C works even where a shell
    # started us with SIGINT ignored.
    previous = {number: signal.signal(number, lambda *_: stop.set()) for number in (signal.SIGINT, signal.SIGTERM)}
    serving = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True)
    serving.start()
    opener = None
    try:
        print(f"HarnessLink memory: {url}", flush=True)
        print("Read-only, on this machine only; Ctrl-C stops it.", flush=True)
        if not args.no_open:
            opener = _open_browser(url)
        while not stop.wait(0.1):
            pass
    finally:
        server.shutdown()  # at once: a page still being rendered is not waited for
        server.server_close()
        serving.join()
        for number, handler in previous.items():
            signal.signal(number, handler)
        if opener:
            _remove(opener)
    print("stopped", flush=True)
    return 0


def _open_browser(url: str) -> str | None:
    """Open `url` through a redirect file only this user can read (a command line is public); its folder."""
    import html
    import tempfile
    import webbrowser

    folder = tempfile.mkdtemp(prefix="harnesslink-view-")  # 0700
    page = os.path.join(folder, "open.html")
    fd = os.open(page, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        target = html.escape(url, quote=True)
        f.write(f'<!doctype html><meta http-equiv="refresh" content="0;url={target}">'
                f'<a href="{target}">HarnessLink memory</a>\n')

    def launch() -> None:  # in a thread: a console browser (no display) would hold the terminal
        if not webbrowser.open("file://" + quote(page)):
            print("(no browser found: open the address above)", flush=True)

    threading.Thread(target=launch, daemon=True).start()
    return folder


def _remove(folder: str) -> None:
    import shutil

    shutil.rmtree(folder, ignore_errors=True)


# --- the server -------------------------------------------------------------------------------------------------

def make_server(locs: Locations, token: str, port: int = 0, start: str | None = None):
    """The server on 127.0.0.1 (`port` 0: a free one), serving the app under `/<token>/`."""
    from .loopback import LoopbackServer

    server = LoopbackServer(port)
    server.app = Gate(build_app(locs, start), token, server.server_port)
    return server


class Gate:
    """Lets through only requests for `/<token>/…` addressed to this loopback port, and adds the
    headers that keep a page from loading anything else or leaking its address."""

    def __init__(self, app, token: str, port: int) -> None:
        self.app = app
        self.token = token.encode()
        self.hosts = {f"127.0.0.1:{port}".encode(), f"localhost:{port}".encode()}

    def __call__(self, environ: dict, start_response):
        import hmac

        path = environ.get("PATH_INFO", "")
        given, _, rest = path[1:].partition("/")
        host = environ.get("HTTP_HOST", "").encode("latin-1", "replace")
        if not (hmac.compare_digest(given.encode("latin-1", "replace"), self.token) and host in self.hosts):
            start_response("404 Not Found", [("Content-Type", "text/plain; charset=utf-8"), *HEADERS])
            return [b"not found\n"]
        environ["SCRIPT_NAME"] = environ.get("SCRIPT_NAME", "") + "/" + given
        environ["PATH_INFO"] = "/" + rest
        environ["wsgi.errors"] = _Discard()  # bottle writes a failed page's traceback there: the log has it

        def with_headers(status: str, headers: list, exc_info=None):
            return start_response(status, [*headers, *HEADERS], exc_info)

        return self.app(environ, with_headers)


class _Discard:
    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


# --- the pages --------------------------------------------------------------------------------------------------

def build_app(locs: Locations, start: str | None = None):
    """The bottle app: GET routes only, each reading the memory and rendering one template."""
    import bottle

    app = bottle.Bottle()
    templates = [str(ASSETS / "templates")]

    def page(template: str, **values: object) -> str:
        prefix = bottle.request.script_name.rstrip("/")

        def u(path: str, **query: object) -> str:
            wanted = {k: v for k, v in query.items() if v not in (None, "")}
            return prefix + path + ("?" + urlencode(wanted) if wanted else "")

        def eu(entry_id: str) -> str:  # `<slug>/bank/<file>.md` -> its page
            slug, _, name = entry_id.partition("/bank/")
            return u(f"/entry/{quote(slug, safe='')}/bank/{quote(name, safe='')}")

        return bottle.template(template, template_lookup=templates, u=u, eu=eu, q=quote, day=_day, when=_when,
                               colour=_colour, **values)

    @app.get("/")
    def home():
        shown = _shown_projects(locs)
        with _open_index(locs) as conn:
            index.sync(conn, locs, shown)
            rows = [row for row in overview.projects(conn) if row.slug in set(shown)]
            chart = _chart(overview.per_day(conn, shown, since=_chart_since(conn, shown)))
            names = _names(locs, conn, [row.slug for row in rows])
            newest = overview.timeline(conn, shown, limit=NEWEST_ENTRIES)
        links = {row.slug: _shown_links(locs, row.slug) for row in rows}
        return page("home", title="Memory", rows=rows, links=links, chart=chart, names=names, newest=newest,
                    start=project_slug(start) if start else "")

    @app.get("/p/<slug>")
    def project(slug: str):
        view = _project(locs, slug, start)
        offset = _whole(bottle.request.query.get("page"), 0) * TIMELINE_PAGE
        with _open_index(locs) as conn:
            index.sync(conn, locs, view.scope)
            total = overview.entry_count(conn, [slug])
            entries = overview.timeline(conn, [slug], limit=TIMELINE_PAGE, offset=offset)
            chart = _chart(overview.per_day(conn, [slug], since=_chart_since(conn, [slug])))
            view.folders = overview.folders(conn, slug)
            name = _names(locs, conn, [slug])[slug]
        return page("project", title=name.name, name=name, view=view, entries=entries, total=total, offset=offset,
                    step=TIMELINE_PAGE, chart=chart)

    @app.get("/search")
    def search():
        query = bottle.request.query.getunicode("q", "") or ""
        slug = bottle.request.query.getunicode("p", "") or ""
        view = _project(locs, slug, start) if slug else None
        hits, terms, state = _search(locs, query, view) if query.strip() else ([], [], None)
        return page("search", title=f"search: {query}" if query else "search", query=query, view=view, hits=hits,
                    terms=terms, trust=state)

    @app.get("/entry/<slug>/bank/<name>")
    def entry(slug: str, name: str):
        path = _entry_path(locs, slug, name)
        data = read_regular(str(path), MAX_ENTRY_BYTES) if path else None
        if data is None:
            bottle.abort(404, "no such entry (or it was forgotten)")
        text = data.decode("utf-8", "replace")
        return page("entry", title=name, slug=slug, name=name, entry=parse_entry(text, path, slug), text=text)

    @app.get("/p/<slug>/brief")
    def brief(slug: str):
        view = _project(locs, slug, start)
        harness = bottle.request.query.get("harness") or HARNESSES[0]
        if harness not in HARNESSES:
            bottle.abort(404, "no such harness")
        made = build_brief(locs, view.cwd, harness, budget=DEFAULT_BUDGET) if view.cwd else None
        return page("brief", title=f"brief: {slug}", view=view, harness=harness, harnesses=HARNESSES, brief=made,
                    budget=DEFAULT_BUDGET)

    @app.get("/given")
    def given():
        slug = bottle.request.query.getunicode("p", "") or ""
        shown = functools.lru_cache(maxsize=None)(lambda project: _shown(locs, project))
        sessions = _sessions([row for row in given_log(locs) if shown(row[2].partition("/")[0])], slug)
        titles = _titles(locs, {entry_id for s in sessions for entry_id, _ in s.entries})
        opened = opened_log(locs)
        given_count = sum(len(s.entries) for s in sessions)
        opened_count = sum(1 for s in sessions for entry_id, _ in s.entries
                           if (s.harness, s.session_id, entry_id) in opened)
        return page("given", title="given to sessions", slug=slug, sessions=sessions, titles=titles, opened=opened,
                    given_count=given_count, opened_count=opened_count)

    @app.get("/static/<name>")
    def static(name: str):
        return bottle.static_file(name, root=str(ASSETS / "static"))

    @app.error(404)
    @app.error(405)
    def refused(err):
        bottle.response.content_type = "text/plain; charset=utf-8"
        return f"{err.status_line}: {err.body}\n"

    @app.error(500)
    def failed(err):
        line = errors.describe(err.exception, locs) if err.exception else str(err.body)
        log.error(locs, f"harnesslink view: {bottle.request.path}: {line}", err.exception)
        print(f"harnesslink view: a page failed: {line} (the traceback is in the log)", file=sys.stderr, flush=True)
        bottle.response.content_type = "text/plain; charset=utf-8"
        return f"500: the page failed: {line}\n"

    return app


class ProjectView:
    """A project as the page shows it: its slug, the folder a session would be in (`cwd`: searched and
    briefed as a session there would be), the projects in its scope, and those it links."""

    def __init__(self, slug: str, cwd: str | None, scope: list[str], folders_scope: dict[str, str | None],
                 linked: list[str]) -> None:
        self.slug = slug
        self.cwd = cwd
        self.scope = scope
        self.folders_scope = folders_scope
        self.linked = linked
        self.folders: list[tuple[str, int]] = []  # (folder, entries) its entries were banked in


def _project(locs: Locations, slug: str, start: str | None) -> ProjectView:
    """The project `slug`, seen from `start` when that is one of its folders, else from the folder
    most of its entries were banked in."""
    import bottle

    if not _shown(locs, slug):
        bottle.abort(404, "no such project")
    cwd = start if start and project_slug(start) == slug else _main_folder(locs, slug)
    folders = scope_folders(locs, cwd) if cwd else None
    linked = _shown_links(locs, slug) if folders is None or holds_whole(folders, slug) else []  # whose links?
    folders = folders if folders is not None else {slug: None, **{p: None for p in linked}}
    folders = {project: folder for project, folder in folders.items() if _shown(locs, project)}
    return ProjectView(slug, cwd, list(folders), folders, linked)


class ProjectName:
    """A project as a person knows it: the name of the folder most of its entries were banked in, that
    folder, and its repository when IDENTITY.md names one (the slug only when no folder is known)."""

    def __init__(self, slug: str, folder: str | None, repository: str | None) -> None:
        self.folder = folder
        self.repository = repository
        self.name = (os.path.basename(folder.rstrip("/")) or folder) if folder else slug


def _names(locs: Locations, conn, slugs: list[str]) -> dict[str, ProjectName]:
    from ..store.identity import WHOLE_SLUG, tree_identities

    identities = tree_identities(locs)
    names = {}
    for slug in slugs:
        folder = next((cwd for cwd, _ in overview.folders(conn, slug) if cwd), None)
        known = identities.get(slug, {})
        repository = known.get(folder_key(folder)) if folder else None
        names[slug] = ProjectName(slug, folder, repository or known.get(WHOLE_SLUG) or None)
    return names


def _shown(locs: Locations, slug: str) -> bool:
    """Whether the project `slug` is a folder of the tree itself, and its bank/ too (or none yet): the
    viewer lists, searches and serves nothing reached through a symlink, which may lead anywhere."""
    folder = locs.memories / slug
    bank = folder / "bank"
    return is_safe_slug(slug) and _real_folder(folder) and (_real_folder(bank) or not os.path.lexists(bank))


def _real_folder(path: Path) -> bool:
    try:
        return stat.S_ISDIR(path.lstat().st_mode)
    except (OSError, ValueError):
        return False


def _shown_projects(locs: Locations) -> list[str]:
    return [slug for slug in all_projects(locs) if _shown(locs, slug)]


def _shown_links(locs: Locations, slug: str) -> list[str]:
    return [other for other in linked_projects(locs, slug) if _shown(locs, other)]


def _main_folder(locs: Locations, slug: str) -> str | None:
    with _open_index(locs) as conn:
        index.sync(conn, locs, [slug])
        return next((cwd for cwd, _ in overview.folders(conn, slug) if cwd), None)


def _search(locs: Locations, query: str, view: ProjectView | None
            ) -> tuple[list, list[str], trust.TrustState | None]:
    """The memory tools' search (`memory_tools.memory_search`, `harnesslink recall`): the query's words
    and meaning over the project's scope as a session in its folder has it, or over every project;
    with the scope's trust state, which labels the superseded entries."""
    terms = query_terms(query[:2000])
    if not terms:
        return [], [], None
    scope = view.folders_scope if view else {slug: None for slug in _shown_projects(locs)}
    hits, state = ask(locs, query, scope, limit=SEARCH_LIMIT)
    return hits, terms, state


def _open_index(locs: Locations) -> index.open_index:
    """The search index, opened for one page and closed after it."""
    return index.open_index(locs)


def _entry_path(locs: Locations, slug: str, name: str) -> Path | None:
    """The entry file `<slug>/bank/<name>`, if it is a regular file inside the tree, reached through no
    link, and not forgotten (read it with `read_regular`: it may be swapped for anything since)."""
    if not name.endswith(".md") or name.startswith(".") or "/" in name or "\\" in name or "\0" in name:
        return None
    path = locs.memories / slug / "bank" / name
    if not _shown(locs, slug) or not is_regular(str(path)) or tombstones(locs).covers(slug, name):
        return None
    return path


class SessionGiven:
    def __init__(self, harness: str, session_id: str) -> None:
        self.harness = harness
        self.session_id = session_id
        self.entries: list[tuple[str, float]] = []  # (entry id, when), newest first

    @property
    def last(self) -> float:
        return self.entries[0][1] if self.entries else 0.0


def _sessions(rows: list[tuple[str, str, str, float]], slug: str) -> list[SessionGiven]:
    """The given log by session, the latest first; with `slug`, only what came from that project."""
    sessions: dict[tuple[str, str], SessionGiven] = {}
    for harness, session_id, entry_id, at in rows:
        if slug and not entry_id.startswith(slug + "/"):
            continue
        sessions.setdefault((harness, session_id), SessionGiven(harness, session_id)).entries.append((entry_id, at))
    return sorted(sessions.values(), key=lambda s: s.last, reverse=True)


def _titles(locs: Locations, ids: set[str]) -> dict[str, str]:
    with _open_index(locs) as conn:
        index.sync(conn, locs, {entry_id.partition("/")[0] for entry_id in ids})
        return overview.titles(conn, ids)


# --- the chart --------------------------------------------------------------------------------------------------

class Chart:
    """Entries per day per harness as stacked bars, laid out here and drawn by the template as SVG."""

    WIDTH, HEIGHT, LEFT, BOTTOM, TOP = 720, 180, 34, 22, 8

    def __init__(self, first_day: int, days: int, counts: dict[int, dict[str, int]]) -> None:
        self.first_day, self.days = first_day, days
        present = {h for per in counts.values() for h in per}
        self.harnesses = [h for h in COLOURS if h in present] + sorted(present - set(COLOURS))
        self.totals = {h: sum(per.get(h, 0) for per in counts.values()) for h in self.harnesses}
        self.peak = max((sum(per.values()) for per in counts.values()), default=0)
        plot_h = self.HEIGHT - self.BOTTOM - self.TOP
        step = (self.WIDTH - self.LEFT) / max(days, 1)
        self.bars: list[tuple[float, float, float, float, str, str]] = []  # x, y, w, h, colour, tooltip
        for n in range(days):
            per = counts.get(first_day + n, {})
            base = self.HEIGHT - self.BOTTOM
            for harness in self.harnesses:
                count = per.get(harness, 0)
                if not count:
                    continue
                height = plot_h * count / self.peak
                base -= height
                self.bars.append((round(self.LEFT + n * step + step * 0.1, 1), round(base, 1),
                                  round(max(step * 0.8, 1.0), 1), round(height, 1), _colour(harness),
                                  f"{_day(first_day + n)} · {harness}: {count}"))
        ticks = min(days, 6)
        self.labels = [(round(self.LEFT + (n + 0.5) * step, 1), _day(first_day + n)[5:])
                       for n in sorted({round(i * (days - 1) / max(ticks - 1, 1)) for i in range(ticks)})]


def _chart_since(conn, projects: list[str] | None) -> float:
    """The start of the chart's window: the CHART_DAYS days up to the newest entry."""
    newest = overview.timeline(conn, projects, limit=1)
    if not newest:
        return 0.0
    last_day = int(newest[0].ts // overview.DAY)
    return (last_day - CHART_DAYS + 1) * overview.DAY


def _chart(rows: list[tuple[int, str, int]]) -> Chart | None:
    if not rows:
        return None
    counts: dict[int, dict[str, int]] = {}
    for day, harness, n in rows:
        counts.setdefault(day, {})[harness] = counts.get(day, {}).get(harness, 0) + n
    first, last = min(counts), max(counts)
    return Chart(first, last - first + 1, counts)


# --- small helpers ----------------------------------------------------------------------------------------------

def _day(day: int) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(day * 86_400))


def _when(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(ts)) if ts else "undated"


def _colour(harness: str) -> str:
    return COLOURS.get(harness, OTHER_COLOUR)


def _whole(text: str | None, default: int) -> int:
    return int(text) if text and text.isdigit() and len(text) < 7 else default
