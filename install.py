#!/usr/bin/env python3
"""Wire HarnessLink's memory hooks into every harness found here. `python install.py --help`."""

import sys

if sys.version_info < (3, 11):
    sys.exit("HarnessLink needs Python 3.11 or newer; run install.py with it (e.g. python3.11 install.py)")

from harnesslink_core.wiring.installer import main  # noqa: E402  (this folder is first on sys.path)

if __name__ == "__main__":
    raise SystemExit(main())
