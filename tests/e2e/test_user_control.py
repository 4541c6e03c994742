"""With the real CLIs: a private span and a secret typed into a real session never reach
anything we store; a folder with `.harnesslink-off` banks and receives nothing; a forgotten entry
is not recalled by the next session."""

from __future__ import annotations

import secrets
import subprocess

import pytest

from .harnesses import Sandbox
from .install_flow import Flow, _log
from .marks import SLOW_E2E

pytestmark = SLOW_E2E


@pytest.mark.parametrize("harness", ["claude-code", "codex", "pi", "omp"])
def test_private_spans_exclusion_and_forget_through_the_real_cli(harness: str, sandbox: Sandbox) -> None:
    flow = Flow(harness, sandbox)
    flow.driver.prepare(sandbox)
    flow.run_script("install.py", "--harness", harness, "--no-backfill")
    topic = f"zephyr{secrets.token_hex(3)}"
    private = f"vaultcode{secrets.token_hex(4)}"
    token = "ghp_" + secrets.token_hex(18)

    first = flow.driver.start(sandbox, f"Tune the {topic} cache <private>the vault code is {private}</private> "
                                       f"using token {token} [[bash: echo tuned-$((40+2))]]")
    first.check()
    entries = flow.settled_entries(topic)
    assert len(entries) == 1, f"expected one entry about {topic}; log:\n{_log(flow)}"
    entry = entries[0].read_text(encoding="utf-8")
    assert "[private]" in entry and "[redacted:github-token]" in entry and "tuned-42" in entry
    stored = [p for p in flow.agent_dir.rglob("*") if p.is_file() and "venv" not in p.relative_to(flow.agent_dir).parts]
    leaks = [str(p) for p in stored if private.encode() in p.read_bytes() or token.encode() in p.read_bytes()]
    assert leaks == []

    off = sandbox.project / ".harnesslink-off"
    off.write_text("")
    since = len(sandbox.server.model_requests())
    kept_out = flow.driver.start(sandbox, f"How did we tune the {topic} cache? [[bash: echo keptout-$((1+1))]]")
    kept_out.check()
    assert list(flow.framed_blocks(since)) == [], "nothing is injected in a folder kept out"
    assert flow.settled_entries("keptout-2") == [], "nothing is banked from a folder kept out"
    off.unlink()

    harnesslink = flow.agent_dir / "venv" / "bin" / "harnesslink"
    done = subprocess.run([str(harnesslink), "forget", str(entries[0]), "--yes"], env=flow.env(),
                          capture_output=True, text=True, timeout=120, cwd=sandbox.project)
    assert done.returncode == 0 and "forgot 1 entry" in done.stdout, done.stdout + done.stderr
    assert "stays in the cloud store" in done.stdout
    since = len(sandbox.server.model_requests())
    again = flow.driver.start(sandbox, f"How did we tune the {topic} cache before?")
    again.check()
    assert not any(topic in block for _, block in flow.framed_blocks(since)), "a forgotten entry is never injected"
    assert flow.settled_entries(f"Tune the {topic}") == []
