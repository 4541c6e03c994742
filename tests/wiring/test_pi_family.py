"""pi and omp: the TypeScript extension install.py writes into each agent's extensions/ folder."""

from __future__ import annotations

import json
import re

import pytest

from harnesslink_core.harnesses.omp.wiring import OMP
from harnesslink_core.harnesses.pi.wiring import PI
from harnesslink_core.harnesses.pi_family.wiring import is_our_extension, render

from .conftest import World

families = pytest.mark.parametrize("family", [PI, OMP], ids=["pi", "omp"])


@families
def test_install_writes_the_extension_into_the_agents_extensions_folder(family, world: World) -> None:
    code, out = world.install("--harness", family.NAME)
    assert code == 0, out
    path = world.home / f".{family.NAME}" / "agent" / "extensions" / "harnesslink.ts"
    assert family.target(world.locs) == path
    text = path.read_text()
    assert is_our_extension(path.read_bytes())
    hook_exe = world.locs.agent_dir / "venv" / "bin" / "context-hook"
    assert f"const HOOK = {json.dumps(str(hook_exe))};" in text
    assert f'const HARNESS = "{family.NAME}";' in text
    assert "__HOOK_EXE__" not in text and "__HARNESS__" not in text


def test_pi_extension_goes_where_pi_coding_agent_dir_points(world: World) -> None:
    world.env["PI_CODING_AGENT_DIR"] = str(world.root / "my pi")
    world.install()
    assert (world.root / "my pi" / "extensions" / "harnesslink.ts").exists()
    assert not (world.home / ".pi").exists()


def test_the_extension_imports_nothing_but_child_process() -> None:
    text = render(__import__("pathlib").Path("/x/context-hook"), "omp").decode()
    assert re.findall(r'^import .* from "([^"]+)";', text, re.M) == ["node:child_process"]
    assert "require(" not in text
    for event in ("session_start", "before_agent_start", "agent_end", "session_stop", "session_before_compact"):
        assert f'"{event}"' in text
    assert "spawnSync(HOOK, [event, \"--harness\", HARNESS]" in text
    assert "timeout: TIMEOUT_MS[event]" in text


def test_a_path_with_quotes_becomes_a_valid_string_literal() -> None:
    odd = '/home/a "quoted" \\ dir/context-hook'
    text = render(__import__("pathlib").Path(odd), "pi").decode()
    literal = re.search(r"^const HOOK = (.*);$", text, re.M).group(1)
    assert json.loads(literal) == odd


@families
def test_an_extension_file_that_is_not_ours_is_refused(family, world: World) -> None:
    path = family.target(world.locs)
    path.parent.mkdir(parents=True)
    path.write_text("export default function () {}\n")
    code, out = world.install("--harness", family.NAME)
    assert code == 1 and "hint:" in out
    assert path.read_text() == "export default function () {}\n"
    world.uninstall()
    assert path.read_text() == "export default function () {}\n"


@families
def test_second_run_changes_no_byte_and_an_upgrade_replaces_ours(family, world: World) -> None:
    world.install("--harness", family.NAME)
    first = world.snapshot()
    code, out = world.install("--harness", family.NAME)
    assert "already wired" in out and world.snapshot() == first
    path = family.target(world.locs)
    path.write_text(path.read_text().replace("TIMEOUT_MS", "OLD_TIMEOUT_MS"))  # an older copy of ours
    world.install("--harness", family.NAME)
    assert path.read_bytes() == render(world.locs.agent_dir / "venv" / "bin" / "context-hook", family.NAME)
    assert [p.name for p in path.parent.iterdir()] == ["harnesslink.ts"]  # no backup of our own file


@families
def test_uninstall_removes_the_extension_and_the_folders_install_made(family, world: World) -> None:
    (world.home / f".{family.NAME}").mkdir()
    other = world.home / f".{family.NAME}" / "keep.txt"
    other.write_text("mine")
    before = world.snapshot()
    world.install()
    assert family.target(world.locs).exists()
    world.uninstall()
    after = world.snapshot()
    assert {k: v for k, v in after.items() if ".superpi" not in k} == before


def test_user_extensions_beside_ours_stay(world: World) -> None:
    folder = PI.target(world.locs).parent
    folder.mkdir(parents=True)
    (folder / "mine.ts").write_text("export default function () {}\n")
    world.install("--harness", "pi")
    world.uninstall()
    assert [p.name for p in folder.iterdir()] == ["mine.ts"]
