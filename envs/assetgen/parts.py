"""Reusable parts: panels, walls, handles, buttons, dials and colour palettes.

Why shared parts: every handle, button and knob must offer a suction-friendly
face (>= 2.5 cm across) with a known contact point and outward normal, and
that is easiest to guarantee when one function builds them all.

Part frames are authored *canonically*, facing -x (the object's front): the
part sticks out towards -x from its attachment point, and a planner approaches
along +x. ``facing="top"`` rotates the canonical frame so that the part sticks
out along the parent's +z instead (canonical -x becomes +z, canonical +z
becomes +x, y is unchanged).
"""

from __future__ import annotations

import math

from .geometry import RGBA, Shape, Vec3, box, cylinder
from .urdf import Interaction, ObjectBuilder

__all__ = [
    "FACING_RPY",
    "BODY_COLOURS",
    "HANDLE_COLOURS",
    "BUTTON_COLOURS",
    "GLASS",
    "DARK",
    "MIN_CONTACT",
    "slab",
    "hollow_box",
    "ring_walls",
    "add_bar_handle",
    "add_knob_handle",
    "add_handle",
    "add_button",
    "add_dial",
]

FACING_RPY: dict[str, Vec3] = {"front": (0.0, 0.0, 0.0), "top": (0.0, math.pi / 2, 0.0)}
"""Joint-frame orientation that turns a canonical (-x facing) part to face front or top."""

MIN_CONTACT = 0.028
"""Smallest width of a contact face, a little above the 2.5 cm a suction cup needs."""

BODY_COLOURS: dict[str, RGBA] = {
    "oak": (0.78, 0.62, 0.42, 1.0),
    "walnut": (0.45, 0.30, 0.20, 1.0),
    "white": (0.92, 0.92, 0.90, 1.0),
    "grey": (0.62, 0.64, 0.67, 1.0),
    "steel": (0.72, 0.74, 0.77, 1.0),
    "graphite": (0.28, 0.29, 0.31, 1.0),
    "sage": (0.58, 0.68, 0.56, 1.0),
    "cream": (0.93, 0.88, 0.76, 1.0),
}
HANDLE_COLOURS: dict[str, RGBA] = {
    "black": (0.12, 0.12, 0.13, 1.0),
    "chrome": (0.80, 0.81, 0.84, 1.0),
    "brass": (0.72, 0.57, 0.24, 1.0),
}
BUTTON_COLOURS: tuple[RGBA, ...] = (
    (0.85, 0.15, 0.12, 1.0),
    (0.15, 0.65, 0.25, 1.0),
    (0.15, 0.35, 0.85, 1.0),
    (0.95, 0.80, 0.10, 1.0),
)
GLASS: RGBA = (0.62, 0.80, 0.92, 0.45)
DARK: RGBA = (0.10, 0.10, 0.11, 1.0)

_HANDLE_MASS = 0.06
_KNOB_MASS = 0.04


def slab(lo: Vec3, hi: Vec3, rgba: RGBA) -> Shape:
    """A box spanning the corners ``lo`` and ``hi`` (the natural way to write panels)."""
    size = (hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2])
    if min(size) <= 0:
        raise ValueError(f"slab corners must increase: {lo} -> {hi}")
    centre = ((lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, (lo[2] + hi[2]) / 2)
    return box(size, centre, rgba)


def hollow_box(
    lo: Vec3, hi: Vec3, wall: float, rgba: RGBA, open_side: str = "front"
) -> list[Shape]:
    """Five panels of a box spanning ``lo``..``hi``, open at the ``front`` (-x) or ``top``.

    Why hollow: objects can be put inside cabinets, ovens and bins only if
    their bodies are shells, not solid blocks.
    """
    (x0, y0, z0), (x1, y1, z1) = lo, hi
    top = z1 - wall if open_side == "front" else z1
    shapes = [
        slab((x0, y0, z0), (x1, y1, z0 + wall), rgba),
        slab((x0, y0, z0 + wall), (x1, y0 + wall, top), rgba),
        slab((x0, y1 - wall, z0 + wall), (x1, y1, top), rgba),
        slab((x1 - wall, y0 + wall, z0 + wall), (x1, y1 - wall, top), rgba),
    ]
    if open_side == "front":
        shapes.append(slab((x0, y0, z1 - wall), (x1, y1, z1), rgba))
    else:
        shapes.append(slab((x0, y0 + wall, z0 + wall), (x0 + wall, y1 - wall, z1), rgba))
    return shapes


def ring_walls(
    radius: float,
    height: float,
    thickness: float,
    segments: int,
    z0: float,
    rgba: RGBA,
    centre: tuple[float, float] = (0.0, 0.0),
) -> list[Shape]:
    """A round wall approximated by ``segments`` boxes (bowls, round bins).

    ``radius`` is the outer radius; segments overlap slightly at the joins so
    that nothing small falls through.
    """
    inner = radius - thickness / 2
    length = 2 * radius * math.tan(math.pi / segments) + 0.002
    shapes = []
    for k in range(segments):
        angle = 2 * math.pi * k / segments
        xyz = (
            centre[0] + inner * math.cos(angle),
            centre[1] + inner * math.sin(angle),
            z0 + height / 2,
        )
        shapes.append(box((thickness, length, height), xyz, rgba, rpy=(0.0, 0.0, angle)))
    return shapes


def add_bar_handle(
    b: ObjectBuilder,
    parent: str,
    at: Vec3,
    *,
    length: float,
    along: str = "z",
    facing: str = "front",
    rgba: RGBA = HANDLE_COLOURS["black"],
    standoff: float = 0.03,
) -> str:
    """A bar handle on two posts, fixed to ``parent`` at ``at`` (parent frame).

    The bar's outer face is ``MIN_CONTACT`` wide and ``length`` long; ``along``
    (canonical ``z`` = vertical on a front, ``y`` = horizontal) is the bar's
    direction. The interaction point is the middle of the outer face.
    """
    thick, post = 0.014, 0.012
    outer = standoff + thick
    if along == "z":
        bar = box((thick, MIN_CONTACT, length), (-(standoff + thick / 2), 0.0, 0.0), rgba)
        ends = [(0.0, 0.0, s * (length / 2 - post)) for s in (-1, 1)]
    else:
        bar = box((thick, length, MIN_CONTACT), (-(standoff + thick / 2), 0.0, 0.0), rgba)
        ends = [(0.0, s * (length / 2 - post), 0.0) for s in (-1, 1)]
    posts = [box((standoff, post, post), (-standoff / 2, e[1], e[2]), rgba) for e in ends]
    return b.add_part(
        parent,
        "handle",
        "fixed",
        at,
        [bar, *posts],
        _HANDLE_MASS,
        rpy=FACING_RPY[facing],
        interaction=Interaction((-outer, 0.0, 0.0), (-1.0, 0.0, 0.0)),
    )


def add_knob_handle(
    b: ObjectBuilder,
    parent: str,
    at: Vec3,
    *,
    radius: float = 0.018,
    facing: str = "front",
    rgba: RGBA = HANDLE_COLOURS["chrome"],
    standoff: float = 0.022,
) -> str:
    """A round pull knob (stem + cap) fixed to ``parent``; its cap face is the contact."""
    radius = max(radius, MIN_CONTACT / 2)
    cap = 0.016
    shapes = [
        cylinder(0.007, standoff, (-standoff / 2, 0.0, 0.0), rgba, axis="x"),
        cylinder(radius, cap, (-(standoff + cap / 2), 0.0, 0.0), rgba, axis="x"),
    ]
    return b.add_part(
        parent,
        "handle",
        "fixed",
        at,
        shapes,
        _KNOB_MASS,
        rpy=FACING_RPY[facing],
        interaction=Interaction((-(standoff + cap), 0.0, 0.0), (-1.0, 0.0, 0.0)),
    )


def add_handle(
    b: ObjectBuilder,
    parent: str,
    at: Vec3,
    shape: str,
    *,
    length: float,
    along: str = "z",
    facing: str = "front",
    rgba: RGBA = HANDLE_COLOURS["black"],
) -> str:
    """A ``bar`` or ``knob`` handle, as chosen by a category's ``handle`` parameter."""
    if shape == "bar":
        return add_bar_handle(b, parent, at, length=length, along=along, facing=facing, rgba=rgba)
    return add_knob_handle(b, parent, at, facing=facing, rgba=rgba)


def add_button(
    b: ObjectBuilder,
    parent: str,
    at: Vec3,
    *,
    radius: float = 0.017,
    travel: float = 0.008,
    facing: str = "front",
    rgba: RGBA = BUTTON_COLOURS[0],
    semantic: str = "button",
) -> str:
    """A spring-return push button (prismatic, pressed = pushed ``travel`` inwards).

    The cylinder sticks out ``travel + 6 mm`` and reaches 1 cm into the parent
    so it never looks detached; the parent is its only neighbour that could
    touch it, and parent-child collisions are ignored.
    """
    radius = max(radius, MIN_CONTACT / 2)
    protrude = travel + 0.006
    length = protrude + 0.01
    body = cylinder(radius, length, (-protrude + length / 2, 0.0, 0.0), rgba, axis="x")
    return b.add_part(
        parent,
        semantic,
        "prismatic",
        at,
        [body],
        0.02,
        axis=(1.0, 0.0, 0.0),
        rpy=FACING_RPY[facing],
        upper=travel,
        spring=True,
        interaction=Interaction((-protrude, 0.0, 0.0), (-1.0, 0.0, 0.0)),
        damping=0.2,
        friction=0.05,
    )


def add_dial(
    b: ObjectBuilder,
    parent: str,
    at: Vec3,
    *,
    radius: float = 0.02,
    depth: float = 0.02,
    facing: str = "front",
    rgba: RGBA = DARK,
    marker: RGBA = (0.95, 0.95, 0.95, 1.0),
) -> str:
    """A continuous rotary knob with a radial marker showing its angle.

    The joint axis is the knob's outward normal, so a positive angle turns the
    knob counter-clockwise as seen from the front.
    """
    radius = max(radius, MIN_CONTACT / 2)
    shapes = [
        cylinder(radius, depth, (-depth / 2, 0.0, 0.0), rgba, axis="x"),
        box((depth * 0.8, 0.005, 0.006), (-depth / 2, 0.0, radius + 0.002), marker),
    ]
    return b.add_part(
        parent,
        "knob",
        "continuous",
        at,
        shapes,
        _KNOB_MASS,
        axis=(-1.0, 0.0, 0.0),
        rpy=FACING_RPY[facing],
        interaction=Interaction((-depth, 0.0, 0.0), (-1.0, 0.0, 0.0)),
    )
