"""Remote policies that answer with DROID-style joint action chunks ``(N, 8)``.

Peers, as in ``test_remote_policy.py``: ``openpi-client`` from PyPI (installed with
``pip install --no-deps openpi-client``: its metadata pins numpy<2) is the real peer
client and frames the peer servers here (openpi-client's own msgpack-numpy codec), which
behave as RoboArena's DROID servers do: metadata with ``action_space`` ``joint_position``
or ``joint_velocity``, ``reset successful`` as a text frame, ``{"actions": (N, 8)}``.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from websockets.asyncio.server import serve

from simjudge.policies import PolicyError, make_policy, run_episode
from simjudge.policies.server import PolicyServer
from simjudge.skills.executor import execute_solution
from simjudge.skills.library import SkillLibrary
from simjudge.tasks.spec import make_task_env

openpi_msgpack = pytest.importorskip(
    "openpi_client.msgpack_numpy", reason="pip install --no-deps openpi-client (the real peer)"
)
from openpi_client.websocket_client_policy import WebsocketClientPolicy  # noqa: E402

pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.filterwarnings("ignore:connect\\(\\) must be used as a context manager"),
]

GOAL = np.array([0.3, 0.2, -0.3, -2.0, 0.1, 2.2, 0.5])
"""A reachable arm configuration (rad) the joint servers drive to."""


class DroidJointServer:
    """A RoboArena/DROID-style policy server answering joint chunks (openpi's codec)."""

    def __init__(self, space: str, reply: Callable[[dict[str, Any]], np.ndarray]) -> None:
        self.metadata = {"image_resolution": (24, 32), "needs_wrist_camera": False,
                         "n_external_cameras": 0, "needs_stereo_camera": False,
                         "needs_session_id": False, "action_space": space}
        self.reply = reply
        self.received: list[dict[str, Any]] = []
        self.port = 0
        self._ready = threading.Event()
        self._thread = threading.Thread(target=lambda: asyncio.run(self._main()), daemon=True)

    async def _main(self) -> None:
        self._stop = asyncio.get_running_loop().create_future()
        async with serve(self._handle, "127.0.0.1", 0, max_size=None) as server:
            self.port = next(iter(server.sockets)).getsockname()[1]
            self._ready.set()
            await self._stop

    async def _handle(self, ws: Any) -> None:
        await ws.send(openpi_msgpack.packb(self.metadata))
        async for frame in ws:
            obs = openpi_msgpack.unpackb(frame)
            self.received.append(obs)
            if obs.pop("endpoint", "infer") == "reset":
                await ws.send("reset successful")
                continue
            await ws.send(openpi_msgpack.packb({"actions": self.reply(obs)}))

    def __enter__(self) -> DroidJointServer:
        self._thread.start()
        assert self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.get_loop().call_soon_threadsafe(lambda: self._stop.done() or self._stop.set_result(None))
        self._thread.join(10)


def _arm(env: Any) -> np.ndarray:
    return np.asarray(env.scene.robot.arm_qpos(), dtype=float)


def test_joint_position_chunks_drive_the_env():
    def toward_goal(obs: dict[str, Any]) -> np.ndarray:
        q = obs["observation/joint_position"]
        steps = [q + np.clip(GOAL - q, -0.05 * k, 0.05 * k) for k in range(1, 5)]
        return np.array([np.append(s, 0.0) for s in steps], dtype=np.float32)  # (4, 8)

    env = make_task_env("OpenDrawer-v0", horizon=40)
    with DroidJointServer("joint_position", toward_goal) as server:
        policy = make_policy(f"remote:ws://127.0.0.1:{server.port}?timeout=10")
        try:
            assert policy.info.action_space == "joint_position"
            result = run_episode(env, policy, seed=0)
        finally:
            policy.close()
    try:
        assert result.steps == 40 and result.queries == 10  # chunks of 4 executed in full
        assert np.max(np.abs(_arm(env) - GOAL)) < 0.02
        assert env.action_mode == "delta_ee"  # the env's own mode is back after the episode
    finally:
        env.close()
    first = server.received[1]
    assert first["observation/joint_position"].shape == (7,) and first["prompt"]


def test_joint_velocity_chunks_integrate_over_the_control_period():
    period = 2 * 0.01  # frameskip physics steps of 0.01 s

    def velocity(obs: dict[str, Any]) -> np.ndarray:
        q = obs["observation/joint_position"]
        v = np.clip((GOAL - q) / period * 0.3, -2.0, 2.0)
        return np.append(v, 1.0)[None, :]  # gripper closed: suction on

    env = make_task_env("OpenDrawer-v0", horizon=60)
    with DroidJointServer("joint_velocity", velocity) as server:
        policy = make_policy(f"remote:ws://127.0.0.1:{server.port}?timeout=10")
        try:
            start = env.reset(seed=0)[0][env.observation_layout["arm_qpos"]]
            result = run_episode(env, policy, seed=0)
        finally:
            policy.close()
    try:
        gap = np.max(np.abs(_arm(env) - GOAL))
        assert gap < 0.05 < np.max(np.abs(start - GOAL))
        assert result.info["state"]["suction"] and result.queries == 60
    finally:
        env.close()


def test_chunks_of_the_wrong_width_are_refused():
    env = make_task_env("OpenDrawer-v0", horizon=5)
    with DroidJointServer("joint_position", lambda obs: np.zeros((2, 7))) as server:
        policy = make_policy(f"remote:ws://127.0.0.1:{server.port}?timeout=10")
        try:
            with pytest.raises(PolicyError, match=r"\(N, 8\): 7 joints \+ gripper"):
                run_episode(env, policy, seed=0)
        finally:
            policy.close()
            env.close()


def test_served_skill_replay_round_trips_through_openpi_and_remote(tmp_path):
    """A planned grasp skill served as joint chunks: the real openpi client, then remote:."""
    outcome = execute_solution("OpenDrawer-v0", tmp_path / "run", reward_solver="oracle",
                               skills=SkillLibrary(tmp_path / "lib"), video=False)
    assert outcome.verdict == "verified"
    grasp = SkillLibrary(tmp_path / "lib").list()[0]  # oracle-solved pulls are not stored
    local = make_policy(f"skill:{grasp.id},root={tmp_path / 'lib'},chunk=10")
    with PolicyServer(local, port=0) as server:
        client = WebsocketClientPolicy("127.0.0.1", server.port)
        assert client.get_server_metadata()["action_space"] == "joint_position"
        chunk = client.infer({"prompt": "grasp the drawer handle"})["actions"]
        assert chunk.shape == (10, 8) and np.array_equal(chunk, local.actions[:10])
        remote = make_policy(f"remote:{server.url}")
        env = make_task_env("OpenDrawer-v0", horizon=len(local.actions) + 3)
        try:
            result = run_episode(env, remote, seed=0, options={"state": local.start_state})
        finally:
            remote.close()
            env.close()
    # reset over the wire restarts the replay: chunks of 10, then 3 one-action holds
    assert result.info["is_grasped"] and result.steps == len(local.actions) + 3
    assert result.queries == -(-len(local.actions) // 10) + 3
