"""Cartesian chunks through the policy layer into SimEnv's ``cartesian_position`` mode.

The peer is the real ``openpi-client`` package (installed with ``pip install --no-deps
openpi-client``; its metadata pins numpy<2), on loopback against simjudge's policy server.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from simjudge.envs.action_modes import ActionModeError, current_pose
from simjudge.envs.sim_env import SimEnv
from simjudge.policies import make_policy, run_episode, to_env_action
from simjudge.policies.builtin import CallablePolicy
from simjudge.policies.observe import env_action_mode
from simjudge.policies.server import PolicyServer

pytest.importorskip("openpi_client", reason="pip install --no-deps openpi-client (the real peer)")
from openpi_client.websocket_client_policy import WebsocketClientPolicy  # noqa: E402

pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.filterwarnings("ignore:connect\\(\\) must be used as a context manager"),
]

SCENE = {"objects": [{"name": "Cube", "asset": "Cube-0", "center": [0.3, 0.4]}]}
OFFSET = np.array([0.06, -0.05, 0.08])


class Toward:
    """A cartesian policy: chunks of 4 absolute targets at a fixed world point."""

    def __init__(self) -> None:
        self.target: np.ndarray | None = None

    def __call__(self, obs: dict[str, Any]) -> np.ndarray:
        if self.target is None:  # first query: a point OFFSET away, same orientation
            self.target = np.asarray(obs["cartesian_position"], dtype=np.float64).copy()
            self.target[:3] += OFFSET
        return np.tile(np.append(self.target, 0.0), (4, 1))


def _hold(obs: dict[str, Any]) -> np.ndarray:
    """Send back the pose it was shown: the arm must stay."""
    return np.append(np.asarray(obs["cartesian_position"], dtype=np.float64), 0.0)[None]


def _server(fn: Any) -> PolicyServer:
    policy = CallablePolicy(fn, "cart", action_space="cartesian_position",
                            observation_needs=("proprio",))
    return PolicyServer(policy, port=0).start()


def test_policy_layer_uses_the_env_mode():
    assert env_action_mode("cartesian_position") == "cartesian_position"
    assert env_action_mode("delta-translation") == "delta_ee"
    env = SimEnv(SCENE, action_mode="cartesian_position")
    try:
        env.reset(seed=0)
        action = np.append(current_pose(env), 1.0)
        np.testing.assert_array_equal(to_env_action(action, "cartesian_position", env), action)
        with pytest.raises(ActionModeError, match="7 finite numbers"):
            to_env_action(np.array([0.1, 0.0, np.nan, 0, 0, 0, 0]), "cartesian_position", env)
        with env.using_action_mode("delta_ee"):  # a delta env still gets a clipped delta
            delta = to_env_action(action + [0.5, 0, 0, 0, 0, 0, 0], "cartesian_position", env)
            assert delta[0] == 1.0 and delta[6] == 1.0
    finally:
        env.close()


def test_openpi_client_chunks_drive_the_cartesian_mode():
    server = _server(Toward())
    env = SimEnv(SCENE, action_mode="cartesian_position")
    try:
        client = WebsocketClientPolicy("127.0.0.1", server.port)
        assert client.get_server_metadata()["action_space"] == "cartesian_position"
        obs, _ = env.reset(seed=0)
        start = current_pose(env)
        for _ in range(6):  # what a RoboArena robot client does: query, execute the chunk
            reply = client.infer({"observation/cartesian_position": current_pose(env),
                                  "observation/joint_position": env.scene.robot.arm_qpos(),
                                  "prompt": "move"})
            chunk = np.asarray(reply["actions"])
            assert chunk.shape == (4, 7)
            for action in chunk:
                env.step(action)
        reached = current_pose(env)
        assert np.linalg.norm(reached[:3] - (start[:3] + OFFSET)) < 0.005
        np.testing.assert_allclose(reached[3:], start[3:], atol=0.02)
    finally:
        server.stop()
        env.close()


def test_remote_policy_round_trip_holds_still():
    server = _server(_hold)
    env = SimEnv(SCENE, horizon=25)  # built for delta actions: run_episode switches the mode
    try:
        policy = make_policy(f"remote:ws://127.0.0.1:{server.port}?timeout=10")
        try:
            assert policy.info.action_space == "cartesian_position"
            env.reset(seed=0)
            start = current_pose(env)
            result = run_episode(env, policy, seed=0)
        finally:
            policy.close()
        assert result.steps == 25 and result.queries == 25
        assert env.action_mode == "delta_ee"  # restored after the episode
        assert np.linalg.norm(current_pose(env)[:3] - start[:3]) < 1e-3
    finally:
        server.stop()
        env.close()
