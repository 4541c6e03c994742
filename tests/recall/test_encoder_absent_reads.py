"""With no encoder at the socket, the prompt hook reads nothing it would compare the encoder's answer with: no
socket module, no stamp, no entry vectors (and the same answer as without asking)."""

from __future__ import annotations

import subprocess
import sys

from memory_helpers import REPO, SHOP, corpus_world

from harnesslink_core.recall import encoded, encoder_client
from harnesslink_core.recall.matches import find_matches
from harnesslink_core.store.scope import project_slug

PROMPT = "why did signing in stop working right after 12am? something with the session cookie"


def test_no_socket_is_absent_without_the_stamp_or_a_socket(tmp_path, monkeypatch):
    _, locs = corpus_world(tmp_path)
    read = []
    monkeypatch.setattr(encoder_client, "stamp", lambda: read.append(1) or "x")
    encoding = encoder_client.Encoding(locs, [PROMPT], 30, nearest=["p"], limit=16)
    assert encoding.absent and not encoding.may_answer
    assert encoding.vectors() is None and encoding.nearest() is None
    assert read == []


def test_no_socket_leaves_the_socket_module_unloaded(tmp_path):
    env, locs = corpus_world(tmp_path)
    code = ("import sys\nfrom harnesslink_core.paths import locations\nfrom harnesslink_core.recall import encoder_client\n"
            "e = encoder_client.Encoding(locations(), ['a prompt'], 30)\n"
            "print(e.absent, '_socket' in sys.modules)")
    out = subprocess.run([sys.executable, "-S", "-c", code], env={**env, "PYTHONPATH": str(REPO)}, capture_output=True,
                         text=True, check=True)
    assert out.stdout.split() == ["True", "False"]


def test_an_encoding_that_cannot_answer_reads_no_entry_vectors(tmp_path, monkeypatch):
    _, locs = corpus_world(tmp_path)
    from harnesslink_core.recall import index

    asked = []
    monkeypatch.setattr(encoded, "any_made", lambda conn: asked.append("any_made") or True)
    monkeypatch.setattr(encoded, "vectors_of", lambda conn, ids: asked.append("vectors_of") or {i: [1] * 384 for i in ids})
    projects = [project_slug(SHOP)]
    conn = index.connect(locs)
    try:
        plain = find_matches(conn, PROMPT, projects, session_id="s")
        encoding = encoder_client.Encoding(locs, [PROMPT], 30, nearest=projects, limit=16)
        absent = find_matches(conn, PROMPT, projects, session_id="s", encoding=encoding)
    finally:
        conn.close()
    assert plain.hits, "the corpus answers this prompt"
    assert [h.path for h in absent.hits] == [h.path for h in plain.hits]
    assert asked == []
