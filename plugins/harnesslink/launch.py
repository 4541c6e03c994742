#!/usr/bin/env python3
"""HarnessLink's Claude Code plugin: every hook and the memory server start here (see .claude-plugin/plugin.json).

It runs with the `python3` on PATH; harnesslink_core/wiring/claude_plugin.py says what it does."""

import os
import sys

if sys.version_info < (3, 11):
    sys.stderr.write("HarnessLink needs Python 3.11 or newer as `python3`; its plugin does nothing until then\n")
    sys.exit(0)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # -I leaves the script's folder off sys.path

from harnesslink_core.wiring.claude_plugin import main  # noqa: E402

if __name__ == "__main__":
    raise SystemExit(main())
