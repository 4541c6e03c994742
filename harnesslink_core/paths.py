"""Where everything lives. All locations derive from an environment mapping,
so a test that points HOME at a temporary folder gets a complete, isolated world."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Locations:
    home: Path
    agent_dir: Path
    env: Mapping[str, str]

    @property
    def memories(self) -> Path:
        return self.agent_dir / "memories"

    @property
    def config_file(self) -> Path:
        return self.agent_dir / "config.yml"

    @property
    def ledger_file(self) -> Path:
        return self.agent_dir / "harness-autobank.db"

    @property
    def index_file(self) -> Path:
        return self.agent_dir / "memory-index.db"

    @property
    def log_file(self) -> Path:
        return self.agent_dir / "logs" / "harnesslink.log"

    @property
    def pass_lock(self) -> Path:
        return self.agent_dir / "autobank.lock"

    def env_path(self, name: str, default: Path) -> Path:
        """An override from the environment (with ~ expanded against our HOME), or the default."""
        value = self.env.get(name)
        if not value:
            return default
        if value == "~" or value.startswith("~/"):
            return self.home / value[2:]
        return Path(value)


def locations(env: Mapping[str, str] | None = None) -> Locations:
    env = os.environ if env is None else env
    home = Path(env.get("HOME") or os.path.expanduser("~"))
    override = env.get("HARNESSLINK_HOME")
    agent_dir = Path(override).expanduser() if override else home / ".superpi" / "agent"
    return Locations(home=home, agent_dir=agent_dir, env=env)
