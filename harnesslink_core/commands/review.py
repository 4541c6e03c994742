"""`harnesslink review [--project DIR | --all] [--json]`: walk through what needs a person (SPEC §11).

What it lists, in this order, each entry once with every reason it has (`WORDS` says them for `--help`):
learnings agents recorded, proposed supersessions, entries given often and never opened. On a terminal it
asks one key per item; every decision goes through the library that owns it (`control.forget`,
`control.supersede`) and so reaches the history with actor `cli`. Keeping is a `reviewed` record whose
detail names the reasons it was kept for: an item is not listed again for a reason it was kept for. A
confirmed, superseded or forgotten entry is never listed. With `--json`, or when stdin is not a terminal,
it lists and asks nothing.

The MCP tools never reach here: an agent records and supersedes its own project's entries, a person
reviews and confirms (tests/commands/test_review.py holds that no memory tool can).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from .. import clock
from ..control import forget, supersede
from ..errors import ForgetError, NoSuchEntry, TrustError
from ..paths import Locations
from ..safefile import is_regular, tree_folder
from ..store import history, trust
from ..store.entries import read_entry
from ..store.scope import Folders, all_projects, is_foreign, project_slug
from .history import add_scope_arguments, folders_in_scope

ACTOR = "cli"
GIVEN_OFTEN = 5  # given to this many sessions, opened by none: worth a person's look
EXCERPT_CHARS = 240
RECORDED, PROPOSED, UNOPENED = "recorded", "proposed", "unopened"
KEPT = "kept: "  # a `reviewed` record's detail: `kept: recorded, unopened`
KEYS = "k keep · f forget · s supersede · c confirm · n/Enter next · q quit"

WORDS = f"""why an entry is listed, in this order (each entry once, with every reason it has):
  recorded   an agent recorded it as a learning (memory_bank, actor mcp:<harness>) and no person has
             looked at it yet
  proposed   a newer entry of the same project and folder is proposed to supersede it: it says the subject
             changed ("from X to Y" where this one set up X), touched the same files; not applied until
             you say so (s, then Enter); k rejects it, and it is never proposed again
  unopened   the prompt hook gave it to at least {GIVEN_OFTEN} sessions and none of them opened it
             (memory_get, or a read of its file): it may be noise; nothing is deleted for it on its own
keys, one per entry, on a terminal:
  k          keep it as it is; it is not listed again for these reasons (a `reviewed` line in the history)
  f          forget it, as `harnesslink forget` does (file, index row, MAIN.md and summary lines; its turn
             is never banked again)
  s          supersede it: asks for the newer entry's id (for a proposal, Enter takes the proposed one),
             as `harnesslink supersede OLD NEW`
  c          confirm it: a person says it holds, as `harnesslink confirm`
  n, Enter   next: decide later (it is listed again next time)
  q          quit: the rest are left for later (Ctrl-C too)
every decision is in `harnesslink history` with actor cli. A confirmed, superseded or forgotten entry is
never listed. With --json, or when stdin is not a terminal, the items are listed and nothing is asked."""


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "review", help="Walk through what needs a person: agents' learnings, proposed supersessions, unused entries",
        description="Each item with its title, date, harness, project, an excerpt and why it is listed; on a "
                    "terminal one key decides it. By default this folder's project and the projects linked to it.",
        epilog=WORDS, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_scope_arguments(parser)
    parser.add_argument("--json", action="store_true", help="list the items as JSON and ask nothing")


# --- what needs a person ---------------------------------------------------------------------------------


class Proposal:
    """A supersession proposed, not applied: `newer` would supersede `old`, for the reason `evidence` says."""

    __slots__ = ("old", "newer", "evidence")

    def __init__(self, old: str, newer: str, evidence: str) -> None:
        self.old, self.newer, self.evidence = old, newer, evidence


def proposed_supersessions(locs: Locations, slugs: list[str]) -> list[Proposal]:
    """The supersessions proposed for these projects' entries and not yet decided: the one place `review`
    takes them from. The detector (`control.detect`, run by the background pass) writes them into each
    project's TRUST.md, so every machine that pulls the tree lists the same ones; it never applies one."""
    return [Proposal(p.entry, p.newer, p.evidence) for p in trust.read_proposals(locs, slugs)]


class Item:
    """One thing to decide: an entry, why it is listed (reason key -> words), and for a proposal the newer entry."""

    def __init__(self, entry: str, path: Path, newer: str = "") -> None:
        self.entry = entry  # `<slug>/bank/<file>.md`
        self.project = entry.split("/", 1)[0]
        self.path = path
        self.newer = newer
        self.reasons: dict[str, str] = {}
        read = read_entry(path, self.project)
        self.title = read.title if read else path.name
        self.ts = read.ts if read else 0.0
        self.harness = read.origin if read else "unknown"
        self.cwd = read.cwd if read else ""
        text = " ".join(((read.result or read.prompt) if read else "").split())
        self.excerpt = text if len(text) <= EXCERPT_CHARS else text[:EXCERPT_CHARS - 1].rstrip() + "…"
        self.given = self.opened = 0

    @property
    def kind(self) -> str:
        return PROPOSED if self.newer else next(iter(self.reasons))

    def as_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "entry": self.entry, "title": self.title,
                "ts": clock.iso(self.ts) if self.ts else None, "harness": self.harness, "project": self.project,
                "excerpt": self.excerpt,
                "why": [{"reason": _kind_of(key), "words": words} for key, words in self.reasons.items()],
                "newer": self.newer or None, "given": self.given, "opened": self.opened}


def _kind_of(reason: str) -> str:
    return reason.split(" ", 1)[0]


def collect(locs: Locations, scope: list[str] | None, folders: Folders | None = None) -> list[Item]:
    """What needs a person in these projects (None: every project), in the order `review` asks; with
    `folders` (`scope.scope_folders`), never an entry of another folder that only shares a slug."""
    from ..store.ledger import tombstones

    slugs = all_projects(locs) if scope is None else scope
    records = history.newest_first(history.read(locs), projects=scope)[::-1]  # oldest first
    state = trust.state(locs, slugs)
    forgotten = tombstones(locs)
    kept = _kept(records)
    use = history.usage(records)

    def present(entry: str) -> Path | None:
        """The entry's file, while it is there and not forgotten."""
        slug, _, name = entry.partition("/bank/")
        path = locs.memories / slug / "bank" / name
        ok = (trust.is_entry_path(entry) and tree_folder(str(locs.memories), slug, "bank") is not None
              and is_regular(os.fspath(path)) and not forgotten.covers(slug, name))  # never a link's
        return path if ok else None

    def live(entry: str) -> Path | None:
        """The entry's file while it still needs a person: present, neither confirmed nor superseded."""
        return present(entry) if state.of(entry) == "current" else None

    items: dict[tuple[str, str], Item] = {}

    def add(entry: str, reason: str, words: str, newer: str = "") -> None:
        if reason in kept.get(entry, ()):
            return
        key = (entry, newer)
        if key not in items:
            path = live(entry)
            if path is None:
                return
            item = Item(entry, path, newer)
            if folders and is_foreign(item.cwd, item.project, folders):
                return
            items[key] = item
        items[key].reasons[reason] = words

    for r in records:
        if r["event"] == RECORDED and r["actor"].split(":", 1)[0] == "mcp" and r["entry"]:
            by = history.harness_of(r["actor"]) or "an agent"
            add(r["entry"], RECORDED, f"{by} recorded it through memory_bank on {r['at'][:10]}; "
                                      "no person has looked at it" + _supersedes(state, r["entry"]))
    for proposal in proposed_supersessions(locs, slugs):
        if present(proposal.newer) is not None and state.of(proposal.newer) != trust.SUPERSEDED:
            add(proposal.old, f"{PROPOSED} {proposal.newer}",
                f"{proposal.newer} is proposed to supersede it: {proposal.evidence}", newer=proposal.newer)
    for entry, u in sorted(use.items(), key=lambda pair: (-len(pair[1].given), pair[0])):
        if len(u.given) >= GIVEN_OFTEN and not u.opened:
            add(entry, UNOPENED, f"given to {len(u.given)} sessions, opened by none")
    for (entry, _), item in items.items():
        if entry in use:
            item.given, item.opened = len(use[entry].given), len(use[entry].opened)
    return list(items.values())


def _kept(records: list[dict[str, str]]) -> dict[str, set[str]]:
    """Per entry, the reasons a person kept it for (its `reviewed` records)."""
    kept: dict[str, set[str]] = {}
    for r in records:
        if r["event"] == "reviewed" and r["detail"].startswith(KEPT):
            kept.setdefault(r["entry"], set()).update(r["detail"][len(KEPT):].split(", "))
    return kept


def _supersedes(state: trust.TrustState, entry: str) -> str:
    older = sorted(old for old, pairs in state.superseded.items() if entry in {newer for newer, _, _ in pairs})
    return f"; it supersedes {', '.join(older)}" if older else ""


# --- showing ---------------------------------------------------------------------------------------------


def show(item: Item, number: int, total: int) -> str:
    when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(item.ts)) if item.ts else "undated"
    lines = [f"[{number}/{total}] {item.title}",
             f"  {when} · {item.harness} · {item.project}",
             f"  {item.entry}"]
    if item.excerpt:
        lines.append(f"  > {item.excerpt}")
    lines += [f"  why: {words}" for words in item.reasons.values()]
    return "\n".join(lines)


# --- asking ----------------------------------------------------------------------------------------------


class Terminal:
    """Single keys from a terminal: no echo and no Enter needed while it is open (cbreak: output and
    Ctrl-C behave as usual), and the terminal's own settings put back however it closes, Ctrl-C included."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.saved: list | None = None

    def __enter__(self) -> Terminal:
        import termios
        import tty

        self.saved = termios.tcgetattr(self.fd)
        tty.setcbreak(self.fd)
        return self

    def __exit__(self, *exc: object) -> None:
        self._restore()

    def _restore(self) -> None:
        import termios

        if self.saved is not None:
            termios.tcsetattr(self.fd, termios.TCSADRAIN, self.saved)

    def key(self, prompt: str) -> str:
        """One key, lower case; Enter is `n`, end of input `q`."""
        _say(prompt, end="")
        data = os.read(self.fd, 32)  # an arrow key is several bytes at once: its first decides (nothing)
        char = data[:1].decode("latin-1").lower()
        _say(char if char.isprintable() else "")
        if char == "\x03":  # a terminal whose ISIG was off
            raise KeyboardInterrupt
        return "q" if char in ("", "\x04") else "n" if char in ("\r", "\n") else char

    def line(self, prompt: str) -> str:
        """A line typed as usual (echoed, editable), then back to single keys."""
        import tty

        self._restore()
        try:
            _say(prompt, end="")
            data = b""
            while not data.endswith(b"\n"):
                chunk = os.read(self.fd, 1024)
                if not chunk:
                    break
                data += chunk
            return data.decode("utf-8", "replace").strip()
        finally:
            tty.setcbreak(self.fd)


def _say(text: str, end: str = "\n") -> None:
    sys.stdout.write(text + end)
    sys.stdout.flush()


class Tally:
    def __init__(self) -> None:
        self.done: dict[str, int] = {"kept": 0, "forgotten": 0, "superseded": 0, "confirmed": 0}
        self.later = 0

    def line(self) -> str:
        said = ", ".join(f"{word} {n}" for word, n in self.done.items() if n)
        return f"reviewed {sum(self.done.values())}" + (f" ({said})" if said else "") + f"; {self.later} left for later"


def walk(locs: Locations, items: list[Item], terminal: Terminal, cwd: str) -> Tally:
    """Ask one key per item and carry out each decision; `q` leaves the rest for later."""
    tally = Tally()
    settled: set[str] = set()  # forgotten, superseded or confirmed here: its other items are moot
    for number, item in enumerate(items, 1):
        if item.entry in settled:
            continue
        _say("\n" + show(item, number, len(items)))
        while True:
            key = terminal.key(f"{KEYS} > ")
            if key == "q":
                tally.later += sum(1 for rest in items[number - 1:] if rest.entry not in settled)
                return tally
            if key == "n":
                tally.later += 1
                break
            try:
                done = _decide(locs, item, key, terminal, cwd)
            except (ForgetError, NoSuchEntry, TrustError) as exc:
                _say(f"  not done: {exc}")
                continue
            if done is None:
                _say(f"  keys: {KEYS}")
                continue
            word, message = done
            _say(f"  {message}")
            tally.done[word] += 1
            if word != "kept":
                settled.add(item.entry)
            break
    return tally


def _decide(locs: Locations, item: Item, key: str, terminal: Terminal, cwd: str) -> tuple[str, str] | None:
    """Carry out one key on one item: (what was done, the line saying so), or None for a key that means nothing."""
    home = _home(item, cwd)
    if key == "k":
        keep(locs, item, cwd)
        return "kept", f"kept; not listed again as {' or '.join(_kind_of(r) for r in item.reasons)}"
    if key == "f":
        targets = forget.select(locs, ids=[item.entry], projects=[item.project])
        summary = forget.forget(locs, targets, actor=ACTOR, why=f"review: {', '.join(item.reasons)}")
        if summary.failed:
            return "forgotten", f"forgotten, but its file could not be removed: {summary.failed[0][1]}"
        return "forgotten", f"forgot {item.entry}: it is never given, found or banked again"
    if key == "s":
        asked = "newer entry's id" + (f" (Enter: {item.newer})" if item.newer else "") + ": "
        newer = terminal.line(f"  {asked}") or item.newer
        if not newer:
            raise TrustError("no newer entry given; nothing superseded")
        old = supersede.resolve(locs, home, item.entry)
        change = supersede.supersede(locs, home, old, supersede.resolve(locs, home, newer), actor=ACTOR)
        return "superseded", change.message
    if key == "c":
        change = supersede.confirm(locs, home, supersede.resolve(locs, home, item.entry), actor=ACTOR)
        return "confirmed", change.message
    return None


def _home(item: Item, cwd: str) -> str:
    """The folder a decision on `item` is made from, which resolves its ids and whose own entries it may
    change: the entry's own folder when it names one of its project, `cwd` otherwise."""
    return item.cwd if item.cwd and project_slug(item.cwd) == item.project else cwd


def keep(locs: Locations, item: Item, cwd: str = "") -> None:
    """A person kept the entry as it is: one `reviewed` record naming the reasons it was kept for; for a
    proposal, a `rejected` line in TRUST.md too, so no machine proposes the pair again."""
    if item.newer:
        trust.append_proposal(locs, trust.Proposal(clock.iso(clock.now()), trust.REJECTED, item.entry, item.newer,
                                                   ACTOR), supersede.own_projects(locs, _home(item, cwd)))
    history.append(locs, [history.event("reviewed", ACTOR, entry=item.entry, detail=KEPT + ", ".join(item.reasons))])


# --- the verb --------------------------------------------------------------------------------------------


def run(args: argparse.Namespace, locs: Locations) -> int:
    folders = folders_in_scope(args, locs)
    scope = None if folders is None else list(folders)
    items = collect(locs, scope, folders)
    if args.json:
        print(json.dumps({"projects": scope, "given_often": GIVEN_OFTEN, "items": [i.as_dict() for i in items]},
                         indent=2))
        return 0
    if not items:
        where = "any project" if scope is None else ", ".join(scope) or "this folder"
        print(f"nothing to review in {where}")
        return 0
    if not _is_terminal(sys.stdin):
        for number, item in enumerate(items, 1):
            print(show(item, number, len(items)) + "\n")
        print(f"{len(items)} to review. stdin is not a terminal, so nothing was asked: run `harnesslink review` "
              "in a terminal to decide, or add --json to read the list")
        return 0
    cwd = _folder(args.project or "", locs)
    with Terminal(sys.stdin.fileno()) as terminal:
        tally = walk(locs, items, terminal, cwd)
    print("\n" + tally.line())
    return 0


def _folder(project: str, locs: Locations) -> str:
    """The folder whose scope resolves an id typed for `s` when the entry's own folder is not known."""
    value = project.strip()
    if not value or value.startswith("--"):  # none, or a slug
        return os.getcwd()
    return os.path.abspath(str(locs.home) + value[1:] if value.startswith("~") else value)


def _is_terminal(stream: object) -> bool:
    try:
        return os.isatty(stream.fileno())  # type: ignore[attr-defined]
    except (AttributeError, ValueError, OSError):
        return False
