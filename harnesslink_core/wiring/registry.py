"""Every harness install.py can wire, in the order it reports them."""

from __future__ import annotations

from . import claude_code, codex
from .base import Wiring
from .pi_family import OMP, PI

WIRINGS: dict[str, Wiring] = {
    claude_code.NAME: claude_code,
    codex.NAME: codex,
    PI.NAME: PI,
    OMP.NAME: OMP,
}
