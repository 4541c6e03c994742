"""The log: errors go to a bounded, redacted file. When that file cannot be written (an unusable
HARNESSLINK_HOME), the MCP server's go to stderr, MCP's channel for a server's logs, so no traceback is
lost; a hook's go nowhere (a harness shows what a hook prints: tests/test_faults.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def test_the_mcp_server_with_an_unusable_home_logs_to_stderr_with_the_traceback(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the agent dir should be")
    requests = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                 "params": {"name": "memory_bank", "arguments": {"text": "Token ghp_" + "a" * 36 + " rotates monthly."}}}]
    env = {"HOME": str(tmp_path), "HARNESSLINK_HOME": str(blocker / "agent"), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-m", "harnesslink_core.main", "mcp", "--harness", "codex"], env=env,
                         input="".join(json.dumps(r) + "\n" for r in requests), capture_output=True, text=True,
                         timeout=60, cwd=tmp_path)
    replies = [json.loads(line) for line in out.stdout.splitlines()]
    assert replies[1]["result"]["isError"]
    assert "Traceback" in out.stderr and "memory_bank" in out.stderr
    assert "ghp_" + "a" * 36 not in out.stderr, "what goes to stderr is redacted too"


def test_a_usable_home_logs_to_the_file_and_not_to_stderr(tmp_path: Path, capsys) -> None:
    from harnesslink_core import log
    from harnesslink_core.paths import locations

    locs = locations({"HOME": str(tmp_path), "HARNESSLINK_HOME": str(tmp_path / "agent")})
    log.error(locs, "something small")
    assert "something small" in Path(locs.log_path).read_text()
    assert capsys.readouterr().err == ""
