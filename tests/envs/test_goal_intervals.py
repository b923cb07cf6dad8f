"""Interval and conjunction goals: success inside the interval, overshoot lowers Φ, all-of."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from simjudge.envs.goals import AllOfGoal, JointGoal, JointRangeGoal, PlaceGoal
from simjudge.envs.sim_env import SimEnv


def _drawer_env(bottom: float, top: float, goal) -> SimEnv:
    scene = {"objects": [{"name": "Cabinet", "asset": "StorageFurniture-0", "center": [0.75, 0.5],
                          "fixed": True, "joint_init": {"joint_0": bottom, "joint_2": top}}]}
    return SimEnv(scene, goal=goal)


HALFWAY = JointRangeGoal(object="Cabinet", joint="joint_0", link="link_1", low=0.35, high=0.65,
                         direction="close")


def test_a_range_goal_succeeds_inside_and_not_past_it():
    for start, inside in ((0.5, True), (0.9, False), (0.1, False)):
        env = _drawer_env(start, 0.0, HALFWAY)
        try:
            _, info = env.reset(seed=0)
        finally:
            env.close()
        assert info["success"] is inside
        assert info["joint_fraction"] == pytest.approx(start, abs=0.02)
        if start == 0.1:  # closed too far: overshoot past `low`, progress falls
            assert info["overshoot"] == pytest.approx(0.25, abs=0.02)
        assert (info["progress"] == 1.0) is inside


def test_range_progress_falls_again_past_the_interval():
    facts = {"success": False, "is_grasped": True, "holds_part": True, "distance_to_link": 0.0,
             "approach": 1.0}
    phis = [HALFWAY.progress({**facts, "joint_progress": p}) for p in (0.0, 0.5, 0.99)]
    assert phis == sorted(phis) and phis[-1] < 1.0
    with pytest.raises(ValidationError, match="above high"):
        JointRangeGoal(object="A", joint="j", link="l", low=0.7, high=0.2)


def test_all_of_needs_every_sub_goal_and_averages_progress():
    bottom = JointGoal(object="Cabinet", joint="joint_0", link="link_1", threshold=0.6)
    top = JointGoal(object="Cabinet", joint="joint_2", link="link_3", threshold=0.6)
    both = AllOfGoal(goals=(bottom, top))
    env = _drawer_env(0.8, 0.0, both)
    try:
        _, info = env.reset(seed=0)
    finally:
        env.close()
    assert info["g0.success"] and not info["g1.success"] and not info["success"]
    assert info["goals_done"] == 1.0
    assert 0.5 <= info["progress"] < 1.0  # one of two done
    env = _drawer_env(0.8, 0.8, both)
    try:
        _, info = env.reset(seed=0)
    finally:
        env.close()
    assert info["success"] and info["progress"] == 1.0


def test_goals_round_trip_through_json():
    both = AllOfGoal(goals=(HALFWAY, PlaceGoal(object="Cube", target="Box")))
    assert AllOfGoal.model_validate_json(both.model_dump_json()) == both
