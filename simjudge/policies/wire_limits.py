"""Bounds of the WebSocket policy protocol: what a peer may send before simjudge does work.

Both ends of :mod:`.remote` / :mod:`.server` treat the peer as untrusted. Every number a
peer supplies that sizes work is checked here *before* it is used:

* frames: at most ``max_frame_mb`` MiB (default :data:`DEFAULT_MAX_FRAME_MB`), enforced by
  websockets' ``max_size`` on both ends (a larger frame closes the connection, code 1009);
* the server's metadata: ``image_resolution`` two integers in ``1..``:data:`MAX_IMAGE_SIDE`,
  ``n_external_cameras`` in ``0..``:data:`MAX_CAMERAS`, ``action_space`` a string;
* action chunks: a real floating-point array (``float16/32/64``; not ints, bools,
  datetimes, complex or objects) of shape ``(width,)`` or ``(N, width)`` with
  ``1 <= N <=`` :data:`MAX_CHUNK`, every value finite;
* requests to ``simjudge serve``: a map with endpoint ``infer`` or ``reset``, images
  ``uint8 (H, W, 3)`` within :data:`MAX_IMAGE_SIDE`, proprio vectors of their fixed
  lengths, finite real numbers.

A violation raises :class:`RemoteProtocolError` (a :class:`~.base.PolicyError`), so an audit
records that policy's episode as failed with the reason and goes on with the others.

Example:
    >>> import numpy as np
    >>> check_actions(np.zeros((4, 7), np.float32), 7, "srv").shape
    (4, 7)
    >>> check_actions(np.zeros(7, "datetime64[s]"), 7, "srv")
    Traceback (most recent call last):
    ...
    simjudge.policies.wire_limits.RemoteProtocolError: server srv sent actions of dtype datetime64[s]; actions must be real floating point (float16/32/64)
    >>> redact_secrets("remote:ws://h:1?api_key=s3cret&timeout=2")
    'remote:ws://h:1?api_key=***&timeout=2'
    >>> redact_secrets("remote:ws://me:pw@h:1/x")
    'remote:ws://***@h:1/x'
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from .base import PolicyError

__all__ = [
    "DEFAULT_MAX_FRAME_MB",
    "MAX_CAMERAS",
    "MAX_CHUNK",
    "MAX_IMAGE_SIDE",
    "MAX_STATE",
    "RemoteConnectionLost",
    "RemotePolicyError",
    "RemoteProtocolError",
    "check_actions",
    "check_frame_mb",
    "check_metadata",
    "check_request",
    "frame_bytes",
    "redact_secrets",
]

DEFAULT_MAX_FRAME_MB = 64.0
"""Largest frame either end reads, in MiB (``--max-frame-mb``, ``?max_frame_mb=``)."""
MAX_FRAME_MB = 4096.0
"""Largest ``max_frame_mb`` accepted (4 GiB)."""
MAX_IMAGE_SIDE = 2048
"""Largest image height or width a server may ask for (a 2048² RGB frame is 12 MiB)."""
MAX_CAMERAS = 4
"""Most external cameras a server may ask for."""
MAX_CHUNK = 1024
"""Most actions in one chunk."""
MAX_STATE = 65536
"""Longest flat state vector a request may carry."""
_PROPRIO = {"observation/joint_position": 7, "observation/cartesian_position": 6,
            "observation/gripper_position": 1}
_IMAGES = ("observation/exterior_image_1_left", "observation/wrist_image_left")
_SECRET = re.compile(r"(api[_-]?key=)[^&,\s]*", re.IGNORECASE)
_USERINFO = re.compile(r"(wss?://)[^/@\s]*@", re.IGNORECASE)


class RemotePolicyError(PolicyError):
    """The remote server failed, timed out or could not be reached."""


class RemoteProtocolError(RemotePolicyError):
    """The peer broke the protocol's bounds (frame size, metadata, action shape or type)."""


class RemoteConnectionLost(RemotePolicyError):
    """The connection dropped during an episode; the episode fails (never goes on unreset)."""


def redact_secrets(text: str) -> str:
    """``text`` with ``api_key=VALUE`` as ``api_key=***`` and ``ws://user:pw@`` as ``ws://***@``."""
    return _USERINFO.sub(r"\1***@", _SECRET.sub(r"\1***", str(text)))


def check_frame_mb(value: Any, where: str = "--max-frame-mb") -> float:
    """A frame limit in MiB, checked: a number in ``(0, 4096]``.

    Raises:
        PolicyError: Not a number or out of range (the message names ``where``).
    """
    try:
        mb = float(value)
    except (TypeError, ValueError):
        raise PolicyError(f"{where} must be a number of MiB (e.g. 64), got {value!r}") from None
    if not (0 < mb <= MAX_FRAME_MB):
        raise PolicyError(f"{where} must be in (0, {MAX_FRAME_MB:g}] MiB, got {value!r}")
    return mb


def frame_bytes(mb: float) -> int:
    """``mb`` MiB in bytes (websockets' ``max_size``)."""
    return max(1, int(mb * 2**20))


def _int(value: Any) -> int | None:
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
        return None
    return int(value)


def check_metadata(metadata: Any, url: str) -> dict[str, Any]:
    """The server's metadata frame, checked before anything is sized from it.

    Raises:
        RemoteProtocolError: Not a map, or a resolution/camera count out of bounds.
    """
    if not isinstance(metadata, dict):
        raise RemoteProtocolError(f"server {url} sent {type(metadata).__name__} as metadata; "
                                  "the first frame must be a map")
    size = metadata.get("image_resolution")
    if size is not None:
        sides = [_int(v) for v in size] if isinstance(size, list | tuple) else []
        if len(sides) != 2 or any(v is None or not 1 <= v <= MAX_IMAGE_SIDE for v in sides):
            raise RemoteProtocolError(
                f"server {url} asks for image_resolution {_short(size)}; simjudge renders at most "
                f"{MAX_IMAGE_SIDE}x{MAX_IMAGE_SIDE}: serve [height, width] within that")
    cameras = metadata.get("n_external_cameras", 1)
    count = 0 if cameras is None else _int(cameras)
    if count is None or not 0 <= count <= MAX_CAMERAS:
        raise RemoteProtocolError(f"server {url} asks for n_external_cameras {_short(cameras)}; "
                                  f"give an integer in 0..{MAX_CAMERAS}")
    if not isinstance(metadata.get("action_space", "delta-translation"), str):
        raise RemoteProtocolError(f"server {url} sent a non-string action_space")
    return metadata


def check_actions(data: Any, width: int, url: str) -> np.ndarray:
    """A reply's actions as ``float64 (N, width)``, checked; never a silent conversion.

    Raises:
        RemoteProtocolError: Not a real floating-point array, wrong shape, too long a chunk,
            or non-finite values.
    """
    arr = data if isinstance(data, np.ndarray) else None
    if arr is None and isinstance(data, list | tuple):
        try:
            arr = np.asarray(data)
        except (ValueError, TypeError):
            arr = None
    if arr is None:
        raise RemoteProtocolError(f"server {url} sent actions as {type(data).__name__}; send a "
                                  f"float array (N, {width})")
    if arr.dtype.kind != "f":
        raise RemoteProtocolError(f"server {url} sent actions of dtype {arr.dtype}; actions must "
                                  "be real floating point (float16/32/64)")
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] != width or not 1 <= arr.shape[0] <= MAX_CHUNK:
        hint = ("joint chunks are (N, 8): 7 joints + gripper" if width == 8 else
                "RoboArena's 8-wide joint chunks need the joint_position or joint_velocity space")
        raise RemoteProtocolError(f"server {url} sent actions of shape {tuple(np.shape(data))}; "
                                  f"send ({width},) or (N, {width}) with 1 <= N <= {MAX_CHUNK} "
                                  f"({hint})")
    if not np.all(np.isfinite(arr)):
        raise RemoteProtocolError(f"server {url} sent non-finite actions (NaN or inf)")
    return arr.astype(np.float64)


def _real(value: Any, key: str) -> np.ndarray:
    if not isinstance(value, np.ndarray | list | tuple | int | float) or isinstance(value, bool):
        raise PolicyError(f"request key {key!r} is a {type(value).__name__}; send a numeric array")
    arr = np.asarray(value)
    if arr.dtype.kind not in "iuf":
        raise PolicyError(f"request key {key!r} has dtype {arr.dtype}; send real numbers")
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        raise PolicyError(f"request key {key!r} holds NaN or inf; send finite numbers")
    return arr


def check_request(message: Any) -> dict[str, Any]:
    """A request to ``simjudge serve``, checked before the policy sees it.

    Raises:
        PolicyError: Not a map, an unknown endpoint, or an observation of the wrong type,
            shape or size (the message names the key).
    """
    if not isinstance(message, dict):
        raise PolicyError(f"a request must be a map of observations, got {type(message).__name__}")
    endpoint = message.get("endpoint", "infer")
    if endpoint not in ("infer", "reset"):
        raise PolicyError(f"unknown endpoint {_short(endpoint)}; use 'infer' or 'reset'")
    for key in ("prompt", "task", "session_id"):
        if key in message and not isinstance(message[key], str):
            raise PolicyError(f"request key {key!r} must be a string")
    if endpoint == "reset":
        seed = _int(message.get("seed", 0))
        if seed is None or not 0 <= seed < 2**63:
            raise PolicyError(f"reset seed {_short(message.get('seed'))} must be an integer >= 0")
        return message
    for key, length in _PROPRIO.items():
        if key in message and _real(message[key], key).shape != (length,):
            raise PolicyError(f"request key {key!r} must have shape ({length},)")
    if "observation/state" in message:
        state = _real(message["observation/state"], "observation/state")
        if state.ndim != 1 or state.size > MAX_STATE:
            raise PolicyError(f"observation/state must be 1-D with at most {MAX_STATE} numbers")
    for key in _IMAGES:
        if key in message:
            image = message[key]
            ok = isinstance(image, np.ndarray) and image.dtype == np.uint8 and image.ndim == 3
            if not ok or image.shape[2] != 3 or not all(1 <= s <= MAX_IMAGE_SIDE for s in image.shape[:2]):
                raise PolicyError(f"request key {key!r} must be a uint8 (H, W, 3) image with H, W "
                                  f"in 1..{MAX_IMAGE_SIDE}")
    return message


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
