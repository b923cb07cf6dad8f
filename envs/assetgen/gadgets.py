"""Gadget categories: Faucet, Lamp, Laptop, ButtonPanel.

Why grouped: small objects whose one or two moving parts are levers, heads,
screens and buttons rather than doors; they exercise revolute parts about
horizontal and vertical axes and many-button layouts.
"""

from __future__ import annotations

import math

from .geometry import box, cylinder, sphere
from .openings import Rect, add_lid
from .parts import BODY_COLOURS, BUTTON_COLOURS, DARK, HANDLE_COLOURS, add_button, slab
from .spec import Blueprint, CategorySpec, ParamSampler
from .urdf import Interaction, ObjectBuilder

__all__ = ["CATEGORIES", "build_faucet", "build_lamp", "build_laptop", "build_button_panel"]

_LEVER_W = 0.028
_BULB = (1.0, 0.95, 0.7, 1.0)


def _lever(
    b: ObjectBuilder, at: tuple[float, float, float], length: float, axis, upper: float, rgba
) -> str:
    """A lever pointing towards -x from a hub at ``at``; the contact is on its top near the tip."""
    t = 0.012
    hub_axis = "y" if axis[1] != 0.0 else "z"
    shapes = [
        cylinder(0.013, 0.03 if hub_axis == "y" else 0.02, (0.0, 0.0, 0.0), rgba, axis=hub_axis),
        box((length, _LEVER_W, t), (-length / 2, 0.0, 0.0), rgba),
    ]
    contact = Interaction((-length + 0.018, 0.0, t / 2), (0.0, 0.0, 1.0))
    return b.add_part(
        "base", "handle", "revolute", at, shapes, 0.06, axis=axis, upper=upper, interaction=contact
    )


def build_faucet(s: ParamSampler, asset_id: str) -> Blueprint:
    """A faucet whose lever lifts or swings, or a two-handle faucet with swinging levers."""
    motion = s.cycle("motion", ["lift", "swing", "two_handles"])
    bh = s.uniform("body_height", 0.12, 0.24)
    reach = s.uniform("spout_reach", 0.1, 0.15)
    lever = s.uniform("lever_length", 0.07, 0.1)
    metal = HANDLE_COLOURS[s.choice("finish", ["chrome", "brass", "black"])]
    plate = BODY_COLOURS[s.choice("plate_colour", ["white", "graphite", "grey"])]
    wide = motion == "two_handles"
    shapes = [
        slab((-0.07, -0.11 if wide else -0.06, 0.0), (0.08, 0.11 if wide else 0.06, 0.015), plate),
        cylinder(0.026, bh - 0.015, (0.03, 0.0, (bh + 0.015) / 2), metal),
        box((reach, 0.024, 0.02), (0.03 - reach / 2, 0.0, 0.75 * bh), metal),
        cylinder(0.012, 0.04, (0.03 - reach + 0.012, 0.0, 0.75 * bh - 0.025), metal),
    ]
    riser = 0.0
    if wide:
        riser = s.uniform("riser_height", 0.05, 0.08)
        shapes += [
            cylinder(0.018, riser - 0.015, (0.03, y, (riser + 0.015) / 2), metal)
            for y in (-0.075, 0.075)
        ]
    b = ObjectBuilder(asset_id)
    b.set_base(shapes, mass=2.0, semantic="spout")
    if motion == "lift":
        _lever(
            b, (0.03, 0.0, bh + 0.013), lever, (0.0, 1.0, 0.0), s.uniform("upper", 0.5, 0.7), metal
        )
    elif motion == "swing":
        _lever(
            b, (0.03, 0.0, bh + 0.01), lever, (0.0, 0.0, 1.0), s.uniform("upper", 1.2, 1.57), metal
        )
    else:
        for y in (0.075, -0.075):
            _lever(
                b,
                (0.03, y, riser + 0.01),
                min(lever, 0.08),
                (0.0, 0.0, -math.copysign(1.0, y)),
                1.57,
                metal,
            )
    summary = {
        "lift": "lift its lever (push the lever tip up) to turn the water on",
        "swing": "swing its lever sideways to turn the water on",
        "two_handles": "swing either handle outwards to turn the water on",
    }[motion]
    return Blueprint(b, f"A {bh * 100:.0f} cm tall faucet; {summary}.")


def build_lamp(s: ParamSampler, asset_id: str) -> Blueprint:
    """A desk lamp whose head tilts up or swivels, with a push switch on its foot."""
    motion = s.cycle("motion", ["tilt", "swivel"])
    fr = s.uniform("foot_radius", 0.07, 0.1)
    ph = s.uniform("pole_height", 0.3, 0.5)
    arm = s.uniform("arm_length", 0.12, 0.2)
    sr = s.uniform("shade_radius", 0.04, 0.06)
    sh = s.uniform("shade_height", 0.05, 0.08)
    colour = BODY_COLOURS[s.choice("colour", ["graphite", "white", "sage", "steel", "cream"])]
    ft = 0.025
    px = 0.03
    shapes = [
        cylinder(fr, ft, (0.0, 0.0, ft / 2), colour),
        cylinder(0.011, ph - ft, (px, 0.0, (ph + ft) / 2), colour),
        sphere(0.016, (px, 0.0, ph), DARK),
    ]
    b = ObjectBuilder(asset_id)
    b.set_base(shapes, mass=2.5, semantic="foot")
    head = [
        cylinder(0.008, 0.03, (0.0, 0.0, -0.015), DARK),
        box((arm + 0.02, _LEVER_W, 0.02), (-arm / 2 + 0.01, 0.0, 0.0), colour),
        cylinder(sr, sh, (-arm, 0.0, -0.01 - sh / 2), colour),
        sphere(0.018, (-arm, 0.0, -0.01 - sh), _BULB),
    ]
    axis, upper = (
        ((0.0, 1.0, 0.0), s.uniform("upper", 0.6, 0.9))
        if motion == "tilt"
        else ((0.0, 0.0, 1.0), 1.57)
    )
    b.add_part(
        "base",
        "head",
        "revolute",
        (px, 0.0, ph + 0.03),
        head,
        0.3,
        axis=axis,
        upper=upper,
        interaction=Interaction((-arm, 0.0, 0.01), (0.0, 0.0, 1.0)),
    )
    add_button(
        b, "base", (0.0, -fr * 0.55, ft), radius=0.015, travel=0.006, facing="top", rgba=DARK
    )
    verb = "tilts up" if motion == "tilt" else "swivels sideways"
    return Blueprint(
        b, f"A {ph * 100:.0f} cm desk lamp whose head {verb}; a push switch sits on its foot."
    )


def build_laptop(s: ParamSampler, asset_id: str) -> Blueprint:
    """A laptop whose screen hinges up from the keyboard base."""
    w = s.uniform("width", 0.26, 0.36)
    d = s.uniform("depth", 0.18, 0.25)
    bt = s.uniform("base_thickness", 0.015, 0.02)
    st = s.uniform("screen_thickness", 0.006, 0.01)
    colour = BODY_COLOURS[s.choice("colour", ["steel", "graphite", "white", "grey"])]
    shapes = [
        slab((-d / 2, -w / 2, 0.0), (d / 2, w / 2, bt), colour),
        slab((-d / 2 + 0.07, -w / 2 + 0.02, bt), (d / 2 - 0.015, w / 2 - 0.02, bt + 0.0008), DARK),
    ]
    b = ObjectBuilder(asset_id)
    b.set_base(shapes, mass=1.2, semantic="keyboard")
    lid = [
        slab((-d, -w / 2, 0.0), (0.0, w / 2, st), colour),
        slab((-d + 0.012, -w / 2 + 0.012, -0.001), (-0.012, w / 2 - 0.012, 0.0), DARK),
    ]
    add_lid(
        b,
        "base",
        Rect(-d / 2, d / 2, -w / 2, w / 2),
        bt + 0.002,
        thickness=st,
        mass=0.35,
        rgba=colour,
        upper=s.uniform("upper", 1.8, 2.1),
        semantic="screen",
        shapes=lid,
    )
    return Blueprint(
        b, f"A {w * 100:.0f} cm wide laptop; lift the front edge of its screen to open it."
    )


def _grid(span: float, size: float, wanted: int) -> list[float]:
    """Up to ``wanted`` evenly spaced centres across ``span`` keeping >= 1.5 cm between buttons."""
    n = max(1, min(wanted, int((span - 0.04) // (size + 0.015))))
    step = (span - 0.04) / n
    return [-span / 2 + 0.02 + step * (k + 0.5) for k in range(n)]


def build_button_panel(s: ParamSampler, asset_id: str) -> Blueprint:
    """A panel of spring-return push buttons on its front face or on top of a console."""
    variant = s.cycle("variant", ["front", "top"])
    w = s.uniform("width", 0.16, 0.4)
    r = s.uniform("button_radius", 0.015, 0.02)
    cols = s.integer("columns", 2, 4)
    rows = s.integer("rows", 1, 2)
    colour = BODY_COLOURS[s.choice("colour", ["graphite", "grey", "white", "steel"])]
    if variant == "front":
        d, h = s.uniform("depth", 0.05, 0.12), s.uniform("height", 0.12, 0.3)
        zs = [h / 2 + z for z in _grid(h, 2 * r, rows)]
        spots = [((-d / 2, y, z), "front") for z in zs for y in _grid(w, 2 * r, cols)]
    else:
        d, h = s.uniform("depth", 0.12, 0.2), s.uniform("height", 0.05, 0.1)
        spots = [((x, y, h), "top") for x in _grid(d, 2 * r, rows) for y in _grid(w, 2 * r, cols)]
    b = ObjectBuilder(asset_id)
    b.set_base([slab((-d / 2, -w / 2, 0.0), (d / 2, w / 2, h), colour)], mass=1.5, semantic="panel")
    for k, (at, facing) in enumerate(spots):
        add_button(b, "base", at, radius=r, travel=0.008, facing=facing, rgba=BUTTON_COLOURS[k % 4])
    where = "on its front face" if variant == "front" else "on top"
    return Blueprint(
        b, f"A panel with {len(spots)} push buttons {where}; each springs back when released."
    )


CATEGORIES: tuple[CategorySpec, ...] = (
    CategorySpec(
        name="Faucet",
        kind="articulated",
        build=build_faucet,
        n_instances=5,
        randomizations="Lever motion (lift, swing, two swinging handles), body height 0.12-0.24 m, spout "
        "reach, lever length, finish and colours.",
    ),
    CategorySpec(
        name="Lamp",
        kind="articulated",
        build=build_lamp,
        n_instances=5,
        randomizations="Head motion (tilt, swivel), foot radius, pole height 0.3-0.5 m, arm length, shade "
        "size, colours.",
    ),
    CategorySpec(
        name="Laptop",
        kind="articulated",
        build=build_laptop,
        n_instances=5,
        randomizations="Width 0.26-0.36 m, depth 0.18-0.25 m, base and screen thickness, screen opening "
        "angle, colours.",
    ),
    CategorySpec(
        name="ButtonPanel",
        kind="articulated",
        build=build_button_panel,
        n_instances=5,
        randomizations="Buttons on the front or on top, panel size, button radius 15-20 mm, 1-2 rows and "
        "2-4 columns (as many as fit), colours.",
    ),
)
