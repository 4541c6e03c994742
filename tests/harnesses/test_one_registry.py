"""The places a new harness touches: its folder, harnesses/<id>/, the registry, harnesses/registry.py, and the
registry's copy on the package's face, harnesslink_core/__init__.py, for the modules that may not import it.
Every other list of harness ids derives from the registry; none is spelled out anywhere else."""

from __future__ import annotations

import ast
from pathlib import Path

import harnesslink_core
from harnesslink_core import config, hooks, mcp_server
from harnesslink_core.commands import view
from harnesslink_core.harnesses import registry
from harnesslink_core.sessions import base as sessions
from harnesslink_core.wiring.installer import WIRINGS

ROOT = Path(__file__).resolve().parent.parent.parent
PACKAGE = ROOT / "harnesslink_core"
HARNESSES = PACKAGE / "harnesses"
SHARED = {"pi_family"}  # what pi and omp share: a folder, not a harness (no id)
# where ids may be spelled out: the registry, its copy on the package's face (held to it below), and the hooks'
# answer for the harnesses whose extension is ours (a protocol, not a list of every harness)
SPELLED_OUT = {
    "harnesslink_core/harnesses/registry.py": 3,  # MODULES, MCP_SERVED, COLOURS
    "harnesslink_core/__init__.py": 2,  # HARNESS_IDS, WIRED_HARNESS_IDS
    "harnesslink_core/hooks.py": 1,  # PLAIN_ANSWER
}


def folder_of(name: str) -> Path:
    return HARNESSES / name.replace("-", "_")


def sources() -> list[Path]:
    """The package, the hook entry points and the two scripts at the top of the repository."""
    return [*sorted(PACKAGE.rglob("*.py")), *sorted((ROOT / "hooks").iterdir()), ROOT / "install.py",
            ROOT / "uninstall.py"]


def id_lists(path: Path) -> int:
    """How many literals in `path` (tuple, list, set, dict keys) name two or more harness ids."""
    found = 0
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            items = node.elts
        elif isinstance(node, ast.Dict):
            items = [key for key in node.keys if key is not None]
        else:
            continue
        named = {item.value for item in items if isinstance(item, ast.Constant) and item.value in registry.IDS}
        found += len(named) >= 2
    return found


def test_no_module_spells_out_harness_ids_but_the_registry_and_its_copy() -> None:
    counted = {str(path.relative_to(ROOT)): id_lists(path) for path in sources()}
    assert {path: n for path, n in counted.items() if n} == SPELLED_OUT


def test_the_check_finds_a_list_of_ids(tmp_path: Path) -> None:
    planted = tmp_path / "planted.py"
    planted.write_text('NAMES = ("codex", "pi")\nCOLOURS = {"omp": 1, "claude-code": 2}\nONE = ("codex",)\n')
    assert id_lists(planted) == 2


def test_the_copy_on_the_package_face_is_the_registrys() -> None:
    assert harnesslink_core.HARNESS_IDS == registry.IDS
    assert harnesslink_core.WIRED_HARNESS_IDS == registry.WIRED
    assert set(hooks.PLAIN_ANSWER) < set(registry.WIRED)


def test_every_list_of_harness_ids_is_the_registrys() -> None:
    assert config.ALL_HARNESSES == registry.IDS
    assert hooks.HARNESS_IDS == mcp_server.HARNESSES == sessions.HARNESSES == view.HARNESSES == registry.WIRED
    assert tuple(WIRINGS) == registry.WIRED
    assert tuple(view.COLOURS) == registry.IDS
    assert registry.READ_ONLY | registry.MCP_SERVED <= set(registry.IDS)


def test_each_harness_is_one_folder_with_a_module_for_each_role() -> None:
    for name in registry.IDS:
        roles = {path.stem for path in folder_of(name).glob("*.py")} - {"__init__"}
        wanted = {"reader"} if name in registry.READ_ONLY else {"reader", "sessions", "wiring"}
        assert wanted <= roles <= wanted | {"plugin"}, name
    folders = {path.name for path in HARNESSES.iterdir() if (path / "__init__.py").is_file()}
    assert folders == {name.replace("-", "_") for name in registry.IDS} | SHARED


def test_no_harness_has_a_module_outside_its_folder() -> None:
    modules = {path.stem for path in [*HARNESSES.glob("*.py"), *(PACKAGE / "sessions").glob("*.py"),
                                      *(PACKAGE / "wiring").glob("*.py")]}
    assert modules & ({name.replace("-", "_") for name in registry.IDS} | SHARED) == set()


def test_the_developer_map_names_the_places_a_new_harness_touches() -> None:
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    start = readme.index("The places a new harness touches")
    claim = readme[start:readme.index(". ", start)]
    assert "three" in claim
    for place in ("`harnesses/<id>/`", "`harnesses/registry.py`", "`harnesslink_core/__init__.py`"):
        assert place in claim
