"""Public phase switching of the scripted oracle."""

from __future__ import annotations

import pytest

from simjudge.envs.backends import available_backends
from simjudge.skills.scripted import PHASES, ScriptedPolicy
from simjudge.tasks.spec import make_task_env


def test_switch_phase_is_public_and_checked(cabinet_env):
    cabinet_env.reset(seed=0)
    policy = ScriptedPolicy(cabinet_env)
    assert policy.phase.name == "approach"
    policy.switch_phase("actuate")
    assert policy.phase.name == "actuate" and policy.phase.steps == 0
    with pytest.raises(ValueError, match="unknown phase 'grab'"):
        policy.switch_phase("grab")
    assert set(PHASES) >= {"approach", "contact", "actuate", "lift", "release"}


@pytest.mark.parametrize("backend", available_backends())
def test_a_part_is_let_go_once_it_is_in_the_container(backend):
    """PutBreadInBowl: the bowl does not give way, so the drop height is never reached.

    The oracle lets go as soon as the bread is in the bowl (or, for ``on`` goals, where
    lowering stalls with the part placed), instead of pressing on until the phase times out:
    that overloaded MuJoCo's suction and flung the bread out, and on SAPIEN, whose compliant
    suction drive lets the hand sink on, squeezed the bread out over the rim.
    """
    env = make_task_env("PutBreadInBowl-v0", backend=backend)
    try:
        policy = ScriptedPolicy(env, seed=0)
        obs, info = env.reset(seed=0)
        lowering, placed_at_release = 0, None
        for _ in range(env.horizon):
            lowered = policy.phase.name == "lower"
            obs, _, terminated, truncated, info = env.step(policy(obs))
            lowering += lowered
            if lowered and policy.phase.name == "release" and placed_at_release is None:
                placed_at_release = info["is_placed"]
            if terminated or truncated:
                break
        assert info["success"] and not info["suction_lost"]
        assert placed_at_release  # let go with the bread in the bowl
        assert lowering < 40  # released before the lowering phase's time-out
    finally:
        env.close()
