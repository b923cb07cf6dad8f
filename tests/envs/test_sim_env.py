"""SimEnv: spaces, modes, determinism, snapshots, rendering and recording."""

from __future__ import annotations

import imageio.v3 as iio
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from simjudge.envs.sim_env import SimEnv
from simjudge.envs.sim_state import SimState
from simjudge.envs.wrappers import RecordVideo
from tests.conftest import CABINET_SCENE


def _actions(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    actions = rng.uniform(-1, 1, size=(n, 7)).astype(np.float32)
    actions[:, 6] = np.where(actions[:, 6] > 0.5, 1.0, -1.0)
    return actions


def _run(env, actions, seed=0):
    obs, _ = env.reset(seed=seed)
    trace = [obs]
    for action in actions:
        obs, reward, *_ = env.step(action)
        trace.append(np.append(obs, reward))
    return trace


def test_check_env_passes(cabinet_env):
    check_env(cabinet_env, skip_render_check=True)


def test_same_seed_same_trajectory(cabinet_env):
    actions = _actions(40)
    first = _run(cabinet_env, actions)
    second = _run(cabinet_env, actions)
    other = SimEnv(CABINET_SCENE, goal=cabinet_env.goal)
    third = _run(other, actions)
    other.close()
    for a, b, c in zip(first, second, third, strict=True):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)


def test_state_round_trip_reproduces_continuation(cabinet_env):
    env = cabinet_env
    actions = _actions(30, seed=1)
    env.reset(seed=0)
    for action in actions[:10]:
        env.step(action)
    snap = env.get_state()
    snap = SimState.from_dict(snap.to_dict())  # survives JSON-style round trip
    cont_a = [env.step(a)[0] for a in actions[10:]]
    obs, _ = env.reset(options={"state": snap})
    assert env.elapsed_steps == 10
    cont_b = [env.step(a)[0] for a in actions[10:]]
    env.set_state(snap)
    cont_c = [env.step(a)[0] for a in actions[10:]]
    for a, b, c in zip(cont_a, cont_b, cont_c, strict=True):
        np.testing.assert_array_equal(b, c)
        np.testing.assert_allclose(a, b, atol=1e-3)


def test_observation_layout_covers_the_vector(cabinet_env):
    obs, _ = cabinet_env.reset(seed=0)
    layout = cabinet_env.observation_layout
    covered = sorted((s.start, s.stop) for s in layout.values())
    assert covered[0][0] == 0 and covered[-1][1] == obs.shape[0]
    assert all(a[1] == b[0] for a, b in zip(covered, covered[1:], strict=False))
    assert obs.dtype == np.float32 and np.all(np.isfinite(obs))


def test_dict_obs_mode_has_same_pieces():
    env = SimEnv(CABINET_SCENE, obs_mode="state_dict")
    obs, _ = env.reset(seed=0)
    assert set(obs) == set(env.observation_layout)
    assert env.observation_space.contains(obs)
    env.close()


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"obs_mode": "pixels"}, "obs_mode='pixels' is not supported"),
        ({"reward_mode": "shaped"}, "reward_mode='shaped'"),
        ({"translation_mode": "absolute"}, "translation_mode='absolute'"),
        ({"max_rotation_deg": 10}, "max_rotation_deg"),
        ({"render_mode": "human"}, "render_mode='human'"),
    ],
)
def test_bad_modes_are_rejected(kwargs, fragment):
    with pytest.raises(ValueError, match=fragment):
        SimEnv(CABINET_SCENE, **kwargs)


def test_reward_modes_and_info_keys(cabinet_env):
    env = cabinet_env
    env.reset(seed=0)
    _, reward, terminated, truncated, info = env.step(np.zeros(7, dtype=np.float32))
    for key in ("success", "fail", "progress", "elapsed_steps", "physics_error", "state", "is_grasped"):
        assert key in info
    assert reward == pytest.approx(5.0 * info["progress"])
    assert 0.0 <= info["progress"] <= 1.0
    env.reward_mode = "sparse"
    _, reward, *_ = env.step(np.zeros(7, dtype=np.float32))
    assert reward == 0.0


def test_translation_moves_end_effector(cabinet_env):
    env = cabinet_env
    env.reset(seed=0)
    start = env.view.eef_pose()[0]
    for _ in range(15):
        env.step(np.array([0, 0, 1, 0, 0, 0, -1], dtype=np.float32))
    assert env.view.eef_pose()[0][2] - start[2] > 0.15


def test_direct_translation_reaches_target():
    env = SimEnv(CABINET_SCENE, translation_mode="normalized-direct-translation")
    env.reset(seed=0)
    action = np.array([-0.5, -0.5, 0.0, 0, 0, 0, -1], dtype=np.float32)  # free space
    for _ in range(40):
        env.step(action)
    from simjudge.envs.sim_env import WORKSPACE_HIGH, WORKSPACE_LOW

    target = WORKSPACE_LOW + (action[:3] + 1) / 2 * (WORKSPACE_HIGH - WORKSPACE_LOW)
    np.testing.assert_allclose(env.view.eef_pose()[0], target, atol=0.03)
    env.close()


def test_nonfinite_action_is_rejected(cabinet_env):
    cabinet_env.reset(seed=0)
    with pytest.raises(ValueError, match="non-finite"):
        cabinet_env.step(np.full(7, np.nan, dtype=np.float32))


def test_render_and_record_video(tmp_path):
    env = RecordVideo(SimEnv(CABINET_SCENE, render_mode="rgb_array", horizon=6), tmp_path)
    env.reset(seed=0)
    image = env.render()
    assert image.shape == (240, 320, 3) and image.dtype == np.uint8
    assert image.std() > 5  # not a blank frame
    info = {}
    for _ in range(6):
        *_, info = env.step(np.zeros(7, dtype=np.float32))
    assert info["video_path"].endswith(".mp4")
    video = iio.imread(info["video_path"])
    assert video.shape[0] == 7
    env.close()


def test_depth_and_segmentation(cabinet_env):
    cabinet_env.reset(seed=0)
    result = cabinet_env.render_camera("front", depth=True)
    assert result.depth.shape == result.rgb.shape[:2]
    assert np.all(result.depth > 0)
    bodies = set(np.unique(result.segmentation).tolist())
    assert cabinet_env.scene.objects["Cabinet"].body in bodies
