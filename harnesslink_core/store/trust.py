"""Trust state: which entries are superseded by a newer one, and which a person confirmed (SPEC §11).

The bank stays append-only; the state lives beside it, in `<project>/TRUST.md`, which the uploader
carries like the rest of the tree, so every machine that pulls agrees. One event a line, newest last:

    - 2026-08-28T10:30:00.000Z superseded `<slug>/bank/<old>.md` by `<slug>/bank/<new>.md` (cli)
    - 2026-08-28T10:31:00.000Z undo superseded `<slug>/bank/<old>.md` by `<slug>/bank/<new>.md` (cli)
    - 2026-08-28T10:32:00.000Z confirmed `<slug>/bank/<entry>.md` (mcp:codex)

The file is only ever appended to; for a pair (old, new), and for a confirmed entry, the last line wins,
so `undo` is a line too. A project's file speaks only for its own entries, and only that project writes
it (`check_own`). Reading is lenient: a line that does not read as an event (a note, a hand edit gone
wrong) is skipped, never fatal. Readers read a bounded start of the file (MAX_READ) and writers never
append past it, so a change reported as done is one every reader sees.

An entry is superseded while any pair naming it as the older is in force; confirmed while a person's
confirmation stands and nothing supersedes it; current otherwise. Two times come with it: when an
entry's work happened (`ts`) and when it was recorded (its file's time); when it stopped being current,
by the same two times (the `ts` of the entry that superseded it, the supersession's line).
`state(..., as_of=T)` is the state at T by the time the work happened, `known_at=T` by record time.

Detection (`control.detect`) only proposes; its lines sit in the same file and never count as a supersession:

    - 2026-08-28T10:33:00.000Z proposed superseded `<slug>/bank/<old>.md` by `<slug>/bank/<new>.md` (autobank:pi) — <evidence>
    - 2026-08-28T10:34:00.000Z rejected superseded `<slug>/bank/<old>.md` by `<slug>/bank/<new>.md` (cli)

A proposal is open until a person decides the pair: accepting writes an ordinary `superseded` line, rejecting a
`rejected` one; either way (an undo too) the pair is never proposed again. `parse_line` reads neither, so a
reader that knows no proposals (the prompt hook, an older version on another machine) skips them.

`superseded_within` is on the prompt and session-start hooks' path: stdlib `os` and `stat` only, one failed
open per project without a file, no time parsed, and at most HOOK_READ bytes read for all the projects in
scope together; a project whose file does not fit is not pushed at all (never as if nothing superseded it).
"""

from __future__ import annotations

import os
import stat

from ..errors import TrustError
from ..paths import Locations
from ..safefile import may_make_folder, read_regular

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the prompt hook's path)
if TYPE_CHECKING:
    from collections.abc import Collection, Iterable

TRUST_FILE = "TRUST.md"
HEADER = """# Trust state of this project's entries

Entries superseded by a newer one are no longer given to sessions (a search still finds them, marked);
confirmed entries are ones a person said still hold. Written by `harnesslink supersede`, `harnesslink
confirm` and the memory tool `memory_bank {supersedes}`. One event a line, newest last; for each entry
(and each pair) the last line wins, and `undo` takes an event back. A `proposed` line is a detector's
suggestion, never a supersession until a person accepts it in `harnesslink review`. Lines that do not
read as an event are skipped.

"""
SUPERSEDED, CONFIRMED = "superseded", "confirmed"
PROPOSED, REJECTED = "proposed", "rejected"  # a detector's proposal, and a person's no to it
EVIDENCE_CHARS = 400
MAX_READ = 4 * 1024 * 1024  # what readers read of a file; a writer refuses to append past it
# What the prompt and session-start hooks read of all the files in a folder's scope together: a line is about
# 250 bytes and a project holds a few dozen, so twenty linked projects fit many times over (parsed in ~20 ms)
HOOK_READ = 256 * 1024
_WRITE_FLAGS = (os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
                | getattr(os, "O_CLOEXEC", 0))


class Event:
    """One line of a TRUST.md: `kind` (superseded or confirmed) of `entry` (by `newer`), or its undo."""

    __slots__ = ("time", "kind", "entry", "newer", "actor", "undo")

    def __init__(self, time: str, kind: str, entry: str, newer: str = "", actor: str = "",
                 undo: bool = False) -> None:
        self.time = time  # ISO UTC, as written
        self.kind = kind
        self.entry = entry  # `<slug>/bank/<file>.md`
        self.newer = newer  # the superseding entry, for `superseded`
        self.actor = actor  # cli, mcp:<harness>
        self.undo = undo

    @property
    def key(self) -> tuple[str, str, str]:
        return self.kind, self.entry, self.newer

    def line(self) -> str:
        what = f"{self.kind} `{self.entry}`" + (f" by `{self.newer}`" if self.kind == SUPERSEDED else "")
        return f"- {self.time} {'undo ' if self.undo else ''}{what} ({self.actor})"

    def __repr__(self) -> str:
        return f"Event({self.line()!r})"


def parse_line(line: str) -> Event | None:
    """The event a line says, or None when it says none."""
    parts = line.strip().split("`")
    lead = parts[0].split()
    if len(parts) not in (3, 5) or len(lead) < 3 or lead[0] != "-" or not _looks_like_time(lead[1]):
        return None
    words = lead[2:]
    undo = words[0] == "undo"
    if undo:
        words = words[1:]
    entry, newer = parts[1], ""
    if words == [SUPERSEDED] and len(parts) == 5 and parts[2].strip() == "by":
        newer = parts[3]
        if not is_entry_path(newer) or newer == entry:
            return None
    elif words != [CONFIRMED] or len(parts) != 3:
        return None
    if not is_entry_path(entry):
        return None
    actor = parts[-1].strip()
    actor = actor[1:-1].strip() if actor.startswith("(") and actor.endswith(")") else ""
    return Event(lead[1], words[0], entry, newer, actor, undo)


def _looks_like_time(text: str) -> bool:
    """`YYYY-MM-DD…`: checked without `datetime` (the prompt hook's path)."""
    return (len(text) >= 10 and text[4] == "-" and text[7] == "-"
            and (text[:4] + text[5:7] + text[8:10]).isdigit())


def is_entry_path(text: str) -> bool:
    """`<slug>/bank/<file>.md`, nothing that could leave the tree."""
    parts = text.split("/")
    return (len(parts) == 3 and parts[1] == "bank" and parts[2].endswith(".md") and not parts[2].startswith(".")
            and parts[0].strip(".-") != "" and parts[0] not in (".", "..")
            and "\\" not in text and "`" not in text and "\x00" not in text and "\n" not in text
            and "\r" not in text)  # not any(...): every line of a TRUST.md asks it twice, on the prompt's path


# --- reading ---------------------------------------------------------------------------------------------


def read_events(locs: Locations, slugs: Iterable[str]) -> list[Event]:
    """The events of these projects' files, each file's in its order; a project's file speaks only for
    its own entries."""
    events: list[Event] = []
    for slug in dict.fromkeys(slugs):
        events += _own_events(slug, _read(trust_path(locs, slug)))
    return events


def trust_path(locs: Locations, slug: str) -> str:
    return os.path.join(locs.memories_path, slug, TRUST_FILE)


def _own_events(slug: str, text: str) -> list[Event]:
    own = slug + "/bank/"
    events = []
    for line in text.splitlines() if text else ():
        if line.startswith("- "):
            event = parse_line(line)
            if event is not None and event.entry.startswith(own):
                events.append(event)
    return events


def _read(path: str) -> str:
    """The file's first MAX_READ bytes, up to the last whole line in them: a writer appends only what ends
    within them (`_append_line`), so whatever lies beyond was never reported as done. "" for a file that is
    missing (one failed open, as cheap as a stat), a symlink, a FIFO or anything but a regular file."""
    data = read_regular(path, MAX_READ + 1)
    if not data:
        return ""
    if len(data) > MAX_READ:
        data = data[:data.rfind(b"\n", 0, MAX_READ) + 1]
    return data.decode("utf-8", "replace")


OUT_OF_SCOPE = "an entry of a project outside this one's scope"


def _in_force(events: list[Event]) -> dict[tuple[str, str, str], Event]:
    """For each pair (and each confirmed entry), its last event, if that is not an undo."""
    last: dict[tuple[str, str, str], Event] = {}
    for event in events:
        last.pop(event.key, None)  # re-inserted at the end: in force in the order last set
        last[event.key] = event
    return {key: event for key, event in last.items() if not event.undo}


def superseded_paths(locs: Locations, slugs: Iterable[str]) -> set[str]:
    """The entries of these projects that are superseded now: never pushed to a session."""
    return _superseded(read_events(locs, slugs))


def _superseded(events: list[Event]) -> set[str]:
    return {entry for kind, entry, _ in _in_force(events) if kind == SUPERSEDED}


def superseded_within(locs: Locations, slugs: Iterable[str],
                      budget: int = HOOK_READ) -> tuple[set[str], dict[str, str]]:
    """What the prompt and session-start hooks push by: the superseded entries of these projects, their
    TRUST.md files read in the order given within `budget` bytes together; and, per project whose file does
    not fit in what is left, why (naming the file). Those projects' entries must not be pushed at all: their
    trust state is unknown, and an entry it supersedes would be pushed as if current."""
    events: list[Event] = []
    withheld: dict[str, str] = {}
    left = budget
    for slug in dict.fromkeys(slugs):
        path = trust_path(locs, slug)
        data = read_regular(path, left + 1)  # one byte more: a file that does not fit is never read whole
        if not data:
            continue
        if len(data) > left:
            withheld[slug] = (f"its trust state ({path}) does not fit in the {budget:,} bytes the hooks read of "
                              f"the trust files in scope ({left:,} left)")
            continue
        left -= len(data)
        events += _own_events(slug, data.decode("utf-8", "replace"))
    return _superseded(events), withheld


class TrustState:
    """The trust state of the entries of some projects, at one moment (both None: now).

    `as_of`, by the time the work happened: an entry is in force from its `ts` until the `ts` of the
    entry that superseded it, a confirmation from when a person said it. `known_at`, by record time:
    what memory held then, the lines written by then. The callers that search leave out the entries
    not in force yet (`bounds`, `recall.pull.recall`)."""

    def __init__(self, events: list[Event], as_of: float | None = None, known_at: float | None = None,
                 scope: Iterable[str] | None = None) -> None:
        from ..clock import parse_iso

        self.as_of, self.known_at = as_of, known_at
        self.scope = None if scope is None else set(scope)  # the projects whose entries a reader may name
        self.superseded: dict[str, list[tuple[str, float, str]]] = {}  # old -> [(newer, when, actor)], latest last
        self.confirmed: dict[str, tuple[float, str]] = {}  # entry -> (when, actor)
        timed = [(parse_iso(e.time) or 0.0, e) for e in events]
        kept = [e for when, e in timed if known_at is None or when <= known_at]
        when_of = {id(e): when for when, e in timed}
        for event in _in_force(kept).values():
            when = when_of[id(event)]
            if as_of is not None and (_work_time(event.newer, when) if event.kind == SUPERSEDED else when) > as_of:
                continue
            if event.kind == SUPERSEDED:
                self.superseded.setdefault(event.entry, []).append((event.newer, when, event.actor))
            else:
                self.confirmed[event.entry] = (when, event.actor)

    @property
    def bounds(self) -> tuple[float, float] | None:
        """(work, record): the latest `ts` and file time of an entry in force at this moment; None: now."""
        if self.as_of is None and self.known_at is None:
            return None
        recorded = float("inf") if self.known_at is None else self.known_at
        return min(recorded, float("inf") if self.as_of is None else self.as_of), recorded

    def of(self, entry: str) -> str:
        if entry in self.superseded:
            return SUPERSEDED
        return CONFIRMED if entry in self.confirmed else "current"

    def superseded_by(self, entry: str) -> tuple[str, float, str] | None:
        """(the entry that last superseded it, when, by whom), or None while it is not superseded."""
        pairs = self.superseded.get(entry)
        return pairs[-1] if pairs else None

    def newer_name(self, entry: str) -> str | None:
        """The entry that last superseded `entry`, as a reader of this scope may see it: its id when it is
        of a project in scope, otherwise only that it is another project's (a project that links A but
        not B must not learn B's entry ids from A's TRUST.md). None while `entry` is not superseded."""
        newer = self.superseded_by(entry)
        if newer is None:
            return None
        if self.scope is None or newer[0].split("/", 1)[0] in self.scope:
            return newer[0]
        return OUT_OF_SCOPE

    def label(self, entry: str) -> str:
        """`superseded by <entry> (<date>)`, `confirmed (<date>)`, or "" for a current entry."""
        newer = self.superseded_by(entry)
        if newer is not None:
            return f"superseded by {self.newer_name(entry)} ({_day(newer[1])})"
        if entry in self.confirmed:
            return f"confirmed ({_day(self.confirmed[entry][0])})"
        return ""

    def newer_chain(self, entry: str) -> set[str]:
        """Every entry that supersedes `entry`, directly or through others (a cycle ends the walk)."""
        seen: set[str] = set()
        todo = [entry]
        while todo:
            for newer, _, _ in self.superseded.get(todo.pop(), ()):
                if newer not in seen:
                    seen.add(newer)
                    todo.append(newer)
        return seen


def _work_time(entry: str, recorded: float) -> float:
    """When the work of `<slug>/bank/<file>.md` happened: the time its file name starts with (the bank
    names it by its `ts`); `recorded` for a name without one."""
    from .entries import ts_from_name

    found = ts_from_name(entry.rsplit("/", 1)[-1])
    return recorded if found is None else found


def _day(seconds: float) -> str:
    import time

    return time.strftime("%Y-%m-%d", time.gmtime(seconds)) if seconds else "undated"


def state(locs: Locations, slugs: Iterable[str], *, as_of: float | None = None,
          known_at: float | None = None) -> TrustState:
    """The trust state of these projects' entries now, or as it stood at `as_of` (by the time the work
    happened) and `known_at` (by record time)."""
    slugs = list(slugs)
    return TrustState(read_events(locs, slugs), as_of, known_at, scope=slugs)


def as_of_time(text: str) -> float:
    """`--as-of`, `--known-at`: `2026-08-28` (to the end of that day, UTC) or an ISO time; ValueError otherwise."""
    from ..clock import parse_iso

    value = text.strip()
    day = len(value) == 10
    seconds = parse_iso(value + "T23:59:59.999Z" if day else value)
    if seconds is None:
        raise ValueError(f"not a date: {text!r} (use YYYY-MM-DD or an ISO time)")
    return seconds


# --- proposals ---------------------------------------------------------------------------------------------


class Proposal:
    """A supersession proposed (or, `kind` REJECTED, refused): `newer` would supersede `entry`, for the
    reason `evidence` says in words."""

    __slots__ = ("time", "kind", "entry", "newer", "actor", "evidence")

    def __init__(self, time: str, kind: str, entry: str, newer: str, actor: str, evidence: str = "") -> None:
        self.time, self.kind, self.entry, self.newer, self.actor = time, kind, entry, newer, actor
        self.evidence = " ".join(evidence.replace("`", "'").split())[:EVIDENCE_CHARS]

    @property
    def pair(self) -> tuple[str, str]:
        return self.entry, self.newer

    def line(self) -> str:
        said = f" — {self.evidence}" if self.kind == PROPOSED and self.evidence else ""
        return f"- {self.time} {self.kind} {SUPERSEDED} `{self.entry}` by `{self.newer}` ({self.actor}){said}"

    def __repr__(self) -> str:
        return f"Proposal({self.line()!r})"


def parse_proposal(line: str) -> Proposal | None:
    """The proposal (or rejection) a line says, or None when it says none."""
    parts = line.strip().split("`")
    lead = parts[0].split()
    if (len(parts) != 5 or len(lead) != 4 or lead[0] != "-" or not _looks_like_time(lead[1])
            or lead[2] not in (PROPOSED, REJECTED) or lead[3] != SUPERSEDED or parts[2].strip() != "by"):
        return None
    entry, newer, tail = parts[1], parts[3], parts[4].strip()
    if not (is_entry_path(entry) and is_entry_path(newer)) or entry == newer or not tail.startswith("("):
        return None
    actor, _, evidence = tail[1:].partition(")")
    return Proposal(lead[1], lead[2], entry, newer, actor.strip(), evidence.strip().lstrip("—:-").strip())


def read_proposals(locs: Locations, slugs: Iterable[str]) -> list[Proposal]:
    """The open proposals of these projects' entries, oldest first: proposed, and the pair never decided
    since (no `superseded` line for it, undo or not, and no `rejected` one)."""
    proposed: dict[tuple[str, str], Proposal] = {}
    decided: set[tuple[str, str]] = set()
    for slug in dict.fromkeys(slugs):
        text = _read(trust_path(locs, slug))
        own = slug + "/bank/"
        for line in text.splitlines() if text else ():
            if not line.startswith("- "):
                continue
            event = parse_line(line)
            if event is not None:
                if event.kind == SUPERSEDED and event.entry.startswith(own):
                    decided.add((event.entry, event.newer))
                continue
            said = parse_proposal(line)
            if said is None or not said.entry.startswith(own):
                continue
            if said.kind == REJECTED:
                decided.add(said.pair)
            else:
                proposed.setdefault(said.pair, said)
    return [p for pair, p in proposed.items() if pair not in decided]


def decided_or_proposed(locs: Locations, slug: str) -> set[tuple[str, str]]:
    """Every pair of this project's file that is proposed, superseded (or undone) or rejected: a detector
    proposes none of them again."""
    pairs: set[tuple[str, str]] = set()
    text = _read(trust_path(locs, slug))
    for line in text.splitlines() if text else ():
        if line.startswith("- "):
            event = parse_line(line)
            said = parse_proposal(line) if event is None else None
            if event is not None and event.kind == SUPERSEDED:
                pairs.add((event.entry, event.newer))
            elif said is not None:
                pairs.add(said.pair)
    return pairs


# --- writing ---------------------------------------------------------------------------------------------


def check_own(entry: str, own: Collection[str]) -> None:
    """TrustError unless `entry` is an entry of one of the projects `own` names (the writer's own project
    and its repository's other slugs): a project writes trust state only about its own entries."""
    slug = entry.split("/", 1)[0]
    if slug not in own:
        mine = next(iter(own), "none")
        raise TrustError(f"{entry} is an entry of {slug}, not of this project ({mine}): a project changes the "
                         "trust state of its own entries only")


def append(locs: Locations, event: Event, own: Collection[str]) -> str:
    """Add `event` at the end of its entry's project's TRUST.md (made with its header if missing), for a
    writer whose own projects are `own` (`check_own`); the file's path."""
    if parse_line(event.line()) is None or any(c in event.actor for c in "()`\n\r"):
        raise ValueError(f"not an event that reads back: {event!r}")
    return _append_line(locs, event.entry, event.line(), own)


def append_proposal(locs: Locations, proposal: Proposal, own: Collection[str]) -> str:
    """Add a proposal (or a rejection) at the end of its older entry's project's TRUST.md, as `append` does."""
    if parse_proposal(proposal.line()) is None or any(c in proposal.actor for c in "()`\n\r"):
        raise ValueError(f"not a proposal that reads back: {proposal!r}")
    return _append_line(locs, proposal.entry, proposal.line(), own)


def _append_line(locs: Locations, entry: str, line: str, own: Collection[str]) -> str:
    """One line appended under an exclusive lock on the file itself: the writer that finds it empty writes
    the header first, and no line goes past MAX_READ (readers would not see it: TrustError instead). Only a
    regular file is written, never through a symlink, and opening a FIFO never blocks."""
    check_own(entry, own)
    slug = entry.split("/", 1)[0]
    folder = os.path.join(locs.memories_path, slug)
    path = os.path.join(folder, TRUST_FILE)
    if not may_make_folder(locs.memories_path, slug):
        raise TrustError(f"{folder} is a symlink or not a folder in the memory tree: nothing is written through it")
    os.makedirs(folder, exist_ok=True)
    try:
        fd = os.open(path, _WRITE_FLAGS, 0o644)
    except OSError as exc:  # a symlink (ELOOP), a FIFO nobody reads (ENXIO), a folder (EISDIR), ...
        raise TrustError(f"{path} cannot be written: {exc.strerror or exc}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise TrustError(f"{path} is not a regular file: nothing was written")
        _lock(fd)
        size = os.fstat(fd).st_size
        data = ((HEADER if size == 0 else "" if _ends_with_newline(fd, size) else "\n")  # a hand edit left it open
                + line + "\n").encode("utf-8")
        if size + len(data) > MAX_READ:
            raise TrustError(f"{path} holds {size:,} bytes: a line past its first {MAX_READ:,} would never be "
                             "read, so nothing was written; move it aside or trim lines that are not events")
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)  # lets go of the lock
    return path


def _lock(fd: int) -> None:
    try:
        import fcntl
    except ImportError:  # no flock here: O_APPEND still keeps every line, only the header's place is not sure
        return
    fcntl.flock(fd, fcntl.LOCK_EX)


def _ends_with_newline(fd: int, size: int) -> bool:
    return os.pread(fd, 1, size - 1) == b"\n"
