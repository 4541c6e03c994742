"""Claude Code: four command hooks in the user's settings.json (research/claude-code.md §1)."""

from __future__ import annotations

from pathlib import Path

from ..paths import Locations
from . import hooks_json
from .base import detect_by
from .files import FileChange, read_bytes
from .hook_command import is_ours

NAME = "claude-code"

# (event, matcher, hook, timeout in seconds); UserPromptSubmit and Stop take no matcher
EVENTS = (
    ("SessionStart", "startup|resume|clear|compact", "session-start", 30),
    ("UserPromptSubmit", None, "user-prompt-submit", 30),
    ("Stop", None, "stop", 60),
    ("PreCompact", "manual|auto", "pre-compact", 60),
)


def home(locs: Locations) -> Path:
    return locs.env_path("CLAUDE_CONFIG_DIR", locs.home / ".claude")


def target(locs: Locations) -> Path:
    return home(locs) / "settings.json"


def detect(locs: Locations) -> str | None:
    return detect_by(locs, env_vars=["CLAUDE_CONFIG_DIR"], folders=[home(locs)], commands=["claude"])


def our_groups(hook_exe: Path) -> dict[str, hooks_json.Group]:
    return hooks_json.groups(EVENTS, hook_exe, NAME)


def _ours(text: object) -> bool:
    return is_ours(text, NAME)


def plan_install(locs: Locations, hook_exe: Path) -> list[FileChange]:
    change = hooks_json.plan_install(target(locs), our_groups(hook_exe), _ours)
    return [change] if change else []


def plan_uninstall(locs: Locations) -> list[FileChange]:
    change = hooks_json.plan_uninstall(target(locs), _ours)
    return [change] if change else []


def notes(locs: Locations, changed: bool) -> list[str]:
    path = target(locs)
    settings = hooks_json.parse(path, read_bytes(path))
    if settings.get("disableAllHooks") is True:
        return [f'{path} has "disableAllHooks": true, so Claude Code will not run these hooks until it is removed']
    return []
