"""Serve any simjudge policy over RoboArena's/openpi's WebSocket protocol (``simjudge serve``).

The protocol, as both projects speak it:

1. The client connects (optionally with the header ``Authorization: Api-Key KEY``); the
   server's first frame is its metadata, one msgpack-numpy map (:mod:`.codec`): RoboArena's
   server config (``image_resolution``, ``needs_wrist_camera``, ``n_external_cameras``,
   ``needs_stereo_camera``, ``needs_session_id``, ``action_space``) plus ``policy`` (the
   policy's :meth:`PolicyInfo.to_dict`) and ``simjudge`` (the version).
2. Each request is a binary frame: an observation map with an ``endpoint`` key, ``infer``
   or ``reset``; openpi's client sends none (read as ``infer``). Keys:
   ``observation/exterior_image_1_left``, ``observation/wrist_image_left``,
   ``observation/joint_position`` (7), ``observation/cartesian_position`` (6),
   ``observation/gripper_position`` (1), ``prompt``, and simjudge's
   ``observation/state`` (the flat state vector); ``reset`` may carry ``task`` and ``seed``.
3. ``infer`` is answered with a binary frame ``{"actions": (N, 7), "server_timing":
   {"infer_ms": ...}}``; ``reset`` with the text frame ``reset successful`` (RoboArena).
4. A failure is answered with a text frame holding the error, then the connection is
   closed with code 1011 (internal error), as openpi does. A request is checked before the
   policy sees it (:func:`~.wire_limits.check_request`): a malformed one (unknown endpoint,
   wrong dtype or shape, NaN, an image over 2048 px) gets that error frame, never actions.

Limits: a frame over ``max_frame_mb`` MiB (default 64) closes that connection (code 1009)
before it is read. The API key is compared in constant time (:func:`hmac.compare_digest`);
binding a non-loopback host without an API key is refused unless ``insecure`` is set.

``GET /healthz`` answers ``OK``.
"""

from __future__ import annotations

import asyncio
import hmac
import http
import ipaddress
import threading
import time
from typing import Any

import numpy as np
import websockets
from websockets.asyncio.server import Request, Response, ServerConnection, serve

from simjudge.tasks.spec import versions

from .base import Policy, PolicyError, PolicyTask, action_width, as_chunk
from .codec import pack, unpack
from .wire_limits import DEFAULT_MAX_FRAME_MB, check_frame_mb, check_request, frame_bytes

__all__ = ["DROID_KEYS", "PolicyServer", "check_bind", "from_wire_observation", "is_loopback",
           "server_metadata"]

DROID_KEYS: dict[str, str] = {
    "observation/state": "state",
    "observation/joint_position": "joint_position",
    "observation/cartesian_position": "cartesian_position",
    "observation/gripper_position": "gripper_position",
    "observation/exterior_image_1_left": "exterior_image",
    "observation/wrist_image_left": "wrist_image",
}
"""Wire key -> simjudge observation key."""

RESET_REPLY = "reset successful"


def server_metadata(policy: Policy) -> dict[str, Any]:
    """The first frame: RoboArena's server config for ``policy`` plus simjudge's info."""
    info = policy.info
    needs = info.observation_needs
    return {
        "image_resolution": list(info.image_size),
        "needs_wrist_camera": "wrist_image" in needs,
        "n_external_cameras": 1 if "exterior_image" in needs else 0,
        "needs_stereo_camera": False,
        "needs_session_id": False,
        "action_space": info.action_space,
        "policy": info.to_dict(),
        "simjudge": versions().get("simjudge", ""),
    }


def from_wire_observation(message: dict[str, Any]) -> dict[str, Any]:
    """A request's observation map as the :data:`Observation` dict a policy reads."""
    obs: dict[str, Any] = {"prompt": str(message.get("prompt", ""))}
    for wire, key in DROID_KEYS.items():
        if wire in message:
            obs[key] = np.asarray(message[wire])
    obs.setdefault("state", np.zeros(0, np.float32))
    return obs


def is_loopback(host: str) -> bool:
    """Whether ``host`` names only this machine (``localhost``, ``127.x``, ``::1``)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip().strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, port: int, api_key: str | None, insecure: bool) -> None:
    """Refuse a port outside 1..65535 (0: any free port) or an open host without a key.

    Raises:
        PolicyError: The message names the fix.
    """
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise PolicyError(f"--port must be in 1..65535, got {port!r}")
    if not host or not host.strip():
        raise PolicyError("--host is empty; give 127.0.0.1 (this machine) or an interface address")
    if not is_loopback(host) and not api_key and not insecure:
        raise PolicyError(
            f"--host {host} accepts other machines, but no --api-key is set: give --api-key KEY "
            "(clients send it), or --insecure to serve without one")


def _finish(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class PolicyServer:
    """A WebSocket server for one policy (one request at a time, in arrival order).

    Args:
        policy: The policy to serve.
        host: Interface to bind (``127.0.0.1`` by default; ``0.0.0.0`` to share it).
        port: Port; 0 picks a free one (read :attr:`port` after :meth:`start`).
        api_key: If set, clients must send ``Authorization: Api-Key <api_key>``.
        max_frame_mb: Largest request frame read, in MiB.
        insecure: Allow a non-loopback ``host`` without ``api_key``.
        max_connections: Open connections served at once; more are answered HTTP 503.
    """

    def __init__(
        self, policy: Policy, host: str = "127.0.0.1", port: int = 8000, api_key: str | None = None,
        *, max_frame_mb: float = DEFAULT_MAX_FRAME_MB, insecure: bool = False,
        max_connections: int = 32,
    ) -> None:
        check_bind(host, port, api_key, insecure)
        self.max_frame_mb = check_frame_mb(max_frame_mb)
        if isinstance(max_connections, bool) or not isinstance(max_connections, int) or max_connections < 1:
            raise PolicyError(f"--max-connections must be an integer >= 1, got {max_connections!r}")
        self.max_connections = max_connections
        self._open = 0
        if policy.info.observation_needs and "privileged" in policy.info.observation_needs:
            raise PolicyError(
                f"{policy.info.name} reads the simulator (privileged) and cannot be served to a "
                "remote robot; serve a policy that acts from observations"
            )
        self.policy = policy
        self.host, self.port, self.api_key = host, int(port), api_key
        self.requests = 0
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Future[None] | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    # lifecycle -------------------------------------------------------------------------
    def serve_forever(self) -> None:
        """Serve in this thread until interrupted."""
        asyncio.run(self._main())

    def start(self, timeout: float = 10.0) -> PolicyServer:
        """Serve in a background thread; return once listening (``self.port`` is bound)."""
        self._thread = threading.Thread(target=self.serve_forever, name="policy-server", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout):
            raise PolicyError(f"policy server did not start within {timeout} s")
        if self._error is not None:
            raise PolicyError(f"policy server failed to start: {self._error}") from self._error
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Stop a server started with :meth:`start`."""
        loop, stop = self._loop, self._stop
        if loop is not None and stop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(_finish, stop)
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def wait(self) -> None:
        """Block until a server started with :meth:`start` stops (Ctrl-C interrupts)."""
        while self._thread is not None and self._thread.is_alive():
            self._thread.join(0.5)

    def __enter__(self) -> PolicyServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """``ws://host:port`` of the server."""
        return f"ws://{self.host}:{self.port}"

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = self._loop.create_future()
        try:
            server = await serve(
                self._handle,
                self.host,
                self.port,
                compression=None,
                max_size=frame_bytes(self.max_frame_mb),
                process_request=self._process_request,
            )
        except OSError as exc:
            self._error = exc
            self._ready.set()
            return
        self.port = int(next(iter(server.sockets)).getsockname()[1])
        self._ready.set()
        async with server:
            await self._stop

    # protocol --------------------------------------------------------------------------
    def _process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        if request.path == "/healthz":
            return connection.respond(http.HTTPStatus.OK, "OK\n")
        if self.api_key is not None:
            given = request.headers.get("Authorization", "").encode("utf-8", "replace")
            if not hmac.compare_digest(given, f"Api-Key {self.api_key}".encode()):
                return connection.respond(
                    http.HTTPStatus.UNAUTHORIZED, "missing or wrong 'Authorization: Api-Key' header\n"
                )
        if self._open >= self.max_connections:
            return connection.respond(
                http.HTTPStatus.SERVICE_UNAVAILABLE,
                f"busy: {self._open} connections open (--max-connections); try again later\n")
        return None

    async def _handle(self, websocket: ServerConnection) -> None:
        self._open += 1  # the event loop's thread only: no lock needed
        try:
            await self._serve_connection(websocket)
        finally:
            self._open -= 1

    async def _serve_connection(self, websocket: ServerConnection) -> None:
        await websocket.send(pack(server_metadata(self.policy)))
        while True:
            try:
                frame = await websocket.recv()
            except websockets.ConnectionClosed:
                return
            try:
                reply = await asyncio.to_thread(self._answer, frame)
            except Exception as exc:  # noqa: BLE001 - every failure goes back to the client
                await websocket.send(f"{type(exc).__name__}: {exc}")
                await websocket.close(1011, "policy error; the message is in the previous frame")
                return
            try:
                await websocket.send(reply)
            except websockets.ConnectionClosed:
                return

    def _answer(self, frame: str | bytes) -> str | bytes:
        if isinstance(frame, str):
            raise PolicyError("requests must be binary msgpack-numpy frames, got a text frame")
        try:
            message = unpack(frame)
        except Exception as exc:  # noqa: BLE001 - msgpack raises many types on hostile bytes
            raise PolicyError(f"undecodable request frame ({type(exc).__name__}: {str(exc)[:200]}); "
                              "send msgpack-numpy maps") from None
        message = check_request(message)
        endpoint = message.pop("endpoint", "infer")
        with self._lock:
            self.requests += 1
            if endpoint == "reset":
                prompt = str(message.get("prompt", ""))
                task = PolicyTask(name=str(message.get("task", prompt)), prompt=prompt)
                self.policy.reset(task, int(message.get("seed", 0)))
                return RESET_REPLY
            if endpoint != "infer":
                raise PolicyError(f"unknown endpoint {endpoint!r}; use 'infer' or 'reset'")
            start = time.perf_counter()
            info = self.policy.info
            actions = as_chunk(self.policy.act(from_wire_observation(message)), info.name,
                               action_width(info.action_space))
            infer_ms = 1000.0 * (time.perf_counter() - start)
        return pack({"actions": actions, "server_timing": {"infer_ms": infer_ms}})
