"""Where everything lives. All locations derive from an environment mapping,
so a test that points HOME at a temporary folder gets a complete, isolated world.

On the prompt hook's path: no pathlib (it costs a noticeable share of a bare
interpreter's start). The `*_path` attributes are plain strings for the modules on
the hooks' lean path, and only for them (tests/test_layers.py holds that); the `Path`
properties serve everything else and import pathlib when first used.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the prompt hook's path)
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path


class Locations:
    """The agent dir and its files, from HOME / HARNESSLINK_HOME (see `locations`)."""

    __slots__ = ("home_path", "agent_path", "env")

    def __init__(self, home: os.PathLike[str] | str, agent_dir: os.PathLike[str] | str,
                 env: Mapping[str, str]) -> None:
        self.home_path = os.fspath(home)
        self.agent_path = os.fspath(agent_dir)
        self.env = env

    def __repr__(self) -> str:
        return f"Locations(home={self.home_path!r}, agent_dir={self.agent_path!r})"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Locations) and (self.home_path, self.agent_path) == (other.home_path, other.agent_path)
                and self.env == other.env)

    def __hash__(self) -> int:
        return hash((self.home_path, self.agent_path))

    # plain strings (the prompt hook's path)

    @property
    def memories_path(self) -> str:
        return os.path.join(self.agent_path, "memories")

    @property
    def index_path(self) -> str:
        return os.path.join(self.agent_path, "memory-index.db")

    @property
    def ledger_path(self) -> str:
        return os.path.join(self.agent_path, "harness-autobank.db")

    @property
    def log_path(self) -> str:
        return os.path.join(self.agent_path, "logs", "harnesslink.log")

    @property
    def encoder_path(self) -> str:
        """The resident encoder's folder (0700): its socket, its lock (recall/encoder_client.py)."""
        return os.path.join(self.agent_path, "encoder")

    # Paths (everything else)

    @property
    def home(self) -> Path:
        return _path(self.home_path)

    @property
    def agent_dir(self) -> Path:
        return _path(self.agent_path)

    @property
    def memories(self) -> Path:
        return _path(self.memories_path)

    @property
    def config_file(self) -> Path:
        return self.agent_dir / "config.yml"

    @property
    def ledger_file(self) -> Path:
        return _path(self.ledger_path)

    @property
    def index_file(self) -> Path:
        return _path(self.index_path)

    @property
    def log_file(self) -> Path:
        return _path(self.log_path)

    @property
    def encoder_dir(self) -> Path:
        return _path(self.encoder_path)

    @property
    def encoder_log(self) -> Path:
        return self.agent_dir / "logs" / "encoder.log"

    @property
    def pass_lock(self) -> Path:
        return self.agent_dir / "autobank.lock"

    def env_folder(self, name: str, default: str) -> str:
        """An override from the environment (with ~ expanded against our HOME), or the default: a string."""
        value = self.env.get(name)
        if not value:
            return default
        if value == "~" or value.startswith("~/"):
            return os.path.join(self.home_path, value[2:]) if value[2:] else self.home_path
        return value

    def env_path(self, name: str, default: Path) -> Path:
        """`env_folder` as a Path (the default as it is given)."""
        return _path(self.env_folder(name, "")) if self.env.get(name) else default


def _path(text: str) -> Path:
    from pathlib import Path

    return Path(text)


def locations(env: Mapping[str, str] | None = None) -> Locations:
    env = os.environ if env is None else env
    home = env.get("HOME") or os.path.expanduser("~")
    override = env.get("HARNESSLINK_HOME")
    agent_dir = os.path.expanduser(override) if override else os.path.join(home, ".superpi", "agent")
    return Locations(home, agent_dir, env)
