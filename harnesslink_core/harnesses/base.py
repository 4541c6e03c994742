"""The interface every harness module satisfies, and what they share.

A reader is incremental: `read(path, start, carry, budget)` decodes complete
lines from byte `start`, and returns the turns it saw (finished or not), the
offset after the last complete line, and `carry`: the session facts (session
id, cwd, lineage) the next read needs when it resumes mid-file. Carried facts
must be idempotent, because the pass resumes at the first unsettled turn and
the reader sees those lines again.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, Protocol

import orjson

from ..model import Reading
from ..paths import Locations

try:
    from _blake2 import blake2b as blake2b  # (the readers'): hashlib.blake2b without hashlib loading OpenSSL (~2 ms)
except ImportError:  # not CPython
    from hashlib import blake2b as blake2b


class Harness(Protocol):
    NAME: str

    def home(self, locs: Locations) -> Path:
        """The harness's own folder (its config and transcripts live below it)."""
        ...

    def detect(self, locs: Locations) -> bool:
        """Whether this harness seems to be used on this machine."""
        ...

    def iter_transcripts(self, locs: Locations) -> Iterator[os.PathLike[str]]:
        """Every transcript that may hold bankable turns (subagent files excluded): Paths, or the
        os.DirEntry of a folder scan (cheaper where a harness keeps thousands of files)."""
        ...

    def read(self, path: Path, start: int, carry: dict[str, Any], budget: int,
             long_line: LongLine | None = None) -> Reading:
        """Decode complete lines from `start`; stop before a new turn once `budget` bytes are read. A partial
        last line past MAX_LINE is scanned from where `long_line` says, and noted there (`iter_lines`)."""
        ...

    def unreadable(self, locs: Locations) -> str | None:
        """What `harnesslink status` should say we cannot read (SPEC §4), or None."""
        ...


def all_readable(locs: Locations) -> str | None:
    """The default `unreadable`: this harness keeps nothing we cannot read."""
    return None


MAX_LINE = 64 * 1024 * 1024  # a line longer than this is skipped unread
CHUNK = 1024 * 1024  # a line is read this much at a time until its end is found


class LongLine:
    """Where a partial last line past MAX_LINE starts and how far it has been scanned: [start, scanned],
    or None. The pass keeps it in the file's read position and hands it to the reader (`read`'s
    `long_line`, then `iter_lines`'s), so the next read scans only what was added to that line since."""

    __slots__ = ("value",)

    def __init__(self, value: object) -> None:
        ok = (isinstance(value, list) and len(value) == 2 and all(type(v) is int for v in value)
              and 0 <= value[0] <= value[1])
        self.value: list[int] | None = [int(v) for v in value] if ok and isinstance(value, list) else None


def scan_files(folder: os.PathLike[str] | str, wanted: Callable[[str], bool], depth: int | None,
               skip_dir: Callable[[str], bool] = lambda name: False) -> Iterator[os.DirEntry[str]]:
    """Files `depth` folders below `folder` (None: at any depth) whose name is `wanted`, sorted by path.

    Yields os.DirEntry, not Path: listing thousands of transcripts on every pass must stay cheap.
    """
    try:
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        try:
            if depth in (0, None) and wanted(entry.name) and entry.is_file():
                yield entry
            elif depth != 0 and entry.is_dir(follow_symlinks=False) and not skip_dir(entry.name):
                yield from scan_files(entry.path, wanted, None if depth is None else depth - 1, skip_dir)
        except OSError:
            continue


def iter_lines(f: BinaryIO, start: int, memo: LongLine | None = None) -> Iterator[tuple[int, int, bytes]]:
    """Complete lines from `start`: (offset, end offset, raw bytes without the newline).

    A last line without its newline is still being written: it is not yielded,
    so the next read resumes before it. A line longer than MAX_LINE is yielded empty: it is
    scanned for its end a chunk at a time, never held whole; one still being written past
    MAX_LINE is remembered in `memo` (the pass's, through the reader), so the next read resumes its scan.
    """
    f.seek(start)
    offset = start
    while True:
        if memo is not None and memo.value is not None and memo.value[0] == offset:
            f.seek(memo.value[1])
            end, scanned = _line_end(f, memo.value[1])
            if end is None:
                memo.value = [offset, scanned]
                return
            yield offset, end, b""
            offset = end
            continue
        raw = f.readline(CHUNK)
        if not raw:
            return
        if raw.endswith(b"\n"):
            end = offset + len(raw)
            yield offset, end, raw[:-1]
            offset = end
            continue
        if len(raw) < CHUNK:
            return  # partial last line
        end, scanned = _line_end(f, offset + len(raw))
        del raw
        if end is None:
            if memo is not None and scanned - offset > MAX_LINE:
                memo.value = [offset, scanned]
            return  # partial last line
        if end - offset > MAX_LINE:
            yield offset, end, b""  # a giant line: skipped without holding it
        else:
            f.seek(offset)
            yield offset, end, f.read(end - offset)[:-1]
        f.seek(end)
        offset = end


def _line_end(f: BinaryIO, pos: int) -> tuple[int | None, int]:
    """From `pos` (where `f` is), the offset after the next newline (None if the file ends first) and
    how far was read."""
    while True:
        piece = f.readline(CHUNK)
        if not piece:
            return None, pos
        pos += len(piece)
        if piece.endswith(b"\n"):
            return pos, pos


def decode(raw: bytes) -> dict[str, Any] | None:
    """A JSON object from one line, or None for anything else (garbage, non-UTF-8, arrays)."""
    if not raw.strip():
        return None
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        value = _loads_leniently(raw)
    return value if isinstance(value, dict) else None


def loads(text: str | bytes) -> Any:
    """JSON as orjson reads it, or as `decode` repairs it; raises ValueError when it is not JSON."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        value = _loads_leniently(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))
        if value is None:
            raise ValueError("not JSON") from None
        return value


def _loads_leniently(raw: bytes) -> Any:
    """What orjson refuses but a harness does write: bytes that are not UTF-8 (replaced), and a lone
    UTF-16 surrogate escape such as `\\ud83d` (Claude Code writes them when it cuts an emoji in half;
    it becomes U+FFFD, and the line is kept)."""
    from ..wirejson import may_hold_surrogates, without_lone_surrogates

    if may_hold_surrogates(raw):
        import json

        try:
            return without_lone_surrogates(json.loads(raw.decode("utf-8", "replace")))
        except (ValueError, RecursionError):
            return None
    try:
        return orjson.loads(raw.decode("utf-8", "replace"))
    except (orjson.JSONDecodeError, UnicodeDecodeError):
        return None


SHELL_TOOLS = {
    "bash", "shell", "shell_command", "exec_command", "local_shell", "local_shell_call",
    "container.exec", "run_command", "run_shell_command", "execute_command",
}


def normalise_tool(name: object) -> str:
    text = str(name or "tool").strip().lower() or "tool"
    if text.startswith(_OUR_MCP_PREFIX):
        return our_tool(text) or text
    return "bash" if text in SHELL_TOOLS else text


# Our own memory tools (memory_tools.TOOLS), as each harness names a call to them
# (research/mcp-and-resume.md): Claude Code `mcp__harnesslink__memory_search`, omp's MCP bridge
# `mcp__harnesslink_memory_search`, Codex the namespace `mcp__harnesslink` plus `memory_search`,
# and the pi/omp extension's native tools their bare name. An entry lists each as the action
# `harnesslink.<tool>` (aliases under the tool they stand for), whatever the harness.
OUR_TOOLS = ("memory_search", "memory_get", "memory_bank", "context_brief", "memory_forget")
_ALIASES = {"recall_memory": "memory_search", "record_learning": "memory_bank"}
OUR_ACTION_PREFIX = "harnesslink."
OUR_MCP_SERVER = "mcp__harnesslink"
_OUR_MCP_PREFIX = OUR_MCP_SERVER + "_"


def our_tool(name: object, *, namespace: object = None, bare: bool = False) -> str | None:
    """`harnesslink.<tool>` when the call is to one of our memory tools, else None.

    `namespace`: the MCP server a harness files the call under (Codex); `bare`: the harness
    (pi, omp) calls extension tools by their own name, which is ours when it is one of ours."""
    text = str(name or "").strip().lower()
    if namespace is not None:
        if str(namespace).strip().lower() != OUR_MCP_SERVER:
            return None
    elif text.startswith(_OUR_MCP_PREFIX):
        text = text[len(_OUR_MCP_PREFIX):].lstrip("_")
    elif not bare:
        return None
    text = _ALIASES.get(text, text)
    return OUR_ACTION_PREFIX + text if text in OUR_TOOLS else None


def is_our_action(tool: str) -> bool:
    return tool.startswith(OUR_ACTION_PREFIX)


def text_of(content: Any, types: tuple[str, ...] = ("text", "input_text", "output_text")) -> str:
    """The text of a message content that is a string or a list of typed blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            block.get("text", "")
            for block in content
            if isinstance(block, dict) and block.get("type") in types and isinstance(block.get("text"), str)
        ]
        return "\n".join(p for p in parts if p)
    return ""


# Our own injected context starts with this tag in every harness; a reader
# must never take it for a prompt or an answer.
INJECTED_TAG = "harnesslink-memory"
_INJECTED_RE = re.compile(r"<harnesslink-memory\b.*?(?:</harnesslink-memory>|\Z)", re.S)


def is_injected(text: str) -> bool:
    return text.lstrip().startswith("<" + INJECTED_TAG)


def strip_injected(text: str) -> str:
    """The text with any block of our injected memory removed."""
    if INJECTED_TAG not in text:
        return text
    return _INJECTED_RE.sub("", text).strip()


def file_digest(f: BinaryIO, start: int, length: int) -> str:
    f.seek(max(0, start))
    return blake2b(f.read(length), digest_size=12).hexdigest()
