"""Every harness we ship, by id (SPEC §3's harness ids): the one list the other layers take theirs from.

A harness is one folder, `harnesses/<id>/` (the id with `_` for `-`), whose modules are named by their role:
`reader.py` (this layer: where its transcripts are, how they read), `sessions.py` (the sessions layer: its
listing, replay estimate and resume command), `wiring.py` and, where it ships as a plugin, `plugin.py` (the
surfaces: install and uninstall). Each module sits in the layer its role names (tests/test_layers.py), so
this module imports only the readers; a layer above loads its own role's module by `module_name`.

A reader is imported when it is first asked for, so the stop hook's pass loads only
the harnesses it reads (and none when its transcript has nothing new); this module itself
imports none of them, nor `base`. Each loader returns its module as a `Harness`, so a type
checker holds every reader to the protocol of `base.py`.

The hooks, the memory server's start-up and config.py may not import this module (the hooks' allow-list,
the layers): they take the ids from the package's face (harnesslink_core/__init__.py), which
tests/harnesses/test_registry.py holds to these; no other module spells out a list of harness ids
(tests/harnesses/test_one_registry.py).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: the ids cost a pass nothing
if TYPE_CHECKING:
    from collections.abc import Callable

    from .base import Harness


def _claude_code() -> Harness:
    from .claude_code import reader

    return reader


def _codex() -> Harness:
    from .codex import reader

    return reader


def _pi() -> Harness:
    from .pi import reader

    return reader


def _omp() -> Harness:
    from .omp import reader

    return reader


def _antigravity() -> Harness:
    from .antigravity import reader

    return reader


MODULES: dict[str, Callable[[], Harness]] = {
    "claude-code": _claude_code,
    "codex": _codex,
    "pi": _pi,
    "omp": _omp,
    "antigravity": _antigravity,
}
READ_ONLY = frozenset({"antigravity"})  # read, never wired: no hooks, no tools, no session to resume (SPEC §1)
# their memory tools come from our MCP server (`harnesslink mcp`); pi's and omp's extension registers them itself
MCP_SERVED = frozenset({"claude-code", "codex"})
# the viewer draws each harness in its colour, in this order
COLOURS = {"claude-code": "#d97757", "codex": "#10a37f", "pi": "#8250df", "omp": "#1f6feb", "antigravity": "#bf8700"}
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


def module_name(name: str, role: str) -> str:
    """The module of harness `name` for `role` (`sessions`, `wiring`, `plugin`): `harnesses/<id>/<role>.py`."""
    return f"{__package__}.{name.replace('-', '_')}.{role}"
