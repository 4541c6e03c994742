"""What every end-to-end test shares: a fake model server and a sandboxed HOME around it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .fake_model import FakeModelServer
from .harnesses import Sandbox, new_sandbox, remove_sandbox


@pytest.fixture
def sandbox() -> Iterator[Sandbox]:
    with FakeModelServer() as server:
        box = new_sandbox(server)
        try:
            yield box
        finally:
            remove_sandbox(box)
