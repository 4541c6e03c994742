"""Claude Code sessions: `<config>/projects/<cwd, non-alphanumerics as '-'>/<session id>.jsonl`.

Resume: `claude --resume <id>`, which finds the session only from its project folder
(elsewhere: "No conversation found with session ID"). A resume replays the compact
summary and every main-chain message after the newest `compact_boundary`; the size
Claude Code itself counts is input + cache creation + cache read + output tokens of
the newest assistant `message.usage` that is not `<synthetic>` (mcp-and-resume.md §1).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...paths import Locations
from ...sessions.base import Estimate, Session, estimate_from_tail, head_records, number, one_line, tokens_of
from . import reader

NAME = reader.NAME
EXECUTABLE = "claude"
MUST_RUN_IN_FOLDER = True
CHAIN_TYPES = ("user", "assistant", "system")
USAGE_FIELDS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens")


def project_folder(locs: Locations, cwd: str) -> Path:
    return reader.home(locs) / "projects" / reader.project_folder_name(cwd)


def transcripts(locs: Locations, cwd: str) -> Iterator[Path]:
    folder = project_folder(locs, cwd)
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        if name.endswith(".jsonl") and not name.startswith("agent-"):
            yield folder / name


def all_transcripts(locs: Locations) -> Iterator[Path]:
    for entry in reader.iter_transcripts(locs):
        yield Path(entry)


def id_from_name(path: Path) -> str:
    return path.stem


def describe(path: Path) -> Session | None:
    try:
        st = path.stat()
    except OSError:
        return None
    cwd, title = "", ""
    for record in head_records(path):
        if record.get("isSidechain"):
            continue
        if not cwd and isinstance(record.get("cwd"), str):
            cwd = record["cwd"]
        if not title and record.get("type") == "user":
            prompt = reader._prompt_of(record)
            if prompt and prompt[0] in ("prompt", "command"):
                title = one_line(prompt[1])
        if cwd and title:
            break
    if not cwd:
        return None
    return Session(NAME, path.stem, cwd, path, title, st.st_mtime, st.st_size, estimate(path))


def estimate(path: Path) -> Estimate:
    return estimate_from_tail(path, estimate_records)


def estimate_records(records: list[dict[str, Any]], final: bool) -> Estimate | None:
    """Walk `parentUuid` back from the newest main-chain line to a usage figure or the compact boundary."""
    tokens = 0
    for node in _chain(records):
        if node is None:  # the chain goes on before the window
            return Estimate(tokens, "text") if final else None
        kind = node.get("type")
        message = given if isinstance(given := node.get("message"), dict) else {}
        if kind == "system" and node.get("subtype") == "compact_boundary":
            meta = given if isinstance(given := node.get("compactMetadata"), dict) else {}
            return Estimate(number(meta.get("postTokens")) + tokens, "compaction")
        if kind == "assistant" and isinstance(message.get("usage"), dict) and message.get("model") != "<synthetic>":
            used = sum(number(message["usage"].get(f)) for f in USAGE_FIELDS)
            if used:
                return Estimate(used + tokens, "usage")
        if kind in ("user", "assistant"):
            tokens += tokens_of(message.get("content"))
    return Estimate(tokens, "text")  # the start of the session


def _chain(records: list[dict[str, Any]]) -> list[dict[str, Any] | None]:
    """Newest first: the newest main-chain line and its ancestors (None: a parent outside the window).
    Lines without `parentUuid` at all (old or hand-made files) are read as one line of messages."""
    main = [r for r in records if r.get("type") in CHAIN_TYPES and not r.get("isSidechain")]
    if not main:
        return [None]
    if not any("parentUuid" in r for r in main):
        return list(reversed(main))
    by_uuid = {r["uuid"]: r for r in records if isinstance(r.get("uuid"), str)}
    node: dict[str, Any] | None = main[-1]
    chain: list[dict[str, Any] | None] = []
    seen: set[int] = set()
    while node is not None and id(node) not in seen:
        seen.add(id(node))
        chain.append(node)
        parent = node.get("parentUuid")
        if not isinstance(parent, str):
            break
        node = by_uuid.get(parent)
        if node is None:
            chain.append(None)
    return chain


def resume_argv(session: Session) -> list[str]:
    return [EXECUTABLE, "--resume", session.session_id]


def fresh_argv() -> list[str]:
    return [EXECUTABLE]
