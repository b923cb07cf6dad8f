"""Episodes equal recorded ones on every backend (guards the env-step speed work).

Why: the env step is tuned for speed (cached index arrays, batched reads, memoised
geometry). None of that may change what an episode contains, so a recorded episode per
backend (observations, rewards, flags and the whole ``info`` of every step, taken before
the tuning) must be reproduced: on the machine that recorded it bit for bit; on another CPU
or library build to the last bits of a float (float32 observations within one ulp, float64
rewards and info values within a relative 1e-9; every flag, key and non-float value
exactly; why: ``tests/float_trees.py``). The episodes drive the arm with random delta
actions in both translation modes, and grip, carry and drop a cube with suction, so the IK,
the observation, the goal facts and the suction paths all run.

Regenerate (only when an episode is meant to change, and say why in the commit):
``python -m tests.envs.test_step_speed_trajectory --write [backend ...]`` (all by default).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from simjudge.envs.backends import available_backends
from simjudge.envs.goals import JointGoal, PlaceGoal
from simjudge.envs.sim_env import SimEnv
from tests.float_trees import assert_same

DATA = Path(__file__).parent / "backends" / "data"
SCENE = {
    "objects": [
        {"name": "Cabinet", "asset": "StorageFurniture-0", "center": [0.5, 0.5]},
        {"name": "Cube", "asset": "Cube-0", "center": [0.2, 0.15]},
    ]
}
RECORDED = ("pybullet", "mujoco", "sapien")


def _actions(env: SimEnv, rng: np.random.Generator) -> list[tuple[np.ndarray, str]]:
    """Random moves in both translation modes, then a suction pick of the cube and a drop."""
    steps: list[tuple[np.ndarray, str]] = []
    for k in range(60):
        action = rng.uniform(-1.2, 1.2, size=7)  # a little outside [-1, 1]: clipping runs too
        action[6] = 1.0 if 20 <= k < 30 else -1.0
        steps.append((action, "delta-translation"))
    for _ in range(15):
        steps.append((rng.uniform(-1, 1, size=7) * [1, 1, 1, 0, 0, 0, 0] - [0, 0, 0, 0, 0, 0, 1],
                      "normalized-direct-translation"))
    return steps


def record(backend: str) -> dict[str, object]:
    """Run the recorded episodes on ``backend``; return observations, rewards, flags and infos."""
    env = SimEnv(SCENE, backend=backend, horizon=10**6)
    tree = env.scene.objects["Cabinet"].tree
    joint = tree.movable_joints[0]
    env.goal = JointGoal(object="Cabinet", joint=joint.name, link=joint.child, direction="open")
    rng = np.random.default_rng(7)
    observations, rewards, flags, infos = [], [], [], []

    def keep(obs, reward, terminated, truncated, info) -> None:
        observations.append(np.asarray(obs, dtype=np.float32))
        rewards.append(float(reward))
        flags.append((bool(terminated), bool(truncated)))
        infos.append(json.dumps(info, sort_keys=True, default=repr))

    try:
        obs, info = env.reset(seed=3)
        keep(obs, 0.0, False, False, info)
        for action, mode in _actions(env, rng):
            keep(*env.step_in_mode(action.astype(np.float32), mode))
        # pick: the cube's top from the observation, the arm follows it down with suction on
        env.goal = PlaceGoal(object="Cube", target="Cabinet", relation="on")
        obs, info = env.reset(seed=3)
        keep(obs, 0.0, False, False, info)
        layout = env.observation_layout
        for k in range(70):
            eef, top = obs[layout["eef_pos"]], obs[layout["Cube/aabb_max"]]
            centre = (obs[layout["Cube/aabb_min"]] + top) / 2.0
            goal_z = top[2] + (0.25 if k < 25 else 0.0 if k < 45 else 0.3)
            target = np.array([centre[0], centre[1], goal_z]) if k < 50 else eef + [0.03, 0.02, 0.0]
            move = np.clip((target - eef) / env.max_translation, -1.0, 1.0)
            suction = 1.0 if 25 <= k < 62 else -1.0
            action = np.concatenate([move, [0.0, 0.0, 0.0, suction]]).astype(np.float32)
            result = env.step(action)
            keep(*result)
            obs = result[0]
    finally:
        env.close()
    return {
        "observations": np.stack(observations),
        "rewards": np.array(rewards),
        "flags": np.array(flags),
        "infos": np.array(infos),
    }


def _path(backend: str) -> Path:
    return DATA / f"step_trajectory_{backend}.npz"


@pytest.mark.parametrize("backend", [b for b in RECORDED if b in available_backends()])
def test_episode_matches_the_recorded_one(backend: str) -> None:
    """Flags and every info key equal the recording; floats equal up to their last bits."""
    path = _path(backend)
    if not path.is_file():
        pytest.skip(f"no recorded episode for {backend} ({path}); write it with --write")
    expected = np.load(path)
    got = record(backend)
    assert got["observations"].shape == expected["observations"].shape
    for step, (a, b) in enumerate(zip(got["observations"], expected["observations"], strict=True)):
        try:
            np.testing.assert_array_max_ulp(a, b, maxulp=1)
        except AssertionError as exc:
            raise AssertionError(f"{backend}: observation of step {step}: {exc}") from None
    assert_same(got["rewards"].tolist(), expected["rewards"].tolist(), f"{backend}: rewards")
    assert np.array_equal(got["flags"], expected["flags"])
    for step, (a, b) in enumerate(zip(got["infos"], expected["infos"], strict=True)):
        assert_same(json.loads(a), json.loads(b), f"{backend}: info of step {step}")


def test_the_pick_grips_the_cube() -> None:
    """The recorded pick really grips (else the suction paths would go untested)."""
    infos = [json.loads(s) for s in record(available_backends()[0])["infos"]]
    assert any(info["state"]["grasped"] for info in infos)


if __name__ == "__main__":  # pragma: no cover - regenerates the recordings
    if "--write" in sys.argv:  # --write [backend ...]: those backends' recordings (default all)
        DATA.mkdir(parents=True, exist_ok=True)
        chosen = sys.argv[sys.argv.index("--write") + 1 :] or list(RECORDED)
        for name in RECORDED:
            if name in chosen and name in available_backends():
                np.savez_compressed(_path(name), **record(name))
                print("wrote", _path(name))
