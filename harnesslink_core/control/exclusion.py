"""Projects kept out of memory: nothing is banked from them and nothing is injected into them.

A folder is kept out when it, or any folder above it, holds a file named `.harnesslink-off`, or
when it (or a folder above it) matches one of the globs under `memory.exclude` in config.yml
(reached through a symlink, the folder it really is counts too):

    memory:
      exclude:
        - ~/clients/*          # a path glob: `~` is your home; the folder and everything below it
        - /tmp/**
        - scratch-*            # no `/`: any folder with a matching name, wherever it is

On the prompt hook's path: imports only os (and fnmatch, which loads `re`, when there are globs). The globs are read from a small JSON
cache in the agent dir, rewritten (parsing config.yml with yaml) only when config.yml changed;
the autobank pass refreshes it, so a hook rarely parses YAML.
"""

from __future__ import annotations

import os

from .. import wirejson

OFF_FILE = ".harnesslink-off"
CACHE_FILE = "exclude-cache.json"


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
    """`memory.exclude` from config.yml, `~` expanded, from the cache while config.yml is unchanged."""
    agent_dir = locs.agent_path
    config = os.path.join(agent_dir, "config.yml")
    try:
        st = os.stat(config)
    except OSError:
        return []
    stamp = [st.st_mtime_ns, st.st_size]
    cache = os.path.join(agent_dir, CACHE_FILE)
    data = wirejson.read_cache(cache, stamp)
    if data is not None and isinstance(data.get("globs"), list):
        return [str(g) for g in data["globs"]]
    globs = _read_globs(locs)
    if globs is None:
        return []  # config.yml unreadable right now: nothing cached, asked again next time
    wirejson.write_cache(cache, stamp, {"globs": globs})
    return globs


def _read_globs(locs) -> list[str] | None:
    from ..config import ConfigError, load

    try:
        data = load(locs)
    except ConfigError:
        return None
    memory = data.get("memory") if isinstance(data.get("memory"), dict) else {}
    value = memory.get("exclude") or []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return []
    home = locs.home_path
    globs = []
    for item in value:
        pattern = str(item).strip()
        if pattern == "~" or pattern.startswith("~/"):
            pattern = home + pattern[1:]
        pattern = pattern.rstrip("/") or "/"
        if "/" in pattern and not pattern.startswith("/"):
            pattern = "*/" + pattern  # `clients/*`: a `clients` folder anywhere
        if pattern and pattern not in globs:
            globs.append(pattern)
    return globs
