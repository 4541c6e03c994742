"""`harnesslink mcp [--harness H]`: the MCP server; `harnesslink mcp-call TOOL`: one tool call, for pi/omp.

`mcp` is dispatched by `main` before argparse and the other verbs are imported
(`mcp_server.fast_path`): a harness waits for the server's tool list only briefly.

`mcp-call` is how the pi/omp extension runs a tool it registered natively: it
reads `{"arguments": {...}, "cwd": "...", "session_id": "..."}` on stdin and
prints `{"text": "...", "isError": false}`; it always exits 0.
"""

from __future__ import annotations

import argparse
import json
import sys

from ..mcp_server import HARNESSES
from ..paths import Locations


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    server = subparsers.add_parser("mcp", help="Serve the memory tools over MCP (stdio); harnesses start it")
    server.add_argument("--harness", choices=HARNESSES, default=None, help="the harness that starts it")
    one = subparsers.add_parser("mcp-call", help="Run one memory tool: JSON on stdin, JSON on stdout (pi/omp)")
    one.add_argument("tool", help="memory_search, memory_get, memory_bank, context_brief, ...")
    one.add_argument("--harness", choices=HARNESSES, default=None, help="the harness that calls it")


def run(args: argparse.Namespace, locs: Locations) -> int:
    if args.command == "mcp":
        from ..mcp_server import serve

        return serve(args.harness or "")
    return call_once(args.tool, args.harness or "", locs)


def call_once(tool: str, harness: str, locs: Locations) -> int:
    from .. import memory_tools

    try:
        request = json.loads(sys.stdin.buffer.read() or b"{}")
        if not isinstance(request, dict):
            raise ValueError("not an object")
    except ValueError as exc:
        return _answer(f"{tool}: the request on stdin is not a JSON object ({exc})", True)
    cwd = given if isinstance(given := request.get("cwd"), str) else ""
    session_id = given if isinstance(given := request.get("session_id"), str) else ""
    session = memory_tools.Session(locs, cwd, harness, session_id)
    try:
        return _answer(memory_tools.call(tool, request.get("arguments"), session), False)
    except KeyError:
        return _answer(f"unknown tool: {tool}", True)
    except memory_tools.ToolError as exc:
        return _answer(f"{tool}: {exc}", True)
    except Exception as exc:  # noqa: BLE001 - the agent gets a failed call, we get the traceback
        from .. import log

        log.error(locs, f"mcp-call {tool} failed", exc)
        return _answer(f"{tool} failed with an internal error ({type(exc).__name__}); details in {locs.log_file}", True)


def _answer(text: str, failed: bool) -> int:
    sys.stdout.write(json.dumps({"text": text, "isError": failed}, ensure_ascii=False) + "\n")
    return 0
