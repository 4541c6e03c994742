"""Which projects a session may read: its own, plus those its `linked.txt` names.

Nothing else, ever: a linked name that is not a plain folder name inside the
memories root (`..`, separators, an absolute path that slugs to nothing) is
ignored, and links are not followed transitively.
"""

from __future__ import annotations

import os

from ..paths import Locations
from ..safefile import read_regular_text, tree_folder

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the prompt hook's path)
if TYPE_CHECKING:
    from pathlib import Path

LINKED_FILE = "linked.txt"
LINKED_BYTES = 64 * 1024


SLUG_CAP = 200  # bank.PROJECT_SLUG_CAP
_TO_DASH = {ord(c): "-" for c in "/\\:" + "".join(map(chr, range(0x20))) + "\x7f"}


def project_slug(cwd: str) -> str:
    """`/Users/me/Workspace/myapp` -> `--Users-me-Workspace-myapp--` (SPEC §2).

    Always one plain folder name inside the memories root. It lives here, not in
    `bank`, so the prompt hook need not import the banker and its dependencies.
    """
    text = (cwd or "").strip()
    if may_hold_a_secret(text):  # a folder named like a token: the tree (and the cloud) never holds it
        from ..redact import redact

        text = redact(text).replace("[redacted:", "redacted-").replace("]", "")
    if text[:1] in ("/", "\\"):
        text = text[1:]
    text = text.translate(_TO_DASH)
    if not text.strip("-. "):
        text = "unknown-project"
    if len(text.encode()) > SLUG_CAP:
        import hashlib

        digest = hashlib.sha1(cwd.encode("utf-8", "replace")).hexdigest()[:10]
        text = text.encode()[: SLUG_CAP - 11].decode("utf-8", "ignore") + "-" + digest
    return f"--{text}--"


# What starts the tokens `redact` knows by their look, and what a URL or assignment with a password holds:
# a cheap test on the prompt hook's path, where `redact` (and `re`) are imported only when it holds.
_SECRET_MARKS = ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "xox", "xapp-", "sk-", "sk_", "rk_",
                 "akia", "asia", "aiza", "eyj", "hf_", "npm_", "sg.", "gocspx-", "_v1_", "whsec_", "://", "=", "@")


def may_hold_a_secret(path: str) -> bool:
    low = path.lower()
    for mark in _SECRET_MARKS:  # a loop, not any(): a pass asks this of every field of every history record
        if mark in low:
            return True
    return False


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
    """The project's folder (a Path), or None for a slug that is not safe."""
    if not is_safe_slug(slug):
        return None
    return locs.memories / slug


def project_path(locs: Locations, slug: str) -> str | None:
    """The project's folder as a string (the prompt hook's path: no pathlib), for reading: None for a slug that
    is not safe, and for a folder that is not there or is a symlink (it may lead out of the tree)."""
    return tree_folder(locs.memories_path, slug) if is_safe_slug(slug) else None


def linked_projects(locs: Locations, slug: str) -> list[str]:
    """The projects named in `<slug>/linked.txt`: slugs or folder paths, one per line."""
    return [name for name, _ in _links(locs, slug)]


def _links(locs: Locations, slug: str) -> list[tuple[str, str | None]]:
    """`linked.txt`'s projects, each with the folder path it was named by (None when named by slug)."""
    folder = project_path(locs, slug)
    if folder is None:
        return []
    text = read_regular_text(os.path.join(folder, LINKED_FILE), LINKED_BYTES)
    if text is None:
        return []
    linked: dict[str, str | None] = {}
    for line in text.splitlines():
        name, path = line.strip(), None
        if not name or name.startswith("#"):
            continue
        if name.startswith("~"):
            name = locs.home_path + name[1:]
        if name[:1] in "/\\" or (name[1:2] == ":" and name[2:3] in "/\\" and name[:1].isascii() and name[:1].isalpha()):
            name, path = project_slug(name), name
        if is_safe_slug(name) and name != slug and name not in linked:
            linked[name] = path
    return list(linked.items())


def folder_key(cwd: str) -> str:
    """A folder as its entries record it (`cwd`, redacted as the bank writes it), for comparing."""
    path = os.path.normpath((cwd or "").strip()) if cwd and cwd.strip() else ""
    if path and may_hold_a_secret(path):
        from ..redact import redact

        path = redact(path)
    return path


Folders = dict[str, "str | tuple[str, ...] | None"]
NO_FOLDER = ""  # among a slug's folders in scope: it holds no other, so what names no folder is of this scope too
FOLDERS_CACHE = "slug-folders.json"  # in the agent dir: {slug: [bank stamp, names, newest name, folders]}
_HEAD_BYTES = 16384


def scope_folders(locs: Locations, cwd: str) -> Folders:
    """Each project in scope, with the folder (or folders) whose entries it holds (`folder_key`), or None
    for all of its entries: the folder's own project and the other slugs of the same repository
    (`project_folders`), then the projects its `linked.txt` names (read only when its slug is all its own).
    Two folders can share a slug (`/code/my/app` and `/code/my-app`); an entry's own `cwd` then says which
    one it is of (`is_foreign`)."""
    folders = project_folders(locs, cwd)
    own = project_slug(cwd)
    linked: Folders = {}
    for slug, path in _links(locs, own) if folders and holds_whole(folders, own) else ():
        if slug not in folders:
            folders[slug] = linked[slug] = folder_key(path) if path else None
    return _marked(locs, folders, linked)


def project_folders(locs: Locations, cwd: str) -> Folders:
    """The folder's project on every slug it has: its own slug with this folder (and the slug's other
    folders of the same repository), then every other slug holding a folder of that repository (its
    clones, worktrees and moves, on this machine or another), with those folders (`identity.slugs_holding`).
    A slug known to hold no other folder also gets `NO_FOLDER` (see `holds_whole`)."""
    folders = _project_folders(locs, cwd)
    return _marked(locs, folders, folders)


def _project_folders(locs: Locations, cwd: str) -> Folders:
    from .identity import repository_of, slugs_holding

    own = project_slug(cwd)
    if not is_safe_slug(own):
        return {}
    mine = folder_key(cwd)
    folders: Folders = {own: mine}
    repository = repository_of(cwd)
    for slug, held in slugs_holding(locs, repository).items() if repository else ():
        if slug != own:
            folders[slug] = held
        elif held and set(held) - {mine}:  # the older form's line says no folder: it widens none of its own slug
            folders[own] = tuple(sorted({mine, *held}))
    return folders


def is_foreign(entry_cwd: str, slug: str, folders: Folders) -> bool:
    """Whether an entry of `slug` is not provably of the folders in scope (see `scope_folders`): of a folder
    outside the scope that only shares the slug, or of no folder in a slug that holds another one."""
    held = _held(folders.get(slug))
    if held is None:
        return False
    key = folder_key(entry_cwd)
    if key in held:
        return False
    return not key or project_slug(key) == slug


def holds_whole(folders: Folders, slug: str) -> bool:
    """Whether the scope holds `slug` whole, so its files that name no folder (MAIN.md, its summaries,
    IDENTITY.md, TRUST.md, linked.txt, an entry without a `cwd`) may be read: it holds all of the slug's
    folders, or every one the slug is known to hold (`NO_FOLDER`)."""
    held = _held(folders.get(slug))
    return held is None or NO_FOLDER in held


def _held(wanted: "str | tuple[str, ...] | None") -> tuple[str, ...] | None:
    return (wanted,) if isinstance(wanted, str) else wanted or None


def _marked(locs: Locations, folders: Folders, narrowed: Folders) -> Folders:
    """`folders`, with `NO_FOLDER` added to each of the `narrowed` slugs that holds no folder of its own
    (by its entries' `cwd` and its IDENTITY.md) outside the ones in scope."""
    holding = {slug: held for slug, wanted in narrowed.items() if (held := _held(wanted)) and NO_FOLDER not in held}
    if not holding:
        return folders
    from . import identity
    from .. import wirejson

    cache_path = os.path.join(locs.agent_path, FOLDERS_CACHE)
    cached = (wirejson.read_cache(cache_path, 1) or {}).get("slugs")
    cached = cached if isinstance(cached, dict) else {}
    changed = False
    named = identity.tree_identities(locs)
    for slug, held in holding.items():
        known, fresh = _bank_folders(locs, slug, cached.get(slug))
        if fresh is not None:
            cached[slug], changed = fresh, True
        known |= {folder for folder in named.get(slug, {}) if folder}
        if not {folder for folder in known if project_slug(folder) == slug} - set(held):
            folders[slug] = tuple(sorted({NO_FOLDER, *held}))
    if changed:
        wirejson.write_cache(cache_path, 1, {"slugs": cached})
    return folders


def _bank_folders(locs: Locations, slug: str, cached: object) -> tuple[set[str], list[object] | None]:
    """The folders (`folder_key`) the entries of `slug` were banked in, and the cache's new record for the
    slug when it changed (None: still right). The bank is read again only for names newer than the cached
    newest, or whole when one at or before it came or went."""
    bank = tree_folder(locs.memories_path, slug, "bank")
    if bank is None:
        return set(), None
    try:
        stamp = os.stat(bank).st_mtime_ns
    except OSError:
        return set(), None
    record = cached if isinstance(cached, list) and len(cached) == 4 and isinstance(cached[3], list) else None
    if record is not None and record[0] == stamp:
        return {str(folder) for folder in record[3]}, None
    try:
        with os.scandir(bank) as it:
            names = sorted(e.name for e in it if e.name.endswith(".md") and not e.name.startswith("."))
    except OSError:
        return set(), None
    count, newest, known = (record[1], str(record[2]), {str(f) for f in record[3]}) if record else (-1, "", set())
    if sum(1 for name in names if name <= newest) != count:
        newest, known = "", set()
    for name in names:
        if name > newest:
            key = folder_key(_head_cwd(os.path.join(bank, name)))
            if key:
                known.add(key)
    return known, [stamp, len(names), names[-1] if names else "", sorted(known)]


def _head_cwd(path: str) -> str:
    """The `cwd` an entry's frontmatter names ("" for none), read from its head only."""
    from .. import wirejson

    head = read_regular_text(path, _HEAD_BYTES) or ""
    lines = head.lstrip("\ufeff").split("\n")
    if not lines or lines[0].strip() != "---":
        return ""
    for line in lines[1:]:
        if line.strip() == "---":
            break
        if line.startswith("cwd:"):
            value = line[4:].strip()
            if value[:1] == '"':
                try:
                    loaded = wirejson.loads(value)
                except ValueError:
                    return ""
                return loaded if isinstance(loaded, str) else ""
            return value.strip("'")
    return ""


def scope_for(locs: Locations, cwd: str) -> list[str]:
    """The project of `cwd` first, then the other slugs of its repository, then its linked projects."""
    return list(scope_folders(locs, cwd))


def all_projects(locs: Locations) -> list[str]:
    try:
        with os.scandir(locs.memories_path) as it:
            return sorted(e.name for e in it if e.is_dir(follow_symlinks=False) and is_safe_slug(e.name))
    except OSError:
        return []
