"""The memory tools (`harnesslink mcp`) in Claude Code's and Codex's settings.

pi has no MCP and omp would hide MCP tools behind its `xd://` device tool, so
for those two the extension registers the same tools natively (harnesses/pi_family/wiring.py);
this module is only about the two harnesses that start MCP servers.

- Claude Code: `mcpServers.harnesslink` in `~/.claude.json` (or
  `$CLAUDE_CONFIG_DIR/.claude.json`: the user scope, loaded by `claude -p` too),
  and `mcp__harnesslink` in `permissions.allow` of settings.json, without which
  `-p` refuses the tools (research/mcp-and-resume.md §1). `alwaysLoad` keeps the
  tools out of Claude Code's deferred ToolSearch list, so a model sees them at once. Claude Code rewrites
  `.claude.json` itself all the time: we touch only our key.
- Codex: a `[mcp_servers.harnesslink]` table in config.toml, written as text
  between two marker comments, so every other byte of the user's file (comments,
  order, spacing) stays as it is, and taken out the same way. Approval mode
  `approve` lets `codex exec` run memory_bank under a sandbox; read tools carry
  readOnlyHint anyway. Not `required`: a server that fails must not stop Codex.

Our entries are recognised by what they run (our `harnesslink` executable with
`mcp`), never by position; an entry of that name that is not ours is refused.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import Refused
from ..paths import Locations
from .files import FileChange, backup_path, check_writable, read_bytes

SERVER = "harnesslink"
PERMISSION = "mcp__harnesslink"  # every tool of the server, in Claude Code's permission syntax


def server_command(hook_exe: Path) -> str:
    """The `harnesslink` executable beside the hook executable, in the private environment."""
    return str(hook_exe.parent / "harnesslink")


def server_args(harness: str) -> list[str]:
    return ["mcp", "--harness", harness]


def server_env(locs: Locations) -> dict[str, str]:
    """What the server must be told: where our agent dir is, when it is not the default."""
    return {"HARNESSLINK_HOME": str(locs.agent_dir)} if locs.env.get("HARNESSLINK_HOME") else {}


def is_our_server(entry: object) -> bool:
    if not isinstance(entry, dict):
        return False
    command, args = entry.get("command"), entry.get("args")
    return (isinstance(command, str) and os.path.basename(command) == "harnesslink"
            and isinstance(args, list) and args[:1] == ["mcp"])


# --- Claude Code ----------------------------------------------------------------------------------------------

def claude_json(locs: Locations) -> Path:
    config_dir = locs.env.get("CLAUDE_CONFIG_DIR")
    return (locs.env_path("CLAUDE_CONFIG_DIR", locs.home) if config_dir else locs.home) / ".claude.json"


def plan_claude_server(locs: Locations, hook_exe: Path, *, wanted: bool) -> list[FileChange]:
    """Our server in the user scope of Claude Code (or, with `wanted=False`, not)."""
    path = claude_json(locs)
    before = read_bytes(path)
    config = _parse_json(path, before)
    servers = config.get("mcpServers")
    if servers is None:
        servers = {}
    if not isinstance(servers, dict):
        raise Refused(f'{path}: "mcpServers" is not an object', f'hint: fix "mcpServers" in {path}, then run again')
    existing = servers.get(SERVER)
    if existing is not None and not is_our_server(existing):
        if not wanted:
            return []  # not ours: nothing of ours to take out
        raise Refused(f'{path} already has an MCP server named "{SERVER}" that HarnessLink did not write',
                      f'hint: rename or remove mcpServers.{SERVER} in {path}, or install with --no-mcp')
    if not wanted:
        if existing is None:
            return []
        stripped = dict(config)
        stripped["mcpServers"] = {k: v for k, v in servers.items() if k != SERVER}
        if not stripped["mcpServers"] and "mcpServers" not in _parse_json(path, read_bytes(backup_path(path)),
                                                                          quiet=True):
            del stripped["mcpServers"]
        return [_json_change(path, before, stripped)]
    # alwaysLoad: Claude Code otherwise defers MCP tools behind its ToolSearch, so a model would have to
    # search for a tool before it could call it; it also waits (5 s at most) for the server to connect
    ours = {"type": "stdio", "command": server_command(hook_exe), "args": server_args("claude-code"),
            "env": server_env(locs), "alwaysLoad": True}
    if existing == ours:
        return []
    check_writable(path)
    merged = dict(config)
    merged["mcpServers"] = {**servers, SERVER: ours}
    return [FileChange(path, before, _dump(merged, before))]


def allow_tools(settings: dict[str, Any]) -> dict[str, Any]:
    """settings.json with our tools allowed (`claude -p` refuses tools that are not)."""
    permissions = settings.get("permissions")
    if permissions is not None and not isinstance(permissions, dict):
        raise Refused('settings.json: "permissions" is not an object', 'hint: fix its "permissions" key')
    allow = (permissions or {}).get("allow")
    if allow is not None and not isinstance(allow, list):
        raise Refused('settings.json: "permissions.allow" is not a list', 'hint: fix its "permissions.allow"')
    if PERMISSION in (allow or []):
        return settings
    merged = dict(settings)
    merged["permissions"] = {**(permissions or {}), "allow": [*(allow or []), PERMISSION]}
    return merged


def disallow_tools(settings: dict[str, Any], original: Mapping[str, Any]) -> tuple[dict[str, Any], bool]:
    """settings.json without the permission we added (kept when the user had it before us)."""
    permissions = settings.get("permissions")
    allow = permissions.get("allow") if isinstance(permissions, dict) else None
    had = given if isinstance(given := original.get("permissions"), dict) else {}
    if (not isinstance(permissions, dict) or not isinstance(allow, list) or PERMISSION not in allow
            or PERMISSION in (had.get("allow") or [])):
        return settings, False
    stripped = dict(settings)
    rest = {**permissions, "allow": [p for p in allow if p != PERMISSION]}
    if not rest["allow"] and "allow" not in had:
        del rest["allow"]
    if rest or "permissions" in original:
        stripped["permissions"] = rest
    else:
        del stripped["permissions"]
    return stripped, True


def _parse_json(path: Path, data: bytes | None, *, quiet: bool = False) -> dict[str, Any]:
    if data is None or not data.strip():
        return {}
    try:
        value = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        if quiet:
            return {}
        raise Refused(f"{path} is not valid JSON ({e})",
                      f"hint: fix or move {path} away, then run again; it was left untouched") from None
    if not isinstance(value, dict):
        if quiet:
            return {}
        raise Refused(f"{path} does not hold a JSON object", f"hint: fix or move {path} away, then run again")
    return value


def _dump(value: Mapping[str, Any], like: bytes | None) -> bytes:
    from .hooks_json import dump

    return dump(value, like)


def _json_change(path: Path, before: bytes | None, after: dict[str, Any]) -> FileChange:
    """Write `after`; the backup's exact bytes when it says the same (uninstall)."""
    check_writable(path)
    backup = read_bytes(backup_path(path))
    if backup is not None and _parse_json(path, backup, quiet=True) == after:
        return FileChange(path, before, backup, drop_backup=True)
    if backup is None and not after:
        return FileChange(path, before, None)
    return FileChange(path, before, _dump(after, before))


# --- Codex ----------------------------------------------------------------------------------------------------

BLOCK_START = "# >>> harnesslink memory tools (install.py wrote this block; uninstall.py removes it)"
BLOCK_END = "# <<< harnesslink memory tools"


def codex_block(locs: Locations, hook_exe: Path) -> str:
    lines = [
        BLOCK_START,
        f"[mcp_servers.{SERVER}]",
        f"command = {_toml_string(server_command(hook_exe))}",
        f"args = [{', '.join(_toml_string(a) for a in server_args('codex'))}]",
        '# memory_bank writes to the memory folder: let `codex exec` run it without asking',
        'default_tools_approval_mode = "approve"',
    ]
    env = server_env(locs)
    if env:
        lines += ["", f"[mcp_servers.{SERVER}.env]", *(f"{k} = {_toml_string(v)}" for k, v in env.items())]
    return "\n".join([*lines, BLOCK_END]) + "\n"


def plan_codex_server(locs: Locations, config: Path, hook_exe: Path, *, wanted: bool) -> list[FileChange]:
    """Our server table in Codex's config.toml (or, with `wanted=False`, not), edited as text."""
    before = read_bytes(config)
    text = _toml_text(config, before)
    found = _find_block(text)
    if found is None and wanted and SERVER in (_toml(config, text).get("mcp_servers") or {}):
        raise Refused(f'{config} already has [mcp_servers.{SERVER}], which HarnessLink did not write',
                      f"hint: rename or remove that table in {config}, or install with --no-mcp")
    if not wanted:
        if found is None:
            return []
        start, end = found
        head, tail = text[:start], text[end:]
        # install put up to two newlines before the block: the original is one of these
        candidates = [head[:len(head) - k] + tail for k in (1, 0, 2) if head.endswith("\n" * k)]
        check_writable(config)
        backup = read_bytes(backup_path(config))
        if backup is not None and backup.decode("utf-8", "replace") in candidates:
            return [FileChange(config, before, backup, drop_backup=True)]
        after = candidates[0] if head.endswith("\n\n") else head + tail
        if backup is None and not after.strip():
            return [FileChange(config, before, None)]
        return [FileChange(config, before, after.encode("utf-8"))]
    block = codex_block(locs, hook_exe)
    if found is not None:
        start, end = found
        after = text[:start] + block + text[end:]
    else:
        sep = "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
        after = text + sep + block
    if after == text:
        return []
    server = (_toml(config, after, ours=True).get("mcp_servers") or {}).get(SERVER)
    if not isinstance(server, dict) or not is_our_server(server):
        raise Refused(f"{config}: our [mcp_servers.{SERVER}] table would not read back as written",
                      f"hint: check {config} for an inline `mcp_servers = {{...}}` table")
    check_writable(config)
    return [FileChange(config, before, after.encode("utf-8"))]


def _find_block(text: str) -> tuple[int, int] | None:
    """(start, end) of our marked block, end after its closing line's newline."""
    start = text.find(BLOCK_START)
    if start == -1 or (start > 0 and text[start - 1] != "\n"):
        return None
    end = text.find(BLOCK_END, start)
    if end == -1:
        return None
    end += len(BLOCK_END)
    if text[end:end + 1] == "\n":
        end += 1
    return start, end


def _toml_text(path: Path, data: bytes | None) -> str:
    try:
        return (data or b"").decode("utf-8")
    except UnicodeDecodeError:
        raise Refused(f"{path} is not UTF-8", f"hint: fix {path}, then run again; it was left untouched") from None


def _toml(path: Path, text: str, *, ours: bool = False) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        if ours:
            raise Refused(f"{path}: adding our [mcp_servers.{SERVER}] table would break it ({e})",
                          f"hint: check {path} for an inline `mcp_servers = {{...}}` table") from None
        raise Refused(f"{path} is not valid TOML ({e})",
                      f"hint: fix {path}, then run again; it was left untouched") from None


def _toml_string(value: str) -> str:
    # a JSON string is a TOML basic string, escapes and all
    return json.dumps(value, ensure_ascii=False)
