"""Container categories: Box, TrashCan, Kettle, Dispenser, Toilet.

Why grouped: each is a vessel with a lid or pump on top, the "open the lid /
put X inside / press the pump" family of RoboGen tasks. Lids hinge along their
back edge and lift their front edge, so a suction cup on the front of the lid
opens them by moving up and back.
"""

from __future__ import annotations

import math

from .geometry import box, cylinder
from .openings import Rect, add_lid
from .parts import (
    BODY_COLOURS,
    BUTTON_COLOURS,
    DARK,
    HANDLE_COLOURS,
    add_bar_handle,
    add_button,
    add_knob_handle,
    hollow_box,
    ring_walls,
    slab,
)
from .spec import Blueprint, CategorySpec, ParamSampler
from .urdf import Interaction, ObjectBuilder

__all__ = [
    "CATEGORIES",
    "build_box",
    "build_trash_can",
    "build_kettle",
    "build_dispenser",
    "build_toilet",
]


def _lid_handle(b: ObjectBuilder, lid: str, style: str, depth: float, t: float, rgba) -> None:
    """A handle on a back-hinged lid whose front edge is at ``x = -depth`` (lid frame)."""
    if style == "tab":
        add_bar_handle(b, lid, (-depth, 0.0, t / 2), length=0.07, along="y", rgba=rgba)
    elif style == "knob":
        add_knob_handle(b, lid, (-depth + 0.04, 0.0, t), facing="top", rgba=rgba)
    else:
        add_bar_handle(
            b, lid, (-depth + 0.045, 0.0, t), length=0.08, along="y", facing="top", rgba=rgba
        )


def build_box(s: ParamSampler, asset_id: str) -> Blueprint:
    """A lidded storage box the robot may also move (free base)."""
    w = s.uniform("width", 0.16, 0.34)
    d = s.uniform("depth", 0.12, 0.28)
    h = s.uniform("height", 0.07, 0.18)
    t = s.uniform("lid_thickness", 0.012, 0.02)
    wall = 0.01
    handle = s.cycle("handle", ["tab", "knob", "bar_top"])
    colour = BODY_COLOURS[s.choice("colour", ["oak", "walnut", "sage", "cream", "grey"])]
    lid_rgba = BODY_COLOURS[s.choice("lid_colour", ["oak", "white", "graphite"])]
    b = ObjectBuilder(asset_id)
    b.set_base(hollow_box((-d / 2, -w / 2, 0.0), (d / 2, w / 2, h), wall, colour, "top"), mass=0.8)
    upper = s.uniform("lid_upper", 1.75, 2.0)
    lid = add_lid(
        b,
        "base",
        Rect(-d / 2, d / 2, -w / 2, w / 2),
        h,
        thickness=t,
        mass=0.2,
        rgba=lid_rgba,
        upper=upper,
    )
    _lid_handle(
        b, lid, handle, d, t, HANDLE_COLOURS[s.choice("handle_colour", list(HANDLE_COLOURS))]
    )
    summary = (
        f"A {w * 100:.0f} x {d * 100:.0f} x {h * 100:.0f} cm box with a lid hinged at the back; "
        "lift the lid by its front edge or handle to open it, and put things inside."
    )
    return Blueprint(b, summary, default_fixed_base=False)


def build_trash_can(s: ParamSampler, asset_id: str) -> Blueprint:
    """A square or round trash can with a back-hinged lid."""
    shape = s.cycle("shape", ["square", "round"])
    h = s.uniform("height", 0.24, 0.48)
    t = 0.016
    handle = s.choice("handle", ["tab", "knob", "bar_top"])
    colour = BODY_COLOURS[s.choice("colour", ["steel", "graphite", "white", "sage"])]
    lid_rgba = BODY_COLOURS[s.choice("lid_colour", ["steel", "graphite", "cream"])]
    b = ObjectBuilder(asset_id)
    if shape == "square":
        w = s.uniform("width", 0.2, 0.32)
        d = s.uniform("depth", 0.2, 0.32)
        b.set_base(
            hollow_box((-d / 2, -w / 2, 0.0), (d / 2, w / 2, h), 0.012, colour, "top"), mass=2.0
        )
        top = Rect(-d / 2 - 0.005, d / 2, -w / 2 - 0.005, w / 2 + 0.005)
        lid = add_lid(b, "base", top, h, thickness=t, mass=0.3, rgba=lid_rgba, upper=1.85)
        depth = top.size0
    else:
        r = s.uniform("radius", 0.1, 0.16)
        shapes = [cylinder(r, 0.012, (0.0, 0.0, 0.006), colour)]
        shapes += ring_walls(r, h - 0.012, 0.012, 16, 0.012, colour)
        shapes.append(slab((r - 0.012, -0.03, h - 0.02), (r + 0.008, 0.03, h), DARK))
        b.set_base(shapes, mass=2.0)
        lid_shape = [cylinder(r + 0.005, t, (-r - 0.008, 0.0, t / 2), lid_rgba)]
        top = Rect(-r - 0.018, r + 0.002, -r, r)
        lid = add_lid(
            b, "base", top, h, thickness=t, mass=0.3, rgba=lid_rgba, upper=1.85, shapes=lid_shape
        )
        depth = 2 * r + 0.013
    _lid_handle(
        b, lid, handle, depth, t, HANDLE_COLOURS[s.choice("handle_colour", list(HANDLE_COLOURS))]
    )
    summary = (
        f"A {h * 100:.0f} cm tall {shape} trash can whose lid is hinged at the back; lift the "
        "lid to open it and drop things inside."
    )
    return Blueprint(b, summary)


def build_kettle(s: ParamSampler, asset_id: str) -> Blueprint:
    """An electric kettle on its base plate with a hinged lid, spout and side handle."""
    r = s.uniform("radius", 0.065, 0.09)
    h = s.uniform("height", 0.14, 0.22)
    colour = BODY_COLOURS[s.choice("colour", ["steel", "white", "graphite", "cream", "sage"])]
    lid_ratio = s.uniform("lid_ratio", 0.55, 0.7)
    base_t = 0.015
    shapes = [
        cylinder(r + 0.008, base_t, (0.0, 0.0, base_t / 2), DARK),
        cylinder(r, h - base_t, (0.0, 0.0, (h + base_t) / 2), colour),
    ]
    angle = s.uniform("spout_angle", 0.4, 0.7)
    length = 0.08
    shapes.append(
        box(
            (0.03, length, 0.024),
            (
                0.0,
                -r - length / 2 * math.cos(angle) + 0.012,
                0.55 * h + length / 2 * math.sin(angle),
            ),
            colour,
            rpy=(-angle, 0.0, 0.0),
        )
    )
    hy = r + 0.04
    shapes += [
        box((0.026, 0.02, 0.55 * h), (0.0, hy, 0.6 * h), DARK),
        box((0.026, hy - r + 0.02, 0.02), (0.0, (r + hy) / 2, 0.87 * h), DARK),
        box((0.026, hy - r + 0.02, 0.02), (0.0, (r + hy) / 2, 0.33 * h), DARK),
    ]
    lr = r * lid_ratio
    shapes.append(slab((lr + 0.002, -0.02, h), (lr + 0.014, 0.02, h + 0.01), DARK))
    b = ObjectBuilder(asset_id)
    b.set_base(shapes, mass=1.0, semantic="body")
    t = 0.014
    lid_shape = [cylinder(lr, t, (-lr, 0.0, t / 2), colour)]
    lid = add_lid(
        b,
        "base",
        Rect(-lr, lr, -lr, lr),
        h,
        thickness=t,
        mass=0.08,
        rgba=colour,
        upper=s.uniform("lid_upper", 1.6, 1.9),
        shapes=lid_shape,
        interaction=False,
    )
    add_knob_handle(b, lid, (-lr, 0.0, t), facing="top", rgba=DARK)
    summary = (
        f"A {h * 100:.0f} cm tall kettle with a spout on its right and a handle on its left; "
        "its lid hinges up at the back when lifted by the knob on top."
    )
    return Blueprint(b, summary, default_fixed_base=False)


def build_dispenser(s: ParamSampler, asset_id: str) -> Blueprint:
    """A soap dispenser with a spring pump, or a wipes box with a sliding lid."""
    variant = s.cycle("variant", ["pump", "slide_lid"])
    colour = BODY_COLOURS[s.choice("colour", ["white", "sage", "cream", "steel", "graphite"])]
    b = ObjectBuilder(asset_id)
    if variant == "pump":
        w = s.uniform("width", 0.07, 0.11)
        h = s.uniform("height", 0.12, 0.2)
        travel = s.uniform("travel", 0.012, 0.02)
        cap_r = s.uniform("cap_radius", 0.016, 0.022)
        neck = 0.025
        b.set_base(
            [
                box((w, w, h), (0.0, 0.0, h / 2), colour),
                cylinder(0.013, neck, (0.0, 0.0, h + neck / 2), DARK),
            ],
            mass=0.6,
            semantic="bottle",
        )
        lift = travel + 0.006
        head = [
            cylinder(0.008, lift + 0.02, (0.0, 0.0, lift - (lift + 0.02) / 2), DARK),
            cylinder(cap_r, 0.018, (0.0, 0.0, lift + 0.009), DARK),
            box((0.05, 0.014, 0.012), (-0.025 - cap_r * 0.5, 0.0, lift + 0.012), DARK),
        ]
        b.add_part(
            "base",
            "pump",
            "prismatic",
            (0.0, 0.0, h + neck),
            head,
            0.03,
            axis=(0.0, 0.0, -1.0),
            upper=travel,
            spring=True,
            interaction=Interaction((0.0, 0.0, lift + 0.018), (0.0, 0.0, 1.0)),
        )
        summary = f"A {h * 100:.0f} cm tall soap dispenser; press its pump head down to dispense."
    else:
        w = s.uniform("width", 0.16, 0.26)
        d = s.uniform("depth", 0.12, 0.2)
        h = s.uniform("height", 0.08, 0.15)
        b.set_base(
            hollow_box((-d / 2, -w / 2, 0.0), (d / 2, w / 2, h), 0.008, colour, "top"), mass=0.5
        )
        lid_rgba = BODY_COLOURS[s.choice("lid_colour", ["white", "graphite", "oak"])]
        lid = b.add_part(
            "base",
            "lid",
            "prismatic",
            (-d / 2, 0.0, h),
            [slab((0.0, -w / 2, 0.0), (d, w / 2, 0.01), lid_rgba)],
            0.1,
            axis=(1.0, 0.0, 0.0),
            upper=round(0.6 * d, 3),
        )
        add_bar_handle(b, lid, (0.035, 0.0, 0.01), length=0.07, along="y", facing="top", rgba=DARK)
        summary = (
            f"A {w * 100:.0f} cm wide wipes dispenser; slide its lid backwards by the handle "
            "to open it."
        )
    return Blueprint(b, summary)


def build_toilet(s: ParamSampler, asset_id: str) -> Blueprint:
    """A (small) toilet: bowl, tank, a lid that lifts up and flush buttons on the tank.

    The flush buttons sit on the tank's front face beside the lid, where the
    raised lid cannot cover them and the robot reaches them from the front.
    """
    bw = s.uniform("bowl_width", 0.24, 0.3)
    bd = s.uniform("bowl_depth", 0.22, 0.27)
    bh = s.uniform("bowl_height", 0.2, 0.3)
    td = s.uniform("tank_depth", 0.07, 0.09)
    th = bh + s.uniform("tank_rise", 0.1, 0.18)
    flush = s.cycle("flush", ["left", "right", "dual"])
    colour = BODY_COLOURS[s.choice("colour", ["white", "cream", "grey"])]
    gap = 0.012
    depth = bd + gap + td
    x0, xt = -depth / 2, -depth / 2 + bd + gap
    tw = bw / 2 + 0.05
    shapes = [
        slab((x0 + 0.05, -bw * 0.3, 0.0), (xt, bw * 0.3, bh - 0.08), colour),
        *hollow_box((x0, -bw / 2, bh - 0.08), (x0 + bd, bw / 2, bh), 0.02, colour, "top"),
        slab((x0 + bd, -bw * 0.3, bh - 0.08), (xt, bw * 0.3, bh - 0.02), colour),
        slab((xt, -tw, bh - 0.1), (depth / 2, tw, th), colour),
    ]
    b = ObjectBuilder(asset_id)
    b.set_base(shapes, mass=12.0, semantic="bowl")
    lid_rgba = BODY_COLOURS[s.choice("lid_colour", ["white", "cream", "oak"])]
    top = Rect(x0 - 0.005, xt - gap / 2, -bw / 2 - 0.005, bw / 2 + 0.005)
    add_lid(
        b, "base", top, bh, thickness=0.02, mass=0.4, rgba=lid_rgba, upper=1.5, hinge_on_top=True
    )
    side = bw / 2 + 0.027
    ys = {"left": [side], "right": [-side], "dual": [side, -side]}[flush]
    for k, y in enumerate(ys):
        add_button(
            b,
            "base",
            (xt, y, th - 0.045),
            radius=0.016,
            travel=0.006,
            rgba=BUTTON_COLOURS[2] if k == 0 else BUTTON_COLOURS[1],
        )
    summary = (
        f"A toilet with a {bh * 100:.0f} cm high bowl; lift its lid by the front edge and press "
        f"the flush button{'s' if len(ys) > 1 else ''} on the front of the tank."
    )
    return Blueprint(b, summary)


CATEGORIES: tuple[CategorySpec, ...] = (
    CategorySpec(
        name="Box",
        kind="articulated",
        build=build_box,
        n_instances=5,
        randomizations="Width 0.16-0.34 m, depth 0.12-0.28 m, height 0.07-0.18 m, lid thickness and "
        "opening angle, front tab, knob or top bar handle, colours.",
    ),
    CategorySpec(
        name="TrashCan",
        kind="articulated",
        build=build_trash_can,
        n_instances=5,
        randomizations="Square (0.2-0.32 m) or round (radius 0.1-0.16 m) body, height 0.24-0.48 m, handle "
        "style, colours.",
    ),
    CategorySpec(
        name="Kettle",
        kind="articulated",
        build=build_kettle,
        n_instances=5,
        randomizations="Body radius 0.065-0.09 m, height 0.14-0.22 m, lid size and opening angle, spout "
        "angle, colours.",
    ),
    CategorySpec(
        name="Dispenser",
        kind="articulated",
        build=build_dispenser,
        n_instances=5,
        randomizations="Pump bottle (size, pump travel 12-20 mm, cap radius) or wipes box with a sliding "
        "lid (size), colours.",
    ),
    CategorySpec(
        name="Toilet",
        kind="articulated",
        build=build_toilet,
        n_instances=5,
        randomizations="Bowl width 0.24-0.3 m, depth 0.22-0.27 m, height 0.2-0.3 m, tank depth and "
        "height, flush button on the left, right or both sides of the tank front, colours.",
    ),
)
