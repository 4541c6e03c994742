"""The package's layers (harnesslink_core/__init__.py): a module imports only from its own layer or the
ones below it, and no modules import each other in a circle. Every import counts, those inside
functions too: the hooks import lazily, and a lazy import is as much a dependency as any other."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "harnesslink_core"

# bottom first; a name is a top-level module or a sub-package (all of its modules)
LAYERS = [
    ("foundations", {"paths", "clock", "log", "errors", "config", "redact", "redaction", "wirejson", "fastsqlite",
                     "model", "atomic", "safefile"}),
    ("readers", {"harnesses"}),
    ("store", {"store"}),
    ("recall", {"recall"}),
    ("control", {"control"}),
    ("banking", {"banking"}),
    ("sessions", {"sessions"}),
    ("surfaces", {"hooks", "mcp_server", "memory_tools", "commands", "wiring", "main"}),
]
# A harness is one folder, harnesses/<id>/, that spans the layers: its reader reads (readers), its sessions module
# lists and resumes (sessions), its wiring and plugin install (surfaces). Each of its modules sits in the layer
# its role names; every other module of harnesses/ is a reader's.
ROLES = {"sessions": "sessions", "wiring": "surfaces", "plugin": "surfaces"}


def module_names() -> list[str]:
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def source_of(module: str) -> Path:
    path = PACKAGE.parent.joinpath(*module.split("."))
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def imports_of(module: str, known: set[str]) -> set[str]:
    """The package's modules that `module` imports, anywhere in its code."""
    path = source_of(module)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)  # `from . import index`
    return {name for name in found if name in known and name != module}


def layer_of(module: str) -> int:
    parts = module.split(".")
    if len(parts) == 1:
        return -1  # the package's face: imports nothing
    if parts[1] == "harnesses" and len(parts) == 4 and parts[3] in ROLES:
        return [name for name, _ in LAYERS].index(ROLES[parts[3]])
    for number, (_, members) in enumerate(LAYERS):
        if parts[1] in members:
            return number
    raise AssertionError(f"{module} is in no layer: add it to LAYERS (and say so in harnesslink_core/__init__.py)")


MODULES = module_names()
GRAPH = {module: imports_of(module, set(MODULES)) for module in MODULES}


@pytest.mark.parametrize("module", MODULES)
def test_every_module_imports(module: str) -> None:
    importlib.import_module(module)


def test_every_module_is_in_a_layer() -> None:
    for module in MODULES:
        layer_of(module)


def test_no_module_imports_from_a_layer_above_its_own() -> None:
    upward = [f"{module} ({LAYERS[layer_of(module)][0]}) imports {target} ({LAYERS[layer_of(target)][0]})"
              for module, targets in GRAPH.items() for target in sorted(targets)
              if layer_of(target) > layer_of(module)]
    assert upward == []


def test_no_import_circles() -> None:
    assert circles(GRAPH) == []


# the modules on the hooks' lean path (tests/hooks/test_hot_path.py), which read Locations' plain strings
LEAN = {"hooks", "log", "banking.background", "store.scope", "store.identity", "store.injected", "store.trust",
        "store.history", "store.hook_runs",
        "control.exclusion",
        "recall.index", "recall.matches", "recall.encoder_client", "recall.encoded",
        "recall.brief", "sessions.handoff",
        "harnesses.claude_code.plugin", "harnesses.codex.plugin"}  # the plugins' launchers, in front of every hook call
PLAIN_STRINGS = re.compile(r"\.(?:home_path|agent_path|memories_path|index_path|ledger_path|log_path|encoder_path)\b")


def test_only_the_lean_path_reads_locations_as_plain_strings() -> None:
    """Everywhere else a place is a Path (`locs.memories`), so no caller mixes the two."""
    mixed = [module for module in MODULES if module.partition(".")[2] not in LEAN | {"paths"}
             and PLAIN_STRINGS.search(source_of(module).read_text(encoding="utf-8"))]
    assert mixed == []


def test_every_exception_the_package_raises_on_purpose_is_in_errors_py() -> None:
    """One errors module: `errors.describe` knows each class by isinstance, not by its name."""
    elsewhere = [f"{module}.{node.name}" for module in MODULES if module != "harnesslink_core.errors"
                 for node in ast.walk(ast.parse(source_of(module).read_text(encoding="utf-8")))
                 if isinstance(node, ast.ClassDef) and not node.name.startswith("_")
                 and any(isinstance(base, ast.Name) and base.id.endswith(("Error", "Exception")) for base in node.bases)]
    assert elsewhere == []


def test_the_check_finds_an_upward_import_and_a_circle() -> None:
    """The two checks above would fail on a bad graph (they are not vacuous)."""
    bad = {"harnesslink_core.recall.index": {"harnesslink_core.control.forget"},
           "harnesslink_core.control.forget": {"harnesslink_core.recall.index"}}
    assert circles(bad) == [["harnesslink_core.control.forget", "harnesslink_core.recall.index"]]
    assert layer_of("harnesslink_core.recall.index") < layer_of("harnesslink_core.control.forget")


def test_a_harness_folders_modules_sit_in_the_layers_their_roles_name() -> None:
    """A reader may not import its harness's wiring: the folder is one place, not one layer."""
    layer = {name: number for number, (name, _) in enumerate(LAYERS)}
    assert layer_of("harnesslink_core.harnesses.codex.reader") == layer["readers"]
    assert layer_of("harnesslink_core.harnesses.codex.sessions") == layer["sessions"]
    assert layer_of("harnesslink_core.harnesses.codex.wiring") == layer["surfaces"]
    assert layer_of("harnesslink_core.harnesses.claude_code.plugin") == layer["surfaces"]
    assert layer_of("harnesslink_core.harnesses.registry") == layer["readers"]


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)
