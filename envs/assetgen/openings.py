"""Moving panels: side-hinged doors, bottom-hinged flaps, back-hinged lids, drawers.

Why one module: the hinge placement and axis sign decide whether a door opens
towards the robot or through the cabinet; getting that right once, with the
lower limit as the closed state, keeps all categories consistent.

All positions are in the parent (usually base) frame with the object's front
facing -x. "Left" and "right" are as seen by the robot, which looks along +x:
left is +y.
"""

from __future__ import annotations

from dataclasses import dataclass

from .geometry import RGBA, Shape
from .parts import slab
from .urdf import Interaction, ObjectBuilder

__all__ = ["Rect", "add_side_door", "free_edge_y", "add_flap_door", "add_lid", "add_drawer"]


@dataclass(frozen=True)
class Rect:
    """An axis-aligned rectangle on a front (y, z) or top (x, y) face."""

    lo0: float
    hi0: float
    lo1: float
    hi1: float

    @property
    def size0(self) -> float:
        """Extent along the first axis."""
        return self.hi0 - self.lo0

    @property
    def size1(self) -> float:
        """Extent along the second axis."""
        return self.hi1 - self.lo1


def add_side_door(
    b: ObjectBuilder,
    parent: str,
    front: Rect,
    x_face: float,
    *,
    thickness: float,
    hinge: str,
    mass: float,
    rgba: RGBA,
    upper: float = 1.57,
    semantic: str = "door",
    decor: list[Shape] | None = None,
) -> str:
    """A door hinged on a vertical edge, opening outwards (towards -x).

    Args:
        b: Builder.
        parent: Parent link.
        front: The door's extent as (y_lo, y_hi, z_lo, z_hi).
        x_face: x of the door's outer face; the panel lies in
            ``[x_face, x_face + thickness]``.
        thickness: Panel thickness.
        hinge: ``left`` (+y edge) or ``right`` (-y edge).
        mass: Door mass.
        rgba: Colour.
        upper: Opening angle (rad).
        semantic: Part name.
        decor: Extra shapes in the door frame (windows, trims).

    Returns:
        The door link; its frame sits on the hinge line at the outer face and
        door bottom, so a handle at the free edge is at ``(0, free_y, z)``.
    """
    width, height = front.size0, front.size1
    sign = 1.0 if hinge == "left" else -1.0
    hinge_y = front.hi0 if hinge == "left" else front.lo0
    y_lo, y_hi = (-width, 0.0) if hinge == "left" else (0.0, width)
    panel = slab((0.0, y_lo, 0.0), (thickness, y_hi, height), rgba)
    return b.add_part(
        parent,
        semantic,
        "revolute",
        (x_face, hinge_y, front.lo1),
        [panel, *(decor or [])],
        mass,
        axis=(0.0, 0.0, -sign),
        upper=upper,
    )


def free_edge_y(front: Rect, hinge: str, inset: float) -> float:
    """Door-frame y of a point ``inset`` from the free edge of a side door."""
    width = front.size0
    return -(width - inset) if hinge == "left" else width - inset


def add_flap_door(
    b: ObjectBuilder,
    parent: str,
    front: Rect,
    x_face: float,
    *,
    thickness: float,
    mass: float,
    rgba: RGBA,
    upper: float = 1.5,
    semantic: str = "door",
    decor: list[Shape] | None = None,
) -> str:
    """A door hinged on its bottom edge that folds down towards the robot (ovens).

    The link frame sits on the hinge line at the outer face, mid-width; the door
    spans ``z in [0, height]`` of that frame. ``decor`` adds shapes in that frame.
    """
    width, height = front.size0, front.size1
    panel = slab((0.0, -width / 2, 0.0), (thickness, width / 2, height), rgba)
    centre_y = (front.lo0 + front.hi0) / 2
    return b.add_part(
        parent,
        semantic,
        "revolute",
        (x_face, centre_y, front.lo1),
        [panel, *(decor or [])],
        mass,
        axis=(0.0, -1.0, 0.0),
        upper=upper,
    )


def add_lid(
    b: ObjectBuilder,
    parent: str,
    top: Rect,
    z: float,
    *,
    thickness: float,
    mass: float,
    rgba: RGBA,
    upper: float,
    hinge_on_top: bool = False,
    semantic: str = "lid",
    shapes: list[Shape] | None = None,
    interaction: bool = True,
) -> str:
    """A lid hinged along its back (+x) edge that lifts its front edge.

    Args:
        b: Builder.
        parent: Parent link.
        top: The lid's footprint as (x_lo, x_hi, y_lo, y_hi).
        z: Height of the lid's bottom face when closed.
        thickness: Lid thickness.
        mass: Lid mass.
        rgba: Colour.
        upper: Opening angle (rad).
        hinge_on_top: Put the hinge line at the lid's top-back edge instead of
            its bottom-back edge; then the lid stays in front of the hinge up
            to 90 degrees (toilet lids and chair seats in front of a backrest).
        semantic: Part name.
        shapes: Custom shapes in the link frame (default: one slab); the frame
            is on the hinge line, mid-width, with the lid towards -x.
        interaction: Add a contact point on the top face near the front edge.

    Returns:
        The lid link.
    """
    depth, width = top.size0, top.size1
    z_lo, z_hi = (-thickness, 0.0) if hinge_on_top else (0.0, thickness)
    if shapes is None:
        shapes = [slab((-depth, -width / 2, z_lo), (0.0, width / 2, z_hi), rgba)]
    contact = None
    if interaction:
        contact = Interaction((-depth + 0.03, 0.0, z_hi), (0.0, 0.0, 1.0))
    hinge_z = z + thickness if hinge_on_top else z
    return b.add_part(
        parent,
        semantic,
        "revolute",
        (top.hi0, (top.lo1 + top.hi1) / 2, hinge_z),
        shapes,
        mass,
        axis=(0.0, 1.0, 0.0),
        upper=upper,
        interaction=contact,
    )


def add_drawer(
    b: ObjectBuilder,
    parent: str,
    opening: Rect,
    x_face: float,
    *,
    depth: float,
    mass: float,
    rgba: RGBA,
    inner_rgba: RGBA,
    gap: float = 0.003,
    travel_ratio: float = 0.7,
) -> str:
    """An inset drawer: a front panel flush at ``x_face`` plus an open box behind it.

    Args:
        b: Builder.
        parent: Parent link.
        opening: The carcass opening (y_lo, y_hi, z_lo, z_hi); the drawer keeps
            ``gap`` from its edges.
        x_face: x of the front panel's outer face (the carcass front).
        depth: Total drawer depth (front panel included).
        mass: Drawer mass.
        rgba: Front colour.
        inner_rgba: Box colour.
        gap: Clearance to the opening.
        travel_ratio: Pull-out travel as a fraction of ``depth``.

    Returns:
        The drawer link; its frame is at the front face, mid-width, at the
        bottom of the front panel, so the handle goes at ``(0, 0, h / 2)``.
    """
    width = opening.size0 - 2 * gap
    height = opening.size1 - 2 * gap
    front_t, wall = 0.015, 0.008
    box_h = height * 0.75
    hw = width / 2 - 0.004
    shapes = [
        slab((0.0, -width / 2, 0.0), (front_t, width / 2, height), rgba),
        slab((front_t, -hw, 0.0), (depth, hw, wall), inner_rgba),
        slab((front_t, -hw, wall), (depth, -hw + wall, box_h), inner_rgba),
        slab((front_t, hw - wall, wall), (depth, hw, box_h), inner_rgba),
        slab((depth - wall, -hw + wall, wall), (depth, hw - wall, box_h), inner_rgba),
    ]
    centre_y = (opening.lo0 + opening.hi0) / 2
    return b.add_part(
        parent,
        "drawer",
        "prismatic",
        (x_face, centre_y, opening.lo1 + gap),
        shapes,
        mass,
        axis=(-1.0, 0.0, 0.0),
        upper=round(depth * travel_ratio, 3),
    )
