"""Read a bank entry (SPEC §3) back into its fields.

The Markdown is the source of truth; this is the one place that parses it.
Our own frontmatter is simple (`key: value`, `key: "json-ish string"`, a
`tags:` list), so a small line parser reads it without importing yaml; any
frontmatter it does not understand (hand-edited, another machine, the old
`superpi-autobank` entries) falls back to `yaml.safe_load`. Parsing never
raises: a file that cannot be read yields None, odd contents yield what
could be read.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..clock import parse_iso
from ..safefile import read_regular_text

# Headings a section may carry, across our own entries and older ones.
_SECTION_NAMES = {
    "prompt": "prompt", "request": "prompt", "user": "prompt", "task": "prompt",
    "actions": "actions", "steps": "actions", "step log": "actions", "tools": "actions",
    "tool calls": "actions",
    "result": "result", "response": "result", "answer": "result", "outcome": "result",
    "summary": "result",
}
_FILE_ISO = re.compile(r"^(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})(?:-(\d{1,6}))?Z")
_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
MAX_ENTRY_BYTES = 2 * 1024 * 1024  # bigger files are not ours to index; read only this much


@dataclass
class Entry:
    path: Path
    project: str  # slug of the project folder the entry lives in
    id: str
    ts: float
    title: str
    tags: list[str] = field(default_factory=list)
    cwd: str = ""
    session_id: str = ""
    harness: str = ""
    turn_key: str = ""
    source: str = ""
    prompt: str = ""
    actions: str = ""
    result: str = ""

    @property
    def rel_path(self) -> str:
        """`<slug>/bank/<file>.md`: the entry's identity across machines."""
        return f"{self.project}/bank/{self.path.name}"

    @property
    def origin(self) -> str:
        """Which harness wrote it; legacy entries say where they came from instead."""
        return self.harness or self.source or "unknown"


def read_entry(path: Path, project: str | None = None) -> Entry | None:
    text = read_regular_text(os.fspath(path), MAX_ENTRY_BYTES)  # a FIFO or a link named like an entry: None
    if text is None:
        return None
    return parse_entry(text, path, project or path.parent.parent.name)


def parse_entry(text: str, path: Path, project: str) -> Entry:
    meta, body = split_frontmatter(text)
    return entry_from(meta, _split_sections(body), path, project)


def entry_from(meta: dict[str, object], sections: dict[str, str], path: Path, project: str) -> Entry:
    """The entry whose frontmatter and sections read as these (what `split_frontmatter` and the section
    split return): a writer that holds them has no text to parse."""
    stem = path.stem
    ts = parse_iso(meta.get("ts")) or ts_from_name(str(meta.get("id") or "")) or ts_from_name(stem) or 0.0
    title = _one_line(meta.get("title")) or sections.get("_title", "") or _title_from_name(stem)
    return Entry(
        path=path,
        project=project,
        id=_one_line(meta.get("id")) or stem.split("--", 1)[0],
        ts=ts,
        title=title,
        tags=_tags(meta.get("tags")),
        cwd=_one_line(meta.get("cwd")),
        session_id=_one_line(meta.get("session_id") or meta.get("sessionId")),
        harness=_one_line(meta.get("harness")),
        turn_key=_one_line(meta.get("turn_key")),
        source=_one_line(meta.get("source")),
        prompt=sections.get("prompt", ""),
        actions=sections.get("actions", ""),
        result=sections.get("result", ""),
    )


def split_frontmatter(text: str) -> tuple[dict[str, object], str]:
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.startswith("---"):
        return {}, text
    first_nl = text.find("\n")
    if first_nl < 0 or text[:first_nl].strip() != "---":
        return {}, text
    end = re.search(r"^---\s*$", text[first_nl + 1:], re.M)
    if end is None:
        return {}, text
    head = text[first_nl + 1: first_nl + 1 + end.start()]
    body = text[first_nl + 1 + end.end():]
    meta = _simple_frontmatter(head)
    if meta is None:
        meta = _yaml_frontmatter(head)
    return meta, body


def _simple_frontmatter(head: str) -> dict[str, object] | None:
    """Our own frontmatter shape, or None if the text uses anything fancier."""
    meta: dict[str, object] = {}
    items: list[str] | None = None  # the list the lines below a `key:` add to
    for line in head.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line.startswith((" ", "\t")) or line.startswith("- "):
            item = line.strip()
            if items is None or not item.startswith("- "):
                return None
            value = _scalar(item[2:].strip())
            if value is None:
                return None
            items.append(value)
            continue
        key, sep, rest = line.partition(":")
        if not sep or not re.fullmatch(r"[A-Za-z_][\w-]*", key):
            return None
        rest = rest.strip()
        if not rest:
            meta[key] = items = []
            continue
        if rest == "[]":  # `tags: []`, as the banker writes it for a turn without tools
            meta[key] = []
            items = None
            continue
        items = None
        value = _scalar(rest)
        if value is None:
            return None
        meta[key] = value
    return meta


def _scalar(text: str) -> str | None:
    if text.startswith('"'):
        try:
            value = json.loads(text)
        except ValueError:
            return None
        return value if isinstance(value, str) else None
    if text.startswith("'"):
        if len(text) < 2 or not text.endswith("'"):
            return None
        return text[1:-1].replace("''", "'")
    if text[0] in "[{&*!|>%@`" or " #" in text:
        return None
    return text


def _yaml_frontmatter(head: str) -> dict[str, object]:
    try:
        import yaml

        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        value = yaml.load(head, Loader=loader)  # noqa: S506 - a safe loader
    except Exception:
        return {}
    return value if isinstance(value, dict) else {}


def _split_sections(body: str) -> dict[str, str]:
    """Map the Prompt / Actions / Result sections to their text.

    Sections only move forward (prompt, actions, result), so a heading inside
    an answer ("## Steps") stays part of that answer. Text before any known
    heading (older entries without sections) counts as the result, so it is
    still searchable; a leading `# Title` is remembered as a title.
    """
    order = {"prompt": 0, "actions": 1, "result": 2}
    found: dict[str, list[str]] = {}
    current = "preamble"
    lines: list[str] = []
    title = ""

    def flush() -> None:
        text = "\n".join(lines).strip()
        if text:
            found.setdefault("result" if current == "preamble" else current, []).append(text)

    for line in body.splitlines():
        match = _HEADING.match(line) if line.startswith("#") else None
        if match:
            name = match.group(1).strip().lower().rstrip(":")
            section = _SECTION_NAMES.get(name)
            if section and order[section] > order.get(current, -1):
                flush()
                lines = []
                current = section
                continue
            if current == "preamble" and not title and line.startswith("# ") and not "".join(lines).strip():
                title = match.group(1).strip()
                continue
        lines.append(line)
    flush()
    sections = {key: "\n\n".join(parts) for key, parts in found.items()}
    if title:
        sections["_title"] = title
    return sections


def _tags(value: object) -> list[str]:
    if isinstance(value, str):
        value = [v for v in re.split(r"[,\s]+", value.strip("[] ")) if v]
    if not isinstance(value, list):
        return []
    return [str(v).strip() for v in value if str(v).strip()]


def _one_line(value: object) -> str:
    if value is None or isinstance(value, (list, dict)):
        return ""
    return " ".join(str(value).split())


def ts_from_name(name: str) -> float | None:
    """The time an entry's file name (or id) starts with, `2026-08-28T10-30-00-000Z`; None if it has none."""
    match = _FILE_ISO.match(name)
    if not match:
        return None
    day, hh, mm, ss, frac = match.groups()
    return parse_iso(f"{day}T{hh}:{mm}:{ss}.{(frac or '0')[:3].ljust(3, '0')}Z")


def _title_from_name(stem: str) -> str:
    slug = stem.split("--", 1)[1] if "--" in stem else stem
    return slug.replace("-", " ").strip() or stem
