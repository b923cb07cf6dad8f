"""Collision geometry for the SAPIEN backend's closest-point queries (through FCL).

Why FCL: SAPIEN's Python API reports contacts from a step but has no "distance
between these two links now" query, which the planner's validity checker and
suction need. The shapes are the same ones given to PhysX (from the URDF via
:func:`~simjudge.envs.backends.mjcf.parse_urdf`), posed at query time from the
links' current world poses, and FCL's GJK/EPA gives signed distances and the
nearest points.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from .base import BackendError
from .mjcf import UrdfGeom

__all__ = ["LinkGeometry", "fcl_distance", "geometry_for"]


def _fcl():
    try:
        import fcl
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise BackendError("the sapien backend's collision queries need `python-fcl`; `pip install python-fcl`") from exc
    return fcl


@functools.lru_cache(maxsize=64)
def _obj_mesh(path: str, scale: tuple[float, float, float]) -> tuple[np.ndarray, np.ndarray]:
    vertices, faces = [], []
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if line.startswith("v "):
                vertices.append([float(x) for x in line.split()[1:4]])
            elif line.startswith("f "):
                ids = [int(part.split("/")[0]) for part in line.split()[1:]]
                ids = [i - 1 if i > 0 else len(vertices) + i for i in ids]
                faces += [[ids[0], ids[k], ids[k + 1]] for k in range(1, len(ids) - 1)]
    return np.asarray(vertices) * np.asarray(scale), np.asarray(faces, dtype=np.int64)


def _rotation(wxyz) -> np.ndarray:
    w, x, y, z = wxyz
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


@dataclass
class LinkGeometry:
    """One link's collision shapes as FCL objects plus their poses in the link frame."""

    objects: list
    local: list[tuple[np.ndarray, np.ndarray]]

    def place(self, position: np.ndarray, rotation: np.ndarray) -> None:
        """Pose every shape for a link frame at ``position`` with ``rotation`` (3x3)."""
        fcl = _fcl()
        for obj, (pos, rot) in zip(self.objects, self.local, strict=True):
            obj.setTransform(fcl.Transform(rotation @ rot, position + rotation @ pos))


def geometry_for(geoms: tuple[UrdfGeom, ...]) -> LinkGeometry:
    """FCL objects for URDF collision shapes (meshes become convex shapes of their vertices)."""
    fcl = _fcl()
    objects, local = [], []
    for geom in geoms:
        if geom.kind == "box":
            shape = fcl.Box(*(2.0 * s for s in geom.size))
        elif geom.kind == "cylinder":
            shape = fcl.Cylinder(geom.size[0], 2.0 * geom.size[1])
        elif geom.kind == "sphere":
            shape = fcl.Sphere(geom.size[0])
        else:  # a convex shape, as PhysX's convex mesh: GJK/EPA give signed distances
            vertices, faces = _obj_mesh(geom.mesh, geom.mesh_scale)
            polygons = np.concatenate([np.full((len(faces), 1), 3), faces], axis=1).ravel()
            shape = fcl.Convex(vertices, len(faces), polygons)
        objects.append(fcl.CollisionObject(shape, fcl.Transform()))
        local.append((np.asarray(geom.pos, float), _rotation(geom.quat)))
    return LinkGeometry(objects, local)


def fcl_distance(first, second) -> tuple[float, np.ndarray, np.ndarray]:
    """Signed distance and nearest points (on ``first``, on ``second``) of two FCL objects."""
    fcl = _fcl()
    request = fcl.DistanceRequest(enable_nearest_points=True, enable_signed_distance=True)
    result = fcl.DistanceResult()
    distance = fcl.distance(first, second, request, result)
    return float(distance), np.asarray(result.nearest_points[0]), np.asarray(result.nearest_points[1])
