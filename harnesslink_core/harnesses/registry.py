"""Every harness we ship, by id (SPEC §3's harness ids): the one list the other layers take theirs from.

A reader is imported when it is first asked for, so the stop hook's pass loads only
the harnesses it reads (and none when its transcript has nothing new); this module itself
imports none of them, nor `base`. Each loader returns its module as a `Harness`, so a type
checker holds every reader to the protocol of `base.py`.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: the ids cost a pass nothing
if TYPE_CHECKING:
    from collections.abc import Callable

    from .base import Harness


def _claude_code() -> Harness:
    from . import claude_code

    return claude_code


def _codex() -> Harness:
    from . import codex

    return codex


def _pi() -> Harness:
    from . import pi

    return pi


def _omp() -> Harness:
    from . import omp

    return omp


def _antigravity() -> Harness:
    from . import antigravity

    return antigravity


MODULES: dict[str, Callable[[], Harness]] = {
    "claude-code": _claude_code,
    "codex": _codex,
    "pi": _pi,
    "omp": _omp,
    "antigravity": _antigravity,
}
READ_ONLY = frozenset({"antigravity"})  # read, never wired: no hooks, no tools, no session to resume (SPEC §1)
IDS = tuple(MODULES)
WIRED = tuple(name for name in IDS if name not in READ_ONLY)


def get(name: str) -> Harness:
    return MODULES[name]()


def available() -> dict[str, Harness]:
    """Every harness whose module is present."""
    found = {}
    for name, load in MODULES.items():
        try:
            found[name] = load()
        except ImportError:
            continue
    return found
