"""The private Python environment the hooks run in: `<agent dir>/venv`.

Hooks must not depend on whichever Python is first on PATH, so install.py makes
a venv with this package and its dependencies, and every harness calls the
venv's console scripts by absolute path. `--no-venv` (for tests and for
developers) puts small wrapper scripts in the same place instead, which run the
package with the interpreter that ran install.py.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import venv
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..errors import EnvironmentFailed
from ..paths import Locations
from .files import atomic_write

ENTRY_POINTS = {"context-hook": "harnesslink_core.hooks", "harnesslink": "harnesslink_core.main"}


@dataclass(frozen=True)
class Environment:
    folder: Path
    python: Path  # runs code inside the environment (the autobank setting)

    @property
    def hook_exe(self) -> Path:
        return self.folder / "bin" / "context-hook"

    @property
    def cli(self) -> Path:
        return self.folder / "bin" / "harnesslink"


def folder(locs: Locations) -> Path:
    return locs.agent_dir / "venv"


def hook_executable(locs: Locations) -> Path:
    """Where the hook executable is once install has run (the same with or without a venv)."""
    return folder(locs) / "bin" / "context-hook"


def is_venv(path: Path) -> bool:
    return (path / "pyvenv.cfg").is_file()


def create_venv(locs: Locations, source: Path) -> Environment:
    """A venv with the package from `source` installed (reused and upgraded on a second run)."""
    target = folder(locs)
    if target.exists() and not is_venv(target):
        shutil.rmtree(target)  # wrappers left by an earlier --no-venv install
    python = target / "bin" / "python"
    if not python.exists():
        try:
            venv.EnvBuilder(with_pip=True, symlinks=True).create(target)
        except (OSError, subprocess.CalledProcessError) as e:
            raise EnvironmentFailed(
                f"could not create the private environment {target} ({e})",
                "hint: on Debian/Ubuntu install python3-venv, then run again",
            ) from None
    pip = [str(python), "-m", "pip", "install", "--disable-pip-version-check", "--quiet"]
    # --force-reinstall of the package alone: a reinstall from the same version must still refresh the code
    for args in ([str(source)], ["--force-reinstall", "--no-deps", str(source)]):
        result = subprocess.run([*pip, *args], capture_output=True, text=True)
        if result.returncode != 0:
            raise EnvironmentFailed(
                f"could not install the package into {target}:\n{result.stderr.strip()[-2000:]}",
                "hint: pip needs to reach PyPI for pyyaml, python-frontmatter, filelock, orjson and bottle; "
                "check the network or a proxy (PIP_INDEX_URL), then run again",
            )
    write_hook_launcher(target)
    return Environment(target, python)


def write_hook_launcher(target: Path) -> None:
    """Replace pip's `context-hook` script with one that starts only what the hook needs.

    pip's console scripts `import re` to tidy `sys.argv[0]`; with `enum` behind it that is
    about half a bare interpreter's start, paid by every hook call. The launcher
    also runs Python with `-I -S`: isolated (no PYTHONPATH or user site from the harness's
    environment can shadow our modules) and without `site`, whose start-up work (and the
    `.pth` files of the venv's setuptools) no hook needs; the venv's site-packages is put on
    `sys.path` by hand instead. Together: about a quarter of a bare start saved per call."""
    python = str(target / "bin" / "python")
    found = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                           capture_output=True, text=True)
    site_packages = found.stdout.strip()
    if found.returncode != 0 or not site_packages:
        raise EnvironmentFailed(f"could not find the site-packages of {target}: {found.stderr.strip()[-500:]}",
                                "hint: remove the folder and run install.py again")
    if " " in python or len(python) > 120:  # no shebang can hold it: let sh start python (as pip does)
        shebang = f"#!/bin/sh\n'''exec' {shlex.quote(python)} -IS \"$0\" \"$@\"\n' '''\n"
    else:
        shebang = f"#!{python} -IS\n"
    body = (
        shebang +
        "# HarnessLink's hook launcher (written by install.py): pip's, without its imports and without `site`\n"
        "import sys\n"
        f"sys.path.append({site_packages!r})\n"
        "from harnesslink_core.hooks import process_main\n"
        "process_main()\n"
    )
    atomic_write(target / "bin" / "context-hook", body.encode("utf-8"), mode=0o755)


def write_wrappers(locs: Locations, source: Path) -> Environment:
    """Wrapper scripts that run the package with this interpreter (install.py --no-venv)."""
    target = folder(locs)
    if is_venv(target):
        shutil.rmtree(target)
    python = Path(sys.executable)
    for script, module in ENTRY_POINTS.items():
        body = (
            "#!/bin/sh\n"
            "# HarnessLink (install.py --no-venv): runs the package with the interpreter that installed it\n"
            f'PYTHONPATH={shlex.quote(str(source))}"${{PYTHONPATH:+:$PYTHONPATH}}"\n'
            "export PYTHONPATH\n"
            f"exec {shlex.quote(str(python))} -c "
            f"{shlex.quote(f'import sys; from {module} import main; sys.exit(main())')} \"$@\"\n"
        )
        atomic_write(target / "bin" / script, body.encode("utf-8"), mode=0o755)
    return Environment(target, python)


def remove(locs: Locations) -> bool:
    target = folder(locs)
    if not target.exists():
        return False
    shutil.rmtree(target)
    return True


def variables(env: Environment, source: Path, base: Mapping[str, str]) -> dict[str, str]:
    """The environment variables for running code inside `env` (wrappers need the source on the path)."""
    variables = dict(base)
    if not is_venv(env.folder):
        variables["PYTHONPATH"] = os.pathsep.join(filter(None, [str(source), variables.get("PYTHONPATH")]))
    return variables
