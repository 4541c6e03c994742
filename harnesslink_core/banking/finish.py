"""Finish, the pass's last stage: the projects it touched, once a pass, under the lock.

Takes what the pass did (the sessions whose state changed, the projects it touched, the entries it
placed and their index columns); gives each session its state file (and the ledger its state), each
project its MAIN.md index, its day summaries and its IDENTITY.md, the search index its new entries
(`recall.index.refresh`), and, in a detecting pass, TRUST.md the supersessions those entries may bring
(`control.detect`, proposed, never applied). What could not be finished (a full disk, a read-only
folder) is remembered in the ledger and retried by the next pass; temporary files a killed writer left
are swept. Every pass ends here, most with nothing to finish (a stop hook's): what finishing needs is
imported only once there is something to finish.
"""

from __future__ import annotations

import os
import time

from .. import clock, log, wirejson
from ..store.ledger import tombstones
from ..store.lock import process_gone
from .plan import kept_out

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from ..store.entries import Entry as ParsedEntry
    from .pass_state import PassState

DETECT_PENDING_MAX = 2000  # entries a hook's passes leave for the next detecting pass (the newest kept)
TEMP_STALE = 600.0  # a temporary file this old was left by a writer that died: removed


def finish_projects(p: PassState) -> None:
    """State files, MAIN.md, summaries and the index of the projects this pass touched, and of
    those an earlier pass could not finish (a full disk, a read-only folder): retried until done."""
    unfinished = _unfinished(p)
    if not (p.sessions or p.report.touched or unfinished["sessions"] or unfinished["projects"]):
        return  # nothing was banked, nothing is left to finish
    from ..store import projectfiles, state
    from ..store.scope import project_slug

    for harness, session_id, cwd in unfinished["sessions"]:
        p.sessions.setdefault((harness, session_id), (cwd, []))
    p.report.touched |= set(unfinished["projects"])
    # written ahead: a pass killed before it finishes leaves the work to the next one
    ahead: dict[str, list[Any]] = {"sessions": [[h, sid, cwd] for (h, sid), (cwd, _) in p.sessions.items() if cwd],
             "projects": sorted(p.report.touched)}
    _save_unfinished(p, unfinished, ahead["sessions"], set(ahead["projects"]))
    failed_sessions: list[list[str]] = []
    failed_projects: set[str] = set()
    states: list[tuple[str, str, str, dict, bool]] = []  # (harness, session, cwd, state, changed)
    for (harness, session_id), (cwd, updates) in p.sessions.items():
        if not cwd or kept_out(p, cwd):
            continue
        try:
            old_cwd, old = p.ledger.session_state(harness, session_id)
            new = state.apply(old, updates)
            states.append((harness, session_id, cwd, new, new != old or old_cwd != cwd))
        except Exception as exc:  # noqa: BLE001
            failed_sessions.append([harness, session_id, cwd])
            p.error(f"state of {harness}:{session_id}: {exc!r}", harness, None, exc)
    try:
        with p.ledger.write():  # one transaction for all of them (a backfill has hundreds)
            for harness, session_id, cwd, new, changed in states:
                if changed:
                    p.ledger.save_session_state(harness, session_id, cwd, new)
    except Exception as exc:  # noqa: BLE001 - all retried next pass
        failed_sessions += [[harness, session_id, cwd] for harness, session_id, cwd, _, _ in states]
        p.error(f"session states: {exc!r}", None, None, exc)
        states = []
    for harness, session_id, cwd, new, _ in states:
        try:
            slug = project_slug(cwd)
            if state.write(p.locs.memories / slug, harness, session_id, cwd, new):
                p.report.touched.add(slug)
            _record_identity(p, slug, cwd)
        except Exception as exc:  # noqa: BLE001
            failed_sessions.append([harness, session_id, cwd])
            p.error(f"state file for {harness}:{session_id}: {exc!r}", harness, None, exc)
    today = clock.iso(p.now)[:10]
    forgotten = tombstones(p.locs) if p.report.touched else None
    headers = _placed_headers(p)
    for slug in sorted(p.report.touched):
        project = p.locs.memories / slug
        try:
            projectfiles.rebuild_main(project, forgotten, headers.get(slug))
            projectfiles.write_summaries(project, today, forgotten, headers.get(slug))
            _sweep_temp(project)
        except Exception as exc:  # noqa: BLE001
            failed_projects.add(slug)
            p.error(f"{project}: {exc!r}", None, str(project), exc)
    if p.report.touched and not refresh_index(p):
        failed_projects |= p.report.touched
    _save_unfinished(p, ahead, failed_sessions, failed_projects)


def propose_supersessions(p: PassState) -> None:
    """Supersessions the entries placed since the last detecting pass may bring (`control.detect`), proposed
    in their projects' TRUST.md, never applied. After the index is refreshed: the candidates come from it.
    A pass without `detect` (a hook's) keeps the list for the next one that has it."""
    placed = sorted(p.placed)
    if not p.detect and not placed:
        return  # a hook's pass that banked nothing: not even the ledger is asked
    pending = _pending_detection(p)
    if not p.detect:
        _save_pending_detection(p, (pending + [path for path in placed if path not in pending])[-DETECT_PENDING_MAX:])
        return
    todo = list(dict.fromkeys(pending + placed))
    if not todo:
        return
    try:
        from ..control import detect

        parsed = {os.fspath(entry.path): entry for _, entry, _ in placed_entries(p).values()}
        detect.propose(p.locs, [path for path in todo if os.path.exists(path)], parsed, p.stated)
    except Exception as exc:  # noqa: BLE001 - a proposal missed must never stop the bank
        p.error(f"supersession detection failed: {exc!r}", None, None, exc)
    if pending:
        _save_pending_detection(p, [])


def _pending_detection(p: PassState) -> list[str]:
    try:
        value = wirejson.loads(p.ledger.get_meta("detect_pending") or "[]")
    except (ValueError, _sqlite3().Error):
        value = []
    return [path for path in value if isinstance(path, str)] if isinstance(value, list) else []


def _save_pending_detection(p: PassState, paths: list[str]) -> None:
    import json

    try:
        p.ledger.set_meta("detect_pending", json.dumps(paths))
    except _sqlite3().Error as exc:
        log.error(p.locs, "could not remember which entries to look at for supersessions", exc)


def _placed_headers(p: PassState) -> dict[str, dict[str, tuple[int, dict[str, object]]]]:
    """(size, frontmatter) of each entry this pass wrote whose frontmatter it knows, by project and file name."""
    headers: dict[str, dict[str, tuple[int, dict[str, object]]]] = {}
    for path, entry in p.placed.items():
        if entry.meta is not None:
            folder, name = os.path.split(path)
            headers.setdefault(os.path.basename(os.path.dirname(folder)), {})[name] = (
                len(entry.text.encode()), entry.meta)
    return headers


def placed_entries(p: PassState) -> dict[str, tuple[int, ParsedEntry, tuple[str, str, str] | None]]:
    """(size, parsed entry, its computed columns if made while it synced) of each entry this pass wrote,
    by `<slug>/bank/<file>.md` (the index's key); made once, for the index and then the detector."""
    if p.parsed is not None:
        return p.parsed
    from ..store import entries

    out: dict[str, tuple[int, ParsedEntry, tuple[str, str, str] | None]] = {}
    for path, entry in p.placed.items():
        data = entry.text.encode()
        if len(data) > entries.MAX_ENTRY_BYTES:
            continue  # the index reads only the head of a file this big: let it
        where = _as_path(path)
        slug = where.parent.parent.name
        if entry.meta is not None and entry.sections is not None:
            parsed = entries.entry_from(entry.meta, entry.sections, where, slug)
        else:
            parsed = entries.parse_entry(entry.text, where, slug)
        made = p.computed.get(id(entry))
        computed = None
        if made is not None and made[1] == (parsed.title, parsed.prompt, parsed.actions, parsed.result):
            computed = made[2]  # made from the texts the index reads
            if made[3] is not None:
                p.stated[path] = made[3]
        out[f"{slug}/bank/{where.name}"] = (len(data), parsed, computed)
    p.parsed = out
    return out


def _record_identity(p: PassState, slug: str, cwd: str) -> None:
    """The repository this project's folder is, written into the tree (SPEC §11), once it has a bank."""
    from ..store import identity
    from ..store.scope import folder_key

    project = p.locs.memories / slug
    if (project / "bank").is_dir() and identity.record(str(project), folder_key(cwd), identity.repository_of(cwd)):
        identity.forget_cache(p.locs)


def _unfinished(p: PassState) -> dict[str, list]:
    """What an earlier pass could not finish: its sessions (harness, id, cwd) and projects."""
    try:
        value = wirejson.loads(p.ledger.get_meta("unfinished") or "{}")
    except (ValueError, _sqlite3().Error):
        value = {}
    value = value if isinstance(value, dict) else {}
    return {"sessions": [s for s in value.get("sessions", []) if isinstance(s, list) and len(s) == 3],
            "projects": [slug for slug in value.get("projects", []) if isinstance(slug, str)]}


def _save_unfinished(p: PassState, old: dict[str, list], sessions: list[list[str]], projects: set[str]) -> None:
    new = {"sessions": sessions, "projects": sorted(projects)}
    if new == old:
        return
    import json

    try:
        p.ledger.set_meta("unfinished", json.dumps(new))
    except _sqlite3().Error as exc:
        log.error(p.locs, "could not remember what to finish next pass", exc)


def refresh_index(p: PassState) -> bool:
    """The search index told of the touched projects and the entries placed; False when it failed."""
    try:
        from ..recall import index
    except ImportError:
        return True
    try:
        index.refresh(p.locs, set(p.report.touched), placed_entries(p))
        return True
    except Exception as exc:  # noqa: BLE001
        p.error(f"index refresh failed: {exc!r}", None, None, exc)
        return False


def _sqlite3():
    from ..fastsqlite import sqlite3

    return sqlite3


def _as_path(text: str) -> Path:
    from pathlib import Path

    return Path(text)


def _sweep_temp(project: Path) -> None:
    """Remove temporary files a killed writer left in a project (never an entry: those are `.md`).

    Our temporary names end in `.<pid>.<random>.tmp`: a file of a process that is gone goes at
    once, any other once it is TEMP_STALE old."""
    cutoff = time.time() - TEMP_STALE
    for folder in (project, project / "bank", project / "summaries", project / "state"):
        try:
            with os.scandir(folder) as it:
                stale = [e.path for e in it if e.name.startswith(".") and e.name.endswith(".tmp")
                         and (_writer_gone(e.name) or e.stat(follow_symlinks=False).st_mtime < cutoff)]
        except OSError:
            continue
        for path in stale:
            try:
                os.unlink(path)
            except OSError:
                pass


def _writer_gone(name: str) -> bool:
    parts = name.rsplit(".", 3)
    if len(parts) != 4 or not parts[1].isdigit() or int(parts[1]) in (0, os.getpid()):
        return False
    return process_gone(int(parts[1]))
