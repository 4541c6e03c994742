"""Changing an entry's trust state (SPEC §11): `harnesslink supersede OLD NEW`, `harnesslink confirm ID`
and the memory tool's `memory_bank {supersedes}` all go through here.

The rules: the entry whose state changes (the older one, the confirmed one) is the caller's own (its
project or its repository's other slugs, `own_projects`; the memory tool: its own project only): a
project never rewrites the trust state of a project it links. The newer entry may be anywhere in the
caller's scope (its linked projects too); neither was forgotten, the newer one's work happened after
the older one's, and no supersession goes round in a circle. Each change is one line appended to the
older entry's project's TRUST.md (`store.trust`) and one history record (`_record`).
"""

from __future__ import annotations

import os

from ..errors import TrustError
from ..paths import Locations
from ..store import trust


class Ref:
    """An entry an id named: `rel` (`<slug>/bank/<file>.md`), its project, when its work happened, its title."""

    __slots__ = ("rel", "slug", "name", "ts", "title")

    def __init__(self, rel: str, slug: str, name: str, ts: float, title: str) -> None:
        self.rel, self.slug, self.name, self.ts, self.title = rel, slug, name, ts, title

    def __repr__(self) -> str:
        return f"Ref({self.rel!r})"


class Change:
    """What a request did: the event written (None when there was nothing to change) and a line saying so."""

    def __init__(self, event: trust.Event | None, message: str) -> None:
        self.event, self.message = event, message


def resolve(locs: Locations, cwd: str, wanted: str, *, own_only: bool = False) -> Ref:
    """The entry `wanted` names (an id as `memory_get` takes it) in `cwd`'s scope; with `own_only`, in
    `cwd`'s own project only. Raises NoSuchEntry or TrustError."""
    from pathlib import Path

    from ..store.entries import read_entry, ts_from_name
    from ..store.ledger import tombstones
    from ..store.lookup import find_entry
    from ..store.scope import project_slug

    path = find_entry(locs, cwd, wanted.strip())
    slug, _, name = os.path.relpath(path, os.path.realpath(locs.memories)).split(os.sep)
    rel = f"{slug}/bank/{name}"
    if own_only:
        trust.check_own(rel, [project_slug(cwd)])
    if tombstones(locs).covers(slug, name):
        raise TrustError(f"{rel} was forgotten (harnesslink forget)")
    entry = read_entry(Path(path), slug)
    ts = (entry.ts if entry is not None else 0.0) or ts_from_name(name) or 0.0
    return Ref(rel, slug, name, ts, entry.title if entry is not None else name)


def check_newer(old: Ref, new_ts: float, new_name: str = "the new entry") -> None:
    """TrustError unless work done at `new_ts` comes after `old`'s."""
    if not new_ts > old.ts:
        raise TrustError(f"{new_name} ({_when(new_ts)}) is not newer than {old.rel} ({_when(old.ts)}): "
                         "only a newer entry supersedes an older one")


def own_projects(locs: Locations, cwd: str) -> list[str]:
    """The projects whose entries' trust state `cwd` may change: its own and its repository's other slugs
    (one project, SPEC §11), never a linked one."""
    from ..store.identity import joined
    from ..store.scope import project_slug

    own = project_slug(cwd)
    return [own, *joined(locs, own, cwd)]


def supersede(locs: Locations, cwd: str, old: Ref, new: Ref, *, actor: str, undo: bool = False) -> Change:
    """`new` supersedes `old` (or, with `undo`, no longer does); `old` is `cwd`'s own."""
    from ..store.scope import scope_for

    own = own_projects(locs, cwd)
    trust.check_own(old.rel, own)
    if old.rel == new.rel:
        raise TrustError(f"{old.rel} cannot supersede itself")
    state = trust.state(locs, [*scope_for(locs, cwd), old.slug, new.slug])
    in_force = new.rel in {newer for newer, _, _ in state.superseded.get(old.rel, ())}
    if undo:
        if not in_force:
            raise TrustError(f"{old.rel} is not superseded by {new.rel}: nothing to undo")
        event = _write(locs, own, trust.Event(_now(), trust.SUPERSEDED, old.rel, new.rel, actor, undo=True))
        others = [newer for newer, _, _ in state.superseded[old.rel] if newer != new.rel]
        rest = f"still superseded by {others[-1]}" if others else "current again: sessions may be given it"
        return Change(event, f"{old.rel} is no longer superseded by {new.rel}; it is {rest}")
    check_newer(old, new.ts, new.rel)
    if in_force:
        return Change(None, f"{old.rel} is already superseded by {new.rel}; nothing changed")
    if old.rel in state.newer_chain(new.rel):
        raise TrustError(f"{new.rel} is itself superseded by {old.rel} (directly or through others): "
                         "a supersession may not go round in a circle")
    event = _write(locs, own, trust.Event(_now(), trust.SUPERSEDED, old.rel, new.rel, actor))
    return Change(event, f"{old.rel} is superseded by {new.rel}: sessions are no longer given it, a search "
                         "shows it marked and below the current entries")


def confirm(locs: Locations, cwd: str, ref: Ref, *, actor: str, undo: bool = False) -> Change:
    """A person says `ref`, an entry of `cwd`'s own, holds (or, with `undo`, takes that back)."""
    own = own_projects(locs, cwd)
    trust.check_own(ref.rel, own)
    state = trust.state(locs, [ref.slug])
    if undo:
        if ref.rel not in state.confirmed:
            raise TrustError(f"{ref.rel} is not confirmed: nothing to undo")
        event = _write(locs, own, trust.Event(_now(), trust.CONFIRMED, ref.rel, actor=actor, undo=True))
        return Change(event, f"{ref.rel} is no longer confirmed")
    if ref.rel in state.confirmed:
        return Change(None, f"{ref.rel} was already confirmed ({_when(state.confirmed[ref.rel][0])}); nothing changed")
    event = _write(locs, own, trust.Event(_now(), trust.CONFIRMED, ref.rel, actor=actor))
    newer = state.superseded_by(ref.rel)
    still = (f"; it stays superseded by {newer[0]} until `harnesslink supersede {ref.rel} {newer[0]} --undo`"
             if newer else "")
    return Change(event, f"{ref.rel} is confirmed: a person says it holds{still}")


def _write(locs: Locations, own: list[str], event: trust.Event) -> trust.Event:
    trust.append(locs, event, own)
    _record(locs, event)
    return event


def _record(locs: Locations, event: trust.Event) -> None:
    """The one place a trust change reaches the history: superseded, confirmed, and their undos
    (`restored`: current again; `unconfirmed`), each with its actor."""
    from .. import clock
    from ..store import history

    if event.kind == trust.SUPERSEDED:
        name, detail = ("restored", f"no longer superseded by {event.newer}") if event.undo else (
            "superseded", f"by {event.newer}")
    else:
        name, detail = ("unconfirmed" if event.undo else "confirmed"), ""
    try:
        history.append(locs, [history.event(name, event.actor, entry=event.entry, detail=detail,
                                            at=clock.parse_iso(event.time))])
    except OSError:
        pass  # the change is in TRUST.md all the same; only its history line is missing


def _now() -> str:
    from .. import clock

    return clock.iso(clock.now())


def _when(ts: float) -> str:
    import time

    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(ts)) if ts else "undated"
