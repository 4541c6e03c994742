"""`harnesslink install` / `harnesslink uninstall`: install.py and uninstall.py for a tool install.

After `pipx install <clone>` or `uv tool install <clone>` there is no install.py to run; these verbs take
the same options and run the same code (`wiring.installer.run`, `wiring.uninstaller.run`). The hooks still
get their own private venv under the agent dir, built from this installed copy (environment.package_source).
"""

from __future__ import annotations

import argparse
import sys

from ..paths import Locations


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    from ..wiring import installer, uninstaller

    install = subparsers.add_parser("install", help="Wire the hooks into every harness found (as install.py)",
                                    description=installer.DESCRIPTION)
    installer.add_arguments(install)
    uninstall = subparsers.add_parser("uninstall", help="Take the hooks out again (as uninstall.py)",
                                      description=uninstaller.DESCRIPTION)
    uninstaller.add_arguments(uninstall)


def run(args: argparse.Namespace, locs: Locations) -> int:
    if args.command == "install":
        from ..wiring import installer

        return installer.run(args, locs.env)
    from ..wiring import uninstaller

    if args.purge and args.harness:
        print(f"harnesslink uninstall: error: {uninstaller.PURGE_WITH_HARNESS}", file=sys.stderr)
        return 2
    return uninstaller.run(args, locs.env)
