"""Rigid objects (Cube, Cylinder, Bowl, Bread) and the Table.

Why these: tasks put things into drawers, bowls and bins; the objects must be
small (3-8 cm) and light (0.05-0.3 kg) so a suction cup can lift them, and
their top must offer a flat patch >= 2.5 cm for the cup.

Their origin is the bottom centre, like every asset, and their mass sits at the
origin (PyBullet reports a base pose at its inertial frame), which also makes
them self-righting and calm when dropped. The Table's origin is instead the
centre of its top surface, so placing it at the world origin puts the top at
``z = 0`` as :mod:`simjudge.envs.world` requires.
"""

from __future__ import annotations

import math

from ..world import TABLE_HEIGHT, TABLE_SIZE
from .geometry import RGBA, box, cylinder, sphere
from .parts import BODY_COLOURS, BUTTON_COLOURS, slab
from .spec import Blueprint, CategorySpec, ParamSampler
from .urdf import Interaction, ObjectBuilder

__all__ = ["CATEGORIES", "build_cube", "build_can", "build_bowl", "build_bread", "build_table"]

_UP = (0.0, 0.0, 1.0)
_COLOURS: tuple[RGBA, ...] = (*BUTTON_COLOURS, BODY_COLOURS["sage"], BODY_COLOURS["cream"])


def _mass(volume: float, density: float) -> float:
    """Mass from a density, clamped to what a suction cup lifts comfortably."""
    return round(min(max(volume * density, 0.05), 0.3), 3)


def build_cube(s: ParamSampler, asset_id: str) -> Blueprint:
    """A solid cube."""
    a = s.uniform("side", 0.035, 0.07)
    rgba = s.choice("colour", _COLOURS)
    b = ObjectBuilder(asset_id)
    b.set_base(
        [box((a, a, a), (0.0, 0.0, a / 2), rgba)],
        _mass(a**3, 700.0),
        "cube",
        Interaction((0.0, 0.0, a), _UP),
    )
    return Blueprint(
        b, f"A {a * 100:.1f} cm cube that can be picked and placed.", default_fixed_base=False
    )


def build_can(s: ParamSampler, asset_id: str) -> Blueprint:
    """A can-like cylinder standing on its base."""
    r = s.uniform("radius", 0.022, 0.035)
    h = s.uniform("height", 0.05, 0.08)
    rgba = s.choice("colour", _COLOURS)
    b = ObjectBuilder(asset_id)
    shapes = [cylinder(r, h, (0.0, 0.0, h / 2), rgba)]
    b.set_base(shapes, _mass(math.pi * r * r * h, 600.0), "can", Interaction((0.0, 0.0, h), _UP))
    return Blueprint(
        b, f"A {h * 100:.1f} cm tall can that can be picked and placed.", default_fixed_base=False
    )


def build_bowl(s: ParamSampler, asset_id: str) -> Blueprint:
    """A bowl: a base disc and a ring of outward-leaning wall segments."""
    rb = s.uniform("base_radius", 0.022, 0.026)
    wh = s.uniform("wall_height", 0.022, 0.03)
    tilt = s.uniform("flare", 0.25, 0.4)
    rgba = BODY_COLOURS[s.choice("colour", ["white", "cream", "sage", "steel"])]
    t, n = 0.006, 12
    shapes = [cylinder(rb, t, (0.0, 0.0, t / 2), rgba)]
    seg = 2 * (rb + wh * math.sin(tilt)) * math.tan(math.pi / n) + 0.004
    for k in range(n):
        yaw = 2 * math.pi * k / n
        radial = rb - t / 2 + wh / 2 * math.sin(tilt)
        xyz = (radial * math.cos(yaw), radial * math.sin(yaw), t + wh / 2 * math.cos(tilt))
        shapes.append(box((t, seg, wh), xyz, rgba, rpy=(0.0, tilt, yaw)))
    b = ObjectBuilder(asset_id)
    b.set_base(
        shapes, _mass(math.pi * rb * rb * t * 4, 1500.0), "bowl", Interaction((0.0, 0.0, t), _UP)
    )
    diameter = 2 * (rb + wh * math.sin(tilt))
    return Blueprint(
        b,
        f"A {diameter * 100:.1f} cm wide bowl; things can be put into it.",
        default_fixed_base=False,
    )


def build_bread(s: ParamSampler, asset_id: str) -> Blueprint:
    """A small loaf: a box bottom under a rounded crust (a cylinder with sphere-rounded ends)."""
    length = s.uniform("length", 0.06, 0.08)
    w = s.uniform("width", 0.045, 0.06)
    h = s.uniform("height", 0.04, 0.055)
    crust: RGBA = (0.76, 0.52, 0.26, 1.0)
    r = min(w, h) / 2
    zc = h - r
    shapes = [
        box((length, w, zc), (0.0, 0.0, zc / 2), crust),
        cylinder(r, length - 0.006, (0.0, 0.0, zc), crust, axis="x"),
        sphere(r * 0.8, (-(length / 2 - r * 0.8), 0.0, zc), crust),
        sphere(r * 0.8, (length / 2 - r * 0.8, 0.0, zc), crust),
    ]
    b = ObjectBuilder(asset_id)
    b.set_base(shapes, _mass(length * w * h * 0.8, 250.0), "bread", Interaction((0.0, 0.0, h), _UP))
    return Blueprint(
        b,
        f"A {length * 100:.1f} cm bread roll that can be picked and placed.",
        default_fixed_base=False,
    )


def build_table(s: ParamSampler, asset_id: str) -> Blueprint:
    """The work table of :mod:`simjudge.envs.world`: top surface at the origin, legs below."""
    top_t, leg = 0.04, 0.06
    sx, sy = TABLE_SIZE
    rgba = BODY_COLOURS[s.choice("colour", ["oak"])]
    shapes = [slab((-sx / 2, -sy / 2, -top_t), (sx / 2, sy / 2, 0.0), rgba)]
    for x in (-sx / 2 + 0.05, sx / 2 - 0.05 - leg):
        for y in (-sy / 2 + 0.05, sy / 2 - 0.05 - leg):
            shapes.append(slab((x, y, -TABLE_HEIGHT), (x + leg, y + leg, -top_t), rgba))
    b = ObjectBuilder(asset_id)
    b.set_base(shapes, 30.0, "table_top")
    summary = (
        f"The {sx:.2f} x {sy:.2f} m work table; load it at the world origin with a fixed base "
        "so that its top surface is the plane z = 0."
    )
    extra = {"top_height": 0.0, "floor_height": -TABLE_HEIGHT}
    return Blueprint(b, summary, default_fixed_base=True, origin="top_centre", extra=extra)


CATEGORIES: tuple[CategorySpec, ...] = (
    CategorySpec(
        name="Cube",
        kind="rigid",
        build=build_cube,
        n_instances=4,
        randomizations="Side 3.5-7 cm, colour; mass from size (0.05-0.3 kg).",
    ),
    CategorySpec(
        name="Cylinder",
        kind="rigid",
        build=build_can,
        n_instances=4,
        randomizations="Radius 2.2-3.5 cm, height 5-8 cm, colour.",
    ),
    CategorySpec(
        name="Bowl",
        kind="rigid",
        build=build_bowl,
        n_instances=3,
        randomizations="Base radius, wall height and flare, colour.",
    ),
    CategorySpec(
        name="Bread",
        kind="rigid",
        build=build_bread,
        n_instances=3,
        randomizations="Length 6-8 cm, width 4.5-6 cm, height 4-5.5 cm.",
    ),
    CategorySpec(
        name="Table",
        kind="rigid",
        build=build_table,
        n_instances=1,
        randomizations="None: the table matches the world constants.",
    ),
)
