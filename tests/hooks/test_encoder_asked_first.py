"""The prompt hook asks the resident encoder before it imports the search (SQLite, the candidates, the decision),
so that the encoder encodes the prompt while those load."""

from __future__ import annotations

import json
import subprocess
import sys

from memory_helpers import REPO, SHOP, corpus_world

PROMPT = "why did signing in stop working right after 12am? something with the session cookie"

CODE = """
import sys
from harnesslink_core.recall import encoder_client
real_send = encoder_client.send
def send(*args):
    loaded = [m for m in ("_sqlite3", "harnesslink_core.recall.matches", "harnesslink_core.recall.candidates")
              if m in sys.modules]
    sys.stderr.write(f"asked with loaded: {loaded}\\n")
    return real_send(*args)
encoder_client.send = send
from harnesslink_core.hooks import answer_and_leave
answer_and_leave(["user-prompt-submit", "--harness", "claude-code"])
"""


def test_the_encoder_is_asked_before_the_search_is_imported(tmp_path):
    env, _ = corpus_world(tmp_path)
    out = subprocess.run([sys.executable, "-S", "-c", CODE], env={**env, "PYTHONPATH": str(REPO)}, capture_output=True,
                         input=json.dumps({"session_id": "s-first", "cwd": SHOP, "prompt": PROMPT}).encode(), timeout=60)
    assert "asked with loaded: []" in out.stderr.decode(), out.stderr
    assert "login test fails" in json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
