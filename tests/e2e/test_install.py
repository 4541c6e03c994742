"""With the real CLIs: install.py wires each harness, a turn is banked by the time the CLI
exits, a new session's request to the model carries that memory, the user's own hooks still run,
and uninstall.py restores the settings (see install_flow.prove_install)."""

from __future__ import annotations

import pytest

from .harnesses import Sandbox
from .install_flow import prove_install
from .marks import SLOW_E2E

pytestmark = SLOW_E2E


@pytest.mark.parametrize("harness", ["claude-code", "codex", "pi", "omp"])
def test_install_banks_and_recalls_through_the_real_cli(harness: str, sandbox: Sandbox) -> None:
    prove_install(harness, sandbox)
