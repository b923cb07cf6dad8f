"""The SAPIEN backend's body records and frame conventions (shared by its modules).

SAPIEN quaternions are ``(w, x, y, z)`` and PhysX joints turn about their frame's x
axis; the protocol uses ``(x, y, z, w)`` and URDF joint axes. The helpers here convert.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .base import JointInfo
from .mjcf import UrdfGeom, UrdfModel
from .sapien_geometry import LinkGeometry

__all__ = [
    "SapienBody", "component_of", "joint_infos_of", "matrix_quat", "quat_rotate_x_to", "rotation",
    "set_inertia", "wxyz", "xyzw",
]


def quat_rotate_x_to(axis: np.ndarray) -> np.ndarray:
    """A ``(w, x, y, z)`` rotation taking the x axis to ``axis`` (PhysX joints turn about x)."""
    x = np.array([1.0, 0.0, 0.0])
    axis = axis / (np.linalg.norm(axis) or 1.0)
    cross, dot = np.cross(x, axis), float(x @ axis)
    if dot < -1.0 + 1e-9:
        return np.array([0.0, 0.0, 0.0, 1.0])  # half turn about z
    quat = np.array([1.0 + dot, *cross])
    return quat / np.linalg.norm(quat)


def rotation(wxyz) -> np.ndarray:
    """Rotation matrix of a ``(w, x, y, z)`` quaternion."""
    w, x, y, z = wxyz
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


def matrix_quat(rotation: np.ndarray) -> np.ndarray:
    """``(w, x, y, z)`` of a rotation matrix."""
    trace = float(np.trace(rotation))
    if trace > 0:
        s = math.sqrt(trace + 1.0) * 2
        quat = [0.25 * s, (rotation[2, 1] - rotation[1, 2]) / s, (rotation[0, 2] - rotation[2, 0]) / s,
                (rotation[1, 0] - rotation[0, 1]) / s]
    else:
        i = int(np.argmax(np.diag(rotation)))
        j, k = (i + 1) % 3, (i + 2) % 3
        s = math.sqrt(1.0 + rotation[i, i] - rotation[j, j] - rotation[k, k]) * 2
        quat = [0.0] * 4
        quat[0] = (rotation[k, j] - rotation[j, k]) / s
        quat[i + 1] = 0.25 * s
        quat[j + 1] = (rotation[j, i] + rotation[i, j]) / s
        quat[k + 1] = (rotation[k, i] + rotation[i, k]) / s
    quat_arr = np.asarray(quat)
    return quat_arr / np.linalg.norm(quat_arr)


@dataclass
class SapienBody:
    """One loaded body: its joints, SAPIEN link components (base first) and collision shapes."""

    handle: int
    infos: list[JointInfo]
    base_name: str
    fixed: bool
    links: list[Any]  # SAPIEN rigid components, base first
    articulation: Any = None
    shapes: list[tuple[UrdfGeom, ...]] = field(default_factory=list)
    dof: dict[int, int] = field(default_factory=dict)  # joint index -> qpos index
    drives: list[Any] = field(default_factory=list)  # the articulation's active joints, in qpos order
    art_link: list[int] = field(default_factory=list)  # link -> articulation link index
    geometry: list[LinkGeometry | None] = field(default_factory=list)
    pinocchio: Any = None


def component_of(body) -> Any:
    """The rigid component a contact names (SAPIEN 3 names components directly)."""
    return body


def joint_infos_of(model: UrdfModel) -> list[JointInfo]:
    """The protocol's joint descriptions of a parsed URDF."""
    return [
        JointInfo(index=j.child, name=j.name, type=j.type, link_name=model.links[j.child + 1].name,  # type: ignore[arg-type]
                  parent_index=j.parent, lower=j.lower, upper=j.upper, max_force=j.effort,
                  max_velocity=j.velocity, damping=j.damping, friction=j.friction, axis=j.axis)
        for j in model.joints
    ]


def set_inertia(builder, link, sapien) -> None:
    """Mass, centre of mass and principal inertia of a link."""
    from .mjcf import _link_frame_inertia

    mass = max(link.mass, 1e-4)
    ixx, iyy, izz, ixy, ixz, iyz = _link_frame_inertia(link) if link.mass > 0 else (1e-6,) * 3 + (0.0,) * 3
    tensor = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    values, vectors = np.linalg.eigh(tensor)
    if np.linalg.det(vectors) < 0:
        vectors[:, 0] = -vectors[:, 0]
    builder.set_mass_and_inertia(mass, sapien.Pose(link.com, matrix_quat(vectors)), np.maximum(values, 1e-7))


def xyzw(wxyz) -> np.ndarray:
    """``(w, x, y, z)`` -> ``(x, y, z, w)``."""
    w, x, y, z = (float(v) for v in wxyz)
    return np.array([x, y, z, w])


def wxyz(xyzw) -> np.ndarray:
    """``(x, y, z, w)`` -> ``(w, x, y, z)``."""
    x, y, z, w = (float(v) for v in xyzw)
    return np.array([w, x, y, z])
