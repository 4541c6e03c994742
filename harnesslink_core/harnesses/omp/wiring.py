"""omp's wiring: the pi family's extension (pi_family/wiring.py) in omp's agent dir."""

from __future__ import annotations

from ..pi_family.wiring import PiFamily
from . import reader

OMP = PiFamily(NAME=reader.NAME, home=reader.home, detect_env=None, command_name="omp")

NAME = OMP.NAME
target = OMP.target
detect = OMP.detect
plan_install = OMP.plan_install
plan_uninstall = OMP.plan_uninstall
notes = OMP.notes
