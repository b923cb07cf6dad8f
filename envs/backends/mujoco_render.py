"""Offscreen rendering of the MuJoCo backend: RGB, metric depth and per-pixel body handles.

Needs an OpenGL context: ``MUJOCO_GL=egl`` (the backend's default; Debian ``libegl1``)
or ``osmesa`` (``libosmesa6``). Where neither works, :func:`render` raises
:class:`~simjudge.envs.backends.base.BackendError` saying so and naming PyBullet's CPU
renderer as the alternative.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .base import BackendError, CameraSpec, RenderResult

__all__ = ["OffscreenRenderers"]


class OffscreenRenderers:
    """``mujoco.Renderer`` objects of one compiled model, one per image size."""

    def __init__(self, mj: Any) -> None:
        self._mj = mj
        self._model: Any = None
        self._renderers: dict[tuple[int, int], Any] = {}

    def close(self) -> None:
        """Free every GL context (also done when the model is recompiled)."""
        for renderer in self._renderers.values():
            try:
                renderer.close()
            except Exception:  # noqa: BLE001 - a failed GL context
                pass
        self._renderers.clear()

    def render(self, model, data, body_handle: np.ndarray, camera: CameraSpec, depth: bool) -> RenderResult:
        """One camera's images; ``body_handle`` maps MuJoCo body ids to backend handles."""
        mj = self._mj
        renderer = self._renderer(model, camera.width, camera.height)
        model.vis.global_.fovy = float(camera.fov)
        model.vis.map.znear = float(camera.near) / model.stat.extent
        model.vis.map.zfar = float(camera.far) / model.stat.extent
        eye, target = np.asarray(camera.eye, float), np.asarray(camera.target, float)
        forward = target - eye
        distance = float(np.linalg.norm(forward))
        forward /= distance
        cam = mj.MjvCamera()
        cam.type = mj.mjtCamera.mjCAMERA_FREE
        cam.lookat[:] = target
        cam.distance = distance
        cam.azimuth = math.degrees(math.atan2(forward[1], forward[0]))
        cam.elevation = math.degrees(math.asin(max(-1.0, min(1.0, forward[2]))))
        renderer.update_scene(data, camera=cam)
        result = RenderResult(rgb=renderer.render().copy(), depth=np.zeros((0, 0), np.float32))
        if depth:
            renderer.enable_depth_rendering()
            result.depth = renderer.render().astype(np.float32)
            renderer.disable_depth_rendering()
            renderer.enable_segmentation_rendering()
            seg = renderer.render()
            renderer.disable_segmentation_rendering()
            geom = seg[..., 0].astype(np.int64)
            is_geom = (seg[..., 1] == int(mj.mjtObj.mjOBJ_GEOM)) & (geom >= 0)
            handles = np.full(geom.shape, -1, dtype=np.int32)
            handles[is_geom] = body_handle[model.geom_bodyid].astype(np.int32)[geom[is_geom]]
            result.segmentation = handles
        return result

    def _renderer(self, model, width: int, height: int):
        if model is not self._model:
            self.close()
            self._model = model
        key = (int(width), int(height))
        renderer = self._renderers.get(key)
        if renderer is None:
            try:
                renderer = self._mj.Renderer(model, height=key[1], width=key[0])
            except Exception as exc:  # noqa: BLE001 - every GL failure gets the same advice
                raise BackendError(
                    f"MuJoCo cannot render here ({type(exc).__name__}: {exc}). Offscreen rendering needs "
                    "an OpenGL context: set MUJOCO_GL=egl (Debian package libegl1) or MUJOCO_GL=osmesa "
                    "(libosmesa6) before simjudge imports mujoco; the pybullet backend renders on the "
                    "CPU without OpenGL"
                ) from exc
            self._renderers[key] = renderer
        return renderer
