"""`pipx install <clone>` / `uv tool install <clone>`: the package as a tool, whose `harnesslink install` and
`harnesslink uninstall` do what install.py and uninstall.py do. A plain venv + `pip install <checkout>` stands in
for pipx (pipx is exactly that: one venv per tool, its console scripts put on PATH)."""

from __future__ import annotations

import json
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from harnesslink_core.main import main

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tool(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The `bin` folder of a venv with the checkout pip-installed into it, as pipx would make it."""
    folder = tmp_path_factory.mktemp("tool") / "venv"
    venv.EnvBuilder(with_pip=True).create(folder)
    done = subprocess.run([str(folder / "bin" / "python"), "-m", "pip", "install", "--quiet",
                           "--disable-pip-version-check", str(REPO)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return folder / "bin"


def a_home(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".codex").mkdir()
    (home / ".claude" / "settings.json").write_text('{"model": "opus"}\n')
    return {"HOME": str(home), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}


def run(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600, cwd=env["HOME"])


@pytest.mark.slow
def test_the_installed_tool_plans_the_same_install_as_install_py(tool: Path, tmp_path: Path) -> None:
    env = a_home(tmp_path)
    for args in (["--dry-run"], ["--dry-run", "--harness", "pi", "--no-mcp"]):
        script = run([sys.executable, str(REPO / "install.py"), *args], env)
        verb = run([str(tool / "harnesslink"), "install", *args], env)
        assert verb.returncode == script.returncode == 0, verb.stdout + verb.stderr
        assert verb.stdout == script.stdout
        assert "would change" in verb.stdout
    script = run([sys.executable, str(REPO / "uninstall.py"), "--dry-run"], env)
    verb = run([str(tool / "harnesslink"), "uninstall", "--dry-run"], env)
    assert verb.stdout == script.stdout and verb.returncode == script.returncode


@pytest.mark.slow
def test_a_tool_install_builds_the_private_venv_from_the_installed_copy(tool: Path, tmp_path: Path) -> None:
    env = a_home(tmp_path)
    done = run([str(tool / "harnesslink"), "install", "--harness", "claude-code", "--no-backfill"], env)
    assert done.returncode == 0, done.stdout + done.stderr
    private = Path(env["HOME"]) / ".superpi" / "agent" / "venv"
    where = run([str(private / "bin" / "python"), "-c",
                 "import harnesslink_core, yaml, orjson; print(harnesslink_core.__file__)"], env)
    assert where.returncode == 0, where.stderr
    assert where.stdout.startswith(str(private)), "the hooks run their own copy, not the tool's"
    command = json.loads((Path(env["HOME"]) / ".claude" / "settings.json").read_text())["hooks"]["SessionStart"][0]
    hook = run(["sh", "-c", command["hooks"][0]["command"]], env | {"PATH": "/usr/bin:/bin"})
    assert hook.returncode == 0 and json.loads(hook.stdout or "{}") is not None, hook.stderr

    gone = run([str(tool / "harnesslink"), "uninstall"], env)
    assert gone.returncode == 0, gone.stdout + gone.stderr
    assert not private.exists()
    assert (Path(env["HOME"]) / ".claude" / "settings.json").read_text() == '{"model": "opus"}\n'


@pytest.mark.slow
def test_the_repacked_wheel_carries_the_package_data_and_entry_points(tool: Path, tmp_path: Path) -> None:
    code = ("from harnesslink_core.wiring import environment; import shutil, sys\n"
            "with environment.package_source() as wheel: shutil.copy(wheel, sys.argv[1])")
    copy = tmp_path / "repacked.whl"
    done = run([str(tool / "python"), "-c", code, str(copy)], {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    names = set(zipfile.ZipFile(copy).namelist())
    for needed in ("harnesslink_core/harnesses/pi_family/extension.ts", "harnesslink_core/data/related.txt",
                   "harnesslink_core/data/secrets/gitleaks_rules.json", "harnesslink_core/data/secrets/analysis.json",
                   "harnesslink_core/hooks.py"):
        assert needed in names
    info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert {f"{info}/METADATA", f"{info}/WHEEL", f"{info}/RECORD"} <= names
    assert not any("__pycache__" in n or n.endswith("direct_url.json") for n in names)


def test_harnesslink_install_is_install_py(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    env = a_home(tmp_path)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    from harnesslink_core.wiring import installer, uninstaller

    assert main(["install", "--dry-run", "--harness", "codex"]) == installer.main(["--dry-run", "--harness", "codex"])
    verb, script = capsys.readouterr().out.split("HarnessLink install --dry-run")[1:]
    assert verb == script
    assert main(["uninstall", "--purge", "--harness", "codex"]) == 2
    assert uninstaller.PURGE_WITH_HARNESS in capsys.readouterr().err
