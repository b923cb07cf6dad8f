"""Appliance categories: Microwave, Oven, Refrigerator, Safe.

Why these four together: they share a hollow box body with one or two front
doors plus controls (buttons, continuous dials), the parts RoboGen/VERGSA tasks
such as "open the microwave and press start" or "turn the oven knob" address.
"""

from __future__ import annotations

from .geometry import RGBA
from .openings import Rect, add_flap_door, add_side_door, free_edge_y
from .parts import (
    BODY_COLOURS,
    BUTTON_COLOURS,
    DARK,
    HANDLE_COLOURS,
    add_bar_handle,
    add_button,
    add_dial,
    add_handle,
    hollow_box,
    slab,
)
from .spec import Blueprint, CategorySpec, ParamSampler
from .urdf import ObjectBuilder

__all__ = ["CATEGORIES", "build_microwave", "build_oven", "build_refrigerator", "build_safe"]

_GAP = 0.003
_WINDOW: RGBA = (0.08, 0.09, 0.11, 1.0)


def _feet(x0: float, x1: float, y0: float, y1: float, height: float, rgba: RGBA) -> list:
    """Four square feet under the corners of a footprint."""
    size = 0.03
    return [
        slab((x, y, 0.0), (x + size, y + size, height), rgba)
        for x in (x0 + 0.01, x1 - 0.01 - size)
        for y in (y0 + 0.01, y1 - 0.01 - size)
    ]


def _shrink(rect: Rect, gap: float = _GAP) -> Rect:
    return Rect(rect.lo0 + gap, rect.hi0 - gap, rect.lo1 + gap, rect.hi1 - gap)


def build_microwave(s: ParamSampler, asset_id: str) -> Blueprint:
    """A microwave: side-hinged door with a window and a control panel of buttons/dials."""
    w = s.uniform("width", 0.4, 0.55)
    h = s.uniform("height", 0.24, 0.34)
    d = s.uniform("depth", 0.28, 0.355)
    pw = s.uniform("panel_width", 0.1, 0.13)
    hinge = s.cycle("hinge", ["left", "right"])
    controls = s.cycle("controls", ["buttons", "dial+button", "dials"])
    body = BODY_COLOURS[s.choice("colour", ["white", "steel", "graphite", "cream"])]
    wall, foot = 0.015, 0.012
    shapes = hollow_box((-d / 2, -w / 2, foot), (d / 2, w / 2, h), wall, body)
    shapes += _feet(-d / 2, d / 2, -w / 2, w / 2, foot, DARK)
    z_lo, z_hi = foot + wall, h - wall
    if hinge == "left":  # panel on the robot's right (-y)
        panel = Rect(-w / 2 + wall, -w / 2 + pw, z_lo, z_hi)
        cavity = Rect(panel.hi0 + wall, w / 2 - wall, z_lo, z_hi)
        divider_y = panel.hi0
    else:
        panel = Rect(w / 2 - pw, w / 2 - wall, z_lo, z_hi)
        cavity = Rect(-w / 2 + wall, panel.lo0 - wall, z_lo, z_hi)
        divider_y = panel.lo0 - wall
    shapes.append(slab((-d / 2, divider_y, z_lo), (d / 2 - wall, divider_y + wall, z_hi), body))
    shapes.append(slab((-d / 2, panel.lo0, z_lo), (-d / 2 + 0.02, panel.hi0, z_hi), DARK))
    b = ObjectBuilder(asset_id)
    b.set_base(shapes, mass=8.0, semantic="body")
    front = _shrink(cavity)
    dw, dh = front.size0, front.size1
    glass_y = (-dw + 0.07, -0.03) if hinge == "left" else (0.03, dw - 0.07)
    glass = slab((-0.002, glass_y[0], 0.03), (0.0, glass_y[1], dh - 0.03), _WINDOW)
    door = add_side_door(
        b, "base", front, -d / 2, thickness=0.022, hinge=hinge, mass=1.0, rgba=body, decor=[glass]
    )
    h_rgba = HANDLE_COLOURS[s.choice("handle_colour", list(HANDLE_COLOURS))]
    add_bar_handle(
        b,
        door,
        (0.0, free_edge_y(front, hinge, 0.035), dh / 2),
        length=min(0.14, 0.6 * dh),
        rgba=h_rgba,
    )
    kinds = {
        "buttons": ["button"] * s.integer("n_buttons", 2, 3),
        "dial+button": ["dial", "button"],
    }
    stack = kinds.get(controls, ["dial", "dial"])
    y = (panel.lo0 + panel.hi0) / 2
    step = (z_hi - z_lo) / (len(stack) + 1)
    for k, kind in enumerate(stack):
        at = (-d / 2, y, z_hi - step * (k + 1))
        if kind == "dial":
            add_dial(b, "base", at, radius=0.022)
        else:
            add_button(b, "base", at, rgba=BUTTON_COLOURS[k % len(BUTTON_COLOURS)])
    summary = (
        f"A {w * 100:.0f} cm wide microwave whose door is hinged on the {hinge}; the control "
        f"panel has {', '.join(stack)} controls. Pull the handle to open the door, press the "
        "buttons or turn the dials to operate it."
    )
    return Blueprint(b, summary)


def build_oven(s: ParamSampler, asset_id: str) -> Blueprint:
    """A small oven: a door folding down towards the robot and a strip of dials."""
    w = s.uniform("width", 0.4, 0.6)
    h = s.uniform("height", 0.34, 0.5)
    d = s.uniform("depth", 0.3, 0.355)
    strip = s.uniform("strip_height", 0.075, 0.09)
    n_dials = s.integer("n_dials", 2, 4)
    with_button = s.cycle("button", [False, True])
    body = BODY_COLOURS[s.choice("colour", ["steel", "graphite", "white", "cream"])]
    wall, foot = 0.018, 0.065
    shapes = hollow_box((-d / 2, -w / 2, foot), (d / 2, w / 2, h), wall, body)
    shapes += _feet(-d / 2, d / 2, -w / 2, w / 2, foot, DARK)
    y0, y1 = -w / 2 + wall, w / 2 - wall
    strip_lo = h - wall - strip
    shapes += [
        slab((-d / 2, y0, strip_lo), (-d / 2 + 0.02, y1, h - wall), DARK),
        slab((-d / 2, y0, strip_lo - wall), (d / 2 - wall, y1, strip_lo), body),
        slab(
            (-d / 2 + 0.04, y0, (foot + strip_lo) / 2),
            (d / 2 - wall, y1, (foot + strip_lo) / 2 + 0.006),
            DARK,
        ),
    ]
    b = ObjectBuilder(asset_id)
    b.set_base(shapes, mass=10.0, semantic="body")
    front = _shrink(Rect(y0, y1, foot + wall, strip_lo - wall))
    dw, dh = front.size0, front.size1
    glass = slab((-0.002, -dw / 2 + 0.05, 0.05), (0.0, dw / 2 - 0.05, dh - 0.075), _WINDOW)
    door = add_flap_door(
        b, "base", front, -d / 2, thickness=0.025, mass=1.5, rgba=body, decor=[glass]
    )
    h_rgba = HANDLE_COLOURS[s.choice("handle_colour", list(HANDLE_COLOURS))]
    add_bar_handle(
        b, door, (0.0, 0.0, dh - 0.035), length=min(0.3, 0.6 * dw), along="y", rgba=h_rgba
    )
    span = (w / 2 - 0.06) * 2
    z = h - wall - strip / 2
    for k in range(n_dials):
        y = w / 2 - 0.06 - span * k / (n_dials - 1)
        if with_button and k == n_dials - 1:
            add_button(b, "base", (-d / 2, y, z), rgba=BUTTON_COLOURS[0])
        else:
            add_dial(
                b, "base", (-d / 2, y, z), radius=0.021, rgba=HANDLE_COLOURS["chrome"], marker=DARK
            )
    summary = (
        f"A {w * 100:.0f} cm wide oven whose door folds down towards the robot, with "
        f"{n_dials} controls ({'dials and a button' if with_button else 'dials'}) above the door."
    )
    return Blueprint(b, summary)


def build_refrigerator(s: ParamSampler, asset_id: str) -> Blueprint:
    """A two-door refrigerator: side by side, freezer on top or freezer at the bottom."""
    w = s.uniform("width", 0.36, 0.5)
    h = s.uniform("height", 0.6, 0.72)
    d = s.uniform("depth", 0.28, 0.355)
    layout = s.cycle("layout", ["side_by_side", "top_freezer", "bottom_freezer"])
    hinge = s.choice("hinge", ["left", "right"])
    body = BODY_COLOURS[s.choice("colour", ["white", "steel", "cream", "graphite"])]
    h_rgba = HANDLE_COLOURS[s.choice("handle_colour", list(HANDLE_COLOURS))]
    wall, foot = 0.02, 0.02
    shapes = hollow_box((-d / 2, -w / 2, foot), (d / 2, w / 2, h), wall, body)
    shapes += _feet(-d / 2, d / 2, -w / 2, w / 2, foot, DARK)
    y0, y1, z0, z1 = -w / 2 + wall, w / 2 - wall, foot + wall, h - wall
    if layout == "side_by_side":
        div = s.uniform("divider_y", -0.04, 0.04)
        shapes.append(slab((-d / 2, div - wall / 2, z0), (d / 2 - wall, div + wall / 2, z1), body))
        doors = [
            (Rect(div + wall / 2, y1, z0, z1), "left", 0.5),
            (Rect(y0, div - wall / 2, z0, z1), "right", 0.5),
        ]
        for lo, hi in ((div + wall / 2, y1), (y0, div - wall / 2)):
            shapes.append(
                slab(
                    (-d / 2 + 0.05, lo, (z0 + z1) / 2),
                    (d / 2 - wall, hi, (z0 + z1) / 2 + 0.008),
                    body,
                )
            )
    else:
        frac = 0.64 if layout == "top_freezer" else 0.36
        div = z0 + (z1 - z0) * frac
        shapes.append(slab((-d / 2, y0, div - wall / 2), (d / 2 - wall, y1, div + wall / 2), body))
        low, high = Rect(y0, y1, z0, div - wall / 2), Rect(y0, y1, div + wall / 2, z1)
        doors = [(low, hinge, 0.88), (high, hinge, 0.15)]
        tall = low if layout == "top_freezer" else high
        mid = (tall.lo1 + tall.hi1) / 2
        shapes.append(slab((-d / 2 + 0.05, y0, mid), (d / 2 - wall, y1, mid + 0.008), body))
    b = ObjectBuilder(asset_id)
    b.set_base(shapes, mass=15.0, semantic="body")
    for rect, side, rel in doors:
        front = _shrink(rect)
        door = add_side_door(
            b, "base", front, -d / 2, thickness=0.028, hinge=side, mass=1.6, rgba=body
        )
        length = min(0.16, 0.5 * front.size1)
        z = min(max(rel * front.size1, length / 2 + 0.02), 0.62 - front.lo1)
        z = min(z, front.size1 - length / 2 - 0.02)
        add_bar_handle(
            b, door, (0.0, free_edge_y(front, side, 0.035), z), length=length, rgba=h_rgba
        )
    summary = (
        f"A {h * 100:.0f} cm tall two-door refrigerator ({layout.replace('_', ' ')}); each "
        "door swings open towards the robot when its handle is pulled."
    )
    return Blueprint(b, summary)


def build_safe(s: ParamSampler, asset_id: str) -> Blueprint:
    """A safe: heavy side-hinged door carrying a continuous combination dial and a handle."""
    w = s.uniform("width", 0.3, 0.44)
    h = s.uniform("height", 0.3, 0.48)
    d = s.uniform("depth", 0.28, 0.355)
    hinge = s.cycle("hinge", ["left", "right"])
    handle = s.cycle("handle", ["bar", "lever", "knob"])
    dial_r = s.uniform("dial_radius", 0.022, 0.03)
    body = BODY_COLOURS[s.choice("colour", ["graphite", "steel", "sage", "grey"])]
    h_rgba = HANDLE_COLOURS[s.choice("handle_colour", list(HANDLE_COLOURS))]
    wall, foot = 0.03, 0.015
    shapes = hollow_box((-d / 2, -w / 2, foot), (d / 2, w / 2, h), wall, body)
    shapes += _feet(-d / 2, d / 2, -w / 2, w / 2, foot, DARK)
    shelf_z = (foot + h) / 2
    shapes.append(
        slab(
            (-d / 2 + 0.05, -w / 2 + wall, shelf_z),
            (d / 2 - wall, w / 2 - wall, shelf_z + 0.01),
            body,
        )
    )
    b = ObjectBuilder(asset_id)
    b.set_base(shapes, mass=20.0, semantic="body")
    front = _shrink(Rect(-w / 2 + wall, w / 2 - wall, foot + wall, h - wall))
    dw, dh = front.size0, front.size1
    door = add_side_door(b, "base", front, -d / 2, thickness=0.04, hinge=hinge, mass=3.0, rgba=body)
    add_dial(
        b, door, (0.0, free_edge_y(front, hinge, 0.55 * dw), 0.64 * dh), radius=dial_r, depth=0.018
    )
    if handle == "lever":
        at = (0.0, free_edge_y(front, hinge, 0.075), 0.3 * dh)
        add_bar_handle(b, door, at, length=0.09, along="y", rgba=h_rgba)
    else:
        at = (0.0, free_edge_y(front, hinge, 0.045), 0.42 * dh)
        add_handle(b, door, at, handle, length=min(0.1, 0.35 * dh), rgba=h_rgba)
    summary = (
        f"A {w * 100:.0f} cm wide safe whose heavy door is hinged on the {hinge}; turn the "
        f"combination dial, then pull the {handle} handle to swing the door open."
    )
    return Blueprint(b, summary)


CATEGORIES: tuple[CategorySpec, ...] = (
    CategorySpec(
        name="Microwave",
        kind="articulated",
        build=build_microwave,
        n_instances=5,
        randomizations="Width 0.4-0.55 m, height 0.24-0.34 m, depth 0.28-0.355 m, hinge side (control panel "
        "opposite), controls (2-3 buttons, dial and button, two dials), colours.",
    ),
    CategorySpec(
        name="Oven",
        kind="articulated",
        build=build_oven,
        n_instances=5,
        randomizations="Width 0.4-0.6 m, height 0.34-0.5 m, depth 0.3-0.355 m, 2-4 dials, optional push "
        "button, control strip height, colours.",
    ),
    CategorySpec(
        name="Refrigerator",
        kind="articulated",
        build=build_refrigerator,
        n_instances=5,
        randomizations="Height 0.6-0.72 m, width 0.36-0.5 m, depth 0.28-0.355 m, layout (side by side, "
        "freezer on top, freezer at the bottom), hinge side, colours.",
    ),
    CategorySpec(
        name="Safe",
        kind="articulated",
        build=build_safe,
        n_instances=5,
        randomizations="Width 0.3-0.44 m, height 0.3-0.48 m, depth 0.28-0.355 m, hinge side, bar, lever or "
        "knob handle, dial radius, colours.",
    ),
)
