"""The context brief (SPEC §6): what a session sees when it starts.

Sections, in order: the human part of MAIN.md; the newest ten bank entries;
harness memory files the current harness does not load by itself; this
session's state file (after a compaction or resume); an optional recall
section. Each section is included whole or dropped under the budget, and a
dropped section is named in one line saying where to look instead.

The newest entries come from the search index (one indexed query) when it can
be had, else from the Markdown directly (the newest entries are the last file
names, because names start with the time), so the brief works even when the
index is missing or broken.

On the session-start hook's path: no re, dataclasses or pathlib (see hooks.py).
"""

from __future__ import annotations

import os
import time

from ..paths import Locations
from ..safefile import read_regular_text, tree_folder
from ..store import main_md
from ..store.scope import Folders, is_foreign, project_path, project_slug
from ..store.trust import superseded_paths, superseded_within
from .framing import cut, frame, neutralise, one_line

DEFAULT_BUDGET = 6000  # well under Claude Code's 10,000-character cap on one hook's output
NEWEST = 10
MEMORY_FILE_CHARS = 1500
DEFAULT_MAIN_HEADER = (
    "# Project Memory\n\nAdd context, architecture notes, or reminders here.\n"
    "Everything above the markers is untouched by the banker."
)


class Section:
    def __init__(self, name: str, text: str, where: str, entries: list[str] | None = None) -> None:
        self.name = name
        self.text = text
        self.where = where  # where the agent can look when the section is dropped
        self.entries = entries or []  # the entries (`<slug>/bank/<file>.md`) it lists

    def render(self) -> str:
        return f"## {self.name}\n{demote_headings(self.text.strip())}"


def demote_headings(text: str) -> str:
    """Headings inside a section (`#` to `####`) sit two levels below where they were."""
    lines = text.split("\n")
    for n, line in enumerate(lines):
        level = len(line) - len(line.lstrip("#"))
        if 1 <= level <= 4 and line[level:level + 1] == " ":
            lines[n] = "##" + line
    return "\n".join(lines)


class Brief:
    def __init__(self, text: str, included: list[str], dropped: list[str], given: list[str] | None = None) -> None:
        self.text = text  # the framed block, "" when there is nothing to say
        self.included = included
        self.dropped = dropped
        self.given = given or []  # the entries the included sections list: what the session is given
        self.withheld: dict[str, str] = {}  # project -> why none of its entries is listed (`build_brief`'s trust_budget)


def build_brief(
    locs: Locations,
    cwd: str,
    harness: str,
    *,
    session_id: str | None = None,
    with_state: bool = False,
    budget: int = DEFAULT_BUDGET,
    query: str | None = None,
    trust_budget: int | None = None,
) -> Brief:
    """`trust_budget`: the trust files in scope are read within these many bytes together (the session-start
    hook), and a project whose file does not fit has no entry listed (`trust.superseded_within`); None: each
    file up to its own bound."""
    from ..store.scope import holds_whole, project_folders

    slug = project_slug(cwd)
    folder = project_path(locs, slug)
    folders = project_folders(locs, cwd)
    sections: list[Section] = []
    if folder is not None and holds_whole(folders, slug):  # a slug another folder shares: whose notes?
        sections += _main_notes(folder)
    withheld: dict[str, str] = {}
    sections += _recent_entries(locs, folders, trust_budget, withheld)  # also the repository's other slugs'
    sections += _harness_memory(locs, cwd, harness)
    if folder is not None and with_state and session_id:
        sections += _session_state(folder, harness, session_id)
    if query:
        sections += _recall(locs, cwd, query)
    brief = assemble(sections, budget, project=slug)
    brief.withheld = withheld
    return brief


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
    given = [entry for s in included for entry in s.entries] if text else []
    return Brief(text, [s.name for s in included], [s.name for s in dropped], given)


# --- sections -------------------------------------------------------------------


def _read(path: str, limit: int = 256 * 1024) -> str:
    """A regular file's head; "" for anything else (a FIFO would hold the hook, a link may lead anywhere)."""
    return read_regular_text(path, limit) or ""


def _main_notes(folder: str) -> list[Section]:
    path = os.path.join(folder, "MAIN.md")
    human = _read(path).split(main_md.START, 1)[0].strip()
    if not human or " ".join(human.split()) == " ".join(DEFAULT_MAIN_HEADER.split()):
        return []
    return [Section("Project notes (MAIN.md)", neutralise(human), path)]


class _Newest:
    """One line of the newest-entries section: what the index or the entry file says."""

    def __init__(self, path: str, ts: float, origin: str, title: str, result: str) -> None:
        self.path, self.ts, self.origin, self.title, self.result = path, ts, origin, title, result
        self.name = path.rsplit("/", 1)[-1]


def _recent_entries(locs: Locations, folders: Folders, trust_budget: int | None, withheld: dict[str, str]
                    ) -> list[Section]:
    """The newest entries of this project: of its folder's slug and of every other slug of the same
    repository (`scope.project_folders`: the same repository at another path, or pulled from another machine),
    each only with its folders of this project; the slugs whose trust state is not within `trust_budget` go
    into `withheld` instead."""
    slugs = [s for s in folders if tree_folder(locs.memories_path, s, "bank")]
    if trust_budget is None:
        superseded = superseded_paths(locs, slugs)  # a newer entry says otherwise: never pushed
    else:
        superseded, unread = superseded_within(locs, slugs, trust_budget)
        withheld.update(unread)
        slugs = [s for s in slugs if s not in unread]
    if not slugs:
        return []
    bank = os.path.join(locs.memories_path, slugs[0], "bank")
    found = _newest_from_index(locs, slugs, folders, superseded)
    if found is None:
        found = _newest_from_files(locs, bank, slugs[0], folders, superseded)
    newest, total = found
    lines = [f"(files in {bank})"]
    for entry in newest:
        when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(entry.ts)) if entry.ts else "undated"
        lines.append(neutralise(f"- {when} · {entry.origin} · {one_line(entry.title, 80)} — {entry.name}"))
        if entry.result.strip():
            lines.append("  " + neutralise(one_line(entry.result, 140)))
    if len(lines) == 1:
        return []
    more = total - NEWEST
    if more > 0:
        lines.append(f"({more} older entries in the same folder)")
    return [Section(f"Newest {min(NEWEST, total)} turns banked in this project", "\n".join(lines), bank,
                    [entry.path for entry in newest])]


def _newest_from_index(locs: Locations, slugs: list[str], folders: Folders, superseded: set[str]
                       ) -> tuple[list[_Newest], int] | None:
    """The newest entries and the project's entry count from the index, brought up to date first
    when little changed; None when the index cannot answer (missing, busy, far behind, corrupt)."""
    from . import index, query

    try:
        conn = index.connect(locs, create=False, busy_ms=50)
    except index.IndexUnavailable:
        return None
    try:
        index.sync(conn, locs, slugs, max_changes=50)
        hidden = query.foreign_paths(conn, folders)  # another folder's, sharing a slug
        hidden |= superseded
        hits = [h for h in query.newest(conn, slugs, NEWEST + len(hidden)) if h.path not in hidden][:NEWEST]
        return ([_Newest(h.path, h.ts, h.origin, h.title, h.result) for h in hits],
                query.scope_size(conn, slugs))
    except (index.IndexBehind, index.sqlite3.Error):
        return None
    finally:
        conn.close()


def _newest_from_files(locs: Locations, bank: str, slug: str, folders: Folders, superseded: set[str]
                       ) -> tuple[list[_Newest], int]:
    from pathlib import Path

    from ..store.entries import read_entry
    from ..store.ledger import tombstones

    try:
        names = sorted((n for n in os.listdir(bank) if n.endswith(".md") and not n.startswith(".")
                        and not os.path.islink(os.path.join(bank, n))), reverse=True)
    except OSError:
        return [], 0
    forgotten = tombstones(locs)  # forgotten entries pulled back from the cloud are never shown (the index skips them)
    if forgotten:
        names = [n for n in names if not forgotten.covers(slug, n)]
    newest = []
    for name in names:
        entry = read_entry(Path(bank) / name, slug)
        if entry is None or (forgotten and forgotten.covers(slug, name, entry.turn_key)):
            continue
        if is_foreign(entry.cwd, slug, folders) or f"{slug}/bank/{name}" in superseded:
            continue  # another folder's, sharing the slug; or superseded
        newest.append(_Newest(entry.rel_path, entry.ts, entry.origin, entry.title, entry.result))
        if len(newest) == NEWEST:
            break
    return newest, len(names)


def _harness_memory(locs: Locations, cwd: str, harness: str) -> list[Section]:
    sections = []
    codex_mem = os.path.join(locs.env_folder("CODEX_HOME", os.path.join(locs.home_path, ".codex")), "memories")
    raw = os.path.join(codex_mem, "raw_memories.md")
    # Codex injects its memory_summary.md by itself, never these two files.
    text = _read(raw).strip()
    if text:
        sections.append(Section("Codex raw memories", neutralise(cut(text, MEMORY_FILE_CHARS)), raw))
    summary = _newest_file(os.path.join(codex_mem, "rollout_summaries"))
    if summary is not None:
        text = _read(summary).strip()
        if text:
            sections.append(
                Section("Newest Codex rollout summary", neutralise(cut(text, MEMORY_FILE_CHARS)), summary)
            )
    if harness != "claude-code":  # Claude Code loads its own MEMORY.md
        claude_home = locs.env_folder("CLAUDE_CONFIG_DIR", os.path.join(locs.home_path, ".claude"))
        # harnesses/claude_code/reader.project_folder_name, spelled out: session start may not import harnesses/
        encoded = "".join(c if c.isascii() and c.isalnum() else "-" for c in os.path.abspath(cwd))
        memory = os.path.join(claude_home, "projects", encoded, "memory", "MEMORY.md")
        text = _read(memory).strip()
        if text:
            sections.append(Section("Claude Code project memory (MEMORY.md)",
                                    neutralise(cut(text, MEMORY_FILE_CHARS)), memory))
    return sections


def _newest_file(folder: str) -> str | None:
    try:
        with os.scandir(folder) as it:
            files = [(e.stat(follow_symlinks=False).st_mtime, e.path) for e in it if e.is_file(follow_symlinks=False)]
    except OSError:
        return None
    return max(files)[1] if files else None


def _session_state(folder: str, harness: str, session_id: str) -> list[Section]:
    if "/" in session_id or "\\" in session_id or session_id in (".", ".."):
        return []
    path = os.path.join(folder, "state", f"{harness}--{session_id}.md")
    text = _read(path)
    if not text.strip():
        return []
    body = _without_frontmatter(text)
    return [Section("This session's saved state (todos, plan, checkpoints)", neutralise(body.strip()), path)]


def _without_frontmatter(text: str) -> str:
    """The text after a leading `---` … `---` block (state files are ours: plain frontmatter)."""
    text = text.removeprefix("\ufeff")
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return text
    for n in range(1, len(lines)):
        if lines[n].strip() == "---":
            return "\n".join(lines[n + 1:])
    return text


def _recall(locs: Locations, cwd: str, query: str) -> list[Section]:
    from ..store import trust
    from ..store.scope import scope_folders
    from .ask import ask

    try:
        hits, state = ask(locs, query, scope_folders(locs, cwd), limit=5)
    except Exception:  # noqa: BLE001 - an optional section
        return []
    if not hits:
        return []
    lines = [
        neutralise(f"- {one_line(h.title, 100)} — {os.path.join(locs.memories_path, h.path)}"
                   + (f" ({state.label(h.path)})" if state.of(h.path) == trust.SUPERSEDED else "")
                   + f"\n  {one_line(h.result, 160)}")
        for h in hits
    ]
    return [Section(f"Recall: {one_line(query, 60)}", "\n".join(lines), f"`harnesslink recall {query}`",
                    [h.path for h in hits])]
