"""A project's identity (SPEC §11): its repository when it has one, its folder otherwise.

The repository is the normalised URL of its `origin` remote (`git@github.com:Org/App.git`,
`https://user@GitHub.com/Org/App` and `ssh://git@github.com/Org/App` are all
`github.com/org/app`: GitHub, GitLab, Bitbucket and Codeberg compare owner and name without case),
read from the git config without running git. Only a repository git itself would use gives one:
the first `.git` up from the folder that git's discovery accepts (a git dir with a valid HEAD,
`objects/` and `refs/`; a worktree's or a submodule's `.git` file names its git dir, whose
`commondir` names the shared one), owned by this user or listed in `safe.directory` of the user's
global git config, and whose work tree is neither the home folder (a dotfiles repository) nor the root.

Each project folder of the tree holds its folders' identities in `IDENTITY.md` (written by the pass
when it banks there), so a machine that pulls the tree knows which slugs are one repository. Two
folders can share a slug, so the file names each folder with its repository:

    repository: github.com/org/app
    folder: ["/home/me/code/my-app", "github.com/org/app"]

The `repository:` line, the whole of the older form, is written only while every folder listed is
that one repository (what a reader of the older form takes for the slug); read alone, it stands for
every folder of the slug (`WHOLE_SLUG`). Read on the prompt hook's path: plain file reads, no `re`,
no configparser, no subprocess; the map of the tree's identities is cached in the agent dir until the
memories folder changes or a pass runs (`forget_cache`).
"""

from __future__ import annotations

import os
import stat

from .. import safefile, wirejson

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the prompt hook reads identities)
if TYPE_CHECKING:
    from ..paths import Locations

IDENTITY_FILE = "IDENTITY.md"
CACHE_FILE = "identities.json"  # in the agent dir: {slug: {folder: identity}} of the whole tree, and its stamp
WHOLE_SLUG = ""  # the folder of an identity in the older form: every folder of the slug
CASELESS_HOSTS = frozenset({"github.com", "gitlab.com", "bitbucket.org", "codeberg.org"})
_PREFIX = "repository: "
_FOLDER = "folder: "
_HEADER = ("# Project identity\n\nWhich repository each folder of this project is, so every machine's copies "
           "of it meet.\n\n")
_FILE_LIMIT = 1 << 16
_HEX = frozenset("0123456789abcdefABCDEF")
_known: dict[str, str | None] = {}  # folder -> repository, for this process


def repository_of(cwd: str) -> str | None:
    """The normalised `origin` URL of the repository holding `cwd`, or None (none git accepts, no origin)."""
    if cwd not in _known:
        git_dir = _accepted_git_dir(cwd)
        urls = config_values(os.path.join(git_dir, "config"), "remote", "origin", "url") if git_dir else []
        url = next((u for u in urls if u), None)  # the first url, as git fetches from
        _known[cwd] = (normalise(url) or None) if url else None
    return _known[cwd]


# --- which repository git would use --------------------------------------------------------------


def _accepted_git_dir(cwd: str) -> str | None:
    """The (common) git dir of the repository git discovers from `cwd`, when it gives an identity."""
    found = _discover(cwd)
    if found is None:
        return None
    work_tree, gitfile, git_dir = found
    if _is_home_or_root(work_tree) or not _trusted(work_tree, gitfile, git_dir):
        return None
    return _common_dir(git_dir)


def _discover(cwd: str) -> tuple[str, str | None, str] | None:
    """(work tree, `.git` file or None, git dir) as git's discovery finds them: up from `cwd`, a `.git`
    folder that is no git directory is passed over, a `.git` file that names none ends the search."""
    folder = os.path.normpath(cwd) if cwd else ""
    ceilings = _ceilings()
    while folder:
        dot_git = os.path.join(folder, ".git")
        try:
            mode = os.stat(dot_git).st_mode
        except (OSError, ValueError):
            mode = 0
        if stat.S_ISREG(mode):
            git_dir = _gitfile_target(folder, dot_git)
            return (folder, dot_git, git_dir) if git_dir and is_git_directory(git_dir) else None
        if stat.S_ISDIR(mode) and is_git_directory(dot_git):
            return folder, None, dot_git
        parent = os.path.dirname(folder)
        if parent == folder or parent in ceilings or os.path.realpath(parent) in ceilings:
            return None  # git never goes up into a ceiling folder
        folder = parent
    return None


def _ceilings() -> set[str]:
    """`GIT_CEILING_DIRECTORIES`, as given and with links resolved. It is the one part of git's environment
    followed: it only stops a search. `GIT_DIR` and `GIT_WORK_TREE` are not: they are the harness's, not
    the folder's, and would give a folder another repository's identity in one process and not in the next."""
    value = os.environ.get("GIT_CEILING_DIRECTORIES") or ""
    paths = [os.path.normpath(path) for path in value.split(":") if os.path.isabs(path)]
    return {*paths, *map(os.path.realpath, paths)}


def _gitfile_target(folder: str, gitfile: str) -> str | None:
    """The git dir a worktree's or a submodule's `.git` file names (`gitdir: <path>`)."""
    text = safefile.read_regular_text(gitfile, _FILE_LIMIT)
    if not text or not text.startswith("gitdir: "):
        return None
    path = text[len("gitdir: "):].split("\n", 1)[0].strip()
    return os.path.normpath(os.path.join(folder, path)) if path else None


def is_git_directory(git_dir: str) -> bool:
    """git's own test (setup.c `is_git_directory`): a valid HEAD, and `objects/` and `refs/` in the common dir."""
    if not _valid_head(os.path.join(git_dir, "HEAD")):
        return False
    common = _common_dir(git_dir)
    return all(os.access(os.path.join(common, name), os.X_OK) for name in ("objects", "refs"))


def _valid_head(path: str) -> bool:
    """A symlink into `refs/`, a `ref: refs/…` or a detached object id (git's `validate_headref`)."""
    try:
        mode = os.lstat(path).st_mode
    except (OSError, ValueError):
        return False
    if stat.S_ISLNK(mode):
        try:
            return os.readlink(path).startswith("refs/")
        except OSError:
            return False
    text = safefile.read_regular_text(path, 255)
    if text is None:
        return False
    if text.startswith("ref:"):
        return text[4:].lstrip().startswith("refs/")
    return any(len(text) >= size and all(c in _HEX for c in text[:size]) for size in (40, 64))  # SHA-1, SHA-256


def _common_dir(git_dir: str) -> str:
    """A worktree's git dir names the repository's own in `commondir`."""
    common = (safefile.read_regular_text(os.path.join(git_dir, "commondir"), 4096) or "").strip()
    return os.path.normpath(os.path.join(git_dir, common)) if common else git_dir


def _is_home_or_root(work_tree: str) -> bool:
    """A repository over the home folder (dotfiles) or the root would make every folder under it one project."""
    real = os.path.realpath(work_tree)
    return os.path.dirname(real) == real or real in map(os.path.realpath, _homes())


def _homes() -> list[str]:
    """The home folder as HOME names it and as the password database does (HOME may be empty, or another)."""
    import pwd

    homes = [os.environ.get("HOME") or ""]
    try:
        homes.append(pwd.getpwuid(os.getuid()).pw_dir)
    except (KeyError, OSError):
        pass
    return [home for home in homes if home]


def _trusted(work_tree: str, gitfile: str | None, git_dir: str) -> bool:
    """Whether git would use this repository (setup.c `ensure_valid_ownership`): its work tree, `.git` file
    and git dir are this user's, or the user's global git config lists it in `safe.directory`."""
    if all(_owned(path) for path in (gitfile, work_tree, git_dir) if path):
        return True
    return _listed_safe(os.path.realpath(work_tree))


def _owned(path: str) -> bool:
    try:
        owner = os.lstat(path).st_uid
    except (OSError, ValueError):
        return False
    uid = os.geteuid()
    if uid == 0 and owner != 0:  # git under sudo: the invoking user's files count as the user's
        sudo_uid = os.environ.get("SUDO_UID", "")
        uid = int(sudo_uid) if sudo_uid.isdigit() else uid
    return owner == uid


def _listed_safe(work_tree: str) -> bool:
    """`safe.directory` as git reads it: `*` for any, a path, `<path>/*` for all below it, empty resets."""
    safe = False
    for value in _global_values("safe", None, "directory"):
        if not value:
            safe = False
        elif value == "*":
            safe = True
        else:
            path = _config_path(value)
            if not os.path.isabs(path):
                continue  # git ignores a relative one (and "." needs the folder git started in)
            if path.endswith("/*"):
                prefix = os.path.realpath(path[:-2])
                if os.path.exists(prefix) and work_tree.startswith(prefix.rstrip("/") + "/"):
                    safe = True
            elif os.path.exists(path) and os.path.realpath(path) == work_tree:
                safe = True
    return safe


def _config_path(value: str) -> str:
    """git's `~/` in a path value."""
    if value == "~" or value.startswith("~/"):
        return (os.environ.get("HOME") or "~") + value[1:]
    return value


def _global_values(section: str, subsection: str | None, key: str) -> list[str]:
    """A key's values in the user's global git config, in the order git reads them."""
    home = os.environ.get("HOME") or ""
    chosen = os.environ.get("GIT_CONFIG_GLOBAL")
    if chosen is not None:
        files = [chosen] if chosen else []
    else:
        xdg = os.environ.get("XDG_CONFIG_HOME") or (os.path.join(home, ".config") if home else "")
        files = [path for path in (xdg and os.path.join(xdg, "git", "config"), home and os.path.join(home, ".gitconfig"))
                 if path]
    return [value for path in files for value in config_values(path, section, subsection, key)]


def config_values(path: str, section: str, subsection: str | None, key: str) -> list[str]:
    """Every value of `section[ "subsection"].key` in a git config file, in order (a key without `=` is "")."""
    text = safefile.read_regular_text(path, 1 << 20)
    if not text:
        return []
    values: list[str] = []
    inside = False
    for raw in text.split("\n"):
        line = raw.strip()
        if line.startswith("["):
            end = line.find("]")
            if end < 0:
                inside = False
                continue
            inside = _section_is(line[1:end], section, subsection)
            line = line[end + 1:].strip()  # `[safe] directory = *` is one line
        if not inside or not line or line[0] in "#;":
            continue
        name, has_value, rest = line.partition("=")
        if name.strip().lower() == key:
            values.append(_config_value(rest) if has_value else "")
    return values


def _section_is(header: str, section: str, subsection: str | None) -> bool:
    name, _, sub = header.strip().partition(" ")
    if sub:  # `[remote "origin"]`: the subsection's case counts
        return name.lower() == section and subsection is not None and sub.strip().strip('"') == subsection
    if "." in name:  # the older `[remote.origin]`
        first, _, rest = name.partition(".")
        return first.lower() == section and subsection is not None and rest.lower() == subsection.lower()
    return name.lower() == section and subsection is None


def _config_value(text: str) -> str:
    """A value as git reads it: quotes joined, `\\` escapes, a comment outside quotes ends it."""
    out: list[str] = []
    quoted = False
    escapes = {"n": "\n", "t": "\t", "b": "\b", "\\": "\\", '"': '"'}
    chars = iter(text.strip())
    for char in chars:
        if char == "\\":
            out.append(escapes.get(next(chars, ""), ""))
        elif char == '"':
            quoted = not quoted
        elif char in "#;" and not quoted:
            break
        else:
            out.append(char)
    return "".join(out).rstrip() if not quoted else "".join(out)


_DEFAULT_PORTS = {"ssh": "22", "git+ssh": "22", "ssh+git": "22", "https": "443", "http": "80", "git": "9418"}


def normalise(url: str) -> str:
    """`host/path` of a remote URL: scheme, user, a default port, `.git` and the host's case dropped, and the
    path's case on the hosts that compare owner and name without it (`CASELESS_HOSTS`); "" for a local one.

    A local origin (`../upstream`, `./x`, `/srv/app.git`, `file://…`) is no identity: the path means
    another folder on every machine, and two unrelated repositories cloned from `../upstream` would join."""
    text = url.strip()
    scheme, sep, rest = text.partition("://")
    scheme = scheme.lower()
    if not sep:  # scp-like `git@host:path` (a colon before any slash), else a local path
        head = text.split("/", 1)[0]
        if ":" not in head or len(head.split(":", 1)[0]) == 1:  # a drive letter `C:` is local too
            return ""
        host, _, path = text.partition(":")
        rest = f"{host}/{path}"
    elif scheme == "file":
        return ""
    host, _, path = rest.partition("/")
    host = host.rsplit("@", 1)[-1].lower()
    name, colon, port = host.rpartition(":")
    if sep and colon and port.isdigit() and port == _DEFAULT_PORTS.get(scheme):
        host = name  # ssh://host:22/… and https://host:443/… are the same repository; host:3000 is not host:3001
    path = path.strip("/")
    if host in CASELESS_HOSTS:
        path = path.lower()
    if path.endswith(".git"):
        path = path[:-4]
    return f"{host}/{path}" if host else path


def _folded(identity: str) -> str:
    """An identity as `normalise` now gives it (one written before the path's case was dropped)."""
    host, sep, path = identity.partition("/")
    return f"{host.lower()}/{path.lower()}" if sep and host.lower() in CASELESS_HOSTS else identity


# --- in the tree ---------------------------------------------------------------------------------


def render(folders: dict[str, str]) -> str:
    """IDENTITY.md for `{folder: repository}` ("" for a folder that is none; `WHOLE_SLUG`: the older form)."""
    repositories = set(folders.values())
    text = _HEADER
    if len(repositories) == 1 and "" not in repositories:
        text += f"{_PREFIX}{next(iter(repositories))}\n"
    for folder, repository in sorted(folders.items()):
        if folder != WHOLE_SLUG:
            text += _FOLDER + wirejson.dumps([folder, repository]) + "\n"
    return text


def read(project_dir: str) -> dict[str, str]:
    """`{folder: repository}` of a project folder of the tree (`WHOLE_SLUG` for the older form), or {}."""
    text = safefile.read_regular_text(os.path.join(project_dir, IDENTITY_FILE), _FILE_LIMIT)
    if not text:
        return {}
    whole, folders = "", {}
    for line in text.split("\n"):  # not splitlines(): a folder's U+2028 is no line break
        if line.startswith(_FOLDER):
            pair = _pair(line[len(_FOLDER):])
            if pair:
                folders[pair[0]] = _folded(pair[1])
        elif line.startswith(_PREFIX) and not whole:
            whole = line[len(_PREFIX):].strip()
    if folders:
        return folders
    return {WHOLE_SLUG: _folded(whole)} if whole else {}


def _pair(text: str) -> tuple[str, str] | None:
    try:
        value = wirejson.loads(text)
    except ValueError:
        return None
    if isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) for v in value) and value[0]:
        return value[0], value[1]
    return None


def record(project_dir: str, folder: str, repository: str | None) -> bool:
    """Write a folder's repository (`scope.folder_key`, as its entries name it) into the project beside its
    other folders' (once, or when it changed); whether it wrote. An older form's line, which names no
    folder, gives way to the folders'. A project folder that is a symlink is not written through (it may
    lead out of the tree)."""
    if not safefile.may_make_folder(os.path.dirname(project_dir), os.path.basename(project_dir)):
        return False
    known = read(project_dir)
    if not repository and not known:
        return False  # a folder of its own: no file says so
    folders = {other: identity for other, identity in known.items() if other != WHOLE_SLUG}
    folders[folder] = repository or ""
    if folders == known:
        return False
    from pathlib import Path

    from ..atomic import atomic_write

    atomic_write(Path(project_dir) / IDENTITY_FILE, render(folders))
    return True


def slugs_holding(locs: Locations, repository: str) -> dict[str, tuple[str, ...] | None]:
    """The slugs of the tree holding folders of `repository`, each with those folders (None: every folder
    of the slug, as a file of the older form says)."""
    found: dict[str, tuple[str, ...] | None] = {}
    for slug, folders in sorted(tree_identities(locs).items()):
        same = tuple(sorted(folder for folder, identity in folders.items() if identity == repository))
        if same:
            found[slug] = None if WHOLE_SLUG in same else same
    return found


def joined(locs: Locations, slug: str, cwd: str) -> list[str]:
    """The other slugs of the tree that hold the same repository as `cwd` (none for a folder that is not one)."""
    repository = repository_of(cwd)
    return [other for other in slugs_holding(locs, repository) if other != slug] if repository else []


def tree_identities(locs: Locations) -> dict[str, dict[str, str]]:
    """{slug: {folder: repository}} of every project folder of the tree that holds an IDENTITY.md (cached)."""
    root = locs.memories_path
    try:
        stamp = os.stat(root).st_mtime_ns
    except OSError:
        return {}
    cache = os.path.join(locs.agent_path, CACHE_FILE)
    data = wirejson.read_cache(cache, stamp)
    if data is not None and isinstance(data.get("folders"), dict):
        return {str(slug): {str(f): str(r) for f, r in folders.items()}
                for slug, folders in data["folders"].items() if isinstance(folders, dict)}
    found: dict[str, dict[str, str]] = {}
    try:
        with os.scandir(root) as it:
            names = [e.name for e in it if e.is_dir(follow_symlinks=False) and not e.name.startswith(".")]
    except OSError:
        return {}
    for name in names:
        folders = read(os.path.join(root, name))
        if folders:
            found[name] = folders
    wirejson.write_cache(cache, stamp, {"folders": found})
    return found


def forget_cache(locs: Locations) -> None:
    """Drop the cached map (the pass does, so an IDENTITY.md pulled into a known folder counts soon)."""
    try:
        os.unlink(os.path.join(locs.agent_path, CACHE_FILE))
    except OSError:
        pass
