"""The marks every end-to-end test carries: they run the real CLIs, installed from npm."""

from __future__ import annotations

import pytest

from . import clis

NEEDS_NPM = pytest.mark.skipif(not clis.npm_available(), reason="npm is not installed, so the harness CLIs cannot be")
E2E = [pytest.mark.e2e, NEEDS_NPM]
SLOW_E2E = [pytest.mark.e2e, pytest.mark.slow, NEEDS_NPM]
