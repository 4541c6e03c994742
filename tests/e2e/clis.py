"""Install the real harness CLIs from npm into a cache folder, once, and find their executables.

The cache defaults to `<repo>/.cache/harness-clis` (git-ignored); set HARNESSLINK_CLI_CACHE to move it. Each CLI gets
its own npm prefix so their dependency trees never collide. Versions are pinned here, in one place, so CI runs the
same CLIs every time; bump them together with `python tests/generate_transcripts.py` to refresh the fixtures.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Cli:
    harness: str     # fixture folder name
    package: str     # npm package
    version: str
    executable: str  # name under node_modules/.bin


# Pinned versions that install and run here (Node 20, x86_64, registry-only network).
# - claude-code ships a native binary in a platform package; its `engines: node>=22` only concerns the
#   postinstall helper, and the binary runs fine.
# - codex ships its native binary in an optional platform package too.
# - omp 18.2.3 is the newest whose @oh-my-pi/* dependencies were all published (18.3.4 needs an omp-stats
#   18.3.4 that is missing from the registry); it runs on Bun, installed below from a registry package.
CLIS: dict[str, Cli] = {
    "claude-code": Cli("claude-code", "@anthropic-ai/claude-code", "2.1.332", "claude"),
    "codex": Cli("codex", "@openai/codex", "0.171.0", "codex"),
    "pi": Cli("pi", "@mariozechner/pi-coding-agent", "0.73.1", "pi"),
    "omp": Cli("omp", "@oh-my-pi/pi-coding-agent", "18.2.3", "omp"),
}
BUN_VERSION = "1.4.5"
INSTALL_TIMEOUT_SECONDS = 900


class CliUnavailable(RuntimeError):
    """npm is missing or an install failed; the message says which."""


def cache_dir(env: dict[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    return Path(env.get("HARNESSLINK_CLI_CACHE") or REPO / ".cache" / "harness-clis")


def npm_available() -> bool:
    return shutil.which("npm") is not None


def cli_path(harness: str) -> Path:
    """The executable of `harness`, installing it first if it is not in the cache."""
    cli = CLIS[harness]
    prefix = cache_dir() / f"{harness}-{cli.version}"
    executable = prefix / "node_modules" / ".bin" / cli.executable
    if not executable.exists():
        _npm_install(prefix, f"{cli.package}@{cli.version}")
    if not executable.exists():
        raise CliUnavailable(f"{cli.package}@{cli.version} installed but {executable} is missing")
    return executable


def all_cli_paths() -> dict[str, Path]:
    return {harness: cli_path(harness) for harness in CLIS}


def bun_dir() -> Path:
    """The folder holding the `bun` binary omp needs on PATH (installed from a registry package)."""
    prefix = cache_dir() / f"bun-{BUN_VERSION}"
    package = _bun_package()
    binary = prefix / "node_modules" / package / "bin" / "bun"
    if not binary.exists():
        # The `bun` npm package downloads its binary at postinstall, which needs the internet; the
        # platform package carries the binary itself.
        _npm_install(prefix, f"{package}@{BUN_VERSION}")
    if not binary.exists():
        raise CliUnavailable(f"{package}@{BUN_VERSION} installed but {binary} is missing")
    binary.chmod(0o755)
    return binary.parent


def _bun_package() -> str:
    machine = platform.machine().lower()
    if machine in ("aarch64", "arm64"):
        return "@oven/bun-linux-aarch64"
    if _cpu_has_avx2():
        return "@oven/bun-linux-x64"
    return "@oven/bun-linux-x64-baseline"


def _cpu_has_avx2() -> bool:
    try:
        return " avx2" in Path("/proc/cpuinfo").read_text()
    except OSError:
        return False


def _npm_install(prefix: Path, spec: str) -> None:
    if not npm_available():
        raise CliUnavailable("npm is not on PATH")
    prefix.mkdir(parents=True, exist_ok=True)
    command = ["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix", str(prefix), spec]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired as error:
        raise CliUnavailable(f"`{' '.join(command)}` timed out") from error
    if done.returncode != 0:
        raise CliUnavailable(f"`{' '.join(command)}` failed:\n{done.stderr[-2000:]}")


if __name__ == "__main__":
    for name, path in all_cli_paths().items():
        print(f"{name}: {path}")
    print(f"bun: {bun_dir() / 'bun'}")
