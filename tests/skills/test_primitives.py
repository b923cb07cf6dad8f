"""RoboGen primitives executed physically: grasp, release, move, approach, failures."""

from __future__ import annotations

import numpy as np
import pytest

from simjudge.envs.state_api import UnknownNameError, check_grasped
from simjudge.skills.planning import PlannerConfig
from simjudge.skills.primitives import (
    PrimitiveConfig,
    approach_object_link,
    grasp_object,
    grasp_object_link,
    move_to_pose,
    release_grasp,
)
from simjudge.tasks.spec import make_task_env


@pytest.fixture
def drawer_env():
    env = make_task_env("OpenDrawer-v0")
    yield env
    env.close()


def test_grasp_drawer_handle_attaches_to_that_link(drawer_env):
    env = drawer_env
    obj = env.scene.objects["StorageFurniture"]
    result = grasp_object_link(env, "StorageFurniture", "link_1")
    assert result.success, result.reason
    att = env.scene.robot.attachment
    assert (att.body, att.link) == (obj.body, obj.link_index["link_1"])
    assert check_grasped(env.view, "StorageFurniture", "link_1")
    assert result.grasped == ("StorageFurniture", "link_1")
    assert result.final_state.grasped == ("StorageFurniture", "link_1")
    assert result.steps == env.elapsed_steps > 0
    assert result.planning_time_s > 0 and result.attempts == 1
    # the grasp is real: pulling opens the drawer (8 steps stay short of its 0.207 m stop,
    # where further pulling overloads the weld and suction lets go, as it should)
    for _ in range(8):
        env.step(np.array([-1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]))
    assert env.view.joint_value("StorageFurniture", "joint_0") > 0.05
    assert check_grasped(env.view, "StorageFurniture", "link_1")


def test_release_lets_go(drawer_env):
    env = drawer_env
    assert grasp_object_link(env, "StorageFurniture", "link_1").success
    steps = env.elapsed_steps
    result = release_grasp(env)
    assert result.success and result.grasped is None
    assert env.scene.robot.attachment is None and not env.scene.robot.suction_on
    assert result.steps == env.elapsed_steps - steps == PrimitiveConfig().release_steps
    assert release_grasp(env).success  # releasing nothing is fine


def test_grasp_and_carry_a_rigid_object():
    env = make_task_env("PutCubeInBox-v0")
    result = grasp_object(env, "Cube")
    assert result.success, result.reason
    z0 = env.view.base_pose("Cube")[0][2]
    pos, orn = env.view.eef_pose()
    moved = move_to_pose(env, pos + np.array([0.0, 0.1, 0.15]), orn)
    assert moved.success, moved.reason
    assert env.view.base_pose("Cube")[0][2] > z0 + 0.12  # the held cube came along
    np.testing.assert_allclose(env.view.eef_pose()[0], pos + np.array([0.0, 0.1, 0.15]), atol=0.015)
    env.close()


def test_unknown_names_raise_with_the_valid_names(drawer_env):
    with pytest.raises(UnknownNameError, match="StorageFurniture"):
        grasp_object_link(drawer_env, "Cabinet", "link_1")
    with pytest.raises(UnknownNameError, match=r"link_0.*link_1|Did you mean"):
        grasp_object_link(drawer_env, "StorageFurniture", "link_7")
    with pytest.raises(UnknownNameError):
        approach_object_link(drawer_env, "StorageFurniture", "handle")
    assert drawer_env.elapsed_steps == 0


def test_unreachable_pose_is_a_result_with_a_reason(drawer_env):
    env = drawer_env
    before = env.get_state()
    config = PrimitiveConfig(planner=PlannerConfig(ik_tries=10))
    result = move_to_pose(env, [1.5, 0.0, 0.3], None, config=config)
    assert not result.success and "no collision-free IK solution" in result.reason
    assert result.steps == 0 and env.elapsed_steps == 0
    assert result.final_state == before
    frames, final_state = result  # RoboGen's `rgbs, final_state = ...`
    assert frames == [] and final_state == before
    with pytest.raises(ValueError, match="quaternion"):
        move_to_pose(env, [0.0, 0.0, 0.4], [1.0, 0.0])


def test_approach_stops_short_and_records_frames(drawer_env):
    env = drawer_env
    config = PrimitiveConfig(record=True, record_every=20)
    result = approach_object_link(env, "StorageFurniture", "link_1", config=config)
    assert result.success, result.reason
    assert env.scene.robot.attachment is None
    frames, state = result
    assert len(frames) >= 2 and frames[0].ndim == 3 and frames[0].shape[2] == 3
    assert state.elapsed_steps == result.steps
    tips = env.view.eef_pose()[0]
    lo, hi = env.view.aabb("StorageFurniture", "link_1")
    gap = np.linalg.norm(np.maximum(np.maximum(lo - tips, tips - hi), 0.0))
    assert 0.025 < gap < 0.08  # pre-contact: the 3 cm standoff plus the finger tips
