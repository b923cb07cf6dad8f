"""Rendering of the SAPIEN backend: visual shapes, cameras, RGB / depth / segmentation.

SAPIEN 3 renders through Vulkan. Where a Vulkan device exists the backend's scene gets a
``RenderSystem`` and every link its URDF visual shapes; :class:`SapienCameras` then keeps
one camera entity per :class:`~simjudge.envs.backends.base.CameraSpec` and turns SAPIEN's
``Color``, ``Position`` and ``Segmentation`` pictures into a
:class:`~simjudge.envs.backends.base.RenderResult`. Without a device nothing here runs:
physics works, and :func:`render_unavailable` is the clear error ``render`` raises.

Check on a machine (prints ``None`` where SAPIEN can render, else the reason):
``python -c "from simjudge.envs.backends.sapien_render import sapien_render_problem as p; print(p())"``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .base import BackendError, CameraSpec, RenderResult
from .mjcf import UrdfGeom

__all__ = ["SapienCameras", "add_visuals", "camera_rotation", "render_unavailable", "sapien_render_problem"]

_RENDER_PROBLEM: list[str | None] = []


def import_sapien():
    """The ``sapien`` module, or a :class:`BackendError` saying how to install it."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "Failed to find system libvulkan": no GPU here
            import sapien
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise BackendError("the sapien backend needs the `sapien` package (3), which is not installed: pip install 'simjudge[sapien]'") from exc
    return sapien


def sapien_render_problem() -> str | None:
    """Why SAPIEN cannot render on this machine (None when a render device exists)."""
    if not _RENDER_PROBLEM:
        sapien = import_sapien()
        try:
            sapien.render.RenderSystem()
            _RENDER_PROBLEM.append(None)
        except Exception as exc:  # noqa: BLE001 - any device failure is the reason
            _RENDER_PROBLEM.append(f"{type(exc).__name__}: {exc}")
    return _RENDER_PROBLEM[0]


def render_unavailable(problem: str) -> BackendError:
    """The error ``render`` raises where SAPIEN has no Vulkan device: why, and what renders here."""
    return BackendError(
        f"SAPIEN cannot render on this machine: its renderer needs a Vulkan GPU device "
        f"({problem}); physics runs without it. Render with backend='mujoco' (offscreen "
        "OpenGL, MUJOCO_GL=egl/osmesa) or backend='pybullet' (CPU tiny renderer)"
    )


def add_visuals(builder, geoms: tuple[UrdfGeom, ...], sapien) -> None:
    """Add a link's URDF visual shapes to a SAPIEN actor or link builder (rendering scenes only)."""
    for geom in geoms:
        pose = sapien.Pose(geom.pos, geom.quat)
        material = sapien.render.RenderMaterial(base_color=[float(c) for c in geom.rgba])
        if geom.kind == "box":
            builder.add_box_visual(pose, half_size=geom.size, material=material)
        elif geom.kind == "sphere":
            builder.add_sphere_visual(pose, radius=geom.size[0], material=material)
        elif geom.kind == "cylinder":  # SAPIEN cylinders lie along x, URDF ones along z
            turn = sapien.Pose([0, 0, 0], [math.sqrt(0.5), 0.0, -math.sqrt(0.5), 0.0])
            builder.add_cylinder_visual(pose * turn, radius=geom.size[0], half_length=geom.size[1],
                                        material=material)
        else:
            builder.add_visual_from_file(geom.mesh, pose, scale=geom.mesh_scale)


def camera_rotation(camera: CameraSpec) -> np.ndarray:
    """Rotation (columns: forward, left, up) of a SAPIEN camera at ``eye`` looking at ``target``.

    SAPIEN's camera frame has x forward, y left and z up.
    """
    eye, target = np.asarray(camera.eye, float), np.asarray(camera.target, float)
    forward = target - eye
    forward /= np.linalg.norm(forward)
    left = np.cross(np.asarray(camera.up, float), forward)
    norm = float(np.linalg.norm(left))
    left = np.cross([0.0, 1.0, 0.0], forward) if norm < 1e-9 else left / norm  # looking along up
    left /= np.linalg.norm(left)
    return np.stack([forward, left, np.cross(forward, left)], axis=1)


class SapienCameras:
    """Camera entities of one SAPIEN scene, one per camera spec, and their pictures.

    Args:
        scene: A SAPIEN scene that has a render system.
    """

    def __init__(self, scene: Any) -> None:
        self._scene = scene
        self._cameras: dict[CameraSpec, Any] = {}

    def _camera(self, spec: CameraSpec, quat_of) -> Any:
        camera = self._cameras.get(spec)
        if camera is None:
            sapien = import_sapien()
            camera = self._scene.add_camera(f"simjudge_{spec.name}_{len(self._cameras)}", int(spec.width),
                                            int(spec.height), math.radians(spec.fov), float(spec.near),
                                            float(spec.far))
            camera.entity.set_pose(sapien.Pose(np.asarray(spec.eye, float), quat_of(camera_rotation(spec))))
            self._cameras[spec] = camera
        return camera

    def render(self, spec: CameraSpec, depth: bool, quat_of, owner: Callable[[], dict[int, int]]) -> RenderResult:
        """RGB (and metric depth and per-pixel body handles, -1 = nothing) of ``spec``.

        Args:
            spec: The camera.
            depth: Also render depth and segmentation.
            quat_of: Rotation matrix -> SAPIEN ``(w, x, y, z)`` quaternion.
            owner: Entity ``per_scene_id`` -> backend body handle (for the segmentation).
        """
        camera = self._camera(spec, quat_of)
        self._scene.update_render()
        camera.take_picture()
        rgba = np.asarray(camera.get_picture("Color"), dtype=np.float32)
        rgb = (np.clip(rgba[..., :3], 0.0, 1.0) * 255.0 + 0.5).astype(np.uint8)
        result = RenderResult(rgb=rgb, depth=np.zeros((0, 0), np.float32))
        if depth:
            position = np.asarray(camera.get_picture("Position"), dtype=np.float32)
            metric = -position[..., 2]  # OpenGL camera space: the camera looks along -z
            result.depth = np.where(position[..., 3] < 1.0, metric, np.float32(spec.far)).astype(np.float32)
            ids = np.asarray(camera.get_picture("Segmentation"))[..., 1].astype(np.int64)  # entity level
            lookup = np.full(int(ids.max()) + 1, -1, dtype=np.int32)
            for entity_id, handle in owner().items():
                if entity_id < len(lookup):
                    lookup[entity_id] = handle
            result.segmentation = lookup[ids]
        return result
