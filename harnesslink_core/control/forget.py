"""Forgetting bank entries: the user takes something back (`harnesslink forget`, MCP `memory_forget`).

Public API (the CLI and the MCP server call only these):

    targets = forget.select(locs, ids=(), query=None, session=None, before=None, projects=None)
    summary = forget.forget(locs, targets, actor="cli", why=forget.criteria(ids=..., query=...))

- `select` finds the entries to forget; every given criterion must hold (AND):
  `ids`: entry paths (absolute, or `<slug>/bank/<file>.md`), file names or stems, entry ids
  (`2026-08-28T10-30-00-000Z`) or turn keys; `query`: the recall search's words (best `limit`
  matches); `session`: a session id; `before`: a date or ISO time (str) or epoch seconds: entries
  whose turn finished earlier. `projects`: the slugs to look in (None: every project). The MCP
  tool passes the session's scope here, so nothing outside it can be selected. With no
  criterion at all, `projects` must be given and every entry of those projects is selected.
  Raises NoMatch when an id matches nothing in scope, ForgetError when the request is empty.
- `forget` tombstones each target in the ledger (its turn_key, so no pass or backfill banks that
  turn again, and its project + file name, so a copy pulled back from the cloud is never indexed
  or injected), then removes the file, its search index row, its MAIN.md line, its line in the
  day's summary and its checkpoint in its session's state. It holds the pass lock meanwhile.
  Returns a Summary; a file it could not remove is in `Summary.failed` (its tombstone still keeps
  it out of the index and the brief). Each target is recorded in the history as forgotten, by whom
  (`actor`) and why (`criteria`: what `select` was asked).
- The tombstones are also appended to `<agent dir>/forgotten.jsonl`; a new ledger (a damaged one
  moved aside) takes them back from there. The ledger owns both (`ledger.tombstones`, the cheap
  read the index, the brief and the MAIN.md rebuild use to skip forgotten entries that came back).

A copy the uploader already sent to the cloud stays there until it is removed there: `CLOUD_NOTE`.
"""

from __future__ import annotations

import os

from ..errors import ForgetError, NoMatch
from ..safefile import read_regular_text, tree_folder

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..store.scope import Folders

CLOUD_NOTE = ("A copy already uploaded to the HarnessLink cloud stays in the cloud store until you remove it "
              "there; if it is pulled back, it is never indexed or injected again.")
LOCK_WAIT = 30.0


class Target:
    """One entry to forget."""

    __slots__ = ("path", "project", "name", "id", "turn_key", "title", "ts", "session_id", "harness", "tags",
                 "evidence")

    def __init__(self, path: str, project: str, name: str, header: dict[str, object]) -> None:
        from ..clock import parse_iso
        from ..store.entries import ts_from_name

        self.path = path  # absolute
        self.project = project
        self.name = name
        self.id = str(header.get("id") or name.split("--", 1)[0])
        self.turn_key = str(header.get("turn_key") or "")
        self.title = str(header.get("title") or name).replace("\n", " ")
        self.ts = parse_iso(header.get("ts")) or ts_from_name(name) or 0.0
        self.session_id = str(header.get("session_id") or "")
        self.harness = str(header.get("harness") or header.get("source") or "")
        tags = header.get("tags") or []
        self.tags = [str(t) for t in tags] if isinstance(tags, list) else []
        self.evidence = ""  # why a --query chose it: its score and the words it matched

    @property
    def rel_path(self) -> str:
        return f"{self.project}/bank/{self.name}"

    def as_dict(self) -> dict[str, object]:
        from ..clock import iso

        return {"path": self.rel_path, "project": self.project, "id": self.id, "turn_key": self.turn_key,
                "title": self.title, "ts": iso(self.ts), "session_id": self.session_id, "harness": self.harness,
                "evidence": self.evidence}

    def __repr__(self) -> str:
        return f"Target({self.rel_path!r})"


class Summary:
    def __init__(self) -> None:
        self.forgotten: list[Target] = []
        self.failed: list[tuple[Target, str]] = []
        self.index_rows = 0
        self.main_lines = 0
        self.summary_lines = 0
        self.checkpoints = 0  # state-file checkpoints naming a forgotten turn

    def as_dict(self) -> dict[str, object]:
        return {"forgotten": [t.rel_path for t in self.forgotten],
                "failed": [{"path": t.rel_path, "error": why} for t, why in self.failed],
                "index_rows": self.index_rows, "main_lines": self.main_lines, "summary_lines": self.summary_lines,
                "checkpoints": self.checkpoints, "note": CLOUD_NOTE}


# --- selecting ------------------------------------------------------------------


def select(locs, *, ids=(), query: str | None = None, session: str | None = None,
           before: "str | float | None" = None, projects: "list[str] | None" = None, limit: int = 10,
           folders: "Folders | None" = None, loose: bool = False) -> list[Target]:
    """The entries matching every given criterion, oldest first (see the module docstring); with
    `folders` (`scope.scope_folders`), never an entry of another folder that only shares a slug."""
    from ..store.entries import ts_from_name
    from ..store.scope import all_projects, is_foreign, is_safe_slug

    ids = [str(i).strip() for i in ids if str(i).strip()]
    if not ids and not query and not session and before is None and projects is None:
        raise ForgetError("say what to forget: entry paths or ids, --query, --session, --before or --project")
    cutoff = parse_before(before) if before is not None else None
    slugs = all_projects(locs) if projects is None else [p for p in dict.fromkeys(projects) if is_safe_slug(p)]
    wanted_paths = _query_paths(locs, query, slugs, limit, loose) if query else None
    root = os.path.realpath(str(locs.memories))
    matched_ids: set[str] = set()
    targets = []
    for slug in slugs:
        bank = tree_folder(str(locs.memories), slug, "bank")  # never through a linked folder
        if bank is None:
            continue
        try:
            names = sorted(n for n in os.listdir(bank) if n.endswith(".md") and not n.startswith(".")
                           and not os.path.islink(os.path.join(bank, n)))  # a link is no entry of ours
        except OSError:
            continue
        for name in names:
            rel = f"{slug}/bank/{name}"
            if wanted_paths is not None and rel not in wanted_paths:
                continue
            if cutoff is not None and (ts_from_name(name) or 0.0) >= cutoff + 86400:
                continue  # cheap pre-filter by the file name's time; the header decides below
            head = _head(os.path.join(bank, name))
            if session and session not in head:
                continue  # most entries: no need to parse them
            header = _parse(head)
            if folders and is_foreign(str(header.get("cwd") or ""), slug, folders):
                continue
            target = Target(os.path.join(bank, name), slug, name, header)
            target.evidence = wanted_paths.get(rel, "") if wanted_paths else ""
            if cutoff is not None and target.ts >= cutoff:
                continue
            if session and target.session_id != session:
                continue
            if ids:
                hit = [i for i in ids if _is(target, i, root)]
                if not hit:
                    continue
                matched_ids.update(hit)
            targets.append(target)
    missing = [i for i in ids if i not in matched_ids]
    if missing:
        raise NoMatch(missing)
    return sorted(targets, key=lambda t: (t.ts, t.rel_path))


def parse_before(value: "str | float") -> float:
    """`2026-08-01` (midnight UTC), an ISO time, or epoch seconds."""
    from ..clock import parse_iso

    if isinstance(value, (int, float)):
        return float(value)
    text = str(value).strip()
    if len(text) == 10:
        text += "T00:00:00Z"
    seconds = parse_iso(text)
    if seconds is None:
        raise ForgetError(f"--before: not a date: {value!r} (use YYYY-MM-DD or an ISO time)")
    return seconds


def _is(target: Target, ident: str, root: str) -> bool:
    if ident in (target.name, target.name[:-3], target.id, target.rel_path) or (
            target.turn_key and ident == target.turn_key):
        return True
    if os.sep in ident or "/" in ident:
        path = os.path.realpath(os.path.expanduser(ident))
        if path == os.path.realpath(target.path):
            return True
        return path == os.path.join(root, target.rel_path)
    return False


def _query_paths(locs, query: str, slugs: list[str], limit: int, loose: bool = False) -> dict[str, str]:
    """The entries a query names, each with its evidence (score, matched words): those the prompt hook would
    be confident of (`matches.find_matches`: the same floor, coverage and margins), or with `loose` the
    recall search's best `limit`, however little they share with the query."""
    import re

    from ..recall import index
    from ..recall.matches import find_matches
    from ..recall.query import mark_matched, search
    from ..recall.terms import meaningful_terms

    terms = meaningful_terms(query) or list(dict.fromkeys(w.lower() for w in re.findall(r"\w+", query)))[:16]
    if not terms or not slugs:
        return {}
    with index.open_index(locs) as conn:
        index.sync(conn, locs, slugs)
        if loose:
            hits = mark_matched(conn, search(conn, terms, slugs, limit=max(1, limit)), terms)
        else:
            hits = find_matches(conn, query, slugs, limit=max(1, limit)).hits
        return {hit.path: f"score {hit.score:.2f}; matched {', '.join(hit.matched) or '(nothing)'}" for hit in hits}


def _head(path: str) -> str:
    return read_regular_text(path, 16384) or ""  # never a FIFO's or a link's


def _parse(head: str) -> dict[str, object]:
    from ..store.entries import split_frontmatter

    return split_frontmatter(head)[0]


# --- forgetting -----------------------------------------------------------------


def criteria(*, ids=(), query: str | None = None, session: str | None = None, before: "str | float | None" = None,
             projects: "list[str] | None" = None) -> str:
    """What `select` was asked, in one line: which criteria chose the entries (the history's detail)."""
    parts = []
    if ids:
        parts.append(f"ids: {', '.join(str(i) for i in ids)}")
    if query:
        parts.append(f"query: {query}")
    if session:
        parts.append(f"session: {session}")
    if before is not None:
        parts.append(f"before: {before}")
    if projects is not None:
        parts.append(f"projects: {', '.join(projects)}")
    return "; ".join(parts)


def forget(locs, targets: list[Target], *, wait: float = LOCK_WAIT, actor: str = "cli", why: str = "",
           session: str = "") -> Summary:
    """Tombstone, then remove each target's file, index row, MAIN.md line and summary line.

    The history records each as forgotten by `actor` (`cli`, `mcp:<harness>` with its `session`), with
    `why`: the criteria that chose it (`criteria`)."""
    from ..store import projectfiles
    from ..store.ledger import keep_tombstone_copy, open_ledger, tombstones
    from ..store.lock import holding

    summary = Summary()
    if not targets:
        return summary
    with holding(locs, wait, busy=ForgetError):
        keep_tombstone_copy(locs, [(t.project, t.name, t.turn_key, t.id) for t in targets])
        ledger = open_ledger(locs)
        try:
            with ledger.write():  # tombstones first: whatever happens next, the turn never comes back
                for t in targets:
                    ledger.forget(t.project, t.name, t.turn_key, t.id)
        finally:
            ledger.close()
        for t in targets:
            try:
                os.unlink(t.path)
            except FileNotFoundError:
                pass
            except OSError as exc:
                summary.failed.append((t, f"{exc.strerror or exc}: {t.path}"))
                continue
            summary.forgotten.append(t)
        _record_in_history(locs, targets, summary, actor, why, session)
        summary.index_rows = _drop_index_rows(locs, [t.rel_path for t in summary.forgotten])
        forgotten = tombstones(locs)
        for project in sorted({t.project for t in summary.forgotten}):
            mine = [t for t in summary.forgotten if t.project == project]
            folder = locs.memories / project
            listed = projectfiles.indexed_names(folder)
            if listed is not None:  # no index in MAIN.md yet: the next pass writes it
                projectfiles.rebuild_main(folder, forgotten)
                summary.main_lines += len(listed & {t.name for t in mine})
            summary.summary_lines += projectfiles.drop_summary_lines(
                folder, {t.name: {"title": t.title, "tags": t.tags} for t in mine})
        summary.checkpoints = _drop_checkpoints(locs, summary.forgotten)
    return summary


def _record_in_history(locs, targets: list[Target], summary: Summary, actor: str, why: str, session: str) -> None:
    """One `forgotten` record per tombstoned entry (a file that could not be removed is tombstoned too)."""
    from ..store import history

    failed = {id(t): reason for t, reason in summary.failed}
    records = [history.event("forgotten", actor, entry=t.rel_path, session=session,
                             detail="; ".join(part for part in (why, f"file not removed: {failed[id(t)]}"
                                                                if id(t) in failed else "") if part))
               for t in targets]
    try:
        history.append(locs, records)
    except OSError:
        pass  # forgotten all the same (the tombstones hold); only the history lines are missing


def _drop_index_rows(locs, rel_paths: list[str]) -> int:
    from ..recall import index

    if not rel_paths:
        return 0
    try:
        conn = index.connect(locs, create=False)
    except index.IndexUnavailable:
        return 0  # no usable index: the next sync or rebuild cannot bring them back (files gone, tombstoned)
    try:
        return index.remove(conn, rel_paths)
    finally:
        conn.close()


def _drop_checkpoints(locs, targets: list[Target]) -> int:
    """Remove the forgotten turns' checkpoints (time and title) from their sessions' state, and
    rewrite those state files."""
    from ..store import state
    from ..store.ledger import open_ledger
    from ..store.scope import project_slug

    sessions: dict[tuple[str, str], list[float]] = {}
    for t in targets:
        if t.harness and t.session_id and t.ts:
            sessions.setdefault((t.harness, t.session_id), []).append(t.ts)
    if not sessions:
        return 0
    dropped = 0
    ledger = open_ledger(locs)
    try:
        for (harness, session_id), times in sessions.items():
            cwd, current = ledger.session_state(harness, session_id)
            current, dropped_here = state.drop_checkpoints(current, times)
            if not dropped_here or not cwd:
                continue
            dropped += dropped_here
            with ledger.write():
                ledger.save_session_state(harness, session_id, cwd, current)
            state.write(locs.memories / project_slug(cwd), harness, session_id, cwd, current)
    finally:
        ledger.close()
    return dropped
