"""What every harness's wiring module (harnesses/<id>/wiring.py) provides, and the detection they share."""

from __future__ import annotations

import importlib
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

from ..harnesses import registry
from ..paths import Locations
from .files import FileChange


class Wiring(Protocol):
    @property
    def NAME(self) -> str:  # noqa: N802 - read-only, so a frozen dataclass (pi_family/wiring.py) satisfies it as a module does
        ...

    def target(self, locs: Locations) -> Path:
        """The file install writes for this harness."""
        ...

    def detect(self, locs: Locations) -> str | None:
        """Why we think the harness is used here (a folder, a command, a variable), or None."""
        ...

    def plan_install(self, locs: Locations, hook_exe: Path, tools: bool = True) -> list[FileChange]:
        """The changes that wire the harness to `hook_exe` (and, with `tools`, the memory tools; without,
        takes out the tools an earlier install wired); empty when already so. May raise Refused."""
        ...

    def plan_uninstall(self, locs: Locations) -> list[FileChange]:
        """The changes that take out exactly what install added. May raise Refused."""
        ...

    def notes(self, locs: Locations, changed: bool) -> list[str]:
        """What the user must know or still do after install."""
        ...


def wirings() -> dict[str, Wiring]:
    """Every harness install.py can wire, in the order it reports them: each one's `harnesses/<id>/wiring.py`,
    imported by name (each imports this module, so an import statement here would close a circle)."""
    return {name: importlib.import_module(registry.module_name(name, "wiring")) for name in registry.WIRED}


def detect_by(
    locs: Locations,
    *,
    env_vars: Iterable[str] = (),
    folders: Iterable[Path] = (),
    commands: Iterable[str] = (),
) -> str | None:
    for name in env_vars:
        if locs.env.get(name):
            return f"${name} is set"
    for folder in folders:
        if folder.is_dir():
            return f"{folder} exists"
    search_path = locs.env.get("PATH", "")
    for name in commands:
        found = shutil.which(name, path=search_path)
        if found:
            return f"`{name}` is on PATH ({found})"
    return None
