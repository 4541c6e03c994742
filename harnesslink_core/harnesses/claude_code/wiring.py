"""Claude Code: four command hooks in the user's settings.json (research/claude-code.md §1),
and the memory tools' MCP server (`wiring/mcp.py`)."""

from __future__ import annotations

from pathlib import Path

from ...paths import Locations
from ...wiring import hooks_json, mcp
from ...wiring.base import detect_by
from ...wiring.files import FileChange, backup_path, read_bytes
from . import reader

NAME = reader.NAME
home = reader.home


def target(locs: Locations) -> Path:
    return home(locs) / "settings.json"


def detect(locs: Locations) -> str | None:
    return detect_by(locs, env_vars=["CLAUDE_CONFIG_DIR"], folders=[home(locs)], commands=["claude"])


_settings = hooks_json.SettingsHooks(NAME, target)
our_groups = _settings.our_groups


def plan_install(locs: Locations, hook_exe: Path, tools: bool = True) -> list[FileChange]:
    """Our hooks in settings.json; with `tools`, also the memory tools' server and their permission."""
    if tools:
        allowed = mcp.allow_tools
    else:
        original = hooks_json.parse(target(locs), read_bytes(backup_path(target(locs))))
        allowed = lambda settings: mcp.disallow_tools(settings, original)[0]  # noqa: E731
    return _settings.plan_install(locs, hook_exe, also=allowed) + mcp.plan_claude_server(locs, hook_exe, wanted=tools)


def plan_uninstall(locs: Locations) -> list[FileChange]:
    return _settings.plan_uninstall(locs, also=mcp.disallow_tools) + mcp.plan_claude_server(
        locs, Path(), wanted=False)


def notes(locs: Locations, changed: bool) -> list[str]:
    path = target(locs)
    settings = hooks_json.parse(path, read_bytes(path))
    found = []
    if settings.get("disableAllHooks") is True:
        found.append(f'{path} has "disableAllHooks": true, so Claude Code will not run these hooks until it is removed')
    plugins = settings.get("enabledPlugins")
    enabled = [name for name, on in plugins.items() if on is True and name.startswith("harnesslink@")] if isinstance(
        plugins, dict) else []
    if enabled:
        found.append(f"the HarnessLink plugin ({enabled[0]}) is enabled too: while this wiring is in {path.name}, "
                     "the plugin steps aside (`uninstall.py --harness claude-code` hands Claude Code back to it)")
    return found
