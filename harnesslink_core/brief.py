"""The context brief (SPEC §6): what a session sees when it starts.

Sections, in order: the human part of MAIN.md; the newest ten bank entries;
harness memory files the current harness does not load by itself; this
session's state file (after a compaction or resume); an optional recall
section. Each section is included whole or dropped under the budget, and a
dropped section is named in one line saying where to look instead.

The brief reads the Markdown directly (the newest entries are the last file
names, because names start with the time), so it works even when the search
index is missing or broken; only the recall section needs the index.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

from .framing import cut, frame, neutralise, one_line
from .paths import Locations
from .scope import project_dir, project_slug

DEFAULT_BUDGET = 6000  # well under Claude Code's 10,000-character cap on one hook's output
NEWEST = 10
MEMORY_FILE_CHARS = 1500
INDEX_START = "<!-- superpi:index:start -->"
DEFAULT_MAIN_HEADER = (
    "# Project Memory\n\nAdd context, architecture notes, or reminders here.\n"
    "Everything above the markers is untouched by the banker."
)


@dataclass
class Section:
    name: str
    text: str
    where: str  # where the agent can look when the section is dropped

    def render(self) -> str:
        # headings inside a section sit below the section's own level
        body = re.sub(r"^(#{1,4}) ", lambda m: "#" * (len(m.group(1)) + 2) + " ", self.text.strip(), flags=re.M)
        return f"## {self.name}\n{body}"


@dataclass
class Brief:
    text: str  # the framed block, "" when there is nothing to say
    included: list[str]
    dropped: list[str]


def build_brief(
    locs: Locations,
    cwd: str,
    harness: str,
    *,
    session_id: str | None = None,
    with_state: bool = False,
    budget: int = DEFAULT_BUDGET,
    query: str | None = None,
) -> Brief:
    slug = project_slug(cwd)
    folder = project_dir(locs, slug)
    sections: list[Section] = []
    if folder is not None:
        sections += _main_notes(folder)
        sections += _recent_entries(folder, locs)
    sections += _harness_memory(locs, cwd, harness)
    if folder is not None and with_state and session_id:
        sections += _session_state(folder, harness, session_id)
    if query:
        sections += _recall(locs, cwd, query)
    return assemble(sections, budget, project=slug)


def assemble(sections: list[Section], budget: int, *, project: str = "", kind: str = "brief") -> Brief:
    """Greedy in order: a section goes in whole if it fits, else it becomes a one-line note."""
    included: list[Section] = []
    dropped: list[Section] = []

    def render() -> str:
        parts = [s.render() for s in included]
        if dropped:
            notes = "\n".join(
                f"- {s.name} ({len(s.text)} characters): dropped to stay within the budget; see {s.where}"
                for s in dropped
            )
            parts.append("## Not shown\n" + notes)
        return frame(kind, "\n\n".join(parts), project=project) if parts else ""

    for section in sections:
        included.append(section)
        if len(render()) > budget:
            included.pop()
            dropped.append(section)
    text = render()
    while len(text) > budget and included:  # the notes themselves pushed it over
        dropped.insert(0, included.pop())
        text = render()
    if len(text) > budget:
        text = ""
    return Brief(text, [s.name for s in included], [s.name for s in dropped])


# --- sections -------------------------------------------------------------------


def _read(path: Path, limit: int = 256 * 1024) -> str:
    try:
        with open(path, "rb") as f:
            return f.read(limit).decode("utf-8", "replace")
    except OSError:
        return ""


def _main_notes(folder: Path) -> list[Section]:
    text = _read(folder / "MAIN.md")
    human = text.split(INDEX_START, 1)[0].strip()
    if not human or " ".join(human.split()) == " ".join(DEFAULT_MAIN_HEADER.split()):
        return []
    return [Section("Project notes (MAIN.md)", neutralise(human), str(folder / "MAIN.md"))]


def _recent_entries(folder: Path, locs: Locations) -> list[Section]:
    from .entries import read_entry

    bank = folder / "bank"
    try:
        names = sorted((n for n in os.listdir(bank) if n.endswith(".md") and not n.startswith(".")), reverse=True)
    except OSError:
        return []
    from .forget import tombstones

    forgotten = tombstones(locs)  # forgotten entries pulled back from the cloud are never shown
    if forgotten:
        names = [n for n in names if not forgotten.covers(folder.name, n)]
    lines = [f"(files in {bank})"]
    for name in names[:NEWEST]:
        entry = read_entry(bank / name, folder.name)
        if entry is None or (forgotten and entry.turn_key in forgotten.keys):
            continue
        when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(entry.ts)) if entry.ts else "undated"
        lines.append(neutralise(f"- {when} · {entry.origin} · {one_line(entry.title, 80)} — {name}"))
        if entry.result.strip():
            lines.append("  " + neutralise(one_line(entry.result, 140)))
    if len(lines) == 1:
        return []
    more = len(names) - NEWEST
    if more > 0:
        lines.append(f"({more} older entries in the same folder)")
    return [Section(f"Newest {min(NEWEST, len(names))} turns banked in this project", "\n".join(lines), str(bank))]


def _harness_memory(locs: Locations, cwd: str, harness: str) -> list[Section]:
    sections = []
    codex_mem = locs.env_path("CODEX_HOME", locs.home / ".codex") / "memories"
    raw = codex_mem / "raw_memories.md"
    # Codex injects its memory_summary.md by itself, never these two files.
    text = _read(raw).strip()
    if text:
        sections.append(Section("Codex raw memories", neutralise(cut(text, MEMORY_FILE_CHARS)), str(raw)))
    summary = _newest_file(codex_mem / "rollout_summaries")
    if summary is not None:
        text = _read(summary).strip()
        if text:
            sections.append(
                Section("Newest Codex rollout summary", neutralise(cut(text, MEMORY_FILE_CHARS)), str(summary))
            )
    if harness != "claude-code":  # Claude Code loads its own MEMORY.md
        claude_home = locs.env_path("CLAUDE_CONFIG_DIR", locs.home / ".claude")
        encoded = re.sub(r"[^A-Za-z0-9]", "-", os.path.abspath(cwd))
        memory = claude_home / "projects" / encoded / "memory" / "MEMORY.md"
        text = _read(memory).strip()
        if text:
            sections.append(Section("Claude Code project memory (MEMORY.md)",
                                    neutralise(cut(text, MEMORY_FILE_CHARS)), str(memory)))
    return sections


def _newest_file(folder: Path) -> Path | None:
    try:
        files = [p for p in folder.iterdir() if p.is_file()]
    except OSError:
        return None
    return max(files, key=lambda p: p.stat().st_mtime, default=None)


def _session_state(folder: Path, harness: str, session_id: str) -> list[Section]:
    if "/" in session_id or "\\" in session_id or session_id in (".", ".."):
        return []
    path = folder / "state" / f"{harness}--{session_id}.md"
    text = _read(path)
    if not text.strip():
        return []
    from .entries import split_frontmatter

    _, body = split_frontmatter(text)
    return [Section("This session's saved state (todos, plan, checkpoints)", neutralise(body.strip()), str(path))]


def _recall(locs: Locations, cwd: str, query: str) -> list[Section]:
    from . import index
    from .matches import meaningful_terms
    from .scope import scope_for

    terms = meaningful_terms(query) or [w.lower() for w in re.findall(r"\w+", query)][:16]
    try:
        conn = index.connect(locs)
        try:
            projects = scope_for(locs, cwd)
            index.sync(conn, locs, projects)
            hits = index.search(conn, terms, projects, limit=5)
        finally:
            conn.close()
    except Exception:  # noqa: BLE001 - an optional section
        return []
    if not hits:
        return []
    lines = [
        neutralise(f"- {one_line(h.title, 100)} — {locs.memories / h.path}\n  {one_line(h.result, 160)}")
        for h in hits
    ]
    return [Section(f"Recall: {one_line(query, 60)}", "\n".join(lines), f"`harnesslink recall {query}`")]
