"""Public phase switching of the scripted oracle."""

from __future__ import annotations

import pytest

from simjudge.skills.scripted import PHASES, ScriptedPolicy


def test_switch_phase_is_public_and_checked(cabinet_env):
    cabinet_env.reset(seed=0)
    policy = ScriptedPolicy(cabinet_env)
    assert policy.phase.name == "approach"
    policy.switch_phase("actuate")
    assert policy.phase.name == "actuate" and policy.phase.steps == 0
    with pytest.raises(ValueError, match="unknown phase 'grab'"):
        policy.switch_phase("grab")
    assert set(PHASES) >= {"approach", "contact", "actuate", "lift", "release"}
