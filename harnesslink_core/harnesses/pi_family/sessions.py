"""What pi and omp sessions share: the header, the first prompt and the replay estimate.

Both keep `<sessions root>/<encoded cwd>/<ts>_<uuid>.jsonl`; the folder name encodes
the cwd lossily (omp's is home-relative since 2026-02), so the header inside the file
(line 1, or line 2 after omp's title slot) says the folder.

A resume rebuilds the context by walking `parentId` from the leaf: after a
`compaction` it sends the summary, then everything from `firstKeptEntryId` on; omp
also starts over after a `reset_boundary` (`/clear`). pi's own estimate is the newest
non-error, non-aborted assistant `usage.totalTokens` plus ceil(chars/4) per later
message (mcp-and-resume.md §3-4). v1 files (no ids) are one linear chain.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...sessions.base import Estimate, Session, estimate_from_tail, head_records, number, one_line, tokens_of, uuid_in
from . import reader

USAGE_FIELDS = ("input", "output", "cacheRead", "cacheWrite")
HEADER_BYTES = 64 * 1024


def header(path: Path) -> dict[str, Any] | None:
    for n, record in enumerate(head_records(path, HEADER_BYTES)):
        if record.get("type") == "session":
            return record
        if n >= 2:
            break
    return None


def session_files(roots: list[Path]) -> Iterator[Path]:
    for root in roots:
        for entry in reader.session_files(root):
            yield Path(entry)


def in_folder(paths: Iterator[Path], cwd: str) -> Iterator[Path]:
    for path in paths:
        head = header(path)
        if head is not None and head.get("cwd") == cwd:
            yield path


def id_from_name(path: Path) -> str:
    return uuid_in(path.name) or (path.stem.split("_", 1)[-1])


def describe(harness: str, path: Path) -> Session | None:
    try:
        st = path.stat()
    except OSError:
        return None
    if reader.is_subagent_path(path):
        return None
    head = header(path)
    if head is None or not isinstance(head.get("cwd"), str):
        return None
    session_id = given if isinstance(given := head.get("id"), str) and given else id_from_name(path)
    title = ""
    for record in head_records(path):
        if record.get("type") == "session_init":
            return None  # a subagent transcript
        message = reader._message(record)
        prompt = reader._prompt_text(message) if message is not None else None
        if prompt:
            title = one_line(prompt)
            break
    return Session(harness, session_id, head["cwd"], path, title, st.st_mtime, st.st_size, estimate(path))


def estimate(path: Path) -> Estimate:
    return estimate_from_tail(path, estimate_records)


def estimate_records(records: list[dict[str, Any]], final: bool) -> Estimate | None:
    entries = [r for r in records if r.get("type") not in ("session", "title")]
    if not entries:
        return Estimate(0, "text") if final else None
    chain = _chain(entries)
    tokens = 0
    for n, entry in enumerate(chain):
        if entry is None:  # the chain goes on before the window
            return Estimate(tokens, "text") if final else None
        kind = entry.get("type")
        if kind == "reset_boundary":
            return Estimate(tokens, "text")
        if kind == "compaction":
            after = number(entry.get("tokensAfter"))  # omp: the summary and the kept entries, counted by omp
            if after:
                return Estimate(after + tokens, "compaction")
            base = tokens_of(entry.get("summary"))
            kept = _kept(chain[n + 1:], entry.get("firstKeptEntryId"))
            if kept is None and not final:
                return None
            return Estimate(base + tokens + (kept or 0), "compaction")
        used = _usage(entry)
        if used:
            return Estimate(used + tokens, "usage")
        tokens += _entry_tokens(entry)
    return Estimate(tokens, "text")


def _chain(entries: list[dict[str, Any]]) -> list[dict[str, Any] | None]:
    """Newest first: the leaf's ancestors by `parentId` (None marks a parent outside the window);
    v1 files without ids are read as one line of entries."""
    if not any(isinstance(e.get("id"), str) and "parentId" in e for e in entries):
        return list(reversed(entries))
    by_id = {e["id"]: e for e in entries if isinstance(e.get("id"), str)}
    node: dict[str, Any] | None = next(e for e in reversed(entries) if isinstance(e.get("id"), str))
    chain: list[dict[str, Any] | None] = []
    seen: set[str] = set()
    while node is not None and node["id"] not in seen:
        seen.add(node["id"])
        chain.append(node)
        parent = node.get("parentId")
        if not isinstance(parent, str):
            return chain
        node = by_id.get(parent)
        if node is None:
            chain.append(None)
    return chain


def _kept(older: list[dict[str, Any] | None], first_kept: Any) -> int | None:
    """Tokens of the entries a compaction kept (from `firstKeptEntryId` up to it); None: not all in the window."""
    if not isinstance(first_kept, str):
        return 0  # v1 (`firstKeptEntryIndex`) or nothing kept: the summary stands alone
    tokens = 0
    for entry in older:
        if entry is None:
            return None
        tokens += _entry_tokens(entry)
        if entry.get("id") == first_kept:
            return tokens
    return tokens


def _usage(entry: dict[str, Any]) -> int:
    message = reader._message(entry)
    if message is None or message.get("role") != "assistant" or message.get("stopReason") in ("error", "aborted"):
        return 0
    usage = message.get("usage")
    if not isinstance(usage, dict):
        return 0
    return number(usage.get("totalTokens")) or sum(number(usage.get(f)) for f in USAGE_FIELDS)


def _entry_tokens(entry: dict[str, Any]) -> int:
    kind = entry.get("type")
    if kind == "message":
        message = reader._message(entry) or {}
        return tokens_of({k: v for k, v in message.items() if k in ("content", "command", "output")})
    if kind == "custom_message":
        return tokens_of(entry.get("content"))
    if kind == "branch_summary":
        return tokens_of(entry.get("summary"))
    return 0
