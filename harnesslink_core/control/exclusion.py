"""Projects kept out of memory: nothing is banked from them and nothing is injected into them.

A folder is kept out when it, or any folder above it, holds a file named `.harnesslink-off`, or
when it (or a folder above it) matches one of the globs under `memory.exclude` in config.yml
(reached through a symlink, the folder it really is counts too):

    memory:
      exclude:
        - ~/clients/*          # a path glob: `~` is your home; the folder and everything below it
        - /tmp/**
        - scratch-*            # no `/`: any folder with a matching name, wherever it is

On the prompt hook's path: imports only os (and fnmatch, which loads `re`, when there are globs). The globs are read from
config.py's small JSON cache in the agent dir, rewritten (parsing config.yml with yaml) only when config.yml changed;
the autobank pass refreshes it, so a hook rarely parses YAML. At most 200 globs are used.
"""

from __future__ import annotations

import os

from .. import wirejson

OFF_FILE = ".harnesslink-off"
# config.CONFIG_CACHE, config.MAX_EXCLUDE and config.stamp_of's stamp, spelled out: the prompt hook may not
# import config (tests/hooks/test_hot_path.py); tests/test_config_attacks.py holds them equal
CONFIG_CACHE = "config-cache.json"
MAX_EXCLUDE = 200


def is_excluded(locs, cwd: str | None) -> str | None:
    """Why `cwd` is kept out (the `.harnesslink-off` file or the glob that matched), or None."""
    if not cwd:
        return None
    home = locs.home_path
    if cwd == "~" or cwd.startswith("~/"):
        cwd = home + cwd[1:]
    path = os.path.normpath(cwd)
    if not os.path.isabs(path):
        return None  # a transcript's cwd is absolute; anything else names no folder of ours
    globs = exclude_globs(locs)
    reason = _kept_out(path, globs)
    if reason is None:
        real = os.path.realpath(path)  # reached through a symlink: the folder it really is counts too
        if real != path:
            reason = _kept_out(real, globs)
    return reason


def _kept_out(path: str, globs: list[str]) -> str | None:
    folder = path
    while True:
        marker = os.path.join(folder, OFF_FILE)
        if os.path.exists(marker):
            return marker
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    for pattern in globs:
        if _matches(path, pattern):
            return f"memory.exclude: {pattern}"
    return None


def _matches(path: str, pattern: str) -> bool:
    import fnmatch

    folder = path
    while True:
        subject = folder if "/" in pattern else os.path.basename(folder)
        if subject and fnmatch.fnmatchcase(subject, pattern):
            return True
        parent = os.path.dirname(folder)
        if parent == folder:
            return False
        folder = parent


def exclude_globs(locs) -> list[str]:
    """`memory.exclude` from config.yml, `~` expanded, from config.py's cache while config.yml is unchanged
    (config.yml is parsed only when it changed, and a broken one once: it is cached as no globs)."""
    config = os.path.join(locs.agent_path, "config.yml")
    try:
        st = os.lstat(config)
    except OSError:
        return []
    data = wirejson.read_cache(os.path.join(locs.agent_path, CONFIG_CACHE), [st.st_mtime_ns, st.st_size, st.st_ino])
    if data is not None and isinstance(data.get("globs"), list):
        return [str(g) for g in data["globs"][:MAX_EXCLUDE]]
    from ..config import switches

    return switches(locs).exclude
