"""One process at a time fills the index's vectors: after a large backfill the detached index job fills them for
minutes, and each background drain a hook starts meanwhile (every PASS_INTERVAL) ends with a fill of its own;
without a turn each, every one of them would compute (and ask the encoder for) the same newest entries."""

from __future__ import annotations

import threading
import time

import pytest

from harnesslink_core.recall import encoded, index, vectors


def test_a_second_fill_leaves_the_vectors_to_the_one_running(locs, monkeypatch: pytest.MonkeyPatch) -> None:
    index.connect(locs).close()
    active: list[int] = []
    most = [0]
    started = threading.Event()

    def slow_fill(conn, *, limit=None, progress=None, newest=False) -> int:
        active.append(1)
        most[0] = max(most[0], len(active))
        started.set()
        time.sleep(1.0)
        active.pop()
        return 5

    monkeypatch.setattr(vectors, "fill", slow_fill)
    monkeypatch.setattr(encoded, "fill", lambda conn, locs, **kwargs: 0)

    first = threading.Thread(target=index.fill_vectors, args=(locs,))
    first.start()
    try:
        assert started.wait(30)
        assert index.fill_vectors(locs) == 0  # the running fill makes them
    finally:
        first.join()
    assert most[0] == 1, "two fills computed the same vectors at once"
    assert index.fill_vectors(locs) == 5  # once it is done, the next fill runs
