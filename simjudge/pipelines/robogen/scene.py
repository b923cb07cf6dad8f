"""Convert RoboGen's scene entries into a :class:`~simjudge.envs.scene.SceneConfig` dict.

What RoboGen's YAML means, and what it becomes here:

- ``use_table: false``: RoboGen's objects stand on the floor. simjudge's scene has no
  table then (``table: false``), unless a free-standing movable object needs a surface
  to stand on: the table top stays as that floor, and the report says so.
- ``center``: for an object ``on_table`` (and ``use_table: true``) a fraction of the
  table, kept as simjudge's normalised table placement; for an object on the floor, a
  position in **metres** in RoboGen's world, where a Panda on a mobile base stands at
  (1, 1). simjudge's Panda is fixed at the table edge, so the floor layout keeps its
  distances in metres and is translated so that the task's main object stands where
  simjudge places task objects (the table centre, or its far half when the table also
  holds objects); each placement is then expressed as a table fraction (clamped, and
  reported when clamped).
- ``set_joint_angle_object_name`` with ``joint_N: '1'`` / ``'0'`` / ``random``: an
  initial joint value as a fraction of the range, clamped to [0.06, 0.7] as RoboGen's
  simulator does (``random`` stays random); joint names are remapped to the catalogue's.
- ``spatial_relationships``: ``on, A, B`` / ``in, A, B`` and the 4-field ``in, A, B,
  link_N`` (names lower-cased, as RoboGen writes them) become ``on`` / ``in``; the link
  of a 4-field relation is reported (simjudge places the object in the container's body).
- ``movable``: a URDF object is fixed unless ``movable: true`` (RoboGen's rule); meshes
  are free.
- ``size``: RoboGen scales each object to that bounding-box diagonal; simjudge's assets
  keep their own size (made for a table-top Panda), and the report lists RoboGen's.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from simjudge.envs.world import PLACEMENT_X, PLACEMENT_Y

from .reader import RobogenImportError

__all__ = [
    "FLOOR_ANCHOR",
    "MIXED_FLOOR_ANCHOR",
    "ROBOGEN_ROBOT_XY",
    "RobogenObject",
    "convert_scene",
    "joint_fraction",
    "parse_relation",
    "robogen_objects",
]

ROBOGEN_ROBOT_XY: tuple[float, float] = (1.0, 1.0)
"""Where RoboGen's simulator puts the robot base (``SimpleEnv.get_robot_base_pos``)."""
FLOOR_ANCHOR: tuple[float, float] = (0.5, 0.5)
"""Table fraction where the main floor object goes (simjudge's default placement)."""
MIXED_FLOOR_ANCHOR: tuple[float, float] = (0.75, 0.5)
"""... when the table also holds objects: the far half, leaving the front free."""
JOINT_FRACTION_RANGE: tuple[float, float] = (0.06, 0.7)
"""RoboGen's simulator clamps requested joint fractions to this range."""


@dataclass
class RobogenObject:
    """One object entry of RoboGen's YAML.

    Attributes:
        name: Its name (also the scene name).
        entry: The YAML entry.
        distractor: From the distractor YAML.
        asset: The catalogue asset chosen for it (set by the converter).
        fixed: Whether its base is fixed.
        joint_init: Catalogue joint -> initial fraction or ``"random"``.
        notes: Conversion notes about it.
    """

    name: str
    entry: dict[str, Any]
    distractor: bool = False
    asset: str = ""
    fixed: bool | None = None
    joint_init: dict[str, float | str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def is_urdf(self) -> bool:
        """RoboGen loads it from PartNet-Mobility (articulated), not as a mesh."""
        return str(self.entry.get("type", "urdf")).lower() == "urdf"

    @property
    def lang(self) -> str:
        """RoboGen's description of it."""
        return str(self.entry.get("lang", ""))


def robogen_objects(entries: Sequence[dict[str, Any]], distractor: bool = False):
    """The object entries (those with a name and a type or path), as objects."""
    out = []
    for entry in entries:
        if "name" in entry and ("type" in entry or "path" in entry):
            out.append(RobogenObject(str(entry["name"]), dict(entry), distractor))
    return out


def joint_fraction(value: Any) -> tuple[float | str, str | None]:
    """RoboGen's requested joint value as simjudge's ``joint_init`` and a note if changed.

    Raises:
        RobogenImportError: The value is neither a number nor ``random``.
    """
    text = str(value).strip().lower()
    if "random" in text:
        return "random", None
    try:
        requested = float(text)
    except ValueError:
        raise RobogenImportError(
            f"joint value {value!r} is neither a number in [0, 1] nor 'random'"
        ) from None
    lo, hi = JOINT_FRACTION_RANGE
    fraction = min(max(requested, lo), hi)
    note = None
    if fraction != requested:
        note = f"{requested:g} -> {fraction:g} of the range (RoboGen clamps to [{lo}, {hi}])"
    return fraction, note


def parse_relation(text: str) -> tuple[str, str, str, str | None]:
    """``"in, item, refrigerator, link_2"`` -> ``("in", "item", "refrigerator", "link_2")``.

    Raises:
        RobogenImportError: Not ``on|in, A, B[, link]``.
    """
    parts = [p.strip() for p in str(text).split(",")]
    if len(parts) not in (3, 4) or parts[0].lower() not in ("on", "in") or not all(parts):
        raise RobogenImportError(
            f"spatial relationship {text!r} not understood; RoboGen writes 'on, A, B', "
            "'in, A, B' or 'in, A, B, link_N'"
        )
    link = parts[3] if len(parts) == 4 else None
    return parts[0].lower(), parts[1], parts[2], link


def _centre(entry: Mapping[str, Any], name: str) -> tuple[float, float]:
    centre = entry.get("center", (0.5, 0.5, 0.0))
    if isinstance(centre, str):
        try:
            centre = ast.literal_eval(centre)
        except (ValueError, SyntaxError):
            raise RobogenImportError(
                f"object {name!r}: center {entry.get('center')!r} is not a tuple of numbers"
            ) from None
    try:
        return float(centre[0]), float(centre[1])
    except (TypeError, IndexError, ValueError):
        raise RobogenImportError(
            f"object {name!r}: center {entry.get('center')!r} is not a tuple of numbers"
        ) from None


def _to_fraction(x: float, y: float) -> tuple[float, float, bool]:
    u = (x - PLACEMENT_X[0]) / (PLACEMENT_X[1] - PLACEMENT_X[0])
    v = (y - PLACEMENT_Y[0]) / (PLACEMENT_Y[1] - PLACEMENT_Y[0])
    cu, cv = min(max(u, 0.0), 1.0), min(max(v, 0.0), 1.0)
    return round(cu, 4), round(cv, 4), (cu, cv) != (u, v)


def convert_scene(
    objects: Sequence[RobogenObject],
    meta: Mapping[str, Any],
    main: str | None,
) -> tuple[dict[str, Any], list[str]]:
    """The scene dict for :meth:`SceneConfig.parse` and the notes on what changed.

    Args:
        objects: The task's objects (and distractors, if kept), each with its ``asset``,
            ``fixed`` and remapped ``joint_init`` set.
        meta: The YAML's non-object entries merged (``use_table``, relations, ...).
        main: The object the floor layout is anchored on (the one the substeps act on).

    Raises:
        RobogenImportError: A relation names an unknown object.
    """
    notes: list[str] = []
    use_table = bool(meta.get("use_table", True))
    relation_of = _relations(objects, meta.get("spatial_relationships") or [])

    def on_floor(obj: RobogenObject) -> bool:
        return not use_table or not bool(obj.entry.get("on_table", False))

    floor = [o for o in objects if on_floor(o) and o.name not in relation_of]
    table_items = [o for o in objects if not on_floor(o) and o.name not in relation_of]
    anchor = next((o for o in floor if o.name == main), floor[0] if floor else None)
    layout = _FloorLayout(anchor, MIXED_FLOOR_ANCHOR if table_items else FLOOR_ANCHOR)
    if layout.note:
        notes.append(layout.note)
    table = use_table
    free = [o for o in floor if not o.fixed]
    if not use_table and free:
        table = True
        notes.append(
            "use_table: false (objects on the floor); simjudge keeps its table top as that "
            f"floor because {[o.name for o in free]} stand(s) free and would fall to "
            "simjudge's ground, out of reach"
        )
    elif not use_table:
        notes.append("use_table: false -> no table (every floor object has a fixed base)")
    scene_objects = []
    for obj in objects:
        item: dict[str, Any] = {"name": obj.name, "asset": obj.asset}
        if obj.name in relation_of:
            kind, parent, link = relation_of[obj.name]
            item["on" if kind == "on" else "in"] = parent
            if link is not None:
                obj.notes.append(
                    f"relation `{kind}, {obj.name}, {parent}, {link}`: placed {kind} {parent} "
                    f"(simjudge places it in the container's body; the link is not used)"
                )
        elif on_floor(obj):
            item["center"] = layout.place(obj)
        else:
            x, y = _centre(obj.entry, obj.name)
            u, v = min(max(x, 0.0), 1.0), min(max(y, 0.0), 1.0)
            item["center"] = [u, v]
            if (u, v) != (x, y):
                obj.notes.append(f"table fraction ({x:g}, {y:g}) clamped to ({u:g}, {v:g})")
        item.update(_extras(obj))
        scene_objects.append(item)
    return {"objects": scene_objects, "table": table}, notes


def _extras(obj: RobogenObject) -> dict[str, Any]:
    extras: dict[str, Any] = {}
    if obj.fixed is not None:
        extras["fixed"] = obj.fixed
    if obj.joint_init:
        extras["joint_init"] = dict(obj.joint_init)
    if obj.distractor:
        extras["distractor"] = True
    if obj.lang:
        extras["lang"] = obj.lang
    return extras


def _relations(
    objects: Sequence[RobogenObject], relations: Sequence[str]
) -> dict[str, tuple[str, str, str | None]]:
    """Child's scene name -> ``(on|in, parent's scene name, link or None)``."""
    by_lower = {o.name.lower(): o for o in objects}
    out: dict[str, tuple[str, str, str | None]] = {}
    for text in relations:
        kind, child, parent, link = parse_relation(text)
        if parent.lower() in ("table", "init_table"):
            continue
        for end in (child, parent):
            if end.lower() not in by_lower:
                raise RobogenImportError(
                    f"spatial relationship {text!r} names {end!r}, which is not an object of "
                    f"the task (objects: {[o.name for o in objects]})"
                )
        out[by_lower[child.lower()].name] = (kind, by_lower[parent.lower()].name, link)
    return out


class _FloorLayout:
    """RoboGen's floor positions (metres) shifted to put the anchor object in reach."""

    def __init__(self, anchor: RobogenObject | None, anchor_uv: tuple[float, float]) -> None:
        self.anchor_xy = _anchor_xy(anchor_uv)
        self.origin = _centre(anchor.entry, anchor.name) if anchor is not None else None
        self.note = ""
        if anchor is not None and self.origin is not None:
            ax, ay = self.origin
            shift = (self.anchor_xy[0] - ax, self.anchor_xy[1] - ay)
            rx, ry = ax - ROBOGEN_ROBOT_XY[0], ay - ROBOGEN_ROBOT_XY[1]
            self.note = (
                f"floor layout: RoboGen's Panda stands on a mobile base at (1, 1) and "
                f"{anchor.name} at ({ax:g}, {ay:g}) m, i.e. ({rx:+.2f}, {ry:+.2f}) m from it; "
                f"simjudge's Panda is fixed, so the floor layout (metres kept) is shifted by "
                f"({shift[0]:+.2f}, {shift[1]:+.2f}) m to put {anchor.name} at table fraction "
                f"{anchor_uv}"
            )

    def place(self, obj: RobogenObject) -> list[float]:
        x, y = _centre(obj.entry, obj.name)
        ax, ay = self.origin if self.origin is not None else (x, y)
        u, v, clamped = _to_fraction(self.anchor_xy[0] + x - ax, self.anchor_xy[1] + y - ay)
        if clamped:
            obj.notes.append(
                f"floor centre ({x:g}, {y:g}) m lies off simjudge's table after the shift; "
                f"clamped to table fraction ({u:g}, {v:g})"
            )
        return [u, v]


def _anchor_xy(uv: tuple[float, float]) -> tuple[float, float]:
    x = PLACEMENT_X[0] + uv[0] * (PLACEMENT_X[1] - PLACEMENT_X[0])
    y = PLACEMENT_Y[0] + uv[1] * (PLACEMENT_Y[1] - PLACEMENT_Y[0])
    return x, y
