"""`harnesslink enable|disable <harness>`: edit `cloud.autobank`, keeping the rest of config.yml."""

from __future__ import annotations

import argparse
import sys

from .. import config
from ..paths import Locations


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    for verb, text in (("enable", "Turn autobank on for a harness"), ("disable", "Pause autobank for a harness")):
        parser = subparsers.add_parser(verb, help=text)
        parser.add_argument("harness", choices=config.ALL_HARNESSES)


def run(args: argparse.Namespace, locs: Locations) -> int:
    try:
        current = config.switches(locs)
        if current.problem:
            print(f"error: {current.problem}\nhint: fix or remove config.yml, then try again", file=sys.stderr)
            return 1
        names = list(current.autobank)
        if args.command == "enable" and args.harness not in names:
            names.append(args.harness)
        elif args.command == "disable":
            names = [n for n in names if n != args.harness]
        config.set_autobank(locs, names)
    except (config.ConfigError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    state = "on" if args.harness in names else "off"
    print(f"{args.harness}: autobank {state} (cloud.autobank: [{', '.join(names)}])")
    return 0
