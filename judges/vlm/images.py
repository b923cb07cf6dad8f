"""Frames as chat content: PNG encoding, ``image_url`` data-URL parts, keyframe strips.

A server VLM sees images as OpenAI-style content parts::

    {"type": "image_url", "image_url": {"url": "data:image/png;base64,..."}}

inside a user message whose ``content`` is a list of parts (text parts are
``{"type": "text", "text": ...}``). vLLM, llama.cpp's servers (with a multimodal
projector) and hosted APIs accept this shape. Frames are shrunk to ``size`` pixels on their
long side before encoding (lossless, uncompressed PNG, so equal frames give equal bytes and
equal request hashes everywhere: the replay cache keys on them).

Example:
    >>> import numpy as np
    >>> part = image_part(np.zeros((8, 8, 3), np.uint8))
    >>> part["type"], part["image_url"]["url"][:22]
    ('image_url', 'data:image/png;base64,')
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

import numpy as np

from simjudge.envs.errors import SimjudgeError
from simjudge.llm.base import parse_image_data_url
from simjudge.llm.openai_http import image_part as openai_image_part
from simjudge.llm.openai_http import text_part

__all__ = [
    "VLMFrameError",
    "decode_data_url",
    "image_part",
    "image_parts_of",
    "png_bytes",
    "shrink",
    "text_part",
]


class VLMFrameError(SimjudgeError, ValueError):
    """A frame is missing or is not an RGB image; the message says how to get one."""


def _as_rgb(frame: Any) -> np.ndarray:
    if frame is None:
        raise VLMFrameError(
            "no frame to show the VLM: image judges need rendered frames; make the env with "
            "render_mode='rgb_array' (the judge wrappers then render every step)"
        )
    array = np.asarray(frame)
    if array.ndim != 3 or array.shape[2] not in (3, 4) or min(array.shape[:2]) < 1:
        raise VLMFrameError(f"a frame must be an (H, W, 3) RGB array, got shape {array.shape}")
    if array.dtype != np.uint8:
        if np.issubdtype(array.dtype, np.floating) and float(np.nanmax(array, initial=0)) <= 1.0:
            array = array * 255.0
        array = np.clip(np.nan_to_num(array), 0, 255).astype(np.uint8)
    return np.ascontiguousarray(array[..., :3])


def shrink(frame: Any, size: int | None) -> np.ndarray:
    """The frame as uint8 RGB, resized so its long side is at most ``size`` (None: as is)."""
    rgb = _as_rgb(frame)
    if size is None or max(rgb.shape[:2]) <= int(size):
        return rgb
    from PIL import Image

    h, w = rgb.shape[:2]
    scale = int(size) / max(h, w)
    shape = (max(1, round(w * scale)), max(1, round(h * scale)))
    return np.asarray(Image.fromarray(rgb).resize(shape, Image.Resampling.BILINEAR))


def png_bytes(frame: Any, size: int | None = None) -> bytes:
    """PNG of the (shrunk) frame, stored without compression.

    Why uncompressed: equal pixels must give equal bytes on every machine (the replay
    cache keys on the request, images included), and deflate output differs between zlib
    builds (zlib, zlib-ng); stored blocks do not. A 224×168 frame is ~113 kB.
    """
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(shrink(frame, size)).save(buffer, format="PNG", compress_level=0)
    return buffer.getvalue()


def image_part(frame: Any, size: int | None = None) -> dict[str, Any]:
    """An OpenAI ``image_url`` content part carrying the frame as a PNG data URL."""
    return openai_image_part(png_bytes(frame, size))


def decode_data_url(url: str) -> np.ndarray:
    """The RGB array of a ``data:image/...;base64,`` URL (inverse of :func:`image_part`).

    Raises:
        VLMFrameError: Not a base64 data URL of an image.
    """
    from PIL import Image

    parsed = parse_image_data_url(url)
    if parsed is None:
        raise VLMFrameError(f"not a base64 image data URL: {str(url)[:40]!r}")
    return np.asarray(Image.open(io.BytesIO(parsed[1])).convert("RGB"))


def image_parts_of(messages: Sequence[Any]) -> list[np.ndarray]:
    """Every image carried by chat ``messages`` (decoded), in order: what a server sees."""
    frames = []
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            for part in content:
                if isinstance(part, dict) and part.get("type") == "image_url":
                    url = part["image_url"]
                    frames.append(decode_data_url(url["url"] if isinstance(url, dict) else url))
    return frames
