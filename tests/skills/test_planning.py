"""Motion planning: validity checking, state preservation, determinism, obstacles, failures."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from simjudge.envs.backends import BASE_LINK
from simjudge.skills import collision as collision_mod
from simjudge.skills.collision import CollisionChecker, preserved_state
from simjudge.skills.planning import (
    MotionPlanner,
    OMPLNotInstalledError,
    PlannerConfig,
    import_ompl,
    interpolate_path,
)
from simjudge.tasks.spec import make_task_env


@pytest.fixture(scope="module")
def drawer_env():
    env = make_task_env("OpenDrawer-v0")
    yield env
    env.close()


def _direct_collision(env, q, margin: float, self_margin: float) -> bool:
    """Brute force with plain backend queries: every arm link against every other body and
    every non-adjacent arm link pair, no boxes, no caches."""
    backend, robot = env.backend, env.scene.robot
    backend.reset_joint_states(robot.body, robot.arm_joints, q)
    backend.update_collisions()
    for body in backend.body_handles():
        if body == robot.body:
            continue
        for c in backend.closest_points(robot.body, body, margin):
            if c.link_a != BASE_LINK and c.distance < margin:
                return True
    infos = backend.joint_infos(robot.body)
    shaped = [k for k in range(BASE_LINK, len(infos)) if backend.collision_shapes(robot.body, k)]
    for a, b in collision_mod._self_collision_pairs(infos, shaped):
        for c in backend.closest_points(robot.body, robot.body, self_margin, link_a=a, link_b=b):
            if c.distance < self_margin:
                return True
    return False


def test_checker_agrees_with_direct_queries(drawer_env):
    env = drawer_env
    env.reset()
    robot = env.scene.robot
    rng = np.random.default_rng(3)
    home = robot.arm_qpos().copy()
    configs = [home, np.array([0.0, 1.6, 0.0, -0.3, 0.0, 1.2, 0.0])]  # free; into the table
    configs += list(np.clip(home + rng.normal(0, 1.0, (60, 7)), robot.lower, robot.upper))
    verdicts = []
    with preserved_state(env.backend):
        checker = CollisionChecker(env.scene)
        for q in configs:
            hit = checker.first_collision(q)
            direct = _direct_collision(env, q, checker.margin, checker.self_margin)
            assert (hit is not None) == direct, (q, hit)
            verdicts.append(hit is not None)
    assert not verdicts[0] and verdicts[1]
    assert 5 < sum(verdicts) < len(verdicts)  # both kinds of configuration were exercised


def test_planning_never_changes_the_simulation():
    envs = [make_task_env("OpenDrawer-v0") for _ in range(2)]
    for env in envs:
        for _ in range(3):
            env.step(np.array([0.3, 0.2, -0.2, 0.0, 0.0, 0.0, -1.0]))
    env, twin = envs
    before = env.get_state()
    planner = MotionPlanner(env.scene, PlannerConfig(seed=4))
    assert planner.plan_to_pose([0.0, 0.25, 0.35], None).success
    assert not planner.is_valid(np.array([0.0, 1.6, 0.0, -0.3, 0.0, 1.2, 0.0]))
    assert env.get_state() == before == twin.get_state()
    # and the future is unchanged too: the same actions give bit-identical observations
    action = np.array([0.5, 0.0, 0.2, 0.0, 0.0, 0.0, -1.0])
    for _ in range(5):
        np.testing.assert_array_equal(env.step(action)[0], twin.step(action)[0])
    for e in envs:
        e.close()


def _wall_env():
    """A drawer scene with a static wall between the arm's home and a target to its left."""
    env = make_task_env("OpenDrawer-v0")
    env.backend.add_box((0.25, 0.01, 0.2), (-0.35, 0.18, 0.2))
    return env, np.array([-0.35, 0.35, 0.15])


def test_plan_around_an_obstacle_is_valid_everywhere():
    env, target = _wall_env()
    start = env.scene.robot.arm_qpos().copy()
    planner = MotionPlanner(env.scene, PlannerConfig(planner="rrtconnect", seed=2))
    result = planner.plan_to_pose(target, None)
    assert result.success, result.reason
    straight = interpolate_path(np.stack([start, result.goal]), 0.02)
    with preserved_state(env.backend):
        checker = CollisionChecker(env.scene)
        assert any(
            checker.first_collision(q) is not None for q in straight
        )  # the wall is in the way
        assert all(checker.first_collision(q) is None for q in result.path)
    np.testing.assert_allclose(result.path[0], start)
    np.testing.assert_allclose(result.path[-1], result.goal)
    assert np.max(np.abs(np.diff(result.path, axis=0))) <= PlannerConfig().max_joint_step + 1e-9
    env.close()


@pytest.mark.parametrize("planner", ["bitstar", "rrtconnect"])
def test_same_seed_same_path(planner):
    env, target = _wall_env()
    paths = [
        MotionPlanner(env.scene, PlannerConfig(planner=planner, seed=7))
        .plan_to_pose(target, None)
        .path
        for _ in range(2)
    ]
    assert len(paths[0]) > 2
    np.testing.assert_array_equal(paths[0], paths[1])
    env.close()


def test_unreachable_pose_returns_a_reason(drawer_env):
    env = drawer_env
    env.reset()
    before = env.get_state()
    result = MotionPlanner(env.scene, PlannerConfig(ik_tries=15)).plan_to_pose(
        [1.5, 0.0, 0.3], None
    )
    assert not result.success
    assert "no collision-free IK solution" in result.reason
    assert result.planning_time_s > 0 and result.ik_tries == 15 and len(result.path) == 0
    assert env.get_state() == before


def test_goal_in_collision_returns_a_reason(drawer_env):
    drawer_env.reset()
    planner = MotionPlanner(drawer_env.scene, PlannerConfig(attempts=1))
    result = planner.plan(np.array([0.0, 1.6, 0.0, -0.3, 0.0, 1.2, 0.0]))
    assert not result.success and "goal configuration is invalid" in result.reason
    assert "StorageFurniture/link_0" in result.reason or "table" in result.reason


def test_start_in_collision_is_left_by_a_retreat(drawer_env):
    env = drawer_env
    env.reset()
    robot = env.scene.robot
    pos, orn = (v.copy() for v in robot.ee_pose())
    with preserved_state(env.backend):  # finger tips pushed 1 cm into the table
        for _ in range(10):
            q_start = robot.solve_ik(np.array([pos[0], pos[1], 0.0]), orn)
            env.backend.reset_joint_states(robot.body, robot.arm_joints, q_start)
    planner = MotionPlanner(env.scene, PlannerConfig(seed=1))
    assert "vs table" in planner.first_collision(q_start).describe(planner._names())
    result = planner.plan_to_pose(pos, orn, start=q_start)
    assert result.success, result.reason
    assert result.details.get("escaped_start")
    np.testing.assert_allclose(result.path[0], q_start)


def test_start_pushed_past_a_joint_limit_first_moves_back_inside(drawer_env):
    env = drawer_env
    env.reset()
    robot = env.scene.robot
    pos, orn = (v.copy() for v in robot.ee_pose())
    q_start = robot.arm_qpos().copy()
    q_start[5] = robot.upper[5] + 0.08  # as a hard push on a handle leaves the wrist
    result = MotionPlanner(env.scene, PlannerConfig(seed=1)).plan_to_pose(pos, orn, start=q_start)
    assert result.success, result.reason
    np.testing.assert_allclose(result.path[0], q_start)
    excess = np.maximum(result.path - robot.upper, 0.0).max(axis=1)
    assert (np.diff(excess) <= 1e-9).all() and excess[-1] == 0.0  # back inside, then stays
    q_start[5] = robot.upper[5] + 0.5
    far = MotionPlanner(env.scene, PlannerConfig(seed=1)).plan_to_pose(pos, orn, start=q_start)
    assert not far.success and "outside the joint limits" in far.reason


def test_config_is_checked():
    with pytest.raises(ValueError, match="bitstar"):
        PlannerConfig(planner="prm")
    with pytest.raises(ValueError, match="time_limit_s"):
        PlannerConfig(time_limit_s=0)


def test_interpolation_bounds_the_joint_step():
    path = interpolate_path(np.array([[0.0] * 7, [1.0] + [0.0] * 6, [1.0, 0.5] + [0.0] * 5]), 0.1)
    np.testing.assert_array_equal(path[0], np.zeros(7))
    np.testing.assert_allclose(path[-1], [1.0, 0.5, 0, 0, 0, 0, 0])
    assert np.max(np.abs(np.diff(path, axis=0))) <= 0.1 + 1e-12
    assert len(path) == 1 + 10 + 5


def test_missing_ompl_names_the_extra(monkeypatch, drawer_env):
    monkeypatch.setitem(sys.modules, "ompl", None)
    with pytest.raises(OMPLNotInstalledError, match=r"pip install simjudge\[ompl\]"):
        import_ompl()
    with pytest.raises(ImportError, match=r"simjudge\[ompl\]"):
        MotionPlanner(drawer_env.scene)
