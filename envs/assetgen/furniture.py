"""Furniture categories: StorageFurniture, Door, Window, FoldingChair.

Why parametric rather than fixed models: tasks and judges must not overfit one
cabinet; each instance varies size, layout, hinge side and handle shape while
keeping every handle within the Panda's reach at the default placement.
"""

from __future__ import annotations

from .geometry import RGBA
from .openings import Rect, add_drawer, add_lid, add_side_door, free_edge_y
from .parts import BODY_COLOURS, GLASS, HANDLE_COLOURS, add_bar_handle, add_handle, slab
from .spec import Blueprint, CategorySpec, ParamSampler
from .urdf import ObjectBuilder

__all__ = ["CATEGORIES", "build_storage_furniture", "build_door", "build_window", "build_chair"]

_P = 0.016  # carcass panel thickness
_GAP = 0.003

_LAYOUTS: tuple[str, ...] = ("drawers", "door", "door+drawers", "two_columns", "double_door")


def _carcass(w: float, h: float, d: float, plinth: float, rgba: RGBA) -> list:
    """Plinth, bottom, top, sides and back of a cabinet (open at the front)."""
    x0, x1, y0, y1 = -d / 2, d / 2, -w / 2, w / 2
    return [
        slab((x0 + 0.02, y0 + 0.01, 0.0), (x1, y1 - 0.01, plinth), rgba),
        slab((x0, y0, plinth), (x1, y1, plinth + _P), rgba),
        slab((x0, y0, h - _P), (x1, y1, h), rgba),
        slab((x0, y0, plinth), (x1, y0 + _P, h - _P), rgba),
        slab((x0, y1 - _P, plinth), (x1, y1, h - _P), rgba),
        slab((x1 - _P, y0 + _P, plinth + _P), (x1, y1 - _P, h - _P), rgba),
    ]


def _columns(s: ParamSampler, layout: str) -> list[list[str]]:
    """Cells per column, bottom to top: ``drawer``, ``door_left``, ``door_right``, ``double``."""
    hinge = s.choice("hinge", ["left", "right"])
    if layout == "drawers":
        return [["drawer"] * s.integer("n_drawers", 2, 4)]
    if layout == "door":
        return [[f"door_{hinge}"]]
    if layout == "door+drawers":
        return [[f"door_{hinge}"] + ["drawer"] * s.integer("n_drawers", 1, 2)]
    if layout == "two_columns":
        drawers = ["drawer"] * s.integer("n_drawers", 2, 3)
        return [drawers, ["door_right"]] if hinge == "left" else [["door_left"], drawers]
    return [["double"] + (["drawer"] if s.flag("top_drawer") else [])]


def build_storage_furniture(s: ParamSampler, asset_id: str) -> Blueprint:
    """A cabinet with drawers and/or doors laid out in one or two columns."""
    layout = s.cycle("layout", _LAYOUTS)
    w = s.uniform("width", 0.55 if layout == "two_columns" else 0.36, 0.7)
    h = s.uniform("height", 0.38, 0.72)
    d = s.uniform("depth", 0.3, 0.355)
    plinth = s.uniform("plinth", 0.03, 0.05)
    colour = BODY_COLOURS[s.choice("colour", ["oak", "walnut", "white", "grey", "sage"])]
    handle_shape = s.choice("handle", ["bar", "knob"])
    handle_rgba = HANDLE_COLOURS[s.choice("handle_colour", list(HANDLE_COLOURS))]
    columns = _columns(s, layout)
    b = ObjectBuilder(asset_id)
    shapes = _carcass(w, h, d, plinth, colour)
    y_edges = [-w / 2 + _P, w / 2 - _P]
    if len(columns) == 2:
        y_div = s.uniform("divider_y", -0.05, 0.05)
        shapes.append(
            slab(
                (-d / 2, y_div - _P / 2, plinth + _P), (d / 2 - _P, y_div + _P / 2, h - _P), colour
            )
        )
        y_edges = [y_edges[0], y_div - _P / 2, y_div + _P / 2, y_edges[1]]
    cells: list[tuple[str, Rect]] = []
    z_lo, z_hi = plinth + _P, h - _P
    for c, column in enumerate(columns):
        y_lo, y_hi = y_edges[2 * c], y_edges[2 * c + 1]
        heights = [1.6 if cell != "drawer" else 1.0 for cell in column]
        unit = (z_hi - z_lo - _P * (len(column) - 1)) / sum(heights)
        z = z_lo
        for cell, weight in zip(column, heights, strict=True):
            top = z + unit * weight
            cells.append((cell, Rect(y_lo, y_hi, z, top)))
            if top < z_hi - 1e-6:
                shapes.append(slab((-d / 2, y_lo, top), (d / 2 - _P, y_hi, top + _P), colour))
            z = top + _P
    b.set_base(shapes, mass=round(6.0 + 20.0 * w * h, 2), semantic="cabinet")
    n_drawers = n_doors = 0
    for cell, rect in cells:
        if cell == "drawer":
            n_drawers += 1
            _add_drawer(b, rect, d, handle_shape, handle_rgba, colour)
        else:
            n_doors += 2 if cell == "double" else 1
            _add_cell_doors(b, rect, d, cell, handle_shape, handle_rgba, colour)
    summary = (
        f"A {w * 100:.0f} cm wide, {h * 100:.0f} cm tall storage cabinet with "
        f"{n_drawers} drawer(s) and {n_doors} door(s). Drawers slide out towards the robot "
        "and doors swing open towards it; pull their handles to open them."
    )
    return Blueprint(b, summary)


def _add_drawer(
    b: ObjectBuilder, rect: Rect, d: float, handle: str, h_rgba: RGBA, rgba: RGBA
) -> None:
    inner = (rgba[0] * 0.85, rgba[1] * 0.85, rgba[2] * 0.85, 1.0)
    depth = d - _P - 0.012
    drawer = add_drawer(b, "base", rect, -d / 2, depth=depth, mass=0.9, rgba=rgba, inner_rgba=inner)
    height = rect.size1 - 2 * _GAP
    length = min(0.16, 0.55 * rect.size0)
    add_handle(b, drawer, (0.0, 0.0, height / 2), handle, length=length, along="y", rgba=h_rgba)


def _add_cell_doors(
    b: ObjectBuilder, rect: Rect, d: float, cell: str, handle: str, h_rgba: RGBA, rgba: RGBA
) -> None:
    shrunk = Rect(rect.lo0 + _GAP, rect.hi0 - _GAP, rect.lo1 + _GAP, rect.hi1 - _GAP)
    if cell == "double":
        mid = (shrunk.lo0 + shrunk.hi0) / 2
        doors = [
            (Rect(mid + _GAP / 2, shrunk.hi0, shrunk.lo1, shrunk.hi1), "left"),
            (Rect(shrunk.lo0, mid - _GAP / 2, shrunk.lo1, shrunk.hi1), "right"),
        ]
    else:
        doors = [(shrunk, cell.split("_")[1])]
    for front, hinge in doors:
        door = add_side_door(
            b, "base", front, -d / 2, thickness=_P, hinge=hinge, mass=1.2, rgba=rgba
        )
        z = min(front.size1 * 0.5, 0.62 - front.lo1)
        y = free_edge_y(front, hinge, 0.04)
        length = min(0.14, 0.45 * front.size1)
        add_handle(b, door, (0.0, y, z), handle, length=length, along="z", rgba=h_rgba)


def build_door(s: ParamSampler, asset_id: str) -> Blueprint:
    """A free-standing door frame on two feet with a hinged door and a handle."""
    w = s.uniform("width", 0.36, 0.56)
    h = s.uniform("height", 0.5, 0.72)
    f = s.uniform("frame", 0.03, 0.045)
    fd = s.uniform("frame_depth", 0.05, 0.08)
    hinge = s.cycle("hinge", ["left", "right"])
    handle = s.cycle("handle", ["bar", "knob", "lever"])
    frame_rgba = BODY_COLOURS[s.choice("frame_colour", ["white", "walnut", "grey"])]
    door_rgba = BODY_COLOURS[s.choice("door_colour", ["oak", "cream", "sage", "steel"])]
    h_rgba = HANDLE_COLOURS[s.choice("handle_colour", list(HANDLE_COLOURS))]
    foot, sill = 0.02, 0.015
    x0, x1, y0, y1 = -fd / 2, fd / 2, -w / 2, w / 2
    shapes = [
        slab((-0.13, y0, 0.0), (0.13, y0 + f, foot), frame_rgba),
        slab((-0.13, y1 - f, 0.0), (0.13, y1, foot), frame_rgba),
        slab((x0, y0, foot), (x1, y0 + f, h), frame_rgba),
        slab((x0, y1 - f, foot), (x1, y1, h), frame_rgba),
        slab((x0, y0 + f, h - f), (x1, y1 - f, h), frame_rgba),
        slab((x0, y0 + f, 0.0), (x1, y1 - f, foot + sill), frame_rgba),
    ]
    b = ObjectBuilder(asset_id)
    b.set_base(shapes, mass=6.0, semantic="frame")
    front = Rect(y0 + f + _GAP, y1 - f - _GAP, foot + sill + _GAP, h - f - _GAP)
    thick = min(0.025, fd - 0.01)
    door = add_side_door(
        b, "base", front, x0, thickness=thick, hinge=hinge, mass=1.5, rgba=door_rgba
    )
    z = min(0.5 * front.size1, 0.4)
    y = free_edge_y(front, hinge, 0.045)
    if handle == "lever":
        y = free_edge_y(front, hinge, 0.075)
        add_bar_handle(b, door, (0.0, y, z), length=0.09, along="y", rgba=h_rgba)
    else:
        add_handle(b, door, (0.0, y, z), handle, length=0.12, along="z", rgba=h_rgba)
    summary = (
        f"A {h * 100:.0f} cm tall door in a free-standing frame, hinged on the {hinge}; it "
        f"swings open towards the robot when its {handle} handle is pulled."
    )
    return Blueprint(b, summary)


def build_window(s: ParamSampler, asset_id: str) -> Blueprint:
    """A framed window whose sash slides up (sash window) or sideways (slider)."""
    w = s.uniform("width", 0.4, 0.64)
    h = s.uniform("height", 0.4, 0.7)
    f = s.uniform("frame", 0.03, 0.04)
    fd = 0.08
    slide = s.cycle("slide", ["up", "sideways"])
    frame_rgba = BODY_COLOURS[s.choice("frame_colour", ["white", "walnut", "graphite"])]
    h_rgba = HANDLE_COLOURS[s.choice("handle_colour", list(HANDLE_COLOURS))]
    foot = 0.02
    x0, x1, y0, y1 = -fd / 2, fd / 2, -w / 2, w / 2
    shapes = [
        slab((-0.12, y0, 0.0), (0.12, y1, foot), frame_rgba),
        slab((x0, y0, foot), (x1, y0 + f, h), frame_rgba),
        slab((x0, y1 - f, foot), (x1, y1, h), frame_rgba),
        slab((x0, y0 + f, h - f), (x1, y1 - f, h), frame_rgba),
        slab((x0, y0 + f, foot), (x1, y1 - f, foot + f), frame_rgba),
    ]
    oy0, oy1, oz0, oz1 = y0 + f, y1 - f, foot + f, h - f
    back_x = (x0 + 0.035, x0 + 0.055)
    rail, sash_t = 0.022, 0.02
    if slide == "up":
        fixed = Rect(oy0, oy1, (oz0 + oz1) / 2 - 0.01, oz1)
        sash = Rect(oy0 + _GAP, oy1 - _GAP, oz0 + _GAP, (oz0 + oz1) / 2 + 0.01)
    else:
        fixed = Rect((oy0 + oy1) / 2 - 0.01, oy1, oz0, oz1)
        sash = Rect(oy0 + _GAP, (oy0 + oy1) / 2 + 0.01, oz0 + _GAP, oz1 - _GAP)
    shapes += _sash_shapes(fixed, back_x, rail, frame_rgba, origin=(0.0, 0.0, 0.0))
    b = ObjectBuilder(asset_id)
    b.set_base(shapes, mass=4.0, semantic="frame")
    sx = x0 + 0.005
    if slide == "up":
        origin = (sx, (sash.lo0 + sash.hi0) / 2, sash.lo1)
        travel = (oz1 - oz0) / 2 - 0.03
        axis = (0.0, 0.0, 1.0)
    else:
        origin = (sx, sash.lo0, (sash.lo1 + sash.hi1) / 2)
        travel = (oy1 - oy0) / 2 - 0.03
        axis = (0.0, 1.0, 0.0)
    local = _sash_shapes(sash, (0.0, sash_t), rail, frame_rgba, origin=origin, bottom_rail=0.045)
    link = b.add_part(
        "base", "window", "prismatic", origin, local, 0.8, axis=axis, upper=round(travel, 3)
    )
    if slide == "up":
        add_bar_handle(b, link, (0.0, 0.0, 0.0225), length=0.1, along="y", rgba=h_rgba)
    else:
        add_bar_handle(b, link, (0.0, rail / 2 + 0.012, 0.0), length=0.1, along="z", rgba=h_rgba)
    direction = "lower sash slides up" if slide == "up" else "right sash slides to the left"
    summary = (
        f"A {w * 100:.0f} by {h * 100:.0f} cm window in a standing frame; its {direction} "
        "when pushed or pulled by its handle."
    )
    return Blueprint(b, summary)


def _sash_shapes(
    rect: Rect,
    xs: tuple[float, float],
    rail: float,
    rgba: RGBA,
    origin: tuple[float, float, float],
    bottom_rail: float | None = None,
) -> list:
    """A glazed sash frame covering ``rect`` (y, z), between ``xs``, relative to ``origin``."""
    oy, oz = origin[1], origin[2]
    y0, y1, z0, z1 = rect.lo0 - oy, rect.hi0 - oy, rect.lo1 - oz, rect.hi1 - oz
    x0, x1 = xs
    br = bottom_rail or rail
    return [
        slab((x0, y0, z0), (x1, y0 + rail, z1), rgba),
        slab((x0, y1 - rail, z0), (x1, y1, z1), rgba),
        slab((x0, y0 + rail, z0), (x1, y1 - rail, z0 + br), rgba),
        slab((x0, y0 + rail, z1 - rail), (x1, y1 - rail, z1), rgba),
        slab(
            ((x0 + x1) / 2 - 0.003, y0 + rail, z0 + br),
            ((x0 + x1) / 2 + 0.003, y1 - rail, z1 - rail),
            GLASS,
        ),
    ]


def build_chair(s: ParamSampler, asset_id: str) -> Blueprint:
    """A (table-top scale) folding chair whose seat folds up against the backrest."""
    sw = s.uniform("seat_width", 0.24, 0.34)
    sd = s.uniform("seat_depth", 0.22, 0.3)
    sh = s.uniform("seat_height", 0.2, 0.3)
    bh = s.uniform("back_height", 0.42, 0.62)
    leg = 0.02
    frame = BODY_COLOURS[s.choice("frame_colour", ["graphite", "steel", "walnut"])]
    seat_rgba = BODY_COLOURS[s.choice("seat_colour", ["oak", "sage", "cream", "white"])]
    x0, x1 = -sd / 2, sd / 2
    ys = (-sw / 2 - leg, sw / 2)
    shapes = []
    for y in ys:
        shapes += [
            slab((x0, y, 0.0), (x0 + leg, y + leg, sh - 0.02), frame),
            slab((x1 - leg, y, 0.0), (x1, y + leg, bh), frame),
            slab((x0, y, sh - 0.04), (x1 - leg, y + leg, sh - 0.02), frame),
            slab((x0, y, 0.06), (x1 - leg, y + leg, 0.075), frame),
        ]
    shapes.append(slab((x1 - leg, ys[0] + leg, bh - 0.12), (x1, ys[1], bh - 0.01), seat_rgba))
    b = ObjectBuilder(asset_id)
    b.set_base(shapes, mass=3.0, semantic="frame")
    top = Rect(x0, x1 - leg - 0.006, -sw / 2 + _GAP, sw / 2 - _GAP)
    add_lid(
        b,
        "base",
        top,
        sh - 0.02,
        thickness=0.02,
        mass=0.6,
        rgba=seat_rgba,
        upper=1.45,
        hinge_on_top=True,
        semantic="seat",
    )
    summary = (
        f"A folding chair with a {sw * 100:.0f} cm seat at {sh * 100:.0f} cm height; the seat "
        "folds up against the backrest when its front edge is lifted."
    )
    return Blueprint(b, summary)


CATEGORIES: tuple[CategorySpec, ...] = (
    CategorySpec(
        name="StorageFurniture",
        kind="articulated",
        build=build_storage_furniture,
        n_instances=8,
        randomizations="Layout cycles over drawers only, one door, door with drawers above, two columns "
        "and double doors; width 0.36-0.7 m, height 0.38-0.72 m, depth 0.3-0.355 m, number "
        "of drawers, hinge side, bar or knob handles, colours.",
    ),
    CategorySpec(
        name="Door",
        kind="articulated",
        build=build_door,
        n_instances=5,
        randomizations="Frame width 0.36-0.56 m and height 0.5-0.72 m, frame profile, hinge side, bar, "
        "knob or lever handle, colours.",
    ),
    CategorySpec(
        name="Window",
        kind="articulated",
        build=build_window,
        n_instances=5,
        randomizations="Width 0.4-0.64 m, height 0.4-0.7 m, sash sliding up or sideways, colours.",
    ),
    CategorySpec(
        name="FoldingChair",
        kind="articulated",
        build=build_chair,
        n_instances=5,
        randomizations="Seat width 0.24-0.34 m, depth 0.22-0.3 m, height 0.2-0.3 m, backrest height, colours.",
    ),
)
