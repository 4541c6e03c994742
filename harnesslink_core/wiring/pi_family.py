"""pi and omp: one small TypeScript extension in each agent's extensions/ folder.

Neither agent has JSON hooks; both load `extensions/*.ts` at start and give it
the same event API (research/pi-omp.md §2). The extension (extension.ts, filled
in with our hook executable and the agent's id) is wholly ours: it is
recognised by its first-line marker, replaced when it differs, and removed by
uninstall. A file of the same name that is not ours is never overwritten.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ..paths import Locations
from .base import detect_by
from .files import FileChange, Refused, check_writable, read_bytes

EXTENSION_NAME = "harnesslink.ts"
MARKER = b"// harnesslink-extension v1:"
PRIOR_MARKERS: tuple[bytes, ...] = ()


def is_our_extension(data: bytes) -> bool:
    first_line = data.split(b"\n", 1)[0]
    return any(first_line.startswith(marker) for marker in (MARKER, *PRIOR_MARKERS))


def render(hook_exe: Path, harness: str) -> bytes:
    template = resources.files(__package__).joinpath("extension.ts").read_text(encoding="utf-8")
    # json.dumps gives a valid TypeScript string literal for any path (spaces, quotes, unicode)
    text = template.replace("__HOOK_EXE__", json.dumps(str(hook_exe))).replace("__HARNESS__", json.dumps(harness))
    return text.encode("utf-8")


@dataclass(frozen=True)
class PiFamily:
    NAME: str
    default_home: str  # below HOME
    home_env: str | None  # the variable that moves the agent dir
    command_name: str

    def home(self, locs: Locations) -> Path:
        default = locs.home / self.default_home
        return locs.env_path(self.home_env, default) if self.home_env else default

    def target(self, locs: Locations) -> Path:
        return self.home(locs) / "extensions" / EXTENSION_NAME

    def detect(self, locs: Locations) -> str | None:
        return detect_by(
            locs,
            env_vars=[self.home_env] if self.home_env else [],
            folders=[self.home(locs).parent],  # ~/.pi or ~/.omp: the agent dir may not exist yet
            commands=[self.command_name],
        )

    def plan_install(self, locs: Locations, hook_exe: Path) -> list[FileChange]:
        path = self.target(locs)
        before = read_bytes(path)
        if before is not None and not is_our_extension(before):
            raise Refused(
                f"{path} exists and was not written by HarnessLink",
                f"hint: rename or move {path} away, then run again; it was left untouched",
            )
        after = render(hook_exe, self.NAME)
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


PI = PiFamily(NAME="pi", default_home=".pi/agent", home_env="PI_CODING_AGENT_DIR", command_name="pi")
OMP = PiFamily(NAME="omp", default_home=".omp/agent", home_env=None, command_name="omp")
