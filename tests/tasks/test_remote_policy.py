"""Remote policies over RoboArena's/openpi's WebSocket protocol, against real peers.

The peer client is the ``openpi-client`` package from PyPI. Its metadata pins numpy<2, so
the test set-up installs it with ``pip install --no-deps openpi-client`` (it needs only
msgpack and websockets at run time, both simjudge dependencies). The peer server of the
client tests is a separate ``websockets`` server framed with openpi-client's own
msgpack-numpy codec, behaving as RoboArena's server does (metadata first, ``reset
successful`` as a text frame, errors as a text frame then close 1011).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
import websockets
from websockets.asyncio.server import serve

from simjudge.policies import PolicyTask, make_policy, run_episode
from simjudge.policies.codec import pack, unpack
from simjudge.policies.remote import RemoteConnectionLost, RemotePolicyError
from simjudge.policies.server import PolicyServer
from simjudge.tasks.spec import make_task_env

openpi_msgpack = pytest.importorskip(
    "openpi_client.msgpack_numpy", reason="pip install --no-deps openpi-client (the real peer)"
)
from openpi_client.websocket_client_policy import WebsocketClientPolicy  # noqa: E402

pytestmark = [
    pytest.mark.timeout(120),
    # openpi-client 0.1.2 calls websockets' connect() without a context manager
    pytest.mark.filterwarnings("ignore:connect\\(\\) must be used as a context manager"),
]


# ------------------------------------------------------------------------------- codec


def test_codec_reads_and_writes_openpi_frames():
    data = {
        "observation/exterior_image_1_left": np.arange(24, dtype=np.uint8).reshape(2, 4, 3),
        "observation/joint_position": np.linspace(0, 1, 7),
        "gripper": np.float32(0.5),
        "prompt": "open the drawer",
        "nested": {"a": [1, 2.5, "x"], "b": np.int16(-3)},
    }
    for encoded, decode in ((pack(data), openpi_msgpack.unpackb), (openpi_msgpack.packb(data), unpack)):
        out = decode(encoded)
        for key in ("observation/exterior_image_1_left", "observation/joint_position"):
            assert out[key].dtype == data[key].dtype and np.array_equal(out[key], data[key])
        assert out["gripper"] == np.float32(0.5) and out["gripper"].dtype == np.float32
        assert out["prompt"] == "open the drawer" and out["nested"]["a"] == [1, 2.5, "x"]
        assert out["nested"]["b"] == -3 and out["nested"]["b"].dtype == np.int16
    with pytest.raises(TypeError, match="refused"):
        pack({"x": np.array([object()], dtype=object)})


# ------------------------------------------------------------- our server, openpi client


@pytest.fixture
def random_server() -> Iterator[PolicyServer]:
    server = PolicyServer(make_policy("random:scale=0.5"), port=0, api_key="secret").start()
    yield server
    server.stop()


def test_openpi_client_queries_simjudge_server(random_server):
    client = WebsocketClientPolicy("127.0.0.1", random_server.port, api_key="secret")
    meta = client.get_server_metadata()
    assert meta["action_space"] == "delta-translation" and meta["policy"]["name"] == "random"
    assert meta["image_resolution"] == [224, 224] and meta["needs_wrist_camera"] is False
    obs = {  # what a DROID/RoboArena client sends; openpi's client adds no endpoint key
        "observation/joint_position": np.zeros(7),
        "observation/cartesian_position": np.zeros(6),
        "observation/gripper_position": np.zeros(1),
        "prompt": "open the drawer",
    }
    first = client.infer(obs)
    assert first["actions"].shape == (1, 7) and np.all(np.abs(first["actions"]) <= 0.5)
    assert first["server_timing"]["infer_ms"] >= 0
    second = client.infer(obs)
    assert not np.array_equal(first["actions"], second["actions"])  # the policy's own stream
    assert random_server.requests == 2


def test_api_key_is_enforced(random_server):
    with pytest.raises(websockets.InvalidStatus, match="401"):
        WebsocketClientPolicy("127.0.0.1", random_server.port)
    with pytest.raises(RemotePolicyError, match="api_key"):
        make_policy(f"remote:{random_server.url}?api_key=wrong")


def test_remote_round_trip_equals_the_local_policy(random_server):
    env = make_task_env("OpenDrawer-v0")
    remote = make_policy(f"remote:{random_server.url}?api_key=secret")
    try:
        assert "secret" not in remote.info.spec  # the key is never recorded
        over_wire = run_episode(env, remote, seed=3)
        local = run_episode(env, make_policy("random:scale=0.5"), seed=3)
    finally:
        remote.close()
        env.close()
    assert over_wire.progress == local.progress and over_wire.steps == local.steps
    assert over_wire.info["state"] == local.info["state"]
    assert len(remote.latencies) == over_wire.queries == over_wire.steps
    assert len(remote.server_ms) == over_wire.queries


def test_server_errors_come_back_as_text(tmp_path, monkeypatch):
    (tmp_path / "failing_policy.py").write_text(
        "def act(obs):\n    raise RuntimeError('model exploded')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with PolicyServer(make_policy("failing_policy:act"), port=0) as server:
        client = WebsocketClientPolicy("127.0.0.1", server.port)
        with pytest.raises(RuntimeError, match="model exploded"):
            client.infer({"prompt": "x"})
        remote = make_policy(f"remote:{server.url}")
        with pytest.raises(RemotePolicyError, match="model exploded"):
            remote.act({"state": np.zeros(3), "prompt": "x"})
    with pytest.raises(Exception, match="privileged"):
        PolicyServer(make_policy("oracle"), port=0)


def test_simjudge_serve_command_in_its_own_process():
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "simjudge.cli", "serve", "random", "--port", str(port)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        client = _connect_with_retry(lambda: WebsocketClientPolicy("127.0.0.1", port), 30.0)
        out = client.infer({"observation/joint_position": np.zeros(7), "prompt": "x"})
        assert out["actions"].shape == (1, 7)
    finally:
        proc.terminate()
        proc.wait(10)


# -------------------------------------------------- a RoboArena-style server, our client


class ArenaStyleServer:
    """A peer server per RoboArena's protocol, framed by openpi-client's codec."""

    def __init__(self, reply: Callable[[dict[str, Any]], Any], metadata: dict[str, Any]) -> None:
        self.reply, self.metadata = reply, metadata
        self.received: list[dict[str, Any]] = []
        self.headers: list[str | None] = []
        self.drop_after: int | None = None
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
        self.headers.append(ws.request.headers.get("Authorization"))
        await ws.send(openpi_msgpack.packb(self.metadata))
        async for frame in ws:
            obs = openpi_msgpack.unpackb(frame)
            self.received.append(dict(obs))
            if self.drop_after is not None and len(self.received) == self.drop_after:
                await ws.close()  # the connection drops mid-episode
                return
            if obs.pop("endpoint", "infer") == "reset":
                await ws.send("reset successful")
                continue
            answer = self.reply(obs)
            if isinstance(answer, str):
                await ws.send(answer)
                await ws.close(1011, "internal error")
                return
            if answer is None:
                await asyncio.sleep(5)  # stall
                continue
            await ws.send(openpi_msgpack.packb(answer))

    def __enter__(self) -> ArenaStyleServer:
        self._thread.start()
        assert self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.get_loop().call_soon_threadsafe(lambda: self._stop.done() or self._stop.set_result(None))
        self._thread.join(10)


DROID_META = {"image_resolution": (32, 48), "needs_wrist_camera": True, "n_external_cameras": 1,
              "needs_stereo_camera": False, "needs_session_id": True, "action_space": "cartesian_position"}


def test_client_drives_a_roboarena_server_with_cartesian_chunks():
    def lift(obs: dict[str, Any]) -> dict[str, Any]:
        target = obs["observation/cartesian_position"].copy()
        target[2] += 0.1
        return {"actions": np.tile(np.concatenate([target, [0.0]]), (4, 1)).astype(np.float32)}

    env = make_task_env("OpenDrawer-v0", horizon=12)
    with ArenaStyleServer(lift, DROID_META) as server:
        policy = make_policy(f"remote:ws://127.0.0.1:{server.port}?api_key=k9&timeout=10")
        try:
            assert policy.info.action_space == "cartesian_position"
            assert set(policy.info.observation_needs) == {"proprio", "exterior_image", "wrist_image"}
            z0 = env.reset(seed=0)[1]["state"]["eef_pos"][2]
            result = run_episode(env, policy, seed=0, prompt="lift")
        finally:
            policy.close()
            env.close()
    reset, first = server.received[0], server.received[1]
    assert reset["endpoint"] == "reset" and reset["seed"] == 0 and reset["prompt"] == "lift"
    assert first["endpoint"] == "infer" and first["prompt"] == "lift"
    assert first["observation/exterior_image_1_left"].shape == (32, 48, 3)
    assert first["observation/wrist_image_left"].dtype == np.uint8
    assert first["observation/joint_position"].shape == (7,)
    assert first["session_id"] == reset["session_id"]
    assert server.headers == ["Api-Key k9"]
    assert result.steps == 12 and result.queries == 3  # chunks of 4 executed in full
    assert result.info["state"]["eef_pos"][2] > z0 + 0.05


def test_client_reconnects_reports_errors_and_times_out():
    with ArenaStyleServer(lambda obs: {"actions": np.zeros((1, 7))},
                          {"action_space": "delta-translation", "n_external_cameras": 0,
                           "needs_wrist_camera": False}) as server:
        policy = make_policy(f"remote:ws://127.0.0.1:{server.port}?timeout=3")
        server.drop_after = 2
        policy.reset(PolicyTask("x", prompt="p"), 0)
        # dropped mid-episode: the episode fails, it never goes on without a reset
        with pytest.raises(RemoteConnectionLost, match="closed while answering infer"):
            policy.act({"state": np.zeros(3), "prompt": "p"})
        with pytest.raises(RemoteConnectionLost, match="never goes on without a reset"):
            policy.act({"state": np.zeros(3), "prompt": "p"})
        policy.reset(PolicyTask("x", prompt="p"), 1)  # a reset re-opens the connection
        action = policy.act({"state": np.zeros(3), "prompt": "p"})
        assert action.shape == (1, 7) and policy.reconnects == 1
        server.reply = lambda obs: "Traceback: CUDA out of memory"
        with pytest.raises(RemotePolicyError, match="CUDA out of memory"):
            policy.act({"state": np.zeros(3), "prompt": "p"})
        server.reply = lambda obs: None
        policy.reset(PolicyTask("x", prompt="p"), 2)  # the error closed it; a new episode
        start = time.monotonic()
        with pytest.raises(RemotePolicyError, match="no answer within 3"):
            policy.act({"state": np.zeros(3), "prompt": "p"})
        assert time.monotonic() - start < 10
        policy.close()
    with ArenaStyleServer(lambda obs: None, {"action_space": "base_velocity"}) as server:
        with pytest.raises(RemotePolicyError, match="base_velocity"):
            make_policy(f"remote:ws://127.0.0.1:{server.port}")
    with pytest.raises(RemotePolicyError, match="cannot reach"):
        make_policy(f"remote:ws://127.0.0.1:{_free_port()}?timeout=2")


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _connect_with_retry(make: Callable[[], Any], timeout: float) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        try:
            return make()
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
