"""pi and omp: one small TypeScript extension in each agent's extensions/ folder.

Neither agent has JSON hooks; both load `extensions/*.ts` at start and give it
the same event API (research/pi-omp.md §2). The extension (extension.ts, filled
in with our hook executable and the agent's id) is wholly ours: it is
recognised by its first-line marker, replaced when it differs, and removed by
uninstall. A file of the same name that is not ours is never overwritten.

The extension also registers the memory tools natively (`pi.registerTool`;
omp's `loadMode: "essential"` makes them top-level tools), each running
`harnesslink mcp-call <tool>`: one way for both, so omp gets no MCP server too.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ...errors import Refused
from ...paths import Locations
from ...wiring import mcp
from ...wiring.base import detect_by
from ...wiring.files import FileChange, check_writable, read_bytes

EXTENSION_NAME = "harnesslink.ts"
MARKER = b"// harnesslink-extension v1:"
PRIOR_MARKERS: tuple[bytes, ...] = ()


def is_our_extension(data: bytes) -> bool:
    first_line = data.split(b"\n", 1)[0]
    return any(first_line.startswith(marker) for marker in (MARKER, *PRIOR_MARKERS))


def render(hook_exe: Path, harness: str, tools: bool = True) -> bytes:
    template = resources.files(__package__).joinpath("extension.ts").read_text(encoding="utf-8")
    # json.dumps gives a valid TypeScript string literal for any path (spaces, quotes, unicode)
    text = template.replace("__HOOK_EXE__", json.dumps(str(hook_exe))).replace("__HARNESS__", json.dumps(harness))
    text = text.replace("__CLI__", json.dumps(mcp.server_command(hook_exe)))
    return text.replace("__TOOLS__", json.dumps(native_tools() if tools else [], indent=2)).encode("utf-8")


def native_tools() -> list[dict]:
    """The memory tools as the extension registers them (pi has no MCP; omp would hide MCP tools
    behind its xd:// device): the same names, descriptions and schemas as `harnesslink mcp`."""
    from ...memory_tools import listing

    return [{"name": t["name"], "label": t["title"], "description": t["description"],
             "parameters": t["inputSchema"], "readOnly": t["annotations"]["readOnlyHint"]} for t in listing()]


@dataclass(frozen=True)
class PiFamily:
    NAME: str
    home: Callable[[Locations], Path]  # the agent dir, where the harness's reader finds it
    detect_env: str | None  # a variable that, set, says the agent is used here
    command_name: str

    def target(self, locs: Locations) -> Path:
        return self.home(locs) / "extensions" / EXTENSION_NAME

    def detect(self, locs: Locations) -> str | None:
        return detect_by(
            locs,
            env_vars=[self.detect_env] if self.detect_env else [],
            folders=[self.home(locs).parent],  # ~/.pi or ~/.omp: the agent dir may not exist yet
            commands=[self.command_name],
        )

    def plan_install(self, locs: Locations, hook_exe: Path, tools: bool = True) -> list[FileChange]:
        path = self.target(locs)
        before = read_bytes(path)
        if before is not None and not is_our_extension(before):
            raise Refused(
                f"{path} exists and was not written by HarnessLink",
                f"hint: rename or move {path} away, then run again; it was left untouched",
            )
        after = render(hook_exe, self.NAME, tools)
        if before == after:
            return []
        check_writable(path)
        return [FileChange(path, before, after, backup=False)]

    def plan_uninstall(self, locs: Locations) -> list[FileChange]:
        path = self.target(locs)
        before = read_bytes(path)
        if before is None or not is_our_extension(before):
            return []
        return [FileChange(path, before, None)]

    def notes(self, locs: Locations, changed: bool) -> list[str]:
        if changed:
            return [f"start a new {self.NAME} session to load the extension (a running one keeps its old extensions)"]
        return []

