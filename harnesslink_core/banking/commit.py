"""Commit, the pass's fourth stage: a batch of settled transcripts into the bank, under the lock.

Takes a batch of `read.FileWork`s whose turns `settle` prepared; gives the bank its entries and the ledger
its records through `store.commit.commit_entries` (reserve, write, mark, history: the one way an entry is
committed), then saves where each transcript's read ended (`read.save_position`), so that a turn not
written (a full disk, a read-only tree, a reservation another pass holds) is read again by the next pass.
What the batch's turns opened of the entries their sessions were given (`use.py`) goes into the same
history append. The index columns of the new entries are computed while their files sync.
"""

from __future__ import annotations

from ..store import history
from ..store.commit import ToCommit, commit_entries
from ..store.entries import read_entry
from . import settle, use
from .read import save_position

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..model import Turn
    from ..store.bank import Entry
    from ..store.entries import Entry as ParsedEntry
    from .pass_state import FileWork, PassState

STATUSES = {"excluded": "excluded", "drop": "dropped", "skipped": "skipped", "bank": "bank"}


def commit_batch(p: PassState, batch: list[FileWork]) -> None:
    """Under the lock: a batch of transcripts' settled turns committed, then where each read ended saved.

    A pass that dies between the steps leaves reservations that a later pass takes over; an entry
    already written is found again (`store.commit`)."""
    if not batch:
        return
    retry = {id(turn) for turn in bank_prepared(p, [item for work in batch for item in work.prepared])}
    for work in batch:
        still_open = work.still_open + [(turn.offset, p.now) for _, turn, _ in work.prepared if id(turn) in retry]
        p.report.open_turns += len(still_open)
        try:
            save_position(p, work, still_open)
        except Exception as exc:  # noqa: BLE001 - read again from where it was
            p.error(f"{work.path}: {exc!r}", work.name, str(work.path), exc)


def bank_prepared(p: PassState, prepared: list[tuple[str, Turn, Entry | None]]) -> list[Turn]:
    """Under the lock (taken back here): the prepared turns committed; those a later pass must try again."""
    p.locked()
    items = [ToCommit(STATUSES[kind], turn.key, turn.harness, entry=entry, dedupe_id=turn.dedupe_id,
                      ended=turn.ended, cwd=turn.cwd, revision=turn.revision, actor=f"autobank:{turn.harness}",
                      session=turn.session_id, turn=turn) for kind, turn, entry in prepared]
    done = commit_entries(p.locs, p.ledger, items, owner=p.owner, now=p.now, listings=p.listings,
                          meanwhile=lambda new: _compute_columns(p, new), also=lambda: _note_uses(p))
    report = p.report
    report.excluded += done.recorded["excluded"]
    report.dropped += done.recorded["dropped"]
    report.skipped += done.recorded["skipped"]
    report.duplicates += done.duplicates
    report.touched |= done.rewritten
    for path, entry in done.placed:
        p.placed[str(path)] = entry
    for item, exc in done.failed:
        # a full disk or a read-only tree: the reservation lapses and the next pass retries
        p.error(f"cannot write entry for {item.key}: {exc!r}", item.origin, None, failure=exc)
    for _, path, slug in done.written:
        report.banked += 1
        report.entries.append(path)
        report.touched.add(slug)
    if done.history_error is not None:  # the bank is written; only its history line is missing
        p.error(f"could not append to {history.HISTORY_FILE}: {done.history_error!r}", None, None, done.history_error)
    return [item.turn for item in done.busy + [item for item, _ in done.failed]]


def _compute_columns(p: PassState, new: list[Entry]) -> None:
    """What the index and the detector compute from entries being written (`settle.columns`), made while
    their files sync: the CPU's work overlaps the disk's, and the index refresh and the detector have them
    ready (`finish`)."""
    for entry in new:
        if id(entry) not in p.computed:  # the read-ahead's child may have made them
            made = settle.columns(entry, p.detect)
            if made is not None:
                p.computed[id(entry)] = (entry, *made)


def _note_uses(p: PassState) -> list[dict[str, str]]:
    """The given entries the settled turns opened, each (session, entry) once (`use.py`): their history records."""
    if not p.uses:
        return []
    uses, p.uses = p.uses, []
    records = []
    texts: dict[str, ParsedEntry | None] = {}  # the given entries read for their facts, once a batch
    sessions: dict[tuple[str, str], dict[str, float]] = {}  # what each session was given, asked once a batch
    found: list[tuple[Turn, dict[str, str]]] = []
    try:
        for turn, refs in uses:
            key = (turn.harness, turn.session_id)
            if key not in sessions:
                sessions[key] = p.ledger.given(*key)
            given = sessions[key]
            if not given:
                continue
            opened = use.opened(refs, set(given))
            if turn.result:
                opened.update(_repeated(p, turn, given, opened, texts))
            if opened:
                found.append((turn, opened))
        if not found:
            return []  # the ledger's write lock only for what there is to note
        with p.ledger.write():
            for turn, opened in found:
                for entry in p.ledger.note_opened(turn.harness, turn.session_id, sorted(opened), turn.ended):
                    records.append(history.event("opened", f"autobank:{turn.harness}", entry=entry,
                                                 session=turn.session_id, detail=opened[entry],
                                                 at=turn.ended or None))
    except Exception as exc:  # noqa: BLE001 - what a session used must never stop what it did being banked
        p.error(f"could not note which given entries were opened: {exc!r}", None, None, exc)
        return []
    return records


def _repeated(p: PassState, turn: Turn, given: dict[str, float], opened: dict[str, str],
              texts: dict[str, ParsedEntry | None]) -> dict[str, str]:
    """The entries given before the turn ended whose facts its answer repeats (`use.Answer`);
    an entry of the same session does not count (the session knew it without memory)."""
    found = {}
    answer = None
    for entry_id, given_at in given.items():
        if entry_id in opened or given_at > turn.ended:
            continue
        if entry_id not in texts:
            texts[entry_id] = read_entry(p.locs.memories / entry_id)
        entry = texts[entry_id]
        if entry is None or entry.session_id == turn.session_id:
            continue
        answer = answer or use.Answer(turn)
        if answer.repeats("\n".join((entry.title, entry.prompt, entry.actions, entry.result))):
            found[entry_id] = use.REPEATED
    return found
