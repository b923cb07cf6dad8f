"""Training envs run their inner env with ``info_mode="minimal"``: same episodes as ``full``."""

from __future__ import annotations

import numpy as np

from simjudge.skills.subtask_env import SubtaskEnv, SubtaskSpec, make_subtask_env
from simjudge.tasks.spec import load_task

REACH = """
def _compute_reward(self):
    eef_pos = get_eef_pos(self)[0]
    handle = get_link_state(self, "StorageFurniture", "link_1")
    distance = np.linalg.norm(eef_pos - handle)
    return -distance, distance < 0.12
"""


def _spec() -> SubtaskSpec:
    scene = load_task("OpenDrawer-v0").scene.model_dump(mode="json", by_alias=True)
    return SubtaskSpec(scene=scene, reward_code=REACH, horizon=12)


def _episodes(env: SubtaskEnv, actions: np.ndarray) -> list[tuple]:
    steps: list[tuple] = []
    obs, info = env.reset(seed=0)
    steps.append((obs, info))
    for action in actions:
        obs, reward, terminated, truncated, info = env.step(action)
        steps.append((obs, reward, terminated, truncated, info))
        if terminated or truncated:
            obs, info = env.reset()
            steps.append((obs, info))
    return steps


def test_minimal_inner_info_gives_the_same_episodes():
    actions = np.random.default_rng(0).uniform(-1, 1, size=(30, 6)).astype(np.float32)
    runs = {}
    for mode in ("full", "minimal"):
        env = SubtaskEnv(_spec(), info_mode=mode)
        assert env.sim.info_mode == mode
        runs[mode] = _episodes(env, actions)
        env.close()
    assert len(runs["full"]) == len(runs["minimal"]) > len(actions)
    for full, minimal in zip(runs["full"], runs["minimal"], strict=True):
        assert np.array_equal(full[0], minimal[0])
        assert full[1:] == minimal[1:]


def test_the_vector_env_entry_point_builds_minimal_inner_envs():
    env = make_subtask_env(_spec().to_dict())
    try:
        assert env.sim.info_mode == "minimal"
        _, info = env.reset(seed=0)
        assert set(info) == {"is_success", "subtask_reward", "physics_error", "elapsed_steps"}
    finally:
        env.close()
