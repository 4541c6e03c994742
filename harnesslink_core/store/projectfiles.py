"""A project's MAIN.md index and daily summaries (SPEC §5), rebuilt from its bank folder."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from ..atomic import atomic_write
from ..safefile import may_make_folder, read_regular, read_regular_text, tree_folder
from .entries import split_frontmatter
from .main_md import END, START

DEFAULT_HEADER = (
    "# Project Memory\n\n"
    "Add context, architecture notes, or reminders here.\n"
    "Everything above the markers is untouched by the banker.\n\n"
)
INDEX_ROWS = 200
MAIN_BYTES = 4 * 1024 * 1024  # a MAIN.md larger than this is left as it is
SUMMARY_BYTES = 1024 * 1024

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal

    from .ledger import Tombstones

    Known = dict[str, tuple[int, dict[str, object]]]


def entry_names(project_dir: Path, forgotten: Tombstones | None = None) -> list[str]:
    """Bank entry file names, oldest first (names start with the time the turn finished),
    without symlinks (a link may lead out of the tree, so may a linked folder) and those `forgotten` names
    (ledger.Tombstones)."""
    bank = tree_folder(os.fspath(project_dir.parent), project_dir.name, "bank")
    if bank is None:
        return []
    try:
        with os.scandir(bank) as it:  # a link is told from the listing, without a stat per name
            names = [e.name for e in it if e.name.endswith(".md") and not e.name.startswith(".") and not e.is_symlink()]
    except OSError:
        return []
    if forgotten:
        names = [n for n in names if not forgotten.covers(project_dir.name, n)]
    return sorted(names)


def read_header(path: Path | str) -> dict[str, object]:
    """An entry's frontmatter, read from its head only (the index and summaries need no more)."""
    head = read_regular_text(os.fspath(path), 16384)
    return {} if head is None else split_frontmatter(head)[0]


def _header(project_dir: Path, name: str, known: Known | None) -> dict[str, object]:
    """An entry's frontmatter: from `known` (what a writer just wrote: (size, frontmatter) by file name)
    while the file still has that size, else read from its head."""
    path = os.path.join(project_dir, "bank", name)  # a string: asked for every entry of a project, twice a pass
    if known and name in known:
        size, header = known[name]
        try:
            if os.stat(path).st_size == size:
                return header
        except OSError:
            pass
    return read_header(path)


def rebuild_main(project_dir: Path, forgotten: Tombstones | None = None, known: Known | None = None) -> bool:
    """Rebuild the index between the markers, newest first; everything else stays byte for byte.

    `forgotten` (forget.Tombstones): entries the user forgot that came back are left out. `known`: the
    frontmatter of entries the caller just wrote (see `_header`); the others are read. A project folder that
    is a symlink is not written through (it may lead out of the tree)."""
    if not may_make_folder(os.fspath(project_dir.parent), project_dir.name):
        return False
    rows = []
    for name in reversed(entry_names(project_dir, forgotten)[-INDEX_ROWS:]):
        header = _header(project_dir, name, known)
        if forgotten and forgotten.covers(project_dir.name, name, str(header.get("turn_key") or "")):
            continue
        ts = header.get("ts") or name.split("--", 1)[0]
        title = str(header.get("title") or name).replace("\n", " ")
        rows.append(f"- {ts} — {title} (bank/{name})")
    block = START + "\n" + "".join(row + "\n" for row in rows) + END
    path = project_dir / "MAIN.md"
    old = _main_text(path)
    if old is False:
        return False  # not a regular file, or too large to keep byte for byte: left as it is
    if old is None:
        new = DEFAULT_HEADER + block + "\n"
    else:
        span = _index_span(old)
        if span:
            new = old[:span[0]] + block + old[span[1]:]
        else:
            sep = "" if not old or old.endswith("\n\n") else ("\n" if old.endswith("\n") else "\n\n")
            new = old + sep + block + "\n"
    if new == old:
        return False
    atomic_write(path, new)
    return True


def indexed_names(project_dir: Path) -> set[str] | None:
    """The entry file names MAIN.md's index lists; None when there is no MAIN.md or no index in it."""
    text = _main_text(project_dir / "MAIN.md")
    if not isinstance(text, str):
        return None
    span = _index_span(text)
    if span is None:
        return None
    return set(re.findall(r"^.*\(bank/(.+?)\)[ \t\r]*$", text[span[0]:span[1]], re.M))


def _main_text(path: Path) -> str | Literal[False] | None:
    """MAIN.md's text, bytes as they are (the human part is kept byte for byte, whatever its line ends or
    encoding); None when there is none, False when it is not a regular file or larger than MAIN_BYTES."""
    data = read_regular(os.fspath(path), MAIN_BYTES + 1)
    if data is None:
        return False if os.path.lexists(path) else None
    if len(data) > MAIN_BYTES:
        return False
    return data.decode("utf-8", "surrogateescape")


def _index_span(text: str) -> tuple[int, int] | None:
    """Where MAIN.md's index is, from its start marker to the end of its end marker."""
    start, end = text.find(START), text.find(END)
    return (start, end + len(END)) if start != -1 and end > start else None


def summary_line(header: dict[str, object], name: str) -> str:
    """An entry's line in its day's summary."""
    tags = header.get("tags")
    return f"- {header.get('title') or name} [{', '.join(map(str, tags)) if isinstance(tags, list) else ''}]"


def write_summaries(project_dir: Path, today: str, forgotten: Tombstones | None = None,
                    known: Known | None = None) -> list[Path]:
    """One `summaries/YYYY-MM-DD.md` for each past day that has entries and no summary yet (`known`: as
    for `rebuild_main`); none through a symlinked folder."""
    if not may_make_folder(os.fspath(project_dir.parent), project_dir.name, "summaries"):
        return []
    by_day: dict[str, list[str]] = {}
    for name in entry_names(project_dir, forgotten):
        day = name[:10]
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", day) and day < today:
            by_day.setdefault(day, []).append(name)
    written = []
    for day, names in sorted(by_day.items()):
        path = project_dir / "summaries" / f"{day}.md"
        if path.exists():
            continue
        lines = [f"# {day}", ""]
        for name in names:
            header = _header(project_dir, name, known)
            if forgotten and forgotten.covers(project_dir.name, name, str(header.get("turn_key") or "")):
                continue
            lines.append(summary_line(header, name))
        if _create(path, "\n".join(lines) + "\n"):
            written.append(path)
    return written


def drop_summary_lines(project_dir: Path, headers: dict[str, dict[str, object]]) -> int:
    """Remove these entries' lines from their days' summaries; returns how many went. `headers`: each
    entry's frontmatter (its line shows the title and tags) by file name. A summary left with no line goes."""
    dropped = 0
    if not may_make_folder(os.fspath(project_dir.parent), project_dir.name, "summaries"):
        return dropped
    by_day: dict[str, list[str]] = {}
    for name in headers:
        by_day.setdefault(name[:10], []).append(name)
    for day, names in by_day.items():
        path = project_dir / "summaries" / f"{day}.md"
        data = read_regular(os.fspath(path), SUMMARY_BYTES)
        try:
            lines = data.decode("utf-8").splitlines() if data is not None else None
        except UnicodeDecodeError:
            lines = None
        if lines is None:
            continue
        for name in names:
            line = summary_line(headers[name], name)
            if line in lines:
                lines.remove(line)
                dropped += 1
        if not any(line.startswith("- ") for line in lines):
            path.unlink()
        else:
            atomic_write(path, "\n".join(lines) + "\n")
    return dropped


def _create(path: Path, text: str) -> bool:
    """Write a file that must never be replaced once it exists."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{os.getpid()}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.link(tmp, path)
        return True
    except FileExistsError:
        return False
    finally:
        os.unlink(tmp)
