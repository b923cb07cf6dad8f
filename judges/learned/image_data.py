"""Frames for the image progress judge: randomised views, photometric changes, NPZ shards.

Each episode of ``simjudge judges dataset --images`` is rendered from its own exterior
camera, drawn by :func:`random_camera` inside a cone around the task's default view, and
with its own :class:`Photometric` draw: per-body colour tints (through the renderer's
segmentation: object, robot and table colours change per episode), a global brightness and
a directional light ramp. Frames are rendered at twice :data:`STORE_SIZE`, box-filtered
down and stored as ``uint8`` in compressed NPZ shards, one per (task, seed), written
atomically. The network reads :data:`FRAME_SIZE` frames: :func:`to_model_size` box-filters
stored frames (when training) and any frame the live judge gets.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from simjudge.envs.backends.base import CameraSpec

__all__ = ["FRAME_SIZE", "STORE_SIZE", "ImageBatch", "Photometric", "concat_image_shards", "load_image_shard",
           "random_camera", "random_photometric", "save_image_shard", "shift_camera",
           "to_model_size"]

STORE_SIZE: tuple[int, int] = (128, 96)
"""(width, height) of stored frames."""

FRAME_SIZE: tuple[int, int] = (96, 72)
"""(width, height) of the network input."""

CONE_DEG: tuple[float, float] = (12.0, 6.0)
"""Largest azimuth and elevation change (degrees) of a randomised camera."""


def shift_camera(base: CameraSpec, d_azimuth: float = 0.0, d_elevation: float = 0.0,
                 scale: float = 1.0, d_target: Sequence[float] = (0.0, 0.0, 0.0),
                 d_fov: float = 0.0, size: tuple[int, int] | None = None) -> CameraSpec:
    """``base`` orbited about its target by the given degrees, distance ``scale`` and shifts."""
    eye, target = np.asarray(base.eye, float), np.asarray(base.target, float)
    v = eye - target
    r = float(np.linalg.norm(v))
    az = math.atan2(v[1], v[0]) + math.radians(d_azimuth)
    el = math.asin(max(-1.0, min(1.0, v[2] / r))) + math.radians(d_elevation)
    r *= scale
    new_target = target + np.asarray(d_target, float)
    new_eye = new_target + r * np.array([math.cos(el) * math.cos(az),
                                         math.cos(el) * math.sin(az), math.sin(el)])
    width, height = size if size is not None else (base.width, base.height)
    return CameraSpec(base.name, tuple(float(x) for x in new_eye),  # type: ignore[arg-type]
                      tuple(float(x) for x in new_target),  # type: ignore[arg-type]
                      base.up, fov=base.fov + d_fov, width=width, height=height,
                      near=base.near, far=base.far)


def random_camera(base: CameraSpec, rng: np.random.Generator,
                  size: tuple[int, int] = (2 * STORE_SIZE[0], 2 * STORE_SIZE[1])) -> CameraSpec:
    """A camera drawn inside the cone :data:`CONE_DEG` around ``base``.

    Also the distance changes by ±10 %, the look-at point by ±4 cm, the field of view by ±3°.
    """
    return shift_camera(base, float(rng.uniform(-CONE_DEG[0], CONE_DEG[0])),
                        float(rng.uniform(-CONE_DEG[1], CONE_DEG[1])),
                        float(rng.uniform(0.9, 1.1)), rng.uniform(-0.04, 0.04, 3).tolist(),
                        float(rng.uniform(-3.0, 3.0)), size)


@dataclass(frozen=True)
class Photometric:
    """Per-episode colours and light of rendered frames.

    Attributes:
        tints: RGB gain per segmentation id (body handle; ids missing keep their colour).
        brightness: Global gain.
        ramp: Strength of a linear light ramp across the image (0 = even light).
        ramp_angle: Direction of the ramp (radians, image plane).
    """

    tints: dict[int, tuple[float, float, float]]
    brightness: float
    ramp: float
    ramp_angle: float

    def apply(self, rgb: np.ndarray, segmentation: np.ndarray) -> np.ndarray:
        """``rgb`` (uint8 HxWx3) recoloured per body and relit, as uint8."""
        h, w = rgb.shape[:2]
        light = self._light(h, w)
        if segmentation.shape == rgb.shape[:2] and self.tints:
            top = max(max(self.tints), int(segmentation.max()), 0) + 2
            lut = np.ones((top, 3), np.float32)
            for body, tint in self.tints.items():
                lut[body + 1] = tint
            gain = lut[np.clip(segmentation, -1, top - 2) + 1] * light[..., None]
        else:
            gain = np.broadcast_to(light[..., None], rgb.shape)
        return np.clip(rgb * gain, 0, 255).astype(np.uint8)

    def _light(self, h: int, w: int) -> np.ndarray:
        xs = np.linspace(-0.5, 0.5, w, dtype=np.float32)
        ys = np.linspace(-0.5, 0.5, h, dtype=np.float32)
        u = xs[None, :] * math.cos(self.ramp_angle) + ys[:, None] * math.sin(self.ramp_angle)
        return (self.brightness * (1.0 + self.ramp * u)).astype(np.float32)


def random_photometric(bodies: Sequence[int], rng: np.random.Generator) -> Photometric:
    """Tints in [0.65, 1.35] per channel per body, brightness in [0.75, 1.2], ramp ≤ 0.4."""
    tints: dict[int, tuple[float, float, float]] = {}
    for body in bodies:
        r, g, b = (float(x) for x in rng.uniform(0.65, 1.35, 3))
        tints[int(body)] = (r, g, b)
    return Photometric(tints, float(rng.uniform(0.75, 1.2)), float(rng.uniform(0.0, 0.4)),
                       float(rng.uniform(0.0, 2 * math.pi)))


def to_model_size(frame: np.ndarray, size: tuple[int, int] = FRAME_SIZE) -> np.ndarray:
    """Any RGB frame (uint8 HxWx3) box-filtered to ``size`` (width, height), uint8."""
    frame = np.asarray(frame)
    if frame.ndim != 3 or frame.shape[2] < 3:
        raise ValueError(f"need an RGB frame (H, W, 3), got shape {frame.shape}")
    frame = np.ascontiguousarray(frame[..., :3])
    if frame.dtype != np.uint8:
        frame = np.clip(np.rint(frame * (255.0 if frame.max() <= 1.0 else 1.0)), 0, 255
                        ).astype(np.uint8)
    w, h = size
    if frame.shape[:2] == (h, w):
        return frame
    if frame.shape[0] == 2 * h and frame.shape[1] == 2 * w:
        quads = frame.reshape(h, 2, w, 2, 3).astype(np.uint16).sum(axis=(1, 3))
        return ((quads + 2) // 4).astype(np.uint8)
    from PIL import Image

    return np.asarray(Image.fromarray(frame).resize((w, h), Image.Resampling.BOX))


@dataclass
class ImageBatch:
    """Frames and labels of several shards (arrays aligned on the first axis).

    Attributes:
        frames: ``(N, H, W, 3)`` uint8. first: ``(N,)`` row of each episode's first frame.
        phi: ``(N,)`` labels. episode: ``(N,)`` global episode ids. step: ``(N,)``.
        task_ids: ``(N,)`` rows of ``task_emb``. task_emb: ``(n_tasks, 384)``.
        tasks: Task id per row of ``task_emb``.
    """

    frames: np.ndarray
    first: np.ndarray
    phi: np.ndarray
    episode: np.ndarray
    step: np.ndarray
    task_ids: np.ndarray
    task_emb: np.ndarray
    tasks: list[str]


def save_image_shard(path: str | Path, arrays: dict[str, np.ndarray],
                     meta: dict[str, Any]) -> None:
    """Write an image shard atomically (the obs shards' writer, :func:`~.data.save_shard`)."""
    from .data import save_shard  # imports torch: only when shards are written

    save_shard(path, arrays, meta)


def load_image_shard(path: str | Path) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Arrays and meta of an image shard (:func:`~.data.load_shard`)."""
    from .data import load_shard  # imports torch: only when shards are read

    return load_shard(path)


def concat_image_shards(paths: Sequence[str | Path], size: tuple[int, int] = FRAME_SIZE
                        ) -> ImageBatch:
    """All image shards as one :class:`ImageBatch` (episode ids made global).

    Frames are box-filtered to ``size``.

    Raises:
        ValueError: No shards.
    """
    parts: dict[str, list[np.ndarray]] = {k: [] for k in ("frames", "phi", "episode", "step",
                                                          "task_ids")}
    tasks: list[str] = []
    task_emb: list[np.ndarray] = []
    offset = 0
    for path in paths:
        a, meta = load_image_shard(path)
        if meta["task"] not in tasks:
            tasks.append(meta["task"])
            task_emb.append(a["task_emb"])
        n = len(a["phi"])
        parts["frames"].append(np.stack([to_model_size(f, size) for f in a["frames"]])
                               if len(a["frames"]) else a["frames"])
        for key in ("phi", "step"):
            parts[key].append(a[key])
        parts["episode"].append(a["episode"].astype(np.int64) + offset)
        parts["task_ids"].append(np.full(n, tasks.index(meta["task"]), np.int32))
        offset += int(a["episode"].max()) + 1 if n else 0
    if not parts["phi"]:
        raise ValueError("no image shards to load; build them with `simjudge judges dataset "
                         "--images`")
    cat = {k: np.concatenate(v) for k, v in parts.items()}
    starts = np.flatnonzero(np.r_[True, np.diff(cat["episode"]) != 0])
    first = starts[np.searchsorted(starts, np.arange(len(cat["phi"])), side="right") - 1]
    return ImageBatch(cat["frames"], first.astype(np.int64), cat["phi"].astype(np.float32),
                      cat["episode"], cat["step"], cat["task_ids"],
                      np.stack(task_emb).astype(np.float32), tasks)


def describe_view(camera: CameraSpec, photometric: Photometric) -> dict[str, Any]:
    """JSON-ready record of an episode's camera and photometric draw."""
    return {"camera": asdict(camera),
            "photometric": {"tints": {str(k): v for k, v in photometric.tints.items()},
                            "brightness": photometric.brightness, "ramp": photometric.ramp,
                            "ramp_angle": photometric.ramp_angle}}
