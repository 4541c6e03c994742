"""MCP server start-up: spawn `harnesslink mcp` → `tools/list` answered (the target: median < 150 ms).

    python benchmarks/mcp_startup.py [--runs 30] [--venv DIR]

A harness waits for its MCP servers only briefly (omp 250 ms, `codex exec` about 1 s), so what counts is
the whole process: start the server the way a harness does, send `initialize`, `notifications/initialized`
and `tools/list` at once, and stop the clock when the `tools/list` answer arrives. The server runs from the
private environment install.py makes (`--venv`, default: one built by benchmarks/installed.py under
.cache/mcp-bench), in a temporary HOME with a few hundred bank entries. The bare interpreter of that environment
(`python -c pass`) is measured alongside, interleaved.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

HANDSHAKE = b"".join(json.dumps(m).encode() + b"\n" for m in (
    {"jsonrpc": "2.0", "id": 1, "method": "initialize",
     "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
))


def private_venv(folder: Path | None) -> Path:
    if folder is not None:
        return folder
    from benchmarks import installed

    return installed.build(REPO / ".cache" / "mcp-bench").folder


def seed(home: Path, entries: int) -> Path:
    project = home / "project"
    bank = home / ".superpi" / "agent" / "memories" / ("-" + str(project).replace("/", "-") + "--") / "bank"
    bank.mkdir(parents=True)
    for n in range(entries):
        (bank / f"2026-01-01T00-{n // 60:02d}-{n % 60:02d}-000Z--entry-{n}.md").write_text(
            f"---\nid: x\ntitle: \"Entry {n}\"\nharness: codex\n---\n\n## Prompt\n\nfix bug {n}\n\n## Result\n\ndone\n")
    project.mkdir()
    return project


def spawn_to_tools_list(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env=env, cwd=cwd)
    assert proc.stdin and proc.stdout
    proc.stdin.write(HANDSHAKE)
    proc.stdin.flush()
    while True:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("the server closed stdout before answering tools/list")
        if json.loads(line).get("id") == 2:
            break
    elapsed = time.perf_counter() - started
    proc.stdin.close()
    proc.wait(timeout=10)
    return elapsed


def bare(python: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run([str(python), "-c", "pass"], env=env, check=True)
    return time.perf_counter() - started


def measure(runs: int = 30, venv: Path | None = None, entries: int = 300) -> dict:
    folder = private_venv(venv)
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        project = seed(home, entries)
        env = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}
        argv = [str(folder / "bin" / "harnesslink"), "mcp", "--harness", "codex"]
        spawn_to_tools_list(argv, env, project)  # warm the file cache and compile the .pyc files
        server, python = [], []
        for _ in range(runs):
            server.append(spawn_to_tools_list(argv, env, project) * 1000)
            python.append(bare(folder / "bin" / "python", env) * 1000)
    server.sort()
    return {
        "runs": runs, "median_ms": round(statistics.median(server), 1),
        "p95_ms": round(server[min(len(server) - 1, int(len(server) * 0.95))], 1), "max_ms": round(max(server), 1),
        "bare_python_median_ms": round(statistics.median(python), 1), "target_median_ms": 150,
    }


def line(result: dict) -> str:
    verdict = "met" if result["median_ms"] < result["target_median_ms"] else "MISSED"
    return (f"mcp start-up (spawn `harnesslink mcp` -> tools/list answered): median {result['median_ms']} ms, "
            f"p95 {result['p95_ms']} ms, max {result['max_ms']} ms over {result['runs']} runs; bare python "
            f"{result['bare_python_median_ms']} ms; target median < {result['target_median_ms']} ms: {verdict}")


def report_line(runs: int = 30, venv: Path | None = None) -> str:
    """Measure and print one line (benchmarks/run.py calls this)."""
    text = line(measure(runs, venv))
    print(f"[mcp] {text}", flush=True)
    return text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--venv", type=Path, default=None, help="an environment made by install.py (its venv folder)")
    args = parser.parse_args()
    print(line(measure(args.runs, args.venv)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
