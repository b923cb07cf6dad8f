"""``remote:ws://HOST:PORT``: a policy served over RoboArena's/openpi's WebSocket protocol.

The client side of the protocol described in :mod:`simjudge.policies.server`: it
reads the server's metadata frame (what to observe, image resolution, action space),
sends observation maps with ``endpoint`` ``reset`` / ``infer``, and executes the returned
``actions`` chunks (a bare array reply is accepted too): ``(N, 7)`` delta actions,
``(N, 7)`` cartesian chunks (absolute ``xyz`` + ``rpy`` + gripper, executed through SimEnv's
``cartesian_position`` mode: :mod:`simjudge.envs.action_modes`), or DROID's ``(N, 8)``
``joint_position`` / ``joint_velocity`` chunks, executed through SimEnv's joint position
mode. A text frame in answer to
``infer`` is the server's error and raises :class:`RemotePolicyError`; after ``reset`` a
text frame is the acknowledgement (RoboArena answers ``reset successful``).

Spec: ``remote:ws://HOST:PORT[/PATH][?api_key=KEY&timeout=S&retries=N&max_frame_mb=M]``;
the key can also come from the environment variable ``SIMJUDGE_POLICY_API_KEY``. Each
request waits at most ``timeout`` seconds (default 30). A connection dropped before or
during ``reset`` is re-opened up to ``retries`` times (default 2) and the reset sent again;
a connection dropped during an episode fails the episode (:class:`RemoteConnectionLost`):
the episode never goes on without a reset. Latency per request is kept in
:attr:`RemotePolicy.latencies` (and the server's ``infer_ms`` in
:attr:`RemotePolicy.server_ms`).

The server is not trusted (:mod:`.wire_limits`): a frame larger than ``max_frame_mb``
(default 64 MiB) is refused by websockets before it is read, every number of the metadata
that sizes work (image resolution, cameras) and every action chunk (real floating point,
``(N, width)`` with ``1 <= N <= 1024``, finite) is checked before use, and an undecodable
frame (bad msgpack, msgpack ext types, a bad array map) is refused; each violation raises
:class:`RemoteProtocolError`. API keys are recorded only as ``***``
(:func:`redact_secrets`).
"""

from __future__ import annotations

import contextlib
import os
import re
import time
import uuid
from typing import Any
from urllib.parse import parse_qs, urlsplit, urlunsplit

import numpy as np
import websockets
from websockets.sync.client import ClientConnection, connect

from .base import ACTION_SPACES, Observation, PolicyError, PolicyInfo, PolicyTask, action_width
from .codec import pack, unpack
from .wire_limits import (
    DEFAULT_MAX_FRAME_MB,
    RemoteConnectionLost,
    RemotePolicyError,
    RemoteProtocolError,
    check_actions,
    check_frame_mb,
    check_metadata,
    frame_bytes,
    redact_secrets,
)

__all__ = ["RemoteConnectionLost", "RemotePolicy", "RemotePolicyError", "RemoteProtocolError",
           "check_remote_spec", "to_wire_observation", "with_frame_limit"]

API_KEY_ENV = "SIMJUDGE_POLICY_API_KEY"
_TOO_BIG = 1009  # websockets' close code for a frame over max_size
MAX_METADATA_BYTES = 1 << 20
"""Largest metadata frame read (1 MiB): the metadata is recorded with every episode."""


def with_frame_limit(spec: str, max_frame_mb: float) -> str:
    """A remote policy spec with ``max_frame_mb`` added unless it sets its own; others unchanged."""
    text = str(spec).strip()
    if not text.startswith(("remote:", "ws://", "wss://")) or re.search(r"[?&]max_frame_mb=", text):
        return text
    return f"{text}{'&' if '?' in text else '?'}max_frame_mb={max_frame_mb:g}"


def to_wire_observation(obs: Observation, endpoint: str = "infer") -> dict[str, Any]:
    """A simjudge observation as the protocol's request map (DROID key names)."""
    wire: dict[str, Any] = {"endpoint": endpoint, "prompt": str(obs.get("prompt", ""))}
    names = {
        "state": "observation/state",
        "joint_position": "observation/joint_position",
        "cartesian_position": "observation/cartesian_position",
        "gripper_position": "observation/gripper_position",
        "exterior_image": "observation/exterior_image_1_left",
        "wrist_image": "observation/wrist_image_left",
    }
    for key, name in names.items():
        if key in obs:
            wire[name] = np.asarray(obs[key])
    return wire


def _parse(url: str) -> tuple[str, dict[str, str]]:
    parts = urlsplit(url)
    if parts.scheme not in ("ws", "wss") or not parts.hostname:
        raise PolicyError(f"remote policy URL {redact_secrets(url)!r} must look like "
                          "remote:ws://HOST:PORT")
    query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", "")), query


def _needs(metadata: dict[str, Any]) -> tuple[str, ...]:
    needs = ["proprio"]
    if int(metadata.get("n_external_cameras", 1) or 0) > 0:
        needs.append("exterior_image")
    if metadata.get("needs_wrist_camera", True):
        needs.append("wrist_image")
    return tuple(needs)


class RemotePolicy:
    """A policy behind a RoboArena/openpi WebSocket server.

    Args:
        url: ``ws://HOST:PORT`` with optional query ``api_key``, ``timeout``, ``retries``.
    """

    def __init__(self, url: str) -> None:
        self.url, query = _parse(url)
        self._shown = redact_secrets(self.url)  # the url as messages and records show it
        self.api_key = query.get("api_key") or os.environ.get(API_KEY_ENV) or None
        self.timeout, self.retries, self.max_frame_mb = _options(query)
        self.latencies: list[float] = []
        self.server_ms: list[float] = []
        self.reconnects = 0
        self._ws: ClientConnection | None = None
        self._stack = contextlib.ExitStack()
        self.metadata: dict[str, Any] = {}
        self._session = ""
        self._connect()
        space = str(self.metadata.get("action_space", "delta-translation"))
        self._width = action_width(space)
        if space not in ACTION_SPACES:
            self.close()
            raise RemotePolicyError(
                f"server {self._shown} acts in {space!r}; simjudge executes {list(ACTION_SPACES)}: "
                "serve the policy with one of those action spaces"
            )
        size = self.metadata.get("image_resolution") or (224, 224)
        self._info = PolicyInfo(
            "remote",
            action_space=space,
            observation_needs=_needs(self.metadata),
            image_size=(int(size[0]), int(size[1])),
            metadata={"url": self._shown, "server": _plain(self.metadata)},
        )

    @property
    def info(self) -> PolicyInfo:
        """Derived from the server's metadata frame."""
        return self._info

    # connection -------------------------------------------------------------------------
    def _connect(self) -> None:
        headers = {"Authorization": f"Api-Key {self.api_key}"} if self.api_key else None
        self._stack = contextlib.ExitStack()
        try:
            # entered as a context manager (websockets' supported form); closed in _drop
            self._ws = self._stack.enter_context(connect(
                self.url,
                additional_headers=headers,
                compression=None,
                max_size=frame_bytes(self.max_frame_mb),
                open_timeout=self.timeout,
            ))
            frame = self._ws.recv(timeout=self.timeout)
        except websockets.ConnectionClosed as exc:
            self._drop()
            raise self._closed(exc, "sending its metadata") from exc
        except websockets.InvalidStatus as exc:
            raise RemotePolicyError(
                f"server {self._shown} refused the connection ({exc}); pass the right "
                f"?api_key=... or set {API_KEY_ENV}"
            ) from exc
        except (OSError, TimeoutError, websockets.WebSocketException) as exc:
            raise RemotePolicyError(
                f"cannot reach policy server {self._shown} within {self.timeout} s ({exc}); start it "
                "with `simjudge serve POLICY --port P` or check host and port"
            ) from exc
        if isinstance(frame, str):
            self._drop()
            raise RemoteProtocolError(f"server {self._shown} sent text instead of metadata: "
                                      f"{frame[:200]}")
        if len(frame) > MAX_METADATA_BYTES:  # it is recorded with every episode
            self._drop()
            raise RemoteProtocolError(f"server {self._shown} sent {len(frame)} bytes of metadata; at "
                                      f"most {MAX_METADATA_BYTES} are read (it is recorded with "
                                      "every episode)")
        try:
            self.metadata = check_metadata(self._decode(frame), self._shown)
        except RemotePolicyError:
            self._drop()
            raise

    def _decode(self, frame: bytes) -> Any:
        """One binary frame decoded; anything undecodable is the server's protocol error."""
        try:
            return unpack(frame)
        except Exception as exc:  # noqa: BLE001 - msgpack raises many types on hostile bytes
            raise RemoteProtocolError(f"server {self._shown} sent an undecodable frame "
                                      f"({type(exc).__name__}: {str(exc)[:200]})") from exc

    def _closed(self, exc: websockets.ConnectionClosed, doing: str) -> RemotePolicyError:
        code = exc.sent.code if exc.sent is not None else exc.rcvd.code if exc.rcvd else None
        if code == _TOO_BIG:
            return RemoteProtocolError(
                f"server {self._shown} sent a frame over {self.max_frame_mb:g} MiB while {doing}; "
                "raise ?max_frame_mb=... (or --max-frame-mb) if that size is expected")
        return RemoteConnectionLost(f"connection to {self._shown} closed while {doing} ({exc})")

    def _request(self, message: dict[str, Any], *, reopen: bool) -> str | bytes:
        """Send one request; only ``reopen`` requests (a reset) may re-open the connection."""
        frame = pack(message)
        for attempt in range(self.retries + 1):
            try:
                if self._ws is None:
                    if not reopen:
                        raise RemoteConnectionLost(
                            f"connection to {self._shown} was lost during this episode; the episode "
                            "fails (it never goes on without a reset)")
                    self._connect()
                    self.reconnects += 1
                assert self._ws is not None
                self._ws.send(frame)
                return self._ws.recv(timeout=self.timeout)
            except TimeoutError as exc:
                self._drop()
                raise RemotePolicyError(
                    f"policy server {self._shown} gave no answer within {self.timeout} s; raise "
                    "?timeout=... or check the server"
                ) from exc
            except websockets.ConnectionClosed as exc:
                self._drop()
                error = self._closed(exc, f"answering {message.get('endpoint', 'infer')}")
                if not reopen or isinstance(error, RemoteProtocolError) or attempt == self.retries:
                    raise error from exc
        raise AssertionError("unreachable")  # pragma: no cover

    def _drop(self) -> None:
        if self._ws is not None:
            self._stack.close()
        self._ws = None

    # policy -----------------------------------------------------------------------------
    def reset(self, task: PolicyTask, seed: int) -> None:
        """Send ``endpoint: reset`` (with ``task``, ``seed``, ``prompt``)."""
        self._session = str(uuid.uuid4())
        message = {"endpoint": "reset", "task": task.name, "seed": int(seed), "prompt": task.prompt}
        if self.metadata.get("needs_session_id"):
            message["session_id"] = self._session
        reply = self._request(message, reopen=True)
        data = None if isinstance(reply, str) else self._decode(reply)
        if isinstance(data, dict) and "error" in data:
            raise RemotePolicyError(f"server {self._shown} failed to reset: {str(data['error'])[:500]}")

    def act(self, obs: Observation) -> np.ndarray:
        """Send ``endpoint: infer``; return the server's action chunk (``(N, 8)`` for joints)."""
        message = to_wire_observation(obs)
        if self.metadata.get("needs_session_id"):
            message["session_id"] = self._session
        start = time.perf_counter()
        reply = self._request(message, reopen=False)
        self.latencies.append(time.perf_counter() - start)
        if isinstance(reply, str):
            self._drop()
            raise RemotePolicyError(f"policy server {self._shown} failed:\n{reply[:4000]}")
        data = self._decode(reply)
        if isinstance(data, dict):
            timing = data.get("server_timing")
            infer_ms = timing.get("infer_ms") if isinstance(timing, dict) else None
            if isinstance(infer_ms, int | float | np.number) and np.isfinite(infer_ms):
                self.server_ms.append(float(infer_ms))
            if "actions" not in data:
                keys = sorted(str(k)[:40] for k in list(data)[:20])
                raise RemoteProtocolError(f"server {self._shown} replied without 'actions': {keys}")
            data = data["actions"]
        return check_actions(data, self._width, self._shown)

    def close(self) -> None:
        """Close the connection."""
        self._drop()


def check_remote_spec(url: str) -> None:
    """Check a remote spec's URL and options without connecting (``simjudge audit`` does first).

    Raises:
        PolicyError: Not ``ws://HOST:PORT``, or a bad ``timeout``/``retries``/``max_frame_mb``.
    """
    _options(_parse(url)[1])


def _options(query: dict[str, str]) -> tuple[float, int, float]:
    """``timeout``, ``retries`` and ``max_frame_mb`` of a remote spec's query, checked."""
    return (_number(query, "timeout", 30.0, float), _number(query, "retries", 2, int),
            check_frame_mb(query.get("max_frame_mb", DEFAULT_MAX_FRAME_MB), "?max_frame_mb="))


def _number(query: dict[str, str], key: str, default: float, kind: type) -> Any:
    """A positive query number (``timeout`` > 0, ``retries`` >= 0), checked."""
    try:
        value = kind(query.get(key, default))
    except ValueError:
        raise PolicyError(f"remote policy ?{key}= must be a number, got {query[key]!r}") from None
    if value < 0 or (key == "timeout" and not 0 < value <= 3600):
        raise PolicyError(f"remote policy ?{key}= is out of range ({query.get(key)!r}); "
                          "timeout in (0, 3600] s, retries >= 0")
    return value


def _plain(value: Any) -> Any:
    """Metadata as JSON-safe values (arrays to lists)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray | np.generic):
        return value.tolist()
    return value
