"""Issue 5 with the real `codex` CLI: install.py wires it, turns are banked and recalled, uninstall.py restores."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from . import clis
from .fake_model import FakeModelServer
from .harnesses import Sandbox, new_sandbox, remove_sandbox
from .install_flow import prove_install

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,
    pytest.mark.skipif(not clis.npm_available(), reason="npm is not installed, so the harness CLIs cannot be"),
]


@pytest.fixture
def sandbox() -> Iterator[Sandbox]:
    with FakeModelServer() as server:
        box = new_sandbox(server)
        try:
            yield box
        finally:
            remove_sandbox(box)


def test_install_banks_and_recalls_through_codex(sandbox: Sandbox) -> None:
    prove_install("codex", sandbox)
