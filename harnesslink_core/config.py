"""`config.yml` switches (SPEC §5): `memory.autoBank`, `cloud.autobank` and the legacy `cloud.harnesses`.

Every pass reads the switches, and most passes (a stop hook's) have nothing else to do: they are
read from a small JSON cache in the agent dir while config.yml is unchanged (same mtime, size and
inode), and yaml is imported only to parse a file that changed (as control/exclusion.py does for
its globs).
"""

from __future__ import annotations

import os

from . import wirejson
from .errors import ConfigError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the stop hook's pass)
if TYPE_CHECKING:
    from typing import Any

    from .paths import Locations

# harnesses.registry.IDS, spelled out: a foundation may not import harnesses/ (tests/test_layers.py)
ALL_HARNESSES = ("claude-code", "codex", "pi", "omp", "antigravity")
SWITCHES_CACHE = "switches-cache.json"


class Switches:
    __slots__ = ("auto_bank", "autobank", "problem")

    def __init__(self, auto_bank: bool, autobank: list[str], problem: str | None = None) -> None:
        self.auto_bank = auto_bank
        self.autobank = autobank  # harnesses with autobank on
        self.problem = problem  # why the file was not usable, if it was not

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Switches) and (self.auto_bank, self.autobank, self.problem) == (
            other.auto_bank, other.autobank, other.problem)

    def __repr__(self) -> str:
        return f"Switches(auto_bank={self.auto_bank!r}, autobank={self.autobank!r}, problem={self.problem!r})"


def load(locs: Locations) -> dict[str, Any]:
    import yaml

    try:
        text = locs.config_file.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {locs.config_file}: {exc}") from exc
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{locs.config_file} is not valid YAML: {exc}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{locs.config_file} is not a mapping")
    return data


def switches(locs: Locations) -> Switches:
    """What is on. A missing or broken file means the defaults: everything on."""
    path = os.fspath(locs.config_file)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return Switches(True, list(ALL_HARNESSES))
    except OSError:
        st = None  # `load` says why
    stamp = [st.st_mtime_ns, st.st_size, st.st_ino] if st is not None else None
    cache = os.path.join(os.path.dirname(path), SWITCHES_CACHE)
    if stamp is not None:
        cached = _cached(cache, stamp)
        if cached is not None:
            return cached
    try:
        data = load(locs)
    except ConfigError as exc:
        return Switches(True, list(ALL_HARNESSES), problem=str(exc))
    found = _from_data(data)
    if stamp is not None:
        _keep(cache, stamp, found)
    return found


def _cached(cache: str, stamp: list[int]) -> Switches | None:
    data = wirejson.read_cache(cache, stamp)
    if data is None or not isinstance(data.get("autobank"), list):
        return None
    return Switches(data.get("auto_bank") is not False, [str(n) for n in data["autobank"] if str(n) in ALL_HARNESSES])


def _keep(cache: str, stamp: list[int], found: Switches) -> None:
    wirejson.write_cache(cache, stamp, {"auto_bank": found.auto_bank, "autobank": found.autobank})


def _from_data(data: dict[str, Any]) -> Switches:
    memory = data.get("memory")
    memory = memory if isinstance(memory, dict) else {}
    cloud = data.get("cloud")
    cloud = cloud if isinstance(cloud, dict) else {}
    auto_bank = memory.get("autoBank", True) is not False
    if "autobank" in cloud:
        names = cloud.get("autobank") or []
    elif "harnesses" in cloud:
        names = cloud.get("harnesses") or []
    else:
        names = list(ALL_HARNESSES)
    if isinstance(names, str):
        names = [names]
    if not isinstance(names, list):
        names = []
    return Switches(auto_bank, [str(n) for n in names if str(n) in ALL_HARNESSES])


def set_autobank(locs: Locations, names: list[str]) -> None:
    """Write `cloud.autobank`, keeping everything else in the file (comments included where possible)."""
    import yaml

    from .atomic import atomic_write

    try:
        text = locs.config_file.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    data = load(locs)
    wanted = dict(data)
    cloud = dict(data.get("cloud") or {}) if isinstance(data.get("cloud") or {}, dict) else {}
    cloud["autobank"] = list(names)
    wanted["cloud"] = cloud
    new_text = _edit_in_place(text, names)
    try:
        ok = new_text is not None and yaml.safe_load(new_text) == wanted
    except yaml.YAMLError:
        ok = False
    if not ok:
        new_text = yaml.safe_dump(wanted, sort_keys=False, default_flow_style=False)
    if new_text != text:
        atomic_write(locs.config_file, new_text)


def _flow(names: list[str]) -> str:
    return "[" + ", ".join(names) + "]"


def _edit_in_place(text: str, names: list[str]) -> str | None:
    """Replace or add `autobank:` under the top-level `cloud:` block by editing lines."""
    import re

    lines = text.splitlines(keepends=True)
    cloud_at = next((i for i, line in enumerate(lines) if re.match(r"cloud:\s*(#.*)?$", line.rstrip("\n"))), None)
    if cloud_at is None:
        if re.search(r"(?m)^cloud\s*:", text):
            return None  # an inline cloud mapping: let the caller rewrite
        sep = "" if not text or text.endswith("\n") else "\n"
        return f"{text}{sep}cloud:\n  autobank: {_flow(names)}\n"
    end = cloud_at + 1
    while end < len(lines) and (not lines[end].strip() or lines[end][0] in " \t#"):
        end += 1
    block = lines[cloud_at + 1 : end]
    indent = next((re.match(r"[ \t]+", l).group(0) for l in block if l.strip() and not l.lstrip().startswith("#")), "  ")
    for j, line in enumerate(block):
        if re.match(re.escape(indent) + r"autobank\s*:", line):
            k = j + 1
            while k < len(block) and (
                not block[k].strip() or len(block[k]) - len(block[k].lstrip()) > len(indent)
                or block[k].lstrip().startswith("- ") and block[k].startswith(indent)
            ):
                k += 1
            block[j:k] = [f"{indent}autobank: {_flow(names)}\n"]
            return "".join(lines[: cloud_at + 1] + block + lines[end:])
    block.insert(0, f"{indent}autobank: {_flow(names)}\n")
    return "".join(lines[: cloud_at + 1] + block + lines[end:])
