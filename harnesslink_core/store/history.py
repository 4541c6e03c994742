"""History: every change to memory, and every use of it, one JSON line per event (SPEC §11).

`<agent dir>/history.jsonl` sits beside the ledger and is never uploaded, like the tombstones'
`forgotten.jsonl`: a ledger lost or replaced leaves it whole. It is only ever appended to. A record:

    {"at": "2026-08-28T10:30:00.000Z", "event": "banked", "actor": "autobank:codex",
     "project": "--w-shop--", "entry": "--w-shop--/bank/<file>.md", "session": "…", "detail": "…"}

Events: `banked` (the pass wrote a turn), `rewritten` (an entry that follows its source, Antigravity),
`recorded` (an agent's memory_bank), `forgotten` (who, which criteria), `given` (the prompt hook gave
it to a session; detail `brief`: the session-start brief listed it), `opened` (that session then used
it: memory_get, a read of its file, or an answer repeating its facts; detail says which). An event
and an actor are plain strings, so later ones (`superseded`, `confirmed`, `restored`) need nothing new
here. Actors: `autobank:<harness>`, `mcp:<harness>`, `hook:<harness>` (the prompt and session-start
hooks), `cli`.

Every string is redacted before it is serialised. The free text (`detail`) goes through `redact`
unless it is one lowercase word such as `brief` (no rule redacts one); an identifier (actor, project,
entry, session) goes through it when it may hold a secret by the cheap test folder names pass on the
prompt hook's path (`scope.may_hold_a_secret`), so recording what a session was given imports neither
`redact` nor `re`.

Writers append with one `write` on an `O_APPEND` descriptor per batch, so records from concurrent
processes (a pass, the prompt hooks, the MCP server, the CLI) never interleave; a line torn by a crash
is skipped when read, and the next writer starts on a line of its own (a writer that looks at the end
while another writes may leave an empty line: skipped too).
"""

from __future__ import annotations

import os
import time

from .. import wirejson
from ..paths import Locations
from ..safefile import open_append, open_regular
from .scope import may_hold_a_secret

HISTORY_FILE = "history.jsonl"  # in the agent dir, beside the ledger
FIELDS = ("at", "event", "actor", "project", "entry", "session", "detail")
DETAIL_CHARS = 300
BRIEF = "brief"  # the detail of a `given` record for an entry the session-start brief listed

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator


def history_path(locs: Locations) -> str:
    return os.path.join(locs.agent_path, HISTORY_FILE)


def stamp(ts: float) -> str:
    """`clock.iso` without datetime (the prompt hook records what it gave)."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ts)) + f".{int(ts * 1000) % 1000:03d}Z"


def event(name: str, actor: str, *, entry: str = "", project: str = "", session: str = "", detail: str = "",
          at: float | None = None) -> dict[str, str]:
    """One record. `entry` is `<slug>/bank/<file>.md` (the id memory_search shows); `project` defaults to its slug."""
    return {"at": stamp(time.time() if at is None else at), "event": name, "actor": actor,
            "project": project or entry.split("/", 1)[0], "entry": entry, "session": session or "",
            "detail": detail[:DETAIL_CHARS]}


def entry_id(path: os.PathLike[str] | str) -> str:
    """`<slug>/bank/<file>.md` of an entry's path."""
    text = os.fspath(path)
    folder, name = os.path.split(text)
    return f"{os.path.basename(os.path.dirname(folder))}/bank/{name}"


def append(locs: Locations, records: Iterable[dict[str, str]]) -> None:
    """Append records, redacted, in one write (see the module docstring)."""
    lines = "".join(wirejson.dumps(_redacted(record)) + "\n" for record in records)
    if not lines:
        return
    os.makedirs(locs.agent_path, exist_ok=True)
    fd = open_append(history_path(locs), 0o600, readable=True)  # read: its last byte
    if fd is None:
        raise OSError(f"{HISTORY_FILE} is not a regular file")
    try:
        if not _ends_a_line(fd):
            lines = "\n" + lines  # the last writer died mid-line: that line stays torn, ours stay whole
        data = lines.encode("utf-8", "surrogatepass")
        while data:  # a regular file takes it in one write; a short one (a full disk) raises next round
            data = data[os.write(fd, data):]
    finally:
        os.close(fd)


def _ends_a_line(fd: int) -> bool:
    size = os.fstat(fd).st_size
    return size == 0 or os.pread(fd, 1, size - 1) == b"\n"


def _redacted(record: dict[str, str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in record.items():
        if not isinstance(value, str) or not value:
            out[key] = value
        elif (key == "detail" and not _one_word(value)) or may_hold_a_secret(value) or not value.isprintable():
            out[key] = _redact(value)
        else:
            out[key] = value
    return out


def _one_word(text: str) -> bool:
    """A detail no rule would redact, such as a `given` record's `brief`: recorded without importing `redact`."""
    return len(text) <= 16 and text.isalpha() and text.isascii() and text.islower()


def _redact(text: str) -> str:
    from ..redact import redact

    return redact(text)


# --- reading ------------------------------------------------------------------------------------


BLOCK = 1 << 16  # read this much at a time, from either end
LONGEST_LINE = 1 << 16  # a record is far shorter (its detail is cut to DETAIL_CHARS): a longer line is skipped


def read(locs: Locations) -> list[dict[str, str]]:
    """Every record, oldest first (see `oldest`)."""
    return list(oldest(locs))


def oldest(locs: Locations) -> Iterator[dict[str, str]]:
    """Every record, oldest first, read a block at a time: a line that does not parse (torn by a crash)
    or is longer than any record is skipped; a file that is not a regular one reads as empty."""
    return _records(locs, backward=False)


def newest(locs: Locations, *, projects: Iterable[str] | None = None, entry: str | None = None,
           since: str | None = None) -> Iterator[dict[str, str]]:
    """Every record (or those `matching` these filters), the last written first, read a block at a time from
    the end (what is shown first costs the same however long the history is); skipped lines as in `oldest`.
    A filter costs less than a parse a line (`_Narrowed`)."""
    if projects is None and entry is None and since is None:
        return _records(locs, backward=True)
    projects = None if projects is None else list(projects)
    narrowed = _Narrowed([_needles(projects), _needles(None if entry is None else [_entry_needle(entry)])], since)
    return matching(_records(locs, backward=True, narrow=narrowed), projects=projects, entry=entry, since=since)


class _Narrowed:
    """The lines of a block, read from the end, that may hold a wanted record: a line that holds none of a
    group's needles (how a project or an entry is written) is never parsed, nor a block that holds none; with
    `since`, none once REORDER_WINDOW records in a row are older (the file is appended in time order within
    that window: no line before them is newer)."""

    def __init__(self, groups: list[tuple[bytes, ...] | None], since: str | None) -> None:
        self.groups = [group for group in groups if group is not None]
        self.since = None if since is None else since.encode("utf-8")
        self.older = 0  # records in a row older than `since`

    def __call__(self, lines: list[bytes]) -> list[bytes]:
        if self.since is not None:
            lines = self._recent(lines, self.since)
        for group in self.groups:
            whole = b"\n".join(lines)  # no needle holds a newline: one search of the block first
            held = [needle for needle in group if needle in whole]
            if len(held) == 1:
                lines = [line for line in lines if held[0] in line]
            else:
                lines = [line for line in lines if any(needle in line for needle in held)]
        return lines

    def _recent(self, lines: list[bytes], since: bytes) -> list[bytes]:
        for n, line in enumerate(lines):
            at = _time_of(line)
            if at is not None:
                self.older = self.older + 1 if at < since else 0
                if self.older > REORDER_WINDOW:
                    return lines[:n]
        return lines

    def unwanted(self, block: bytes) -> bool:
        """Whether no whole line of this block can be wanted: one group's needles all absent (never with
        `since`, which counts every record)."""
        return self.since is None and any(not any(needle in block for needle in group) for group in self.groups)

    @property
    def done(self) -> bool:
        return self.older > REORDER_WINDOW


def _needles(texts: list[str] | None) -> tuple[bytes, ...] | None:
    """The bytes one of `texts` is written as in a record, for a test before the parse; None (no test) when
    there is no filter or one of them may be written escaped (a quote, a backslash, a control or non-ASCII
    character)."""
    if texts is None or not all(t.isascii() and t.isprintable() and '"' not in t and "\\" not in t for t in texts):
        return None
    return tuple(t.encode("ascii") for t in texts)


def _entry_needle(wanted: str) -> str:
    """What every entry id that `wanted` names holds (`names`): its file name, or the start of it."""
    return wanted.strip().rstrip("/").rsplit("/", 1)[-1]


def _time_of(line: bytes) -> bytes | None:
    """A record's `at`, as written: sliced from where `append` puts it, parsed from any other line."""
    if line.startswith(b'{"at":"') and line[31:32] == b'"':
        return line[7:31]
    record = next(_parsed([line]), None)
    return None if record is None else record["at"].encode("utf-8")


def _records(locs: Locations, *, backward: bool, narrow: _Narrowed | None = None) -> Iterator[dict[str, str]]:
    fd = open_regular(history_path(locs))
    if fd is None:
        return
    try:
        for lines in _lines(_blocks(fd, backward=backward), backward=backward,
                            unwanted=None if narrow is None else narrow.unwanted):
            yield from _parsed(lines if narrow is None else narrow(lines))
            if narrow is not None and narrow.done:
                return
    finally:
        os.close(fd)


def _blocks(fd: int, *, backward: bool) -> Iterator[bytes]:
    if not backward:
        while block := os.read(fd, BLOCK):
            yield block
        return
    end = os.fstat(fd).st_size
    while end > 0:
        start = max(0, end - BLOCK)
        yield os.pread(fd, end - start, start)
        end = start


def _lines(blocks: Iterable[bytes], *, backward: bool,
           unwanted: Callable[[bytes], bool] | None = None) -> Iterator[list[bytes]]:
    """The lines of a file read block by block (from its end: `backward`), in the order they are read, a
    list per block; a line longer than LONGEST_LINE is skipped, and never held whole. A block for which
    `unwanted(block)` holds gives only the line it ends (or, backward, starts) that runs into another."""
    part: bytes | None = b""  # a line read in part, to be joined to the next block; None: one too long
    for block in blocks:
        if unwanted is not None and unwanted(block):
            first, last = block.find(b"\n"), block.rfind(b"\n")
            if first != last:
                block = block[:first + 1] + block[last:]  # the pieces that run on, an empty line between
        pieces = block.split(b"\n")
        if backward:
            pieces.reverse()
        unfinished = pieces.pop()  # runs on into the next block
        if pieces:
            if part is None:
                del pieces[0]
            else:
                pieces[0] = pieces[0] + part if backward else part + pieces[0]
            yield pieces
            part = b""
        if part is not None:
            part = unfinished + part if backward else part + unfinished
            if len(part) > LONGEST_LINE:
                part = None
    if part:
        yield [part]


def _parsed(lines: Iterable[bytes]) -> Iterator[dict[str, str]]:
    for line in lines:
        if len(line) > LONGEST_LINE or not line.strip():
            continue
        try:
            value = wirejson.loads(line.decode("utf-8", "replace"))
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict) and isinstance(value.get("event"), str) and isinstance(value.get("at"), str):
            yield {name: str(value.get(name) or "") for name in FIELDS}


def matching(records: Iterable[dict[str, str]], *, projects: Iterable[str] | None = None, entry: str | None = None,
             since: str | None = None) -> Iterator[dict[str, str]]:
    """The records of these projects (None: all), of this entry (`names`), at or after `since` (an ISO
    time or date), in the order given: a stream, so a long history costs no memory."""
    wanted = None if projects is None else set(projects)
    return (r for r in records
            if (wanted is None or r["project"] in wanted)
            and (entry is None or names(r["entry"], entry))
            and (since is None or r["at"] >= since))


REORDER_WINDOW = 10_000  # records: how far from its time's place `by_time` moves one


def by_time(newest_written: Iterable[dict[str, str]], window: int = REORDER_WINDOW) -> Iterator[dict[str, str]]:
    """A stream of records, the last written first (`newest`), put newest first by their times, with the
    memory of `window` records: exact unless a record was written more than `window` records away from
    where its time puts it (an `opened` a backfill finds long after the session: it is listed where it was
    written, give or take `window`). Records of the same moment stay in the order they came."""
    import heapq  # not on the prompt hook's path, which records what it gave

    held: list[_Later] = []
    for seq, record in enumerate(newest_written):
        heapq.heappush(held, _Later(record, seq))
        if len(held) > window:
            yield heapq.heappop(held).record
    while held:
        yield heapq.heappop(held).record


class _Later:
    """A record in `by_time`'s heap, whose smallest is the latest: by time, then by the order it came."""

    __slots__ = ("key", "record")

    def __init__(self, record: dict[str, str], seq: int) -> None:
        self.key, self.record = (record["at"], -seq), record

    def __lt__(self, other: _Later) -> bool:
        return self.key > other.key


def newest_first(records: list[dict[str, str]], *, projects: Iterable[str] | None = None, entry: str | None = None,
                 since: str | None = None) -> list[dict[str, str]]:
    """`matching`, newest first by their times; records of the same moment keep the order they were
    written in, reversed."""
    chosen = list(matching(records, projects=projects, entry=entry, since=since))
    order = {id(r): i for i, r in enumerate(chosen)}
    return sorted(chosen, key=lambda r: (r["at"], order[id(r)]), reverse=True)


def names(entry: str, wanted: str) -> bool:
    """Whether `wanted` names this entry: its id, its file name or stem, its time id, or a path ending in it."""
    wanted = wanted.strip().rstrip("/")
    if not entry or not wanted:
        return False
    name = entry.rsplit("/", 1)[-1]
    return (entry == wanted or wanted.endswith("/" + entry) or name == wanted or name == wanted + ".md"
            or name.startswith(wanted + "--"))


class Use:
    """How one entry was used: sessions the prompt hook gave it to, sessions whose brief listed it, sessions
    that opened it, when it was last opened."""

    __slots__ = ("given", "listed", "opened", "last_used")

    def __init__(self) -> None:
        self.given: set[tuple[str, str]] = set()  # (harness, session)
        self.listed: set[tuple[str, str]] = set()
        self.opened: set[tuple[str, str]] = set()
        self.last_used = ""

    def as_dict(self) -> dict[str, object]:
        return {"given": len(self.given), "listed": len(self.listed), "opened": len(self.opened),
                "last_used": self.last_used or None}


def usage(records: Iterable[dict[str, str]]) -> dict[str, Use]:
    """Per entry: given, opened, last used (`harnesslink history --entry`, the viewer)."""
    out: dict[str, Use] = {}
    for r in records:
        note_use(out, r)
    return out


def note_use(uses: dict[str, Use], r: dict[str, str]) -> None:
    """Add one record to `usage`'s answer (a stream's, one record at a time)."""
    if r["event"] not in ("given", "opened") or not r["entry"]:
        return
    use = uses.setdefault(r["entry"], Use())
    who = (harness_of(r["actor"]), r["session"])
    if r["event"] == "given":
        (use.listed if r.get("detail") == BRIEF else use.given).add(who)
    else:
        use.opened.add(who)
        use.last_used = max(use.last_used, r["at"])


def harness_of(actor: str) -> str:
    """`autobank:codex` -> `codex`; `cli` -> ``."""
    return actor.partition(":")[2]
