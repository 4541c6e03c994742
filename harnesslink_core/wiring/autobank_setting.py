"""`python -m harnesslink_core.wiring.autobank_setting NAME…`: turn autobank on for the harnesses install wired.

Runs inside the private environment (install.py itself may run on a Python
without PyYAML). Names already on stay on: installing Codex later does not turn
Claude Code off. While `cloud.autobank` is absent, the legacy `cloud.harnesses`
list is its starting point.
"""

from __future__ import annotations

import sys

from ..config import ConfigError, load, set_autobank
from ..harnesses import registry
from ..paths import Locations, locations


def main(argv: list[str] | None = None) -> int:
    names = sys.argv[1:] if argv is None else argv
    locs = locations()
    try:
        cloud = load(locs).get("cloud")
    except ConfigError as e:
        print(f"{e}; cloud.autobank not written", file=sys.stderr)
        return 1
    cloud = cloud if isinstance(cloud, dict) else {}
    current = cloud.get("autobank", cloud.get("harnesses")) or []
    current = [current] if isinstance(current, str) else current if isinstance(current, list) else []
    on = {str(n) for n in current} | set(names)
    on |= {n for n in registry.READ_ONLY if _found(locs, n)}  # never wired, but their turns are banked too
    wanted = [n for n in registry.IDS if n in on]
    set_autobank(locs, wanted)
    print(", ".join(wanted))
    return 0


def _found(locs: Locations, name: str) -> bool:
    try:
        return registry.get(name).detect(locs)
    except OSError:
        return False


if __name__ == "__main__":
    raise SystemExit(main())
