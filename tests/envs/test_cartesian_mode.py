"""SimEnv's ``cartesian_position`` action mode on the real PyBullet and MuJoCo backends."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from simjudge.envs.action_modes import (
    ActionModeError,
    cartesian_step_pose,
    current_pose,
    pose_of_quat,
    quat_of_rpy,
)
from simjudge.envs.errors import SimjudgeError
from simjudge.envs.sim_env import SUPPORTED_ACTION_MODES, SimEnv
from simjudge.envs.transforms import quat_angle_between

SCENE = {"objects": [{"name": "Cube", "asset": "Cube-0", "center": [0.3, 0.4]}]}
BACKENDS = ["pybullet", "mujoco"]


@pytest.fixture(params=BACKENDS)
def env(request):
    env = SimEnv(SCENE, backend=request.param, action_mode="cartesian_position", horizon=500)
    yield env
    env.close()


def _observed_pose(env: SimEnv, obs: np.ndarray) -> np.ndarray:
    """``cartesian_position`` as a policy reads it from the float32 observation."""
    layout = env.observation_layout
    return np.concatenate([obs[layout["eef_pos"]], pose_of_quat(obs[layout["eef_quat"]])])


def _reachable_targets(env: SimEnv, n: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Poses of the suction point at random joint configurations near home (so reachable)."""
    rng = np.random.default_rng(seed)
    env.reset(seed=0)
    home = env.scene.robot.arm_qpos().copy()
    targets = []
    for _ in range(n):
        env.scene.robot.reset_home(home + rng.uniform(-0.35, 0.35, 7))
        pos, orn = env.scene.robot.ee_pose()
        targets.append((np.asarray(pos, dtype=float).copy(), np.asarray(orn, dtype=float).copy()))
    return targets


def test_mode_is_supported_with_a_7d_space(env):
    assert "cartesian_position" in SUPPORTED_ACTION_MODES
    check_env(env, skip_render_check=True)
    assert env.action_space.shape == (7,)
    obs, _ = env.reset(seed=0)
    assert env.action_space.contains(np.append(_observed_pose(env, obs), 1.0).astype(np.float32))
    with env.using_action_mode("delta_ee"):
        assert env.action_space.shape == (7,) and env.action_space.high[0] == 1.0
    assert env.action_mode == "cartesian_position"


def test_reaches_sampled_reachable_targets(env):
    for k, (pos, orn) in enumerate(_reachable_targets(env, 5, seed=1)):
        env.reset(seed=0)
        start = np.asarray(env.scene.robot.ee_pose()[0], dtype=float)
        assert np.linalg.norm(start - pos) > 0.03, "the sampled target is away from the start"
        action = np.concatenate([pos, pose_of_quat(orn), [0.0]])
        last = start
        for _ in range(40):
            env.step(action)
            now = np.asarray(env.scene.robot.ee_pose()[0], dtype=float)
            # bounded like the delta mode: at most max_translation per axis (+ tracking slack)
            assert np.max(np.abs(now - last)) < env.max_translation + 0.01
            last = now
        reached, turned = env.scene.robot.ee_pose()
        assert np.linalg.norm(np.asarray(reached) - pos) < 0.005, f"target {k}"
        assert quat_angle_between(np.asarray(turned), orn) < 0.02, f"target {k}"


def test_far_target_takes_bounded_steps(env):
    env.reset(seed=0)
    start = current_pose(env)
    target = start + [0.15, 0.0, 0.0, 0.0, 0.0, 0.0]
    env.step(np.append(target, 0.0))
    env.step(np.append(target, 0.0))
    moved = current_pose(env)[0] - start[0]
    assert 0.02 < moved <= 2 * env.max_translation + 0.005  # a bounded step, not a jump
    for _ in range(25):
        env.step(np.append(target, 0.0))
    assert abs(current_pose(env)[0] - target[0]) < 0.005


def test_observed_cartesian_position_holds_still(env):
    obs, _ = env.reset(seed=0)
    layout = env.observation_layout
    start_pos, start_q = obs[layout["eef_pos"]].copy(), obs[layout["arm_qpos"]].copy()
    np.testing.assert_allclose(_observed_pose(env, obs), current_pose(env), atol=1e-5)
    for _ in range(30):  # act(obs cartesian) = stay where you are
        obs, *_ = env.step(np.append(_observed_pose(env, obs), 0.0))
    assert np.linalg.norm(obs[layout["eef_pos"]] - start_pos) < 1e-3
    assert np.max(np.abs(obs[layout["arm_qpos"]] - start_q)) < 5e-3
    assert env.elapsed_steps == 30


def test_rpy_round_trip_and_step_bounds():
    rng = np.random.default_rng(0)
    for _ in range(20):
        rpy = rng.uniform([-3, -1.4, -3], [3, 1.4, 3])
        np.testing.assert_allclose(pose_of_quat(quat_of_rpy(rpy)), rpy, atol=1e-9)
    here = quat_of_rpy([0.0, 0.0, 0.0])
    pos, orn = cartesian_step_pose(np.zeros(3), here, np.array([0.5, 0.1, 0, 0, 0, 1.0, 0]),
                                   0.03, 0.05)
    np.testing.assert_allclose(pos, [0.03, 0.006, 0.0])  # direction kept, largest axis capped
    assert quat_angle_between(orn, here) == pytest.approx(0.05)


def test_suction_follows_the_last_entry(env):
    obs, _ = env.reset(seed=0)
    pose = _observed_pose(env, obs)
    env.step(np.append(pose, 0.9))
    assert env.scene.robot.suction_on
    env.step(np.append(pose, 0.2))
    assert not env.scene.robot.suction_on


@pytest.mark.parametrize("bad", [np.zeros(6), np.zeros(8), np.zeros((2, 7)),
                                 [0.1, 0.0, 0.5, 0.0, np.nan, 0.0, 0.0],
                                 [0.1, 0.0, np.inf, 0.0, 0.0, 0.0, 0.0], ["x"] * 7])
def test_malformed_actions_are_refused_before_anything_moves(bad):
    env = SimEnv(SCENE, action_mode="cartesian_position")
    try:
        env.reset(seed=0)
        q = env.scene.robot.arm_qpos().copy()
        with pytest.raises(ActionModeError, match="cartesian_position action") as caught:
            env.step(bad)
        assert isinstance(caught.value, SimjudgeError) and isinstance(caught.value, ValueError)
        assert env.elapsed_steps == 0
        np.testing.assert_array_equal(env.scene.robot.arm_qpos(), q)
    finally:
        env.close()
