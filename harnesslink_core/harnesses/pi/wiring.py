"""pi's wiring: the pi family's extension (pi_family/wiring.py) in pi's agent dir."""

from __future__ import annotations

from ..pi_family.wiring import PiFamily
from . import reader

PI = PiFamily(NAME=reader.NAME, home=reader.home, detect_env="PI_CODING_AGENT_DIR", command_name="pi")

NAME = PI.NAME
target = PI.target
detect = PI.detect
plan_install = PI.plan_install
plan_uninstall = PI.plan_uninstall
notes = PI.notes
