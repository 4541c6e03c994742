"""`harnesslink encoder serve|start|stop|status`: the resident encoder (recall/encoder.py)."""

from __future__ import annotations

import argparse
import json

from ..paths import Locations
from ..recall import encoder_client


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("encoder", help="The resident encoder: serve, start, stop or status")
    parser.add_argument("action", choices=["serve", "start", "stop", "status"])
    parser.add_argument("--idle-seconds", type=float,
                        help="serve: exit after this long without a request (default: recall.encoder_idle_minutes)")
    parser.add_argument("--json", action="store_true", help="status: machine-readable output")


def run(args: argparse.Namespace, locs: Locations) -> int:
    if args.action == "serve":
        from ..recall import encoder

        return encoder.serve(locs, args.idle_seconds)
    if args.action == "start":
        print("encoder: starting" if encoder_client.ensure_started(locs) else "encoder: running, starting or held")
        return 0
    if args.action == "stop":
        stopped = encoder_client.stop(locs)
        print("encoder: stopped" if stopped else "encoder: not running")
        return 0
    found = describe(locs)
    print(json.dumps(found, indent=2) if args.json else line(found))
    return 0


def describe(locs: Locations) -> dict:
    """What `harnesslink status` and `harnesslink encoder status` say of the encoder."""
    from .. import config

    enabled = config.encoder_settings(locs)[0]
    answer = encoder_client.status(locs)
    if answer is None:
        return {"enabled": enabled, "up": False}
    return {"enabled": enabled, "up": True, "current": answer.get("stamp") == encoder_client.stamp(),
            **{k: answer.get(k) for k in ("model", "stamp", "pid", "rss_bytes", "uptime_s", "requests")}}


def line(found: dict) -> str:
    if not found["up"]:
        return "encoder: off (config.yml recall.encoder: false)" if not found["enabled"] else "encoder: not running"
    rss = (found.get("rss_bytes") or 0) // (1 << 20)
    older = "" if found.get("current") else ", another version: it exits when next asked"
    return (f"encoder: up ({found.get('model')}, stamp {found.get('stamp')}, RSS {rss} MB, pid {found.get('pid')}, "
            f"{found.get('requests')} requests{older})")


def vectors_line(search: dict) -> str:
    """How many entries have the encoder's vector (`harnesslink status`)."""
    missing = search.get("without_encoder_vectors")
    if search.get("entries") is None:
        return "encoder vectors: no index yet"
    if missing is None:
        return ("encoder vectors: none yet (the background pass makes them while the encoder runs; "
                "prompts are judged by the words and the static vectors)")
    done = search["entries"] - missing
    return f"encoder vectors: {done} of {search['entries']} entries" + (f", {missing} to go" if missing else "")
