"""One harness, one id: every adapter is named by its id and satisfies its protocol (test_one_registry.py: every
list of ids is the registry's)."""

from __future__ import annotations

import inspect
import subprocess
import sys
import typing

import pytest

from harnesslink_core.harnesses import registry
from harnesslink_core.harnesses.base import Harness, all_readable
from harnesslink_core.paths import locations
from harnesslink_core.sessions import base as sessions
from harnesslink_core.sessions.base import SessionSource
from harnesslink_core.wiring.base import Wiring
from harnesslink_core.wiring.installer import WIRINGS


def test_every_registry_covers_the_same_ids() -> None:
    assert set(registry.READ_ONLY) < set(registry.IDS)
    assert sessions.HARNESSES == registry.WIRED
    assert tuple(WIRINGS) == registry.WIRED


@pytest.mark.parametrize("name", registry.IDS)
def test_each_reader_is_named_by_its_id_and_satisfies_the_protocol(name: str) -> None:
    harness = registry.get(name)
    assert harness.NAME == name
    assert_satisfies(harness, Harness)
    assert registry.available()[name] is harness


@pytest.mark.parametrize("name", registry.WIRED)
def test_each_session_source_is_named_by_its_id_and_satisfies_the_protocol(name: str) -> None:
    source = sessions.source(name)
    assert source.NAME == name
    assert_satisfies(source, SessionSource)


@pytest.mark.parametrize("name", registry.WIRED)
def test_each_wiring_is_named_by_its_id_and_satisfies_the_protocol(name: str) -> None:
    assert WIRINGS[name].NAME == name
    assert_satisfies(WIRINGS[name], Wiring)


@pytest.mark.parametrize("name", registry.WIRED)
def test_install_wires_the_harness_where_its_reader_reads(tmp_path, name: str) -> None:
    locs = locations({"HOME": str(tmp_path), "PATH": "", "PI_CONFIG_DIR": ".omp-dev"})  # omp's moved root
    home = registry.get(name).home(locs)
    assert WIRINGS[name].target(locs).is_relative_to(home)
    assert WIRINGS[name].detect(locs) is None
    home.mkdir(parents=True)
    assert WIRINGS[name].detect(locs) is not None


def test_a_read_only_harness_has_no_wiring_and_no_sessions() -> None:
    for name in registry.READ_ONLY:
        assert name not in WIRINGS
        with pytest.raises(KeyError):
            sessions.source(name)


def test_the_default_unreadable_reports_nothing(tmp_path) -> None:
    locs = locations({"HOME": str(tmp_path)})
    defaults = [name for name in registry.IDS if registry.get(name).unreadable is all_readable]
    assert defaults == ["claude-code", "pi", "omp"]
    assert all(registry.get(name).unreadable(locs) is None for name in defaults)


def test_the_registry_imports_no_reader_until_one_is_asked_for() -> None:
    code = ("import sys\nfrom harnesslink_core.harnesses import registry\nbefore = set(sys.modules)\n"
            "registry.get('pi')\nprint(sorted(m for m in before if m.startswith('harnesslink_core.harnesses.')))\n"
            "print(sorted(m for m in set(sys.modules) - before if m.startswith('harnesslink_core.harnesses.')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out == ["['harnesslink_core.harnesses.registry']",
                   "['harnesslink_core.harnesses.base', 'harnesslink_core.harnesses.pi', 'harnesslink_core.harnesses.pi.reader', "
                   "'harnesslink_core.harnesses.pi_family', 'harnesslink_core.harnesses.pi_family.reader']"]


def assert_satisfies(adapter: object, protocol: type) -> None:
    """What a type checker would hold a module to: every member, attributes of their type, methods with the
    protocol's parameters."""
    for name, kind in typing.get_type_hints(protocol).items():
        assert isinstance(getattr(adapter, name), kind), (adapter, name)
    methods = {name: value for name, value in vars(protocol).items()
               if callable(value) and not name.startswith("_")}
    assert methods, protocol
    for name, method in methods.items():
        implementation = getattr(adapter, name, None)
        assert callable(implementation), (adapter, name)
        wanted = list(inspect.signature(method).parameters)[1:]  # without `self`
        assert list(inspect.signature(implementation).parameters) == wanted, (adapter, name)
