#!/usr/bin/env python3
"""Remove HarnessLink's hooks and private environment. `python uninstall.py --help`."""

import sys

if sys.version_info < (3, 11):
    sys.exit("HarnessLink needs Python 3.11 or newer; run uninstall.py with it (e.g. python3.11 uninstall.py)")

from harnesslink_core.wiring.uninstaller import main  # noqa: E402  (this folder is first on sys.path)

if __name__ == "__main__":
    raise SystemExit(main())
