"""Finding the entry an id names, within a session's scope: `memory_get`, `harnesslink supersede` and
`confirm` take the same ids (`<project>/bank/<file>.md`, its path inside the memories folder, a file
name, a time id)."""

from __future__ import annotations

import os

from ..errors import NoSuchEntry
from ..paths import Locations
from ..safefile import tree_folder

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .scope import Folders


def find_entry(locs: Locations, cwd: str, wanted: str) -> str:
    """The absolute path of the entry `wanted` names in the projects `cwd` may read (its own, its
    repository's other slugs, its linked ones); never a file of another project, outside the memories
    tree, or reached through a symlink. Raises NoSuchEntry saying why not."""
    from .scope import scope_folders

    if "\x00" in wanted or len(wanted) > 4096:
        raise NoSuchEntry("`id` is not a valid entry id")
    root = os.path.realpath(locs.memories)
    scope = scope_folders(locs, cwd)
    if "/" in wanted or "\\" in wanted:
        parts = _parts_inside(locs, wanted.replace("\\", "/"), root)
        if parts[0] not in scope or not _of_this_scope(os.path.join(root, *parts), parts, scope):
            raise NoSuchEntry(f"{wanted!r} is not an entry of this project or of a linked one")
        path = os.path.join(root, *parts)
        if not path.endswith(".md") or _through_a_link(root, parts) or not os.path.isfile(path):
            raise NoSuchEntry(f"no memory entry at {wanted!r}")
        return path
    # a file name or a time id: looked up in the scope's projects (own + linked), newest first
    name = wanted if wanted.endswith(".md") else None
    for slug in scope:
        bank = tree_folder(root, slug, "bank")  # never through a linked folder
        if bank is None:
            continue
        try:
            names = sorted(os.listdir(bank), reverse=True)
        except OSError:
            continue
        for candidate in names:
            if candidate.startswith(".") or os.path.islink(os.path.join(bank, candidate)):
                continue
            if candidate == name or (name is None and candidate.startswith(wanted + "--")):
                if _of_this_scope(os.path.join(bank, candidate), [slug, "bank", candidate], scope):
                    return os.path.join(bank, candidate)
    raise NoSuchEntry(f"no memory entry {wanted!r} in this project; use the id memory_search shows")


def _of_this_scope(path: str, parts: list[str], scope: Folders) -> bool:
    """Whether the file may be read in this scope: any file of a project it holds whole; of a slug it holds
    only for some folders (`scope.holds_whole`), only an entry or a session state whose `cwd` is one of them."""
    from pathlib import Path

    from .entries import read_entry
    from .scope import holds_whole, is_foreign

    slug = parts[0]
    if holds_whole(scope, slug):
        return True
    if len(parts) != 3 or parts[1] not in ("bank", "state") or not os.path.isfile(path):
        return False
    entry = read_entry(Path(path), slug)
    return entry is not None and not is_foreign(entry.cwd, slug, scope)


def _parts_inside(locs: Locations, given: str, root: str) -> list[str]:
    """`given` (relative to the memories root, or absolute under it) as its folder names below the root."""
    if os.path.isabs(given):
        for base in (os.fspath(locs.memories).rstrip("/"), root.rstrip("/")):
            if given.startswith(base + "/"):
                given = given[len(base) + 1:]
                break
        else:
            raise NoSuchEntry(f"{given!r} is outside the memory folder; give an id memory_search showed")
    parts = [part for part in given.split("/") if part not in ("", ".")]
    if not parts or ".." in parts:
        raise NoSuchEntry(f"{given!r} is outside the memory folder; give an id memory_search showed")
    return parts


def _through_a_link(root: str, parts: list[str]) -> bool:
    path = root
    for part in parts:
        path = os.path.join(path, part)
        if os.path.islink(path):
            return True
    return False
