"""Codex CLI: four command hooks in $CODEX_HOME/hooks.json (research/codex.md §1).

Codex keys the trust of each hook by its position and a hash of its entry, and
runs only hooks the user trusted in `/hooks`: so we never move anything that is
there, and we tell the user about the trust step. In config.toml we add only the
memory tools' server table, as a marked block of text (`mcp.py`); we read the
rest only to warn when hooks are switched off there.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from ...paths import Locations
from ...wiring import hooks_json, mcp
from ...wiring.base import detect_by
from ...wiring.files import FileChange
from . import reader

NAME = reader.NAME
home = reader.home

FEATURE_KEYS = ("hooks", "codex_hooks")  # `codex_hooks` is the deprecated alias


def target(locs: Locations) -> Path:
    return home(locs) / "hooks.json"


def detect(locs: Locations) -> str | None:
    return detect_by(locs, env_vars=["CODEX_HOME"], folders=[home(locs)], commands=["codex"])


_settings = hooks_json.SettingsHooks(NAME, target)
our_groups = _settings.our_groups


def config_toml(locs: Locations) -> Path:
    return home(locs) / "config.toml"


def plan_install(locs: Locations, hook_exe: Path, tools: bool = True) -> list[FileChange]:
    """Our hooks in hooks.json; with `tools`, also the memory tools' server in config.toml."""
    return _settings.plan_install(locs, hook_exe) + mcp.plan_codex_server(locs, config_toml(locs), hook_exe,
                                                                          wanted=tools)


def plan_uninstall(locs: Locations) -> list[FileChange]:
    return _settings.plan_uninstall(locs) + mcp.plan_codex_server(locs, config_toml(locs), Path(), wanted=False)


def hooks_switched_off(locs: Locations) -> str | None:
    """The config.toml setting that turns hooks off, if there is one (or why we could not tell)."""
    config = config_toml(locs)
    try:
        settings = tomllib.loads(config.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        return f"could not read {config} to check that hooks are on ({e})"
    features = settings.get("features")
    if not isinstance(features, dict):
        return None
    for key in FEATURE_KEYS:
        if features.get(key) is False:
            return (
                f"hooks are switched off in {config} ([features] {key} = false): Codex will not run any hook. "
                f"To switch them on, set `{key} = true` under [features] (we did not edit your config.toml)"
            )
    return None


def notes(locs: Locations, changed: bool) -> list[str]:
    found: list[str] = []
    off = hooks_switched_off(locs)
    if off:
        found.append(off)
    if changed:
        found.append(
            "Codex runs new or changed hooks only once you trust them: start `codex`, type /hooks, and trust "
            "the four HarnessLink hooks (SessionStart, UserPromptSubmit, Stop, PreCompact). "
            "Until then Codex skips them (`codex exec --dangerously-bypass-hook-trust` runs them once without the step)."
        )
    else:
        found.append("if you have not trusted the HarnessLink hooks yet: start `codex` and type /hooks")
    return found
