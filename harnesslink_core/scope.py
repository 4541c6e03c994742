"""Which projects a session may read: its own, plus those its `linked.txt` names.

Nothing else, ever: a linked name that is not a plain folder name inside the
memories root (`..`, separators, an absolute path that slugs to nothing) is
ignored, and links are not followed transitively.
"""

from __future__ import annotations

import re
from pathlib import Path

from .paths import Locations

LINKED_FILE = "linked.txt"


SLUG_CAP = 200  # bank.PROJECT_SLUG_CAP


def project_slug(cwd: str) -> str:
    """`/Users/me/Workspace/myapp` -> `--Users-me-Workspace-myapp--` (SPEC §2).

    Always one plain folder name inside the memories root. It lives here, not in
    `bank`, so the prompt hook need not import the banker and its dependencies.
    """
    text = re.sub(r"^[/\\]", "", (cwd or "").strip())
    text = re.sub(r"[/\\:]", "-", text)
    text = re.sub(r"[\x00-\x1f\x7f]", "-", text)
    if not text.strip("-. "):
        text = "unknown-project"
    if len(text.encode()) > SLUG_CAP:
        import hashlib

        digest = hashlib.sha1(cwd.encode("utf-8", "replace")).hexdigest()[:10]
        text = text.encode()[: SLUG_CAP - 11].decode("utf-8", "ignore") + "-" + digest
    return f"--{text}--"


def is_safe_slug(slug: str) -> bool:
    """A name that can only address a folder directly inside the memories root."""
    return (
        bool(slug)
        and slug.strip(".-") != ""
        and "/" not in slug
        and "\\" not in slug
        and "\x00" not in slug
        and slug not in (".", "..")
    )


def project_dir(locs: Locations, slug: str) -> Path | None:
    if not is_safe_slug(slug):
        return None
    return locs.memories / slug


def linked_projects(locs: Locations, slug: str) -> list[str]:
    """The projects named in `<slug>/linked.txt`: slugs or folder paths, one per line."""
    folder = project_dir(locs, slug)
    if folder is None:
        return []
    try:
        text = (folder / LINKED_FILE).read_text("utf-8", "replace")
    except OSError:
        return []
    linked: list[str] = []
    for line in text.splitlines():
        name = line.strip()
        if not name or name.startswith("#"):
            continue
        if name.startswith("~"):
            name = str(locs.home) + name[1:]
        if name[:1] in "/\\" or re.match(r"^[A-Za-z]:[\\/]", name):
            name = project_slug(name)
        if is_safe_slug(name) and name != slug and name not in linked:
            linked.append(name)
    return linked


def scope_for(locs: Locations, cwd: str) -> list[str]:
    """The project of `cwd` first, then its linked projects."""
    own = project_slug(cwd)
    if not is_safe_slug(own):
        return []
    return [own, *linked_projects(locs, own)]


def all_projects(locs: Locations) -> list[str]:
    try:
        return sorted(p.name for p in locs.memories.iterdir() if p.is_dir() and is_safe_slug(p.name))
    except OSError:
        return []
