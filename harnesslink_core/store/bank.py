"""The entry format (SPEC §3): one Markdown file per finished turn or per learning an agent recorded
(`memory_bank`, SPEC §10), rendered here with its frontmatter and sections, and its name (`name_stem`,
`candidates`), by which an entry already written is found again (`find_entry`, `find_learning`).
Reading one back is `entries.py`'s; writing one durably is `durable.py`'s, through `commit.py`."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import orjson

from .. import clock
from ..model import Turn
from ..redact import redact, redact_value
from ..safefile import read_regular
from .scope import project_slug

try:
    from _blake2 import blake2b  # what hashlib.blake2b is, without hashlib loading OpenSSL (~2 ms)
except ImportError:  # not CPython
    from hashlib import blake2b

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the stop hook's pass)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

    from ..redact import Memo

PROMPT_CAP = 2_000
RESULT_CAP = 4_000
ACTION_LINE_CAP = 400
ACTIONS_MAX = 40
FILE_CAP = 1_000_000  # the uploader's MEMORY_UPLOAD_MAX_BYTES is 1 MB; stay under it
TITLE_CAP = 80
SLUG_CAP = 60
SECTIONS = ("## Prompt", "## Actions", "## Result")
LEARNING_ACTIONS = "(a learning recorded with memory_bank)"
LEARNING_ORIGIN = "mcp"  # a learning's turn_key prefix, and its harness in the ledger


def cap(text: str, limit: int) -> str:
    """At most `limit` characters, saying how much was cut."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"…[cut: {len(text) - limit} more characters]"


_SPACES = re.compile(r"\s+")
_NOT_SLUG = re.compile(r"[^a-z0-9]+")
_PLAIN_TAG = re.compile(r"[a-z0-9_][a-z0-9_.-]*")
_HEADING = re.compile(r"(?m)^(## (?:Prompt|Actions|Result)\s*)$")


def make_title(prompt: str) -> str:
    """The prompt's first meaningful line, whitespace collapsed, short."""
    for line in prompt.splitlines():
        line = _SPACES.sub(" ", line).strip().lstrip("#>*- ").strip()
        if _has_word_character(line):
            return line if len(line) <= TITLE_CAP else line[: TITLE_CAP - 1].rstrip() + "…"
    return "Untitled turn"


def _has_word_character(line: str) -> bool:
    """What `re.search(r"[A-Za-z0-9\u00c0-\uffff]", line)` finds, without compiling that class (3 ms: it spans
    most of the BMP)."""
    return any("a" <= c <= "z" or "A" <= c <= "Z" or "0" <= c <= "9" or "\u00c0" <= c <= "\uffff" for c in line)


def title_slug(title: str) -> str:
    slug = _NOT_SLUG.sub("-", title.lower()).strip("-")[:SLUG_CAP].strip("-")
    return slug or "turn"


def yaml_quote(value: str) -> str:
    # A JSON string is a valid YAML double-quoted scalar; escape the line separators YAML would fold.
    return orjson.dumps(value).decode().replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _tag(name: str) -> str:
    return name if _PLAIN_TAG.fullmatch(name) else yaml_quote(name)


def _guard_headings(text: str) -> str:
    """Keep a prompt or result from faking one of our section headings."""
    return _HEADING.sub(r" \1", text) if "## " in text else text


def action_lines(turn: Turn, scrub: Callable[[str], str] | None = None) -> list[str]:
    scrub = scrub or redact
    lines = []
    for action in turn.actions[:ACTIONS_MAX]:
        value = redact_value(action.input)  # the values, before JSON escapes a newline or a quote
        try:
            payload = orjson.dumps(value).decode()
        except TypeError:
            payload = orjson.dumps(scrub(str(action.input))).decode()
        lines.append(cap(f"- {action.tool}: {payload}", ACTION_LINE_CAP))
    if len(turn.actions) > ACTIONS_MAX:
        lines.append(f"- …[cut: {len(turn.actions) - ACTIONS_MAX} more actions]")
    return lines


def tags(turn: Turn) -> list[str]:
    seen: dict[str, None] = {}
    for action in turn.actions:
        seen.setdefault(action.tool, None)
    return list(seen)


@dataclass
class Entry:
    name_stem: str  # `<file-safe ISO>--<title slug>`
    file_iso: str
    text: str
    turn_key: str
    # `text`'s frontmatter and sections exactly as `entries.split_frontmatter` / `entries.parse_entry` read
    # them back, so the MAIN.md index, the summaries and the search index need not parse what was just
    # written; None when the text holds anything that would make that reading differ (then it is parsed)
    meta: dict[str, object] | None = None
    sections: dict[str, str] | None = None


def frontmatter(*, file_iso: str, ts: str, title: str, tags: list[str], cwd: str, session_id: str,
                harness: str, turn_key: str, source: str) -> list[str]:
    """An entry's frontmatter lines (SPEC §3), in the contract's order; no `harness` line when it is ""."""
    return _frontmatter(file_iso=file_iso, ts=ts, title=title, tags=tags, cwd=redact(cwd), session_id=session_id,
                        harness=harness, turn_key=turn_key, source=source)


def _frontmatter(*, file_iso: str, ts: str, title: str, tags: list[str], cwd: str, session_id: str,
                 harness: str, turn_key: str, source: str) -> list[str]:
    return [
        "---",
        f"id: {file_iso}",
        f"ts: {yaml_quote(ts)}",
        f"title: {yaml_quote(title)}",
        "tags:" + ("" if tags else " []"),
        *[f"  - {t}" for t in tags],
        f"cwd: {yaml_quote(cwd)}",
        f"session_id: {yaml_quote(session_id)}",
        *([f"harness: {harness}"] if harness else []),
        f"turn_key: {yaml_quote(turn_key)}",
        f"source: {source}",
        "---",
    ]


def render(turn: Turn, memo: Memo | None = None) -> Entry:
    """A finished turn as its entry; `memo`: the redactions a pass remembers (`redact.Memo`)."""
    scrub = redact if memo is None else memo.of(redact)
    prompt = scrub(turn.prompt.strip())
    return _compose(
        at=turn.ended, title=make_title(scrub(turn.title) if turn.title else prompt),
        tags=[_tag(t) for t in tags(turn)], cwd=turn.cwd, session_id=turn.session_id, harness=turn.harness,
        turn_key=turn.key, source=f"autobank:{turn.harness}",
        prompt=cap(prompt, PROMPT_CAP) or "(empty prompt)",
        actions="\n".join(action_lines(turn, scrub)) or "(no tool calls)",
        result=cap(scrub(turn.result.strip()), RESULT_CAP) or "(no answer)", scrub=scrub,
    )


def learning_key(project: str, text: str) -> str:
    """A learning's turn_key, `mcp:<project digest>:<text digest>`: the same words in one project, one key."""
    return f"{LEARNING_ORIGIN}:{_digest(project)}:{_digest(' '.join(text.split()))}"


def render_learning(text: str, *, title: str, tags: list[str], at: float, cwd: str, session_id: str,
                    harness: str, source: str) -> Entry:
    """A learning an agent recorded (`memory_bank`, SPEC §10) as an entry of the SPEC §3 shape.

    Its title stands as the Prompt and its text as the Result; its turn_key is `learning_key`,
    so the same words recorded twice in a project are one entry.
    """
    text = redact(text.strip())
    title = make_title(redact(title) or text)
    return _compose(
        at=at, title=title, tags=[_tag(t) for t in tags], cwd=cwd, session_id=session_id, harness=harness,
        turn_key=learning_key(project_slug(cwd), text), source=source,
        prompt=title, actions=LEARNING_ACTIONS, result=cap(text, RESULT_CAP),
    )


def _digest(text: str) -> str:
    return blake2b(text.encode("utf-8", "replace"), digest_size=10).hexdigest()


def _compose(*, at: float, title: str, tags: list[str], cwd: str, session_id: str, harness: str, turn_key: str,
             source: str, prompt: str, actions: str, result: str, scrub: Callable[[str], str] | None = None) -> Entry:
    """The entry's text: frontmatter and the three sections; the Result is trimmed to keep the file under FILE_CAP."""
    ts = clock.iso(at)
    file_iso = clock.file_safe(ts)
    cwd = (scrub or redact)(cwd)
    front = _frontmatter(file_iso=file_iso, ts=ts, title=title, tags=tags, cwd=cwd, session_id=session_id,
                         harness=harness, turn_key=turn_key, source=source)
    prompt = _guard_headings(prompt)
    head = [
        *front,
        "",
        "## Prompt",
        "",
        prompt,
        "",
        "## Actions",
        "",
        actions,
        "",
        "## Result",
        "",
    ]
    before_result = "\n".join(head) + "\n"
    result = _guard_headings(result)
    room = FILE_CAP - len(before_result.encode()) - 200
    if len((result + "\n").encode()) > room:
        # bytes, not characters, decide the uploader's cap: trim until it fits
        keep = len(result)
        while keep > 0 and len(result[:keep].encode()) > room:
            keep = keep * 3 // 4
        result = result[:keep] + f"…[cut: {len(result) - keep} more characters]"
    text = before_result + result + "\n"
    entry = Entry(name_stem=f"{file_iso}--{title_slug(title)}", file_iso=file_iso, text=text, turn_key=turn_key)
    if _reads_back(text, front, (file_iso, source, *([harness] if harness else [])), (prompt, actions, result)):
        meta: dict[str, object] = {"id": file_iso, "ts": ts, "title": title,
                                   "tags": [orjson.loads(t) if t.startswith('"') else t for t in tags],
                                   "cwd": cwd, "session_id": session_id}
        if harness:
            meta["harness"] = harness
        meta["turn_key"] = turn_key
        meta["source"] = source
        entry.meta = meta
        entry.sections = {"prompt": prompt, "actions": actions, "result": result}
    return entry


READ_BACK_HEAD = 16_000  # frontmatter longer than this may not fit the head `projectfiles.read_header` reads


def _reads_back(text: str, front: list[str], bare: tuple[str, ...], sections: tuple[str, ...]) -> bool:
    """Whether `entries` reads this text back as the values it was made of: every line ends at a "\\n"
    (no other line break splits one), each unquoted frontmatter value is a plain scalar, and no section
    holds a line that could be a heading or has edges that reading strips."""
    if "\r" in text or len(text.splitlines()) != text.count("\n"):
        return False
    if sum(len(line) + 1 for line in front) > READ_BACK_HEAD:
        return False
    for value in bare:
        if not value or value != value.strip() or value[0] in "[{&*!|>%@`\"'" or " #" in value or "\n" in value:
            return False
    return all(s == s.strip() and not s.startswith("#") and "\n#" not in s for s in sections)


class Listing(set[str]):
    """A bank folder's file names as a writer holding the pass lock keeps them (listed once, added to as it
    writes), also by the time their names start with: `find_entry` looks at one time's names, not all."""

    def __init__(self, names: Iterable[str] = ()) -> None:
        super().__init__(names)
        self.by_time: dict[str, list[str]] = {}
        for name in self:
            self.by_time.setdefault(name.partition("--")[0], []).append(name)

    def add(self, name: str) -> None:
        if name not in self:
            self.by_time.setdefault(name.partition("--")[0], []).append(name)
        super().add(name)


def find_entry(bank_dir: Path, file_iso: str, turn_key: str, listing: set[str] | None = None) -> Path | None:
    """An entry already written for this turn (a pass killed after writing, before recording it).

    `listing` is the folder's file names if the caller already has them (a pass writing many: a `Listing`).
    """
    if listing is None:
        try:
            listing = set(os.listdir(bank_dir))
        except FileNotFoundError:
            return None
    if isinstance(listing, Listing) and "--" not in file_iso:
        named = listing.by_time.get(file_iso, [])  # a file_iso holds no "--": the names that start with it and "--"
    else:
        named = [n for n in listing if n.startswith(file_iso + "--")]
    return _holding(bank_dir, [n for n in named if n.endswith(".md")], turn_key)


def find_learning(bank_dir: Path, turn_key: str) -> Path | None:
    """The entry already holding this learning (`learning_key`), whenever it was recorded.

    A learning's time is not part of its key, so every entry's head is read; the bank, not the
    ledger, decides, because it also holds the learnings other machines recorded (pulled from the cloud).
    """
    try:
        names = sorted(n for n in os.listdir(bank_dir) if n.endswith(".md") and not n.startswith(".")
                       and not os.path.islink(bank_dir / n))
    except OSError:
        return None
    return _holding(bank_dir, names, turn_key)


def _holding(bank_dir: Path, names: list[str], turn_key: str) -> Path | None:
    """The first of these entries whose frontmatter carries this turn_key."""
    marker = f"turn_key: {yaml_quote(turn_key)}\n".encode()
    for name in names:
        head = read_regular(os.path.join(bank_dir, name), 8192)  # never a FIFO's or a link's
        if head is not None and marker in head:
            return bank_dir / name
    return None


def candidates(entry: Entry) -> Iterator[str]:
    """The names an entry may take, in order (made one at a time: nearly every entry takes the first)."""
    yield entry.name_stem
    suffix = blake2b(entry.turn_key.encode(), digest_size=3).hexdigest()
    yield f"{entry.name_stem}-{suffix}"
    for n in range(2, 100):
        yield f"{entry.name_stem}-{suffix}-{n}"
