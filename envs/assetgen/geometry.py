"""Primitive shapes, rigid transforms, inertia tensors and stable number formatting.

Why a module of its own: every category builder composes boxes, cylinders and
spheres, and the URDF writer needs their masses, inertia tensors and bounding
boxes computed the same way every time, so that regenerating the committed
assets gives byte-identical files.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from ..transforms import rpy_matrix

__all__ = [
    "RGBA",
    "Vec3",
    "Shape",
    "ShapeKind",
    "box",
    "cylinder",
    "sphere",
    "fmt",
    "fmt_vec",
    "rpy_matrix",
    "transform",
    "compose",
    "shape_inertia",
    "shape_corners",
    "AXIS_RPY",
]

Vec3 = tuple[float, float, float]
RGBA = tuple[float, float, float, float]
ShapeKind = Literal["box", "cylinder", "sphere"]

AXIS_RPY: dict[str, Vec3] = {
    "x": (0.0, math.pi / 2, 0.0),
    "y": (math.pi / 2, 0.0, 0.0),
    "z": (0.0, 0.0, 0.0),
}
"""Shape orientation that points a cylinder's axis (its local z) along a link axis."""


def fmt(x: float) -> str:
    """Format a float with 6 significant digits, never as ``-0``.

    Why: the committed URDF/JSON files are compared byte-for-byte against a
    fresh generation, so last-bit differences of ``sin``/``cos`` across
    platforms must not show up in the text.
    """
    if abs(x) < 5e-10:
        return "0"
    text = f"{x:.6g}"
    return "0" if text in ("-0", "0") else text


def fmt_vec(values: tuple[float, ...] | list[float] | np.ndarray) -> str:
    """Space-separated :func:`fmt` of a vector, as URDF attributes expect."""
    return " ".join(fmt(float(v)) for v in values)


@dataclass(frozen=True)
class Shape:
    """One primitive used for both visual and collision geometry of a link.

    Attributes:
        kind: ``box``, ``cylinder`` or ``sphere``.
        size: Box full extents ``(x, y, z)``; cylinder ``(radius, length)``
            with its axis along the shape's local z; sphere ``(radius,)``.
        xyz: Shape centre in the link frame.
        rpy: Shape orientation in the link frame (URDF roll-pitch-yaw).
        rgba: Colour.
    """

    kind: ShapeKind
    size: tuple[float, ...]
    xyz: Vec3 = (0.0, 0.0, 0.0)
    rpy: Vec3 = (0.0, 0.0, 0.0)
    rgba: RGBA = (0.7, 0.7, 0.7, 1.0)

    @property
    def volume(self) -> float:
        """Volume in cubic metres (used to split a link's mass over its shapes)."""
        if self.kind == "box":
            return self.size[0] * self.size[1] * self.size[2]
        if self.kind == "cylinder":
            return math.pi * self.size[0] ** 2 * self.size[1]
        return 4.0 / 3.0 * math.pi * self.size[0] ** 3

    @property
    def half_extents(self) -> np.ndarray:
        """Half extents of the shape's own axis-aligned box (in its local frame)."""
        if self.kind == "box":
            return np.asarray(self.size, dtype=float) / 2.0
        if self.kind == "cylinder":
            r, length = self.size
            return np.asarray([r, r, length / 2.0])
        return np.full(3, self.size[0])


def box(size: Vec3, xyz: Vec3, rgba: RGBA, rpy: Vec3 = (0.0, 0.0, 0.0)) -> Shape:
    """A box of full extents ``size`` centred at ``xyz``."""
    return Shape("box", tuple(float(s) for s in size), _vec(xyz), _vec(rpy), rgba)


def cylinder(radius: float, length: float, xyz: Vec3, rgba: RGBA, axis: str = "z") -> Shape:
    """A cylinder centred at ``xyz`` whose axis runs along link axis ``x``, ``y`` or ``z``."""
    return Shape("cylinder", (float(radius), float(length)), _vec(xyz), AXIS_RPY[axis], rgba)


def sphere(radius: float, xyz: Vec3, rgba: RGBA) -> Shape:
    """A sphere centred at ``xyz``."""
    return Shape("sphere", (float(radius),), _vec(xyz), (0.0, 0.0, 0.0), rgba)


def _vec(v: tuple[float, ...] | list[float]) -> Vec3:
    return (float(v[0]), float(v[1]), float(v[2]))


def transform(
    xyz: tuple[float, ...] | list[float], rpy: tuple[float, ...] | list[float]
) -> np.ndarray:
    """Homogeneous 4x4 transform of a translation and URDF roll-pitch-yaw."""
    t = np.eye(4)
    t[:3, :3] = rpy_matrix(rpy)
    t[:3, 3] = xyz
    return t


def compose(*transforms: np.ndarray) -> np.ndarray:
    """Product of homogeneous transforms, left to right."""
    out = np.eye(4)
    for t in transforms:
        out = out @ t
    return out


def shape_inertia(shape: Shape, mass: float) -> np.ndarray:
    """Inertia tensor (3x3) of a solid shape about its centre, in the link's axes.

    Why: URDF inertias must be physically consistent (positive, triangle
    inequality) or the solver misbehaves; solid-body formulas guarantee that.
    """
    if shape.kind == "box":
        x, y, z = shape.size
        local = np.diag([y * y + z * z, x * x + z * z, x * x + y * y]) * mass / 12.0
    elif shape.kind == "cylinder":
        r, h = shape.size
        side = mass * (3.0 * r * r + h * h) / 12.0
        local = np.diag([side, side, mass * r * r / 2.0])
    else:
        local = np.eye(3) * 0.4 * mass * shape.size[0] ** 2
    rot = rpy_matrix(shape.rpy)
    return rot @ local @ rot.T


def shape_corners(shape: Shape) -> np.ndarray:
    """The 8 corners (link frame) of the shape's oriented bounding box, shape ``(8, 3)``."""
    half = shape.half_extents
    signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], float)
    local = signs * half
    return local @ rpy_matrix(shape.rpy).T + np.asarray(shape.xyz)
