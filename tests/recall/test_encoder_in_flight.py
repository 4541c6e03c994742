"""Two texts in flight (`encoder.Model.encode`): a run that fails, or a signal that ends the server, stops the
other thread too; it takes no more texts of a request that has failed (hooks wait behind it)."""

from __future__ import annotations

import threading
import time

import pytest

pytest.importorskip("onnxruntime")

from harnesslink_core.recall import encoder  # noqa: E402


class _FailingFirst:
    """A session whose first run fails (`failure`); every other takes a few ms and gives a vector of ones."""

    def __init__(self, np, failure: BaseException) -> None:
        self.np, self.failure = np, failure
        self.calls = 0
        self.lock = threading.Lock()

    def run(self, names, feeds):
        with self.lock:
            self.calls += 1
            first = self.calls == 1
        if first:
            time.sleep(0.02)  # the other thread has taken its first text
            raise self.failure
        time.sleep(0.005)
        return [self.np.ones((1, encoder.client.DIMS), dtype=self.np.float32)]


@pytest.mark.skipif(encoder.IN_FLIGHT < 2, reason="one text at a time on one core")
@pytest.mark.parametrize("failure", [RuntimeError("a failing run"), SystemExit(0)])
def test_a_failing_run_stops_the_other_thread_taking_texts(failure):
    model = encoder.Model()
    session = _FailingFirst(model._np, failure)
    model._session = session
    with pytest.raises(type(failure)):
        model.encode([f"text number {n}" for n in range(64)])
    assert session.calls <= 1 + 2 * encoder.IN_FLIGHT, f"{session.calls} runs of 64 texts after the first failed"
