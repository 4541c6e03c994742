"""A project's identity (SPEC §11): its repository when it has one, its folder otherwise.

The repository is the normalised URL of its `origin` remote (`git@github.com:Org/App.git`,
`https://user@GitHub.com/Org/App` and `ssh://git@github.com/Org/App` are all
`github.com/Org/App`), read from `.git/config` without running git: a worktree's or a
submodule's `.git` file names its git dir (`gitdir: …`), whose `commondir` names the shared one.

Each project folder of the tree holds its identity in `IDENTITY.md` (written by the pass when it
banks there), so a machine that pulls the tree knows which slugs are one repository; every slug of
one identity is one scope (`joined`). Read on the prompt hook's path: plain file reads, no `re`, no
configparser, no subprocess; the map of the tree's identities is cached in the agent dir until the
memories folder changes or a pass runs (`forget_cache`).
"""

from __future__ import annotations

import os

from .. import wirejson

IDENTITY_FILE = "IDENTITY.md"
CACHE_FILE = "identities.json"  # in the agent dir: {slug: identity} of the whole tree, and its stamp
_PREFIX = "repository: "
_HEADER = "# Project identity\n\nWhich repository this project's folder is, so every machine's copies of it meet.\n\n"
_known: dict[str, str | None] = {}  # folder -> repository, for this process


def repository_of(cwd: str) -> str | None:
    """The normalised `origin` URL of the repository holding `cwd`, or None (no repository, no origin)."""
    if cwd in _known:
        return _known[cwd]
    url = None
    config = _git_config(cwd)
    if config:
        url = _origin(config)
    _known[cwd] = normalise(url) if url else None
    return _known[cwd]


def _git_config(cwd: str) -> str | None:
    folder = os.path.normpath(cwd) if cwd else ""
    while folder:
        dot_git = os.path.join(folder, ".git")
        if os.path.isdir(dot_git):
            return os.path.join(_common_dir(dot_git), "config")
        if os.path.isfile(dot_git):  # a worktree or a submodule: `gitdir: <path>`
            try:
                with open(dot_git, encoding="utf-8", errors="replace") as f:
                    line = f.read(4096).strip()
            except OSError:
                return None
            if not line.startswith("gitdir:"):
                return None
            git_dir = os.path.normpath(os.path.join(folder, line[len("gitdir:"):].strip()))
            return os.path.join(_common_dir(git_dir), "config")
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent
    return None


def _common_dir(git_dir: str) -> str:
    """A worktree's git dir names the repository's own in `commondir`."""
    try:
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8", errors="replace") as f:
            common = f.read(4096).strip()
    except OSError:
        return git_dir
    return os.path.normpath(os.path.join(git_dir, common)) if common else git_dir


def _origin(config: str) -> str | None:
    """`[remote "origin"] url = …` from a git config file (the first url, as git uses)."""
    try:
        with open(config, encoding="utf-8", errors="replace") as f:
            lines = f.read(1 << 20).splitlines()
    except OSError:
        return None
    in_origin = False
    for raw in lines:
        line = raw.strip()
        if line.startswith("["):
            section = line[1:line.find("]")] if "]" in line else line[1:]
            name, _, sub = section.partition(" ")
            in_origin = name.strip().lower() == "remote" and sub.strip().strip('"') == "origin"
        elif in_origin and "=" in line:
            key, _, value = line.partition("=")
            if key.strip().lower() == "url":
                return value.strip().strip('"') or None
    return None


def normalise(url: str) -> str:
    """`host/path` of a remote URL: scheme, user, port-less `:`, `.git` and the host's case dropped."""
    text = url.strip()
    scheme, sep, rest = text.partition("://")
    if not sep:  # scp-like `git@host:path`, or a local path
        rest = text
        if ":" in rest and "/" not in rest.split(":", 1)[0]:
            host, _, path = rest.partition(":")
            rest = f"{host}/{path}"
    host, _, path = rest.partition("/")
    host = host.rsplit("@", 1)[-1].lower()
    if sep and ":" in host and host.rsplit(":", 1)[1].isdigit():
        host = host.rsplit(":", 1)[0]  # ssh://host:22/… and https://host:443/… are the same repository
    path = path.strip("/")
    if path.endswith(".git"):
        path = path[:-4]
    return f"{host}/{path}" if host else path


# --- in the tree ---------------------------------------------------------------------------------


def render(repository: str) -> str:
    return f"{_HEADER}{_PREFIX}{repository}\n"


def read(project_dir: str) -> str | None:
    """The repository a project folder of the tree says it is, or None."""
    try:
        with open(os.path.join(project_dir, IDENTITY_FILE), encoding="utf-8", errors="replace") as f:
            text = f.read(8192)
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith(_PREFIX):
            return line[len(_PREFIX):].strip() or None
    return None


def record(project_dir: str, cwd: str) -> bool:
    """Write the folder's repository into the project (once, or when it changed); whether it wrote."""
    repository = repository_of(cwd)
    if not repository or read(project_dir) == repository:
        return False
    from pathlib import Path

    from ..atomic import atomic_write

    atomic_write(Path(project_dir) / IDENTITY_FILE, render(repository))
    return True


def joined(locs, slug: str, cwd: str) -> list[str]:
    """The other slugs of the tree that are the same repository as `cwd` (none for a folder that is not one)."""
    repository = repository_of(cwd)
    if not repository:
        return []
    return sorted(other for other, identity in tree_identities(locs).items() if identity == repository and other != slug)


def tree_identities(locs) -> dict[str, str]:
    """{slug: repository} of every project folder of the tree that holds an IDENTITY.md (cached)."""
    root = locs.memories_path
    try:
        stamp = os.stat(root).st_mtime_ns
    except OSError:
        return {}
    cache = os.path.join(locs.agent_path, CACHE_FILE)
    data = wirejson.read_cache(cache, stamp)
    if data is not None and isinstance(data.get("slugs"), dict):
        return {str(k): str(v) for k, v in data["slugs"].items()}
    found: dict[str, str] = {}
    try:
        with os.scandir(root) as it:
            names = [e.name for e in it if e.is_dir(follow_symlinks=False) and not e.name.startswith(".")]
    except OSError:
        return {}
    for name in names:
        repository = read(os.path.join(root, name))
        if repository:
            found[name] = repository
    wirejson.write_cache(cache, stamp, {"slugs": found})
    return found


def forget_cache(locs) -> None:
    """Drop the cached map (the pass does, so an IDENTITY.md pulled into a known folder counts soon)."""
    try:
        os.unlink(os.path.join(locs.agent_path, CACHE_FILE))
    except OSError:
        pass
