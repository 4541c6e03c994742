"""The resident encoder as the prompt hook and a pull have it, for scoring whichever harnesslink_core is
imported (this checkout's, or another's through `benchmarks/quality.py --checkout DIR`).

`Resident(home)` starts that package's own encoder server in the corpus HOME (as the first prompt of a
session would), gives every entry its encoder vector (`recall.encoded.fill`, as the detached index job
does) and stops the server after. While it runs, `push_encoding` asks for a prompt's vector exactly as
that package's prompt hook asks (its own `hooks._ask_encoder`, whatever it sends: the prompt alone, or
with the scope whose nearest entries the server names), and `pull_encoding` as its pull asks
(`recall.ask`: the query's vector). Only the deadline differs: DEADLINE_MS, not the hook's few tens of
milliseconds, because this scores what the encoder's answer does to the ranking, not whether it comes in
time on a loaded machine (hook_latency.py measures that). A package without an encoder (before the
resident encoder existed) is scored without one: `available()` says which.
"""

from __future__ import annotations

import importlib.util
import inspect
import subprocess
import sys
import time
from pathlib import Path

DEADLINE_MS = 20_000.0


def available() -> bool:
    """Whether the imported harnesslink_core has a resident encoder at all."""
    return importlib.util.find_spec("harnesslink_core.recall.encoder_client") is not None


def package_root() -> Path:
    """The folder holding the imported harnesslink_core (what the encoder server must run from)."""
    import harnesslink_core

    return Path(harnesslink_core.__file__).resolve().parent.parent


class Resident:
    """The package's encoder serving the corpus at `env` (HOME, HARNESSLINK_HOME), entries filled."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = {**env, "PYTHONPATH": str(package_root())}
        self.server: subprocess.Popen | None = None

    def __enter__(self) -> Resident:
        from harnesslink_core.paths import locations
        from harnesslink_core.recall import encoded, encoder_client, index

        self.locs = locations(self.env)
        self.server = subprocess.Popen([sys.executable, "-m", "harnesslink_core.recall.encoder", "serve",
                                        "--idle-seconds", "3600"], env=self.env, cwd=str(package_root()),
                                       stderr=subprocess.DEVNULL)
        while encoder_client.status(self.locs, 100) is None:
            if self.server.poll() is not None:
                raise SystemExit("the encoder did not start")
            time.sleep(0.05)
        conn = index.connect(self.locs)
        try:
            encoded.fill(conn, self.locs, start=False)
            if encoded.pending(conn):
                raise SystemExit(f"{encoded.pending(conn)} entries were left without an encoder vector")
        finally:
            conn.close()
        return self

    def __exit__(self, *exc) -> None:
        from harnesslink_core.recall import encoder_client

        encoder_client.stop(self.locs)
        if self.server is not None:
            self.server.wait(30)

    def push_encoding(self, prompt: str, projects: list[str]):
        """The prompt's encoding as the package's prompt hook asks for it (`hooks._ask_encoder`)."""
        from harnesslink_core import hooks

        class Asking:  # the two fields of the hook's context that asking reads
            locs = self.locs

        Asking.prompt = prompt
        kept = hooks.ENCODER_DEADLINE_MS
        hooks.ENCODER_DEADLINE_MS = DEADLINE_MS
        try:
            takes_scope = len(inspect.signature(hooks._ask_encoder).parameters) > 1
            encoding = hooks._ask_encoder(Asking, projects) if takes_scope else hooks._ask_encoder(Asking)
        finally:
            hooks.ENCODER_DEADLINE_MS = kept
        return encoding

    def pull_encoding(self, query: str):
        """The query's encoding as the package's pull asks for it (`recall.ask`: the query alone)."""
        from harnesslink_core.recall.encoder_client import Encoding

        return Encoding(self.locs, [query], DEADLINE_MS)
