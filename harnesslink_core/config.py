"""`config.yml`: the switches (SPEC §5: `memory.autoBank`, `cloud.autobank`, the legacy `cloud.harnesses`)
and the globs of `memory.exclude` (control/exclusion.py).

Every pass and every prompt needs them, and most have nothing else to do: they and the encoder's
settings are read from one small JSON cache in the agent dir while config.yml is unchanged (same mtime,
size and inode), and yaml is imported only to parse a file that changed, once, by whichever reader comes
first (a hook, its pass, status, the encoder). A file that cannot be used is cached too, as the defaults
and the problem `harnesslink status` names, so it costs one bounded read, not one per prompt: at most
MAX_CONFIG_BYTES of a regular file (a FIFO would hold the hook), parsed by libyaml's C parser where
PyYAML has it (a worst case of the bound in tens of milliseconds, not seconds), refused whole if it holds
an alias (a few hundred bytes of them expand to gigabytes) or nests deeper than MAX_DEPTH (deeper
nesting overflows the stack): both are found in the parser's events before anything is built.
"""

from __future__ import annotations

import os

from . import HARNESS_IDS as ALL_HARNESSES
from . import wirejson
from .errors import ConfigError
from .safefile import read_regular

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the stop hook's pass)
if TYPE_CHECKING:
    from typing import Any

    from .paths import Locations

CONFIG_CACHE = "config-cache.json"  # control/exclusion.py reads its globs from it
MAX_CONFIG_BYTES = 32 * 1024  # a real config is a few lines; 200 globs of 100 characters fit
MAX_DEPTH = 32
MAX_EXCLUDE = 200  # globs of memory.exclude used; each one is matched against every folder of a cwd
MAX_GLOB_CHARS = 500
ENCODER_IDLE_MINUTES = 15.0


class Switches:
    __slots__ = ("auto_bank", "autobank", "problem", "exclude", "encoder", "encoder_idle_minutes")

    def __init__(self, auto_bank: bool, autobank: list[str], problem: str | None = None,
                 exclude: list[str] | None = None, *, encoder: bool = True,
                 encoder_idle_minutes: float = ENCODER_IDLE_MINUTES) -> None:
        self.auto_bank = auto_bank
        self.autobank = autobank  # harnesses with autobank on
        self.problem = problem  # why the file (or a part of it) was not usable, if it was not
        self.exclude = exclude or []  # memory.exclude's globs, `~` expanded (control/exclusion.py)
        self.encoder = encoder  # recall.encoder (`encoder_settings`)
        self.encoder_idle_minutes = encoder_idle_minutes

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Switches) and self._fields() == other._fields()

    def _fields(self) -> tuple:
        return self.auto_bank, self.autobank, self.problem, self.exclude, self.encoder, self.encoder_idle_minutes

    def __repr__(self) -> str:
        return f"Switches(auto_bank={self.auto_bank!r}, autobank={self.autobank!r}, problem={self.problem!r})"


def load(locs: Locations) -> dict[str, Any]:
    """config.yml as a mapping ({} when there is none); ConfigError for a file that cannot be used."""
    text = _read(locs)
    return {} if text is None else _parse(text, locs.config_file)


def _read(locs: Locations) -> str | None:
    """config.yml's text, None when there is none."""
    path = os.fspath(locs.config_file)
    data = read_regular(path, MAX_CONFIG_BYTES + 1)
    if data is None:
        if not os.path.lexists(path):
            return None
        raise ConfigError(f"cannot read {path}: not a regular file, or unreadable")
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{path} is larger than {MAX_CONFIG_BYTES // 1024} KB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path} is not UTF-8: {exc}") from exc


def _parse(text: str, path: object) -> dict[str, Any]:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # PyYAML built without libyaml: the pure one
    try:
        _refuse_aliases_and_depth(yaml, yaml.parse(text, Loader=loader), path)
        data = yaml.load(text, Loader=loader)  # noqa: S506 - a safe loader, over events already checked
    except ConfigError:
        raise
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path} is not valid YAML: {exc}") from exc
    except Exception as exc:  # noqa: BLE001 - a hostile value (a 5,000-digit int) must be a problem, not a crash
        raise ConfigError(f"{path} cannot be read as YAML: {exc!r}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path} is not a mapping")
    return data


def _refuse_aliases_and_depth(yaml, events, path: object) -> None:
    """ConfigError at the first alias, or at a node deeper than MAX_DEPTH (the document's root is 1 deep)."""
    depth = 0
    for event in events:
        if isinstance(event, yaml.AliasEvent):
            raise ConfigError(f"{path} uses a YAML alias (*name): not accepted")
        if isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
        elif isinstance(event, yaml.NodeEvent) and depth + 1 > MAX_DEPTH:
            raise ConfigError(f"{path} nests deeper than {MAX_DEPTH} levels")
        elif isinstance(event, yaml.CollectionStartEvent):
            depth += 1


def stamp_of(path: str) -> list[int] | None:
    """What a cache of `path` is made for: its mtime, size and inode (lstat: a link is not followed)."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return [st.st_mtime_ns, st.st_size, st.st_ino]


def switches(locs: Locations) -> Switches:
    """What is on. A missing or broken file means the defaults: everything on, nothing excluded."""
    path = os.fspath(locs.config_file)
    stamp = stamp_of(path)
    if stamp is None:
        return Switches(True, list(ALL_HARNESSES))
    cache = os.path.join(os.path.dirname(path), CONFIG_CACHE)
    cached = _cached(cache, stamp)
    if cached is not None:
        return cached
    try:
        found = _from_data(load(locs), os.fspath(locs.home))
    except ConfigError as exc:
        found = Switches(True, list(ALL_HARNESSES), problem=" ".join(f"{exc} (the defaults are used until it is fixed)".split()))
    _keep(cache, stamp, found)
    return found


def _cached(cache: str, stamp: list[int]) -> Switches | None:
    data = wirejson.read_cache(cache, stamp)
    if (data is None or not isinstance(data.get("autobank"), list) or not isinstance(data.get("globs"), list)
            or not isinstance(data.get("encoder"), bool)):
        return None
    problem = data.get("problem")
    return Switches(data.get("auto_bank") is not False, [str(n) for n in data["autobank"] if str(n) in ALL_HARNESSES],
                    str(problem) if problem else None, [str(g) for g in data["globs"][:MAX_EXCLUDE]],
                    encoder=data["encoder"], encoder_idle_minutes=_idle_minutes(data.get("encoder_idle_minutes")))


def _keep(cache: str, stamp: list[int], found: Switches) -> None:
    wirejson.write_cache(cache, stamp, {"auto_bank": found.auto_bank, "autobank": found.autobank,
                                        "problem": found.problem, "globs": found.exclude, "encoder": found.encoder,
                                        "encoder_idle_minutes": found.encoder_idle_minutes})


def _from_data(data: dict[str, Any], home: str) -> Switches:
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
    globs, problem = _exclude_globs(memory.get("exclude"), home)
    recall = data.get("recall")
    recall = recall if isinstance(recall, dict) else {}
    return Switches(auto_bank, [str(n) for n in names if str(n) in ALL_HARNESSES], problem, globs,
                    encoder=recall.get("encoder", True) is not False,
                    encoder_idle_minutes=_idle_minutes(recall.get("encoder_idle_minutes", ENCODER_IDLE_MINUTES)))


def _idle_minutes(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 10**6:
        return ENCODER_IDLE_MINUTES
    return float(value)


def _exclude_globs(value: object, home: str) -> tuple[list[str], str | None]:
    """memory.exclude as globs (`~` expanded, `a/b` anywhere), at most MAX_EXCLUDE of them, and what was
    left out, if anything."""
    value = value or []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return [], "memory.exclude is not a list of globs: ignored"
    globs: list[str] = []
    too_long = 0
    for item in value:
        if not isinstance(item, (str, int, float)):
            continue
        pattern = str(item).strip()
        if len(pattern) > MAX_GLOB_CHARS:
            too_long += 1
            continue
        if pattern == "~" or pattern.startswith("~/"):
            pattern = home + pattern[1:]
        pattern = pattern.rstrip("/") or "/"
        if "/" in pattern and not pattern.startswith("/"):
            pattern = "*/" + pattern  # `clients/*`: a `clients` folder anywhere
        if pattern not in globs:
            globs.append(pattern)
    problems = []
    if too_long:
        problems.append(f"{too_long} longer than {MAX_GLOB_CHARS} characters ignored")
    if len(globs) > MAX_EXCLUDE:
        problems.append(f"{len(globs)} globs, only the first {MAX_EXCLUDE} used")
    return globs[:MAX_EXCLUDE], ("memory.exclude: " + "; ".join(problems)) if problems else None


def encoder_settings(locs: Locations) -> tuple[bool, float]:
    """`recall.encoder` (on unless false) and `recall.encoder_idle_minutes`, the quiet spell after which
    the resident encoder exits (recall/encoder.py); the defaults for a file that cannot be used. From the
    switches' cache: the file is parsed once per change, whoever reads it."""
    found = switches(locs)
    return found.encoder, found.encoder_idle_minutes


def set_autobank(locs: Locations, names: list[str]) -> None:
    """Write `cloud.autobank`, keeping everything else in the file (comments included where possible)."""
    import yaml

    from .atomic import atomic_write

    text = _read(locs) or ""
    data = _parse(text, locs.config_file) if text else {}
    wanted = dict(data)
    cloud = dict(data.get("cloud") or {}) if isinstance(data.get("cloud") or {}, dict) else {}
    cloud["autobank"] = list(names)
    wanted["cloud"] = cloud
    new_text = _edit_in_place(text, names)
    try:
        ok = new_text is not None and yaml.safe_load(new_text) == wanted
    except yaml.YAMLError:
        ok = False
    if not ok or new_text is None:
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
    indent = next((m.group(0) for l in block
                   if l.strip() and not l.lstrip().startswith("#") and (m := re.match(r"[ \t]+", l))), "  ")
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
