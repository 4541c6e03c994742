"""The detached index job's marker says it runs for as long as it makes progress: a job filling vectors for longer
than REBUILD_MARKER_STALE (a large backfill's, the encoder's vectors at some 15 entries/s) is not taken for a dead
one, so no second job writes the index beside it, and the first does not delete the second's marker."""

from __future__ import annotations

import subprocess
import threading
import time

import pytest

from harnesslink_core.recall import encoded, index, vectors

STALE = 0.6  # seconds, for the test: the job below makes progress for several times this


def test_a_job_that_makes_progress_keeps_its_marker_fresh(locs, monkeypatch: pytest.MonkeyPatch) -> None:
    index.connect(locs).close()
    monkeypatch.setattr(index, "REBUILD_MARKER_STALE", STALE)
    started: list[list[str]] = []
    monkeypatch.setattr(subprocess, "Popen", lambda argv, **kwargs: started.append(argv))

    filling = threading.Event()

    def slow_fill(conn, *, limit=None, progress=None, newest=False) -> int:
        if limit is not None:  # the refresh's few
            return 0
        filling.set()
        for done in range(8):
            time.sleep(STALE / 2)
            if progress is not None:
                progress(done + 1, 8)
        return 8

    monkeypatch.setattr(vectors, "fill", slow_fill)
    monkeypatch.setattr(encoded, "fill", lambda conn, locs, **kwargs: 0)

    assert index.rebuild_in_background(locs, full=False)  # the backfill's job: its marker made, its process "started"
    marker = started[0][-1]
    job = threading.Thread(target=index._main, args=(["refresh", marker],))
    job.start()
    try:
        assert filling.wait(60)
        time.sleep(STALE * 2.5)  # the job is still filling, well past the marker's staleness
        assert job.is_alive()
        assert not index.rebuild_in_background(locs, full=False), "a second job started beside a live one"
        assert len(started) == 1
    finally:
        job.join()
