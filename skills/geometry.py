"""Collision geometry of an asset read from its URDF, and surface samples on it.

Why read the URDF rather than ask the backend: grasp samples are a property of
the asset, computed once per asset link and reused in every scene, and must not
depend on a simulator's internal shape conversions (PyBullet turns URDF
cylinders into convex meshes, whose dimensions it no longer reports). The URDF
holds the exact primitives (boxes, cylinders, spheres) in each link's frame, and
its joints give every link's pose with all joints closed.
"""

from __future__ import annotations

import functools
import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from simjudge.envs.transforms import rpy_matrix

__all__ = [
    "Shape",
    "SurfaceSample",
    "UrdfGeometry",
    "load_urdf_geometry",
    "point_inside",
    "sample_surface",
]


def _attr(elem: ET.Element | None, name: str) -> str:
    """A required URDF attribute; a malformed URDF gets an error naming what is missing."""
    value = elem.get(name) if elem is not None else None
    if value is None:
        where = f"<{elem.tag}>" if elem is not None else "an element"
        raise ValueError(f"URDF: {where} has no {name!r} attribute")
    return value


def _origin(elem: ET.Element | None) -> np.ndarray:
    """4x4 transform of an URDF ``<origin>`` element (identity when absent)."""
    t = np.eye(4)
    if elem is None:
        return t
    xyz = [float(v) for v in elem.get("xyz", "0 0 0").split()]
    rpy = [float(v) for v in elem.get("rpy", "0 0 0").split()]
    t[:3, :3] = rpy_matrix(tuple(rpy))
    t[:3, 3] = xyz
    return t


def _axis_rotation(axis: np.ndarray, angle: float) -> np.ndarray:
    axis = axis / np.linalg.norm(axis)
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + math.sin(angle) * k + (1 - math.cos(angle)) * (k @ k)


@dataclass(frozen=True)
class Shape:
    """A primitive collision shape in its link's frame.

    Attributes:
        kind: ``box``, ``cylinder`` or ``sphere``.
        dims: Box half-extents (3); cylinder ``(radius, length)`` along local z;
            sphere ``(radius,)``.
        pose: 4x4 transform of the shape frame in the link frame.
    """

    kind: str
    dims: tuple[float, ...]
    pose: np.ndarray = field(compare=False)


@dataclass(frozen=True)
class _Joint:
    name: str
    type: str
    parent: str
    child: str
    origin: np.ndarray
    axis: np.ndarray
    lower: float
    upper: float


@dataclass
class UrdfGeometry:
    """Links, shapes and joints of one URDF (scaled).

    Attributes:
        root: Name of the base link.
        shapes: Link name -> its primitive collision shapes (link frame).
        joints: Joints by child link name.
        base_inertial: 4x4 pose of the base's inertial frame in the URDF base
            frame (simulators report a base pose at its centre of mass).
    """

    root: str
    shapes: dict[str, list[Shape]]
    joints: dict[str, _Joint]
    base_inertial: np.ndarray

    def closed_link_poses(self) -> dict[str, np.ndarray]:
        """Every link's pose in the base frame with all joints closed (at their lower limit)."""
        poses = {self.root: np.eye(4)}
        pending = dict(self.joints)
        while pending:
            ready = [j for j in pending.values() if j.parent in poses]
            if not ready:  # pragma: no cover - a malformed tree
                break
            for joint in ready:
                q = joint.lower if joint.lower <= joint.upper else 0.0
                motion = np.eye(4)
                if joint.type == "prismatic":
                    motion[:3, 3] = joint.axis * q
                elif joint.type in ("revolute", "continuous"):
                    motion[:3, :3] = _axis_rotation(joint.axis, q)
                poses[joint.child] = poses[joint.parent] @ joint.origin @ motion
                del pending[joint.child]
        return poses


def _shape(geom: ET.Element, scale: float, pose: np.ndarray) -> Shape | None:
    box, cyl, sph = geom.find("box"), geom.find("cylinder"), geom.find("sphere")
    if box is not None:
        size = [float(v) * scale / 2.0 for v in box.get("size", "0 0 0").split()]
        return Shape("box", tuple(size), pose)
    if cyl is not None:
        return Shape(
            "cylinder",
            (float(_attr(cyl, "radius")) * scale, float(_attr(cyl, "length")) * scale),
            pose,
        )
    if sph is not None:
        return Shape("sphere", (float(_attr(sph, "radius")) * scale,), pose)
    return None  # meshes carry no primitive to sample


@functools.lru_cache(maxsize=256)
def load_urdf_geometry(path: str | Path, scale: float = 1.0) -> UrdfGeometry:
    """Parse (once per path and scale) the primitive collision geometry of a URDF."""
    root = ET.parse(str(path)).getroot()
    shapes: dict[str, list[Shape]] = {}
    links = root.findall("link")
    for link in links:
        found = []
        for col in link.findall("collision"):
            pose = _origin(col.find("origin"))
            pose[:3, 3] *= scale
            geom = col.find("geometry")
            shape = _shape(geom, scale, pose) if geom is not None else None
            if shape is not None:
                found.append(shape)
        shapes[_attr(link, "name")] = found
    joints: dict[str, _Joint] = {}
    for j in root.findall("joint"):
        origin = _origin(j.find("origin"))
        origin[:3, 3] *= scale
        axis_el = j.find("axis")
        axis = np.array(
            [float(v) for v in (_attr(axis_el, "xyz") if axis_el is not None else "1 0 0").split()]
        )
        limit = j.find("limit")
        lower = float(limit.get("lower", 0.0)) if limit is not None else 0.0
        upper = float(limit.get("upper", 0.0)) if limit is not None else 0.0
        if j.get("type") == "prismatic":
            lower, upper = lower * scale, upper * scale
        child = _attr(j.find("child"), "link")
        joints[child] = _Joint(
            _attr(j, "name"),
            _attr(j, "type"),
            _attr(j.find("parent"), "link"),
            child,
            origin,
            axis,
            lower,
            upper,
        )
    children = set(joints)
    base = next(_attr(link, "name") for link in links if link.get("name") not in children)
    inertial = _origin(
        next((lk.find("inertial/origin") for lk in links if lk.get("name") == base), None)
    )
    inertial[:3, 3] *= scale
    return UrdfGeometry(base, shapes, joints, inertial)


def point_inside(shape: Shape, points: np.ndarray, tolerance: float = 1e-4) -> np.ndarray:
    """Which of ``points`` (n, 3; link frame) lie inside ``shape`` shrunk by ``tolerance``."""
    rot, pos = shape.pose[:3, :3], shape.pose[:3, 3]
    local = (np.atleast_2d(points) - pos) @ rot  # rotate into the shape frame
    if shape.kind == "box":
        return np.all(np.abs(local) < np.asarray(shape.dims) - tolerance, axis=1)
    if shape.kind == "cylinder":
        radius, length = shape.dims
        radial = np.hypot(local[:, 0], local[:, 1])
        return (radial < radius - tolerance) & (np.abs(local[:, 2]) < length / 2 - tolerance)
    return np.linalg.norm(local, axis=1) < shape.dims[0] - tolerance


@dataclass(frozen=True)
class SurfaceSample:
    """A point on a link's surface with its outward normal, in the link frame.

    Attributes:
        point: Surface point (3).
        normal: Outward unit normal (3).
        kind: ``interaction`` (the asset's recorded contact), ``box``,
            ``cylinder-cap``, ``cylinder-side`` or ``sphere``.
        area: Area of the surface patch the sample stands for (m²); larger
            patches are easier to hold by suction.
        centre: Whether the point is the centre of its face.
    """

    point: tuple[float, float, float]
    normal: tuple[float, float, float]
    kind: str
    area: float
    centre: bool = True


_GRID = 0.04
"""Faces at least this wide in both directions also get four off-centre samples."""


def _box_samples(dims: tuple[float, ...]) -> list[tuple[np.ndarray, np.ndarray, float, bool]]:
    out = []
    for axis in range(3):
        j, k = [a for a in range(3) if a != axis]
        for sign in (1.0, -1.0):
            normal = np.zeros(3)
            normal[axis] = sign
            centre = normal * dims[axis]
            area = 4.0 * dims[j] * dims[k]
            out.append((centre, normal, area, True))
            if 2 * dims[j] >= _GRID and 2 * dims[k] >= _GRID:
                for sj in (-0.5, 0.5):
                    for sk in (-0.5, 0.5):
                        p = centre.copy()
                        p[j] += sj * dims[j]
                        p[k] += sk * dims[k]
                        out.append((p, normal, area / 4.0, False))
    return out


def _cylinder_samples(dims: tuple[float, ...]) -> list[tuple[np.ndarray, np.ndarray, float, bool]]:
    radius, length = dims
    out = []
    cap_area = math.pi * radius**2
    for sign in (1.0, -1.0):
        out.append(
            (np.array([0.0, 0.0, sign * length / 2]), np.array([0.0, 0.0, sign]), cap_area, True)
        )
    heights = [0.0] if length < _GRID else [-length / 4, 0.0, length / 4]
    side_area = 2 * math.pi * radius * length / (8 * len(heights))
    for i in range(8):
        angle = i * math.pi / 4
        normal = np.array([math.cos(angle), math.sin(angle), 0.0])
        for h in heights:
            out.append((normal * radius + np.array([0.0, 0.0, h]), normal, side_area, h == 0.0))
    return out


def _sphere_samples(dims: tuple[float, ...]) -> list[tuple[np.ndarray, np.ndarray, float, bool]]:
    dirs = [np.eye(3)[i] * s for i in range(3) for s in (1.0, -1.0)]
    dirs += [
        np.array([sx, sy, sz]) / math.sqrt(3) for sx in (1, -1) for sy in (1, -1) for sz in (1, -1)
    ]
    area = 4 * math.pi * dims[0] ** 2 / len(dirs)
    return [(d * dims[0], d, area, True) for d in dirs]


_SAMPLERS = {"box": _box_samples, "cylinder": _cylinder_samples, "sphere": _sphere_samples}
_RAY = (0.002, 0.01, 0.02, 0.03)
"""Distances along the normal that must be free of the asset's other shapes."""


def sample_surface(geometry: UrdfGeometry, link: str) -> list[SurfaceSample]:
    """Surface samples of ``link`` whose outward normal is not blocked by the asset itself.

    A sample is dropped when a short ray along its normal (2 mm to 3 cm) enters
    any other collision shape of the asset with all joints closed: faces glued
    to another part (a handle's back on the door, a knob stem inside its cap) and
    faces looking into the asset are not grasp candidates.
    """
    poses = geometry.closed_link_poses()
    inv = np.linalg.inv(poses[link])
    others: list[Shape] = []
    for name, shapes in geometry.shapes.items():
        rel = inv @ poses[name]
        others += [Shape(s.kind, s.dims, rel @ s.pose) for s in shapes]
    own = geometry.shapes.get(link, [])
    out: list[SurfaceSample] = []
    for shape in own:
        rot, pos = shape.pose[:3, :3], shape.pose[:3, 3]
        blockers = [o for o in others if not _same(o, shape)]
        for local_p, local_n, area, centre in _SAMPLERS[shape.kind](shape.dims):
            p = rot @ local_p + pos
            n = rot @ local_n
            ray = p + np.outer(_RAY, n)
            if not any(np.any(point_inside(other, ray)) for other in blockers):
                out.append(
                    SurfaceSample(
                        _floats(p), _floats(n), _label(shape, local_n), float(area), centre
                    )
                )
    return out


def _same(other: Shape, shape: Shape) -> bool:
    """Whether ``other`` is ``shape`` itself (a convex shape never blocks its own normal)."""
    return (
        other.kind == shape.kind
        and other.dims == shape.dims
        and np.allclose(other.pose, shape.pose)
    )


def _floats(v: np.ndarray) -> tuple[float, float, float]:
    return (float(v[0]), float(v[1]), float(v[2]))


def _label(shape: Shape, local_normal: np.ndarray) -> str:
    if shape.kind != "cylinder":
        return shape.kind
    return "cylinder-cap" if abs(local_normal[2]) > 0.5 else "cylinder-side"
