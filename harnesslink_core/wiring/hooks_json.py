"""Merging our hooks into a Claude-style hooks JSON file (Claude Code and Codex share the shape).

    {"hooks": {"<Event>": [{"matcher": "...", "hooks": [{"type": "command", "command": "..."}]}]}}

Installing keeps every other key, event, group and handler where it is. Our
group for an event replaces our previous group in place (Codex keys its trust
by position, so nothing of the user's may move), or is appended when there is
none. Uninstalling removes our handlers; when what is left equals the backup
taken before our first change, the backup's exact bytes come back.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from ..errors import Refused
from .files import FileChange, backup_path, check_writable, read_bytes
from .hook_command import command

IsOurs = Callable[[object], bool]
Group = dict[str, Any]


def groups(events: Iterable[tuple[str, str | None, str, int]], hook_exe: Path, harness: str) -> dict[str, Group]:
    """Our group for each (event, matcher or None, hook, timeout in seconds)."""
    found: dict[str, Group] = {}
    for event, matcher, hook, timeout in events:
        group: Group = {"matcher": matcher} if matcher else {}
        group["hooks"] = [{"type": "command", "command": command(hook_exe, hook, harness), "timeout": timeout}]
        found[event] = group
    return found


def parse(path: Path, data: bytes | None) -> dict[str, Any]:
    """The settings object; a missing or empty file is an empty one. Anything else unparsable is refused."""
    if data is None or not data.strip():
        return {}
    try:
        value = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise Refused(
            f"{path} is not valid JSON ({e})",
            f"hint: fix or move {path} away, then run again; it was left untouched",
        ) from None
    if not isinstance(value, dict):
        raise Refused(f"{path} does not hold a JSON object", f"hint: fix or move {path} away, then run again")
    hooks = value.get("hooks")
    if hooks is not None and not isinstance(hooks, dict):
        raise Refused(f'{path}: "hooks" is not an object', f'hint: fix the "hooks" key of {path}, then run again')
    for event, groups in (hooks or {}).items():
        if not isinstance(groups, list):
            raise Refused(f'{path}: hooks "{event}" is not a list', f"hint: fix {path}, then run again")
    return value


def dump(value: Mapping[str, Any], like: bytes | None = None) -> bytes:
    """JSON text indented the way `like` (the file as it was) is, two spaces by default."""
    return (json.dumps(value, indent=indent_of(like), ensure_ascii=False) + "\n").encode("utf-8")


def indent_of(data: bytes | None) -> str:
    found = re.search(rb'\n([ \t]+)["}\]]', data or b"")
    return found.group(1).decode() if found else "  "


def _handlers(group: object) -> list[Any]:
    if isinstance(group, dict) and isinstance(group.get("hooks"), list):
        return group["hooks"]
    return []


def _is_our_handler(handler: object, is_ours: IsOurs) -> bool:
    return isinstance(handler, dict) and is_ours(handler.get("command"))


def merge(settings: dict[str, Any], ours: Mapping[str, Group], is_ours: IsOurs) -> dict[str, Any]:
    """`settings` with exactly one group of ours per event; everything else untouched and in place."""
    merged = copy.deepcopy(settings)
    hooks = merged.setdefault("hooks", {})
    for event, group in ours.items():
        groups = hooks.setdefault(event, [])
        placed = False
        kept: list[Any] = []
        for existing in groups:
            handlers = _handlers(existing)
            mine = [h for h in handlers if _is_our_handler(h, is_ours)]
            if not mine:
                kept.append(existing)
            elif len(mine) == len(handlers) and not placed:
                kept.append(copy.deepcopy(group))  # our old group: replaced where it stands
                placed = True
            elif len(mine) < len(handlers):
                # someone put our handler into their group: take ours out, leave theirs
                existing["hooks"] = [h for h in handlers if not _is_our_handler(h, is_ours)]
                kept.append(existing)
            # else: a duplicate group of ours, dropped
        if not placed:
            kept.append(copy.deepcopy(group))
        hooks[event] = kept
    return merged


def unmerge(settings: dict[str, Any], is_ours: IsOurs) -> tuple[dict[str, Any], bool]:
    """`settings` without our handlers, and whether there were any."""
    stripped = copy.deepcopy(settings)
    hooks = stripped.get("hooks")
    if not isinstance(hooks, dict):
        return stripped, False
    removed = False
    for event in list(hooks):
        kept = []
        for group in hooks[event]:
            handlers = _handlers(group)
            theirs = [h for h in handlers if not _is_our_handler(h, is_ours)]
            if len(theirs) == len(handlers):
                kept.append(group)
                continue
            removed = True
            if theirs:
                group["hooks"] = theirs
                kept.append(group)
        if kept:
            hooks[event] = kept
        elif hooks[event]:
            del hooks[event]  # the event held only ours
    if removed and not hooks:
        del stripped["hooks"]
    return stripped, removed


Also = Callable[[dict[str, Any]], dict[str, Any]]  # one more change to the same file (Claude's permissions)
Unalso = Callable[[dict[str, Any], dict[str, Any]], tuple[dict[str, Any], bool]]  # ...and taking it out


def plan_install(path: Path, ours: Mapping[str, Group], is_ours: IsOurs, also: Also | None = None) -> FileChange | None:
    """The change that wires `ours` into `path`, or None when it is already there."""
    before = read_bytes(path)
    settings = parse(path, before)
    merged = merge(settings, ours, is_ours)
    if also is not None:
        merged = also(merged)
    if merged == settings:
        return None  # already installed: not even the formatting changes
    check_writable(path)
    return FileChange(path, before, dump(merged, before))


def plan_uninstall(path: Path, is_ours: IsOurs, also: Unalso | None = None) -> FileChange | None:
    """The change that takes our hooks out of `path`, or None when there are none.
    `also(settings, original)` takes out anything else we added (`original`: the backup's settings)."""
    before = read_bytes(path)
    if before is None:
        return None
    settings = parse(path, before)
    stripped, removed = unmerge(settings, is_ours)
    backup = read_bytes(backup_path(path))
    if also is not None:
        try:
            original = parse(path, backup)
        except Refused:
            original = {}
        stripped, more = also(stripped, original)
        removed = removed or more
    if not removed:
        return None
    check_writable(path)
    if backup is not None and _same_hooks(backup, stripped):
        return FileChange(path, before, backup, drop_backup=True)
    if backup is None and not stripped:
        return FileChange(path, before, None)  # we created it, and nothing else was added since
    return FileChange(path, before, dump(stripped, before))


def _same_hooks(backup: bytes, settings: dict[str, Any]) -> bool:
    """Whether the backup says the same as `settings`, up to empty hook lists (ours leave those behind)."""
    try:
        return _without_empty_hooks(parse(Path("backup"), backup)) == _without_empty_hooks(settings)
    except Refused:
        return False


def _without_empty_hooks(settings: dict[str, Any]) -> dict[str, Any]:
    pruned = dict(settings)
    hooks = {event: groups for event, groups in (pruned.pop("hooks", None) or {}).items() if groups}
    if hooks:
        pruned["hooks"] = hooks
    return pruned


# (event, matcher, hook, timeout in seconds): the same four for Claude Code and Codex.
# Neither takes a matcher on UserPromptSubmit or Stop; `fork` is how newer versions start a forked session.
EVENTS = (
    ("SessionStart", "startup|resume|clear|compact|fork", "session-start", 30),
    ("UserPromptSubmit", None, "user-prompt-submit", 30),
    ("Stop", None, "stop", 60),
    ("PreCompact", "manual|auto", "pre-compact", 60),
)


class SettingsHooks:
    """Our four hooks in one harness's JSON settings file: what install and uninstall plan there."""

    def __init__(self, harness: str, target: Callable[[Any], Path]):
        self.harness = harness
        self.target = target

    def is_ours(self, text: object) -> bool:
        from .hook_command import is_ours

        return is_ours(text, self.harness)

    def our_groups(self, hook_exe: Path) -> dict[str, Group]:
        return groups(EVENTS, hook_exe, self.harness)

    def plan_install(self, locs: Any, hook_exe: Path, also: Also | None = None) -> list[FileChange]:
        change = plan_install(self.target(locs), self.our_groups(hook_exe), self.is_ours, also)
        return [change] if change else []

    def plan_uninstall(self, locs: Any, also: Unalso | None = None) -> list[FileChange]:
        change = plan_uninstall(self.target(locs), self.is_ours, also)
        return [change] if change else []
