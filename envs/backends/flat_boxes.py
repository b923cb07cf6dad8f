"""Static boxes drawn by ray casting instead of PyBullet's CPU rasterizer.

PyBullet's tiny renderer shades every pixel a triangle covers before the depth test of
later bodies, so the ground and the table (big boxes drawn first, mostly overdrawn or
covering half the frame) cost ~3.5 of ~8 ms per 128² frame, and the box panels of a
cabinet's fixed shell ~0.9 ms. A static box is a handful of planes: :class:`FlatBoxes` hides
such boxes from the rasterizer (their visual shape's alpha is 0; collision shapes, and so
physics, are untouched) and paints them afterwards into the frame with a vectorised ray-box
test, z-tested against the rasterizer's depth buffer. Static boxes are the boxes added with
mass 0 and the untextured box visuals of a fixed-base body's base link; their layer is cached
per camera and pose, so a frame costs a comparison and two masked copies.

Each face gets one flat colour, measured once per box colour and orientation by rendering a
box with the same rasterizer in a separate client (the tiny renderer lights a flat face
evenly, whatever the camera). Rays go through the rasterizer's own sample points, so frames,
segmentation and depth match the rasterized ones (pixel for pixel on the built-in tasks);
``ENABLED = False`` (read when a body is added) turns it off.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

from .base import CameraSpec

__all__ = ["ENABLED", "FlatBox", "FlatBoxes", "camera_rays", "face_colours", "rgb_of"]

ENABLED = True
"""Draw static boxes added from now on by ray casting (``False``: rasterize them)."""

_MAX_CACHED = 64
"""Box layers kept per (camera, box poses); static boxes under a fixed camera need one."""

# a pixel of an RGBA frame as one 3-byte item (then 4-byte stride): copying H*W such items
# is ~2.5x faster than numpy's byte-wise strided copy of ``rgba[..., :3]``
_RGB_OF_RGBA = np.dtype({"names": ["rgb"], "formats": ["V3"], "offsets": [0], "itemsize": 4})

# faces in order -x, +x, -y, +y, -z, +z: (normal axis, sign)
_FACES = tuple((axis, sign) for axis in range(3) for sign in (-1.0, 1.0))


@dataclass(frozen=True)
class FlatBox:
    """A box visual painted by ray casting.

    Attributes:
        body: Body handle (for segmentation); the box moves with the body's base.
        half_extents: Half sizes along the box's own axes.
        rgba: Its colour.
        frame: Its pose in the base's frame (position, ``xyzw`` quaternion).
    """

    body: int
    half_extents: tuple[float, float, float]
    rgba: tuple[float, float, float, float]
    frame: tuple[tuple[float, ...], tuple[float, ...]] = ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0))


def rgb_of(rgba: np.ndarray) -> np.ndarray:
    """A contiguous ``(H, W, 3)`` copy of a contiguous ``uint8`` ``(H, W, 4)`` frame's RGB."""
    height, width, _ = rgba.shape
    pixels = np.ascontiguousarray(rgba).reshape(-1).view(_RGB_OF_RGBA)["rgb"]
    return np.ascontiguousarray(pixels).view(np.uint8).reshape(height, width, 3)


@functools.lru_cache(maxsize=16)
def camera_rays(camera: CameraSpec) -> tuple[np.ndarray, np.ndarray]:
    """Eye and per-pixel ray directions ``(H*W, 3)``, scaled so ``t`` is eye depth."""
    eye = np.asarray(camera.eye, dtype=np.float64)
    forward = np.asarray(camera.target, dtype=np.float64) - eye
    forward /= np.linalg.norm(forward)
    side = np.cross(forward, np.asarray(camera.up, dtype=np.float64))
    side /= np.linalg.norm(side)
    up = np.cross(side, forward)
    tan = np.tan(np.radians(camera.fov) / 2.0)
    aspect = camera.width / camera.height
    # the tiny renderer samples pixel (column j, rasterizer row H-1-i) at integer coordinates
    xs = (2.0 * np.arange(camera.width) / camera.width - 1.0) * tan * aspect
    ys = (1.0 - 2.0 * (np.arange(camera.height) + 1.0) / camera.height) * tan
    dirs = forward + xs[None, :, None] * side + ys[:, None, None] * up
    dirs = dirs.reshape(-1, 3)
    dirs.setflags(write=False)
    return eye, dirs


@functools.lru_cache(maxsize=256)
def face_colours(
    p: Any, rgba: tuple[float, ...], orientation: tuple[float, ...] = (0.0, 0.0, 0.0, 1.0)
) -> np.ndarray:
    """Colour the tiny renderer gives each face of a box (``rgba``, world ``orientation``).

    Rows in order -x, +x, -y, +y, -z, +z of the box's own axes; one 8² render per face.
    """
    client = p.connect(p.DIRECT)
    try:
        vis = p.createVisualShape(
            p.GEOM_BOX, halfExtents=[0.5] * 3, rgbaColor=list(rgba), physicsClientId=client
        )
        p.createMultiBody(0.0, -1, vis, baseOrientation=list(orientation), physicsClientId=client)
        proj = p.computeProjectionMatrixFOV(30.0, 1.0, 0.1, 10.0, physicsClientId=client)
        rotation = _rotation(orientation)
        colours = np.zeros((6, 3), dtype=np.uint8)
        for index, (axis, sign) in enumerate(_FACES):
            normal = rotation[:, axis] * sign
            up = [0.0, 1.0, 0.0] if abs(normal[2]) > 0.9 else [0.0, 0.0, 1.0]
            view = p.computeViewMatrix((3.0 * normal).tolist(), [0, 0, 0], up, physicsClientId=client)
            _, _, image, _, _ = p.getCameraImage(
                8, 8, view, proj, renderer=p.ER_TINY_RENDERER,
                flags=p.ER_NO_SEGMENTATION_MASK, physicsClientId=client,
            )
            colours[index] = np.asarray(image, dtype=np.uint8).reshape(8, 8, 4)[4, 4, :3]
    finally:
        p.disconnect(physicsClientId=client)
    colours.setflags(write=False)
    return colours


class FlatBoxes:
    """The ray-cast boxes of one PyBullet client."""

    def __init__(self, p: Any, client: int) -> None:
        self._p, self._client = p, client
        self.boxes: list[FlatBox] = []
        self._layers: dict[tuple, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def clear(self) -> None:
        """Forget every box (the world was reset)."""
        self.boxes.clear()
        self._layers.clear()

    def visual(self, half_extents, rgba) -> int:
        """A visual shape the rasterizer skips; registers nothing yet (see :meth:`add`)."""
        p = self._p
        return p.createVisualShape(
            p.GEOM_BOX, halfExtents=list(half_extents), rgbaColor=[*list(rgba)[:3], 0.0],
            physicsClientId=self._client,
        )

    def add(self, body: int, half_extents, rgba) -> None:
        """Paint ``body`` (a box made with :meth:`visual`) in every frame from now on."""
        rgba = tuple(float(v) for v in rgba)
        extents = tuple(float(v) for v in half_extents)
        self.boxes.append(FlatBox(body, extents, rgba))  # type: ignore[arg-type]
        self._layers.clear()

    def add_base_boxes(self, body: int) -> None:
        """Ray-cast the untextured box visuals of ``body``'s base link (a fixed base).

        Only when the base's inertial frame is its link frame (then the base pose PyBullet
        reports is the frame the visual offsets are given in; so for every catalogue asset).
        """
        p, c = self._p, self._client
        inertial = p.getDynamicsInfo(body, -1, physicsClientId=c)
        if np.abs(np.subtract([*inertial[3], *inertial[4]], [0, 0, 0, 0, 0, 0, 1])).max() > 1e-9:
            return
        shapes = p.getVisualShapeData(body, p.VISUAL_SHAPE_DATA_TEXTURE_UNIQUE_IDS, physicsClientId=c)
        base = [shape for shape in shapes if shape[1] == -1]
        for index, shape in enumerate(base):
            geometry, dims, position, orientation, rgba = shape[2], shape[3], shape[5], shape[6], shape[7]
            if geometry != p.GEOM_BOX or shape[8] >= 0 or rgba[3] < 1.0:
                continue  # meshes, textures and translucent shapes stay rasterized
            p.changeVisualShape(
                body, -1, shapeIndex=index, rgbaColor=[*rgba[:3], 0.0], physicsClientId=c
            )
            half = tuple(float(d) / 2.0 for d in dims)
            frame = (tuple(map(float, position)), tuple(map(float, orientation)))
            self.boxes.append(FlatBox(body, half, tuple(map(float, rgba)), frame))  # type: ignore[arg-type]
        self._layers.clear()

    def paint(
        self, camera: CameraSpec, rgba: np.ndarray, zbuf: np.ndarray, seg: np.ndarray | None
    ) -> None:
        """Paint the boxes into ``rgba`` where nearer than the rasterizer's ``zbuf`` (in place).

        ``rgba`` is the rasterizer's contiguous ``uint8`` ``(H, W, 4)`` frame; ``zbuf`` its
        non-linear depth buffer (0 near .. 1 far), updated too; ``seg`` (optional) gets the
        boxes' body handles.
        """
        if not self.boxes:
            return
        get_pose, c = self._p.getBasePositionAndOrientation, self._client
        poses = tuple(get_pose(body, physicsClientId=c) for body in self._bodies())
        key = (camera, poses)
        layer = self._layers.get(key)
        if layer is None:
            if len(self._layers) >= _MAX_CACHED:
                self._layers.clear()
            layer = self._layers[key] = self._layer(camera, poses)
        layer_z, layer_rgba, layer_body = layer
        nearer = layer_z < zbuf
        np.copyto(rgba.view(np.uint32)[..., 0], layer_rgba, where=nearer)  # 4 bytes at once
        np.copyto(zbuf, layer_z, where=nearer)
        if seg is not None:
            np.copyto(seg, layer_body, where=nearer)

    def _bodies(self) -> list[int]:
        """Bodies with ray-cast boxes, each once, in order."""
        return list(dict.fromkeys(box.body for box in self.boxes))

    def _layer(self, camera: CameraSpec, poses) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The boxes alone as a frame: depth-buffer value (2: none), RGBA and body per pixel."""
        base_pose = dict(zip(self._bodies(), poses, strict=True))
        shape = (camera.height, camera.width)
        layer_depth = np.full(shape[0] * shape[1], np.inf)
        layer_rgb = np.full((layer_depth.size, 4), 255, dtype=np.uint8)
        layer_body = np.full(layer_depth.size, -1, dtype=np.int32)
        for box in self.boxes:
            position, orientation = self._p.multiplyTransforms(*base_pose[box.body], *box.frame)
            colours = face_colours(self._p, box.rgba, tuple(round(q, 4) for q in orientation))
            rows, faces, eye_depth = _box_hits(box, camera, position, orientation)
            colours = colours[faces]
            nearer = eye_depth < layer_depth[rows]
            rows = rows[nearer]
            layer_depth[rows] = eye_depth[nearer]
            layer_rgb[rows, :3] = colours[nearer]
            layer_body[rows] = box.body
        near, far = camera.near, camera.far
        with np.errstate(divide="ignore"):
            layer_z = (far - far * near / layer_depth) / (far - near)  # inf -> 1 / (1 - n/f)
        layer_z[~np.isfinite(layer_depth)] = 2.0
        return (
            layer_z.astype(np.float32).reshape(shape),
            layer_rgb.view(np.uint32).reshape(shape),
            layer_body.reshape(shape),
        )


def _rotation(orientation) -> np.ndarray:
    """Rotation matrix of a unit ``xyzw`` quaternion (the frame's axes as columns)."""
    x, y, z, w = orientation
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


def _box_hits(
    box: FlatBox, camera: CameraSpec, position, orientation
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pixels (flat indices) where ``box`` is in view, the face each sees and eye depths."""
    eye, dirs = camera_rays(camera)
    rotation = _rotation(orientation)
    origin = (eye - np.asarray(position)) @ rotation  # into the box's frame
    local = dirs @ rotation
    half = np.asarray(box.half_extents)
    with np.errstate(divide="ignore", invalid="ignore"):
        inverse = 1.0 / local
        near_t = (-half - origin) * inverse
        far_t = (half - origin) * inverse
    enter = np.minimum(near_t, far_t)
    axis = enter.argmax(axis=1)
    t_in = enter.max(axis=1)
    hit = (t_in <= np.maximum(near_t, far_t).min(axis=1)) & (t_in > camera.near)
    hit &= t_in < camera.far
    rows = np.flatnonzero(hit)
    axes = axis[rows]
    faces = 2 * axes + (local[rows, axes] < 0)  # entering through the + face when moving -
    return rows, faces, t_in[rows]
