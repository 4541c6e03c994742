"""One-shot handoffs (SPEC §10): a session's state, waiting for the next session start of a harness in a folder.

`harnesslink resume SESSION --in HARNESS` (or `--fresh`) saves one handoff per
(project folder, target harness) as `<agent dir>/handoffs/<project slug>--<folder crc>--<harness>.json`
(two folders can share a slug, `/code/my/app` and `/code/my-app`: the folder's checksum keeps their
handoffs apart, so one never replaces the other's);
the text is framed and budgeted when it is made (`handoff_build`). The next
session-start hook of that harness in that folder takes it: the file is renamed
away first, and only the process whose rename succeeds reads it, so two
sessions starting at once cannot both get it, and a second start gets nothing.
A handoff nobody took within a day is dropped.

This module is on the session-start path: it imports only the standard library
modules it uses.
"""

from __future__ import annotations

import os
import time

from .. import wirejson  # `json` imports `re`: not on the session-start path
from ..safefile import may_make_folder, read_regular_text

FOLDER = "handoffs"
TTL_SECONDS = 24 * 3600
HOOK_ROOM = 9400  # handoff + brief stay under Claude Code's 10,000-character cap on one hook's output
RECORD_BYTES = 1024 * 1024


def handoff_path(agent_dir: os.PathLike[str] | str, cwd: str, harness: str) -> str:
    from ..store.scope import project_slug

    folder = os.path.abspath(cwd)
    return os.path.join(agent_dir, FOLDER, f"{project_slug(folder)}--{_checksum(_stored_cwd(folder)):08x}--{harness}.json")


def _checksum(text: str) -> int:
    """FNV-1a, 32 bits: tells apart the few folders that share a slug, without importing zlib on this path."""
    value = 0x811C9DC5
    for byte in text.encode("utf-8", "surrogatepass"):
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return value


def _slug_only_path(agent_dir: os.PathLike[str] | str, cwd: str, harness: str) -> str:
    """Where a handoff made before the folder's checksum was in its name waits (taken, never written)."""
    from ..store.scope import project_slug

    return os.path.join(agent_dir, FOLDER, f"{project_slug(os.path.abspath(cwd))}--{harness}.json")


def save(agent_dir: os.PathLike[str] | str, cwd: str, harness: str, text: str, source: dict[str, str],
         now: float | None = None) -> str:
    """Store (or replace) the handoff for this folder and harness; returns its path. Never through a link:
    not a linked handoff folder (it may lead out of the agent dir), nor a link planted at the temporary name."""
    now = time.time() if now is None else now
    path = handoff_path(agent_dir, cwd, harness)
    folder = os.path.dirname(path)
    if not may_make_folder(os.fspath(agent_dir), FOLDER):
        raise OSError(f"{folder} is a symlink or not a folder: no handoff is written through it")
    os.makedirs(folder, exist_ok=True)
    prune(agent_dir, now)
    record = {"version": 1, "cwd": _stored_cwd(cwd), "target": harness, "created": now,
              "expires": now + TTL_SECONDS, "source": source, "text": text}
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.unlink(tmp)  # a crashed writer's, or a link planted at the name (only the link goes)
    except FileNotFoundError:
        pass
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(wirejson.dumps(record))
    os.replace(tmp, path)
    return path


def take(agent_dir: os.PathLike[str] | str, cwd: str, harness: str, *, peek: bool = False,
         now: float | None = None, log=None) -> str:
    """The framed handoff waiting for this folder and harness, consumed ("" when there is none).

    `peek` reads it without consuming it (a dry run). Never raises: a failure is handed to `log`.
    """
    try:
        return _take(agent_dir, cwd, harness, peek, time.time() if now is None else now)
    except Exception as exc:  # noqa: BLE001 - a session must start even if the handoff is lost
        if log is not None:
            log("could not take the handoff", exc)
        return ""


def _take(agent_dir: os.PathLike[str] | str, cwd: str, harness: str, peek: bool, now: float) -> str:
    for path in (handoff_path(agent_dir, cwd, harness), _slug_only_path(agent_dir, cwd, harness)):
        text = _take_at(path, cwd, harness, peek, now)
        if text:
            return text
    return ""


def _take_at(path: str, cwd: str, harness: str, peek: bool, now: float) -> str:
    if peek:
        record = _load(path)
        return _text_for(record, cwd, harness, now) if record is not None else ""
    taken = f"{path}.taken-{os.getpid()}-{time.monotonic_ns()}"
    try:
        os.rename(path, taken)  # atomic: of two concurrent session starts, one wins
    except OSError:
        return ""
    record = _load(taken)
    if record is not None and record.get("cwd") != _stored_cwd(cwd):
        # another folder whose slug is the same: not ours, put it back
        try:
            os.rename(taken, path)
        except OSError:
            pass
        return ""
    try:
        os.unlink(taken)
    except OSError:
        pass
    return _text_for(record, cwd, harness, now) if record is not None else ""


def pending(agent_dir: os.PathLike[str] | str, cwd: str, harness: str, now: float | None = None) -> dict | None:
    """The waiting handoff's record, or None."""
    record = _load(handoff_path(agent_dir, cwd, harness))
    now = time.time() if now is None else now
    if record is None or not _text_for(record, cwd, harness, now):
        return None
    return record


def brief_budget(handoff_text: str, default: int) -> int:
    """The brief's budget beside a handoff: together they fit in one hook's output."""
    return max(0, min(default, HOOK_ROOM - len(handoff_text) - 2)) if handoff_text else default


def prune(agent_dir: os.PathLike[str] | str, now: float) -> None:
    """Drop handoffs nobody took in time, and leftovers of interrupted claims."""
    folder = os.path.join(agent_dir, FOLDER)
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        path = os.path.join(folder, name)
        try:
            old = now - os.stat(path).st_mtime > TTL_SECONDS
            if old or (".taken-" in name and now - os.stat(path).st_mtime > 60):
                os.unlink(path)
        except OSError:
            continue


def _load(path: str) -> dict | None:
    text = read_regular_text(path, RECORD_BYTES)  # never a FIFO's, which would hold the session-start hook
    try:
        record = wirejson.loads(text) if text is not None else None
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def _text_for(record: dict, cwd: str, harness: str, now: float) -> str:
    expires = record.get("expires")
    if not isinstance(expires, (int, float)) or now > expires:
        return ""
    if record.get("cwd") != _stored_cwd(cwd) or record.get("target") != harness:
        return ""
    text = record.get("text")
    return text if isinstance(text, str) else ""


def _stored_cwd(cwd: str) -> str:
    """The folder as a handoff records it: as an entry records its cwd (redacted, should its name hold a secret)."""
    from ..store.scope import folder_key

    return folder_key(os.path.abspath(cwd))
