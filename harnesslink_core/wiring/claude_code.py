"""Claude Code: four command hooks in the user's settings.json (research/claude-code.md §1)."""

from __future__ import annotations

from pathlib import Path

from ..paths import Locations
from . import hooks_json
from .base import detect_by
from .files import read_bytes

NAME = "claude-code"


def home(locs: Locations) -> Path:
    return locs.env_path("CLAUDE_CONFIG_DIR", locs.home / ".claude")


def target(locs: Locations) -> Path:
    return home(locs) / "settings.json"


def detect(locs: Locations) -> str | None:
    return detect_by(locs, env_vars=["CLAUDE_CONFIG_DIR"], folders=[home(locs)], commands=["claude"])


_settings = hooks_json.SettingsHooks(NAME, target)
our_groups = _settings.our_groups
plan_install = _settings.plan_install
plan_uninstall = _settings.plan_uninstall


def notes(locs: Locations, changed: bool) -> list[str]:
    path = target(locs)
    settings = hooks_json.parse(path, read_bytes(path))
    if settings.get("disableAllHooks") is True:
        return [f'{path} has "disableAllHooks": true, so Claude Code will not run these hooks until it is removed']
    return []
