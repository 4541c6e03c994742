"""A hook as a process of its own runs without the garbage collector (its cycles go with the process), and
answers as before."""

from __future__ import annotations

import json
import subprocess
import sys

from memory_helpers import REPO, SHOP, corpus_world

PROMPT = "why did signing in stop working right after 12am? something with the session cookie"

# the hook's own `process_main`, with the collector's state written to stderr just before the process ends
CODE = """
import gc, os, sys
from harnesslink_core import hooks

real_exit = os._exit
def report_and_exit(code):
    sys.stderr.write(f"gc enabled: {gc.isenabled()}\\n")
    sys.stderr.flush()
    real_exit(code)
os._exit = report_and_exit
hooks.process_main(["user-prompt-submit", "--harness", "claude-code"])
"""


def test_the_prompt_hook_process_answers_without_the_collector(tmp_path):
    env, _ = corpus_world(tmp_path)
    out = subprocess.run([sys.executable, "-S", "-c", CODE], env={**env, "PYTHONPATH": str(REPO)}, capture_output=True,
                         input=json.dumps({"session_id": "s-gc", "cwd": SHOP, "prompt": PROMPT}).encode(), timeout=60)
    assert "gc enabled: False" in out.stderr.decode(), out.stderr
    assert "login test fails" in json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
