"""`harnesslink <verb>` imports that verb's module and not the others' (the others' imports cost a backfill
or a status a third of a second)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUN = ("import sys\nfrom harnesslink_core.main import main\ncode = main(sys.argv[1:])\n"
       "print(' '.join(sorted(m for m in sys.modules if m.startswith('harnesslink_core.commands.'))))\n")


def commands_imported(home: Path, *argv: str) -> set[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARNESSLINK")}
    env.update(HOME=str(home), PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", RUN, *argv], capture_output=True, text=True, env=env, cwd=ROOT,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return {name.rsplit(".", 1)[1] for name in out.stdout.splitlines()[-1].split()}


def test_backfill_imports_no_other_verb(isolated_home: Path) -> None:
    # options and progress are the verbs' shared helpers; autobank gives backfill its summary line
    assert commands_imported(isolated_home, "backfill", "--days", "1") == {"backfill", "autobank", "options", "progress"}

