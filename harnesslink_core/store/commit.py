"""Committing entries (SPEC §5): the one way an entry gets into the bank, for the autobank pass and
`memory_bank` alike.

`commit_entries` takes what is to be committed (`ToCommit`: a rendered entry and what the ledger and the
history know it by, or a turn settled without one) and gives back what became of each (`Committed`). Four
steps, each short, so the ledger is free for the hooks in between:

1. reserve: one transaction records the turns that get no entry and reserves the others' keys (an entry
   that follows its source, Antigravity's, is rewritten in place here when what it shows changed);
2. write: the new entries' bytes are staged in temporary files, synced together (`durable`), linked into
   place, and each folder synced once;
3. mark: one transaction marks the written ones banked, only once they are durable;
4. history: one append of their records (and whatever the caller adds: `also`).

A caller killed between the steps loses nothing: a later pass takes over the reservations, and
`bank.find_entry` finds an entry already in place. The caller holds the pass lock (`store.lock`).
"""

from __future__ import annotations

import os
from pathlib import Path

from ..fastsqlite import sqlite3
from . import durable, history
from .bank import Listing, find_entry
from .scope import project_slug

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ..paths import Locations
    from .bank import Entry
    from .ledger import Ledger

BANK = "bank"
NO_ENTRY = ("excluded", "dropped", "skipped")  # settled without an entry: recorded, never written
RECORDED_ONCE = ("excluded", "skipped")  # ... these only when the turn is not known yet


class ToCommit:
    """One turn (or learning) to commit: its entry to write (`status` "bank"), or the status it is recorded
    with instead; its key, origin (a harness, or `mcp` for a learning), dedupe id and end in the ledger; its
    history record (`event`, `actor`, `session`, `detail`); and the caller's own object (`turn`)."""

    __slots__ = ("status", "entry", "key", "origin", "dedupe_id", "ended", "cwd", "revision", "event", "actor",
                 "session", "detail", "turn")

    def __init__(self, status: str, key: str, origin: str, *, entry: Entry | None = None, dedupe_id: str | None = None,
                 ended: float | None = None, cwd: str = "", revision: str | None = None, event: str = "banked",
                 actor: str = "", session: str = "", detail: str = "", turn: Any = None) -> None:
        self.status, self.entry, self.key, self.origin, self.dedupe_id = status, entry, key, origin, dedupe_id
        self.ended, self.cwd, self.revision, self.event, self.actor = ended, cwd, revision, event, actor
        self.session, self.detail, self.turn = session, detail, turn


class Committed:
    """What became of each: written and durable (item, path, slug); placed by this commit (path, entry: not
    an entry a killed writer left, and placed even where its folder then failed to sync); not written (a
    reservation another writer holds: `busy`; an error: `failed`); counts of the statuses recorded and of
    duplicates; the projects rewritten entries are in; and a history that could not be appended."""

    def __init__(self) -> None:
        self.written: list[tuple[ToCommit, Path, str]] = []
        self.placed: list[tuple[Path, Entry]] = []
        self.busy: list[ToCommit] = []
        self.failed: list[tuple[ToCommit, OSError]] = []
        self.recorded = {status: 0 for status in NO_ENTRY}
        self.duplicates = 0
        self.rewritten: set[str] = set()
        self.history_error: OSError | None = None


def commit_entries(locs: Locations, ledger: Ledger, items: list[ToCommit], *, owner: str, now: float,
                   listings: dict[Path, set[str]] | None = None,
                   meanwhile: Callable[[list[Entry]], None] | None = None,
                   also: Callable[[], list[dict[str, str]]] | None = None, ledger_decides: bool = True) -> Committed:
    """Reserve, write, mark and record `items` (see the module docstring).

    `listings`: the bank folders' names the caller keeps while it holds the lock (listed once, added to
    here); `meanwhile(new entries)` runs while their files sync; `also()` runs after the mark, and the
    records it gives are appended with the commit's. With `ledger_decides` False (a learning, which the
    bank itself knows by its turn_key: `bank.find_learning`) an entry is written whatever its reservation
    says, and a mark the ledger cannot take now is left to the bank."""
    done = Committed()
    records: list[dict[str, str]] = []
    to_write = _reserve(locs, ledger, items, owner, now, done, records, ledger_decides)
    _write(locs, to_write, listings if listings is not None else {}, meanwhile, done)
    try:
        _mark(ledger, done.written)
    except Exception as exc:
        if ledger_decides or not isinstance(exc, sqlite3.Error):
            raise
    records += [history.event(item.event, item.actor, entry=history.entry_id(path), session=item.session,
                              detail=item.detail) for item, path, _ in done.written]
    if also is not None:
        records += also()
    if records:
        try:
            history.append(locs, records)
        except OSError as exc:  # the bank is written; only its history lines are missing
            done.history_error = exc
    return done


def _reserve(locs: Locations, ledger: Ledger, items: list[ToCommit], owner: str, now: float, done: Committed,
             records: list[dict[str, str]], ledger_decides: bool) -> list[tuple[ToCommit, Entry]]:
    to_write: list[tuple[ToCommit, Entry]] = []
    with ledger.write():
        for item in items:
            if item.status in NO_ENTRY:
                if item.status not in RECORDED_ONCE or ledger.turn_status(item.key) is None:
                    ledger.record(item.key, item.origin, item.status, item.dedupe_id, item.ended)
                    done.recorded[item.status] += 1
                continue
            entry = item.entry
            if entry is None or item.revision is not None and _rewrote(ledger, item, entry, done, records):
                continue
            status = ledger.reserve(item.key, item.origin, item.dedupe_id, owner, now)
            if status == "ok" or not ledger_decides:
                to_write.append((item, entry))
            elif status == "duplicate":
                done.duplicates += 1
            elif status == "busy":
                done.busy.append(item)
    return to_write


def _rewrote(ledger: Ledger, item: ToCommit, new: Entry, done: Committed, records: list[dict[str, str]]) -> bool:
    """An entry that follows its source (Antigravity): rewritten in place when what it shows changed."""
    entry, revision = ledger.revision(item.key)
    if entry is None:
        return False
    if revision != item.revision and os.path.exists(entry):
        durable.rewrite(Path(entry), new)
        ledger.set_revision(item.key, item.revision or "")
        done.rewritten.add(os.path.basename(os.path.dirname(os.path.dirname(entry))))
        records.append(history.event("rewritten", item.actor, entry=history.entry_id(entry), session=item.session))
    return True


def _write(locs: Locations, to_write: list[tuple[ToCommit, Entry]], listings: dict[Path, set[str]],
           meanwhile: Callable[[list[Entry]], None] | None, done: Committed) -> None:
    """The reserved entries written, durably. Their bytes go to temporary files first and are synced
    together; each is then linked into place (`durable.write`), and each folder synced once (the folders
    together)."""
    writeback = durable.Writeback.watch(locs.memories, len(to_write))
    try:
        _stage_and_place(locs, to_write, listings, meanwhile, writeback, done)
    finally:
        if writeback is not None:
            writeback.close()


def _stage_and_place(locs: Locations, to_write: list[tuple[ToCommit, Entry]], listings: dict[Path, set[str]],
                     meanwhile: Callable[[list[Entry]], None] | None, writeback: durable.Writeback | None,
                     done: Committed) -> None:
    staged: list[tuple[ToCommit, Entry, Path, str, Path | None]] = []
    made: list[Path] = []  # folders the batch made (a new project's): synced into their parents with the rest
    folders: dict[str, tuple[str, Path]] = {}  # by cwd: a batch's entries come from a few projects
    for item, entry in to_write:
        if item.cwd not in folders:
            slug = project_slug(item.cwd)
            folders[item.cwd] = (slug, locs.memories / slug / BANK)
        slug, folder = folders[item.cwd]
        tmp = None
        try:
            if not find_entry(folder, entry.file_iso, entry.turn_key, _listing(listings, folder)):
                tmp = durable.stage(folder, entry, made)
        except OSError as exc:
            done.failed.append((item, exc))
            continue
        staged.append((item, entry, folder, slug, tmp))
    new = [entry for _, entry, _, _, tmp in staged if tmp is not None]
    errors = durable.sync_staged([tmp for *_, tmp in staged if tmp is not None],
                                 meanwhile=(lambda: meanwhile(new)) if meanwhile is not None else None,
                                 writeback=writeback)
    synced = iter(errors)
    written: list[tuple[ToCommit, Path, str]] = []
    for item, entry, folder, slug, tmp in staged:
        error = next(synced) if tmp is not None else None
        listing = _listing(listings, folder)
        names = len(listing)
        try:
            if error is not None:
                raise error
            path = durable.write(folder, entry, sync_folder=False, listing=listing, staged=tmp)
        except OSError as exc:
            done.failed.append((item, exc))
            continue
        if len(listing) > names:  # placed now (not an entry an earlier, killed writer left)
            done.placed.append((path, entry))
        written.append((item, path, slug))
    unsynced = durable.fsync_dirs({path.parent for _, path, _ in written}, writeback, made)
    for each in written:  # placed, not yet sure to stay: not counted now; the next pass finds them then
        if each[1].parent in unsynced:
            done.failed.append((each[0], unsynced[each[1].parent]))
        else:
            done.written.append(each)


def _mark(ledger: Ledger, written: list[tuple[ToCommit, Path, str]]) -> None:
    if not written:
        return
    with ledger.write():
        for item, path, slug in written:
            ledger.finish(item.key, "banked", entry=str(path), project=slug, ended=item.ended)
            if item.revision is not None:
                ledger.set_revision(item.key, item.revision)


def _listing(listings: dict[Path, set[str]], folder: Path) -> set[str]:
    """A bank folder's file names, listed once while the lock is held (every writer holds it)."""
    if folder not in listings:
        try:
            listings[folder] = Listing(os.listdir(folder))
        except FileNotFoundError:
            listings[folder] = Listing()
    return listings[folder]


