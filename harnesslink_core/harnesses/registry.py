"""The harness registry: every harness we ship, by id, imported only when used."""

from __future__ import annotations

import importlib
from typing import cast

from .base import Harness

MODULES = {
    "claude-code": "claude_code",
    "codex": "codex",
    "pi": "pi",
    "omp": "omp",
    "antigravity": "antigravity",
}


def get(name: str) -> Harness:
    module = importlib.import_module(f"{__package__}.{MODULES[name]}")
    return cast(Harness, module)


def available() -> dict[str, Harness]:
    """Every harness whose module is present."""
    found = {}
    for name in MODULES:
        try:
            found[name] = get(name)
        except ImportError:
            continue
    return found
