"""The private Python environment the hooks run in: `<agent dir>/venv`.

Hooks must not depend on whichever Python is first on PATH, so install.py makes
a venv with this package and its dependencies, and every harness calls the
venv's console scripts by absolute path. `--no-venv` (for tests and for
developers) puts small wrapper scripts in the same place instead, which run the
package with the interpreter that ran install.py.

The venv is built from the checkout install.py runs from, or, for `harnesslink install` from a tool
install (`pipx install <clone>`, `uv tool install <clone>`), from that installed copy packed again as a
wheel (`package_source`): the hooks never run out of the tool's own environment, which `pipx upgrade`
or `pipx uninstall` may replace or remove under them, and they run the same version the tool is.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import venv
import zipfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..errors import EnvironmentFailed
from ..paths import Locations
from .files import atomic_write

ENTRY_POINTS = {"context-hook": "harnesslink_core.hooks", "harnesslink": "harnesslink_core.main"}
DISTRIBUTION = "harnesslink-hooks"
CODE_ROOT = Path(__file__).resolve().parents[2]  # the folder holding harnesslink_core: a checkout, or site-packages


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
    """The private venv with the package from `source` installed (reused and upgraded on a second run)."""
    return build_venv(folder(locs), source)


def build_venv(target: Path, source: Path) -> Environment:
    """A venv at `target` with the package from `source` (a checkout or a wheel) and its dependencies."""
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
    # with the resident encoder's runtime (recall/encoder.py); its model ships inside the package
    for args in ([f"{source}[encoder]"], ["--force-reinstall", "--no-deps", str(source)]):
        result = subprocess.run([*pip, *args], capture_output=True, text=True)
        if result.returncode != 0:
            raise EnvironmentFailed(
                f"could not install the package into {target}:\n{result.stderr.strip()[-2000:]}",
                "hint: pip needs to reach PyPI for pyyaml, python-frontmatter, filelock, orjson, bottle, tqdm, "
                "ahocorasick-rs, onnxruntime, numpy and tokenizers; "
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
        "try:\n"
        "    from harnesslink_core.hooks import process_main\n"
        "except ImportError as e:  # mid-upgrade: pip has taken the package out and not yet put it back\n"
        "    sys.stderr.write(f'HarnessLink: its package is being reinstalled ({e}); this hook does nothing\\n')\n"
        "    sys.exit(0)\n"
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


def is_checkout(root: Path = CODE_ROOT) -> bool:
    """Whether the running code is a source tree pip can build (a clone), not an installed copy."""
    return (root / "pyproject.toml").is_file() and (root / "harnesslink_core").is_dir()


@contextmanager
def package_source(root: Path = CODE_ROOT) -> Iterator[Path]:
    """What pip installs into the private venv: a clean copy of the checkout (`source_copy`), or, when this
    code was installed as a tool (`pipx install`, `uv tool install`), the installed copy packed again as a
    wheel, so the hooks run exactly the version the user installed, whether or not the clone it came from is
    still there."""
    with tempfile.TemporaryDirectory(prefix="harnesslink-source-") as scratch:
        yield source_copy(root, Path(scratch) / "source") if is_checkout(root) else wheel_of_installed(Path(scratch))


def source_copy(root: Path, target: Path) -> Path:
    """What the build reads of the checkout at `root` (pyproject.toml, the README it names, the package), copied
    to `target`. pip builds a source folder in place, and setuptools never clears the `build/lib` it leaves
    there: a module moved or deleted since an earlier build would be installed again beside the new ones."""
    target.mkdir(parents=True)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(root / name, target / name)
    shutil.copytree(root / "harnesslink_core", target / "harnesslink_core",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return target


def wheel_of_installed(folder: Path) -> Path:
    """The installed distribution's files (package and dist-info, no bytecode or scripts) as a wheel in `folder`."""
    try:
        dist = importlib.metadata.distribution(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        raise EnvironmentFailed(f"{DISTRIBUTION} is neither a checkout at {CODE_ROOT} nor an installed package",
                                "hint: run install.py from a clone, or `pipx install <clone>` first") from None
    files = [f for f in dist.files or [] if f.parts[0] != ".." and "__pycache__" not in f.parts]
    info = next((f.parts[0] for f in files if f.parts[0].endswith(".dist-info")), None)
    if info is None or not any(f.parts[0] == "harnesslink_core" for f in files):
        raise EnvironmentFailed(f"the installed {DISTRIBUTION} {dist.version} lists no files (no RECORD)",
                                f"hint: reinstall it (pipx reinstall {DISTRIBUTION}), then run again")
    regenerated = {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"}  # written by the installer, not the wheel
    wheel = folder / f"harnesslink_hooks-{dist.version}-py3-none-any.whl"
    record = []
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        for file in files:
            if file.parts[0] == info and file.name in regenerated:
                continue
            data = Path(str(file.locate())).read_bytes()
            name = file.as_posix()
            archive.writestr(name, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append(f"{name},sha256={digest},{len(data)}")
        archive.writestr(f"{info}/RECORD", "\n".join([*record, f"{info}/RECORD,,"]) + "\n")
    return wheel
