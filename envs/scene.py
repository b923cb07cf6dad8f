"""Scene configuration: what is on the table, where, and in what state.

A :class:`SceneConfig` is the scene half of a task solution (RoboGen's
``config.yaml``). It is validated strictly: unknown keys are rejected and every
error names the field path, the bad value and the fix. RoboGen's own YAML shape
(a list of dicts with ``use_table``, objects with ``center``/``size``/``lang``
and a ``spatial_relationships`` entry) is accepted by :meth:`SceneConfig.from_robogen`.
"""

from __future__ import annotations

import ast
import math
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .errors import SimjudgeError
from .world import ROBOT_BASE_POSITION

__all__ = [
    "CameraConfig",
    "ObjectConfig",
    "RobotConfig",
    "SceneConfig",
    "SceneConfigError",
    "DEFAULT_CAMERAS",
]


class SceneConfigError(SimjudgeError, ValueError):
    """A scene configuration is invalid; the message lists each problem and its fix."""


JointInit = float | Literal["random"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class ObjectConfig(_Strict):
    """One object in the scene.

    Attributes:
        name: Unique name that generated code uses (``get_position(self, name)``).
        asset: Catalogue id (``StorageFurniture-0``) or a category name
            (``StorageFurniture``: instance 0 of the category).
        center: Normalised table placement ``(u, v)`` in [0, 1]^2 (see
            :mod:`simjudge.envs.world`); None = chosen by the builder from the seed.
        position: Absolute base position; overrides ``center``.
        yaw: Rotation about z in degrees (0 = front faces the robot).
        scale: Uniform scale of the asset.
        fixed: Fix the base in the world; None = the asset's default.
        joint_init: Initial joint values by joint name, as a fraction of the
            joint range in [0, 1] (0 = lower = closed) or ``"random"``.
        on: Name of an object to rest on (spatial relation ``on``).
        inside: Name of an object to rest inside (spatial relation ``in``).
        distractor: Present only as a distractor (not part of the task).
        lang: Free-text description (RoboGen's ``lang``).
    """

    name: str = Field(min_length=1)
    asset: str = Field(min_length=1)
    center: tuple[float, float] | None = None
    position: tuple[float, float, float] | None = None
    yaw: float = 0.0
    scale: float = Field(default=1.0, gt=0.0, le=5.0)
    fixed: bool | None = None
    joint_init: dict[str, JointInit] = Field(default_factory=dict)
    on: str | None = None
    inside: str | None = Field(default=None, alias="in")
    distractor: bool = False
    lang: str = ""

    @field_validator("center")
    @classmethod
    def _center_in_unit_square(
        cls, value: tuple[float, float] | None
    ) -> tuple[float, float] | None:
        if value is not None and not all(0.0 <= x <= 1.0 for x in value):
            raise ValueError(
                f"normalised centre {value} is outside [0, 1]^2; use values in [0, 1] "
                "(0.5, 0.5 is the middle of the table) or give an absolute `position`"
            )
        return value

    @field_validator("joint_init")
    @classmethod
    def _fractions_in_range(cls, value: dict[str, JointInit]) -> dict[str, JointInit]:
        for joint, v in value.items():
            if v != "random" and not (0.0 <= float(v) <= 1.0):
                raise ValueError(
                    f"joint_init[{joint!r}] = {v} is not a fraction of the joint range; "
                    "use a value in [0, 1] (0 = lower limit = closed) or 'random'"
                )
        return value

    @model_validator(mode="after")
    def _one_relation(self) -> ObjectConfig:
        if self.on is not None and self.inside is not None:
            raise ValueError(
                f"object {self.name!r} is both `on` {self.on!r} and `in` {self.inside!r}; keep one"
            )
        return self


class RobotConfig(_Strict):
    """Where the robot stands.

    Attributes:
        position: Base position (world).
        yaw: Base rotation about z in degrees (0 = facing +x).
        home_qpos: Arm joint positions at reset (7); None = the default home.
    """

    position: tuple[float, float, float] = ROBOT_BASE_POSITION
    yaw: float = 0.0
    home_qpos: tuple[float, float, float, float, float, float, float] | None = None


class CameraConfig(_Strict):
    """A render camera.

    Attributes:
        name: Camera name.
        eye: Camera position.
        target: Look-at point.
        fov: Vertical field of view (degrees).
        width: Image width (pixels).
        height: Image height (pixels).
    """

    name: str = "front"
    eye: tuple[float, float, float] = (0.15, -1.45, 1.0)
    target: tuple[float, float, float] = (-0.2, 0.0, 0.25)
    fov: float = Field(default=50.0, gt=1.0, lt=170.0)
    width: int = Field(default=320, ge=16, le=2048)
    height: int = Field(default=240, ge=16, le=2048)


DEFAULT_CAMERAS: tuple[CameraConfig, ...] = (CameraConfig(),)


class SceneConfig(_Strict):
    """A whole scene.

    Attributes:
        objects: Objects to place (task objects first, then distractors).
        robot: Robot placement.
        cameras: Render cameras; the first is the default.
        table: Put the table in (objects rest on its top at ``z = 0``).
        settle_steps: Physics steps to let the scene settle after building.
    """

    objects: tuple[ObjectConfig, ...] = Field(min_length=1)
    robot: RobotConfig = RobotConfig()
    cameras: tuple[CameraConfig, ...] = DEFAULT_CAMERAS
    table: bool = True
    settle_steps: int = Field(default=60, ge=0, le=2000)

    @model_validator(mode="after")
    def _names_and_relations(self) -> SceneConfig:
        names = [o.name for o in self.objects]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"object names must be unique; repeated: {dupes}")
        for obj in self.objects:
            for rel, target in (("on", obj.on), ("in", obj.inside)):
                if target is None:
                    continue
                if target not in names:
                    raise ValueError(
                        f"object {obj.name!r} is `{rel}` unknown object {target!r}; "
                        f"known objects are {names}"
                    )
                if target == obj.name:
                    raise ValueError(f"object {obj.name!r} cannot be `{rel}` itself")
        self._check_relation_cycles()
        return self

    def _check_relation_cycles(self) -> None:
        parent = {o.name: (o.on or o.inside) for o in self.objects}
        for start in parent:
            seen: set[str] = set()
            node: str | None = start
            while node is not None:
                if node in seen:
                    raise ValueError(f"spatial relations form a cycle through {node!r}")
                seen.add(node)
                node = parent.get(node)

    # helpers -----------------------------------------------------------------------
    def object(self, name: str) -> ObjectConfig:
        """An object's config by name."""
        for obj in self.objects:
            if obj.name == name:
                return obj
        raise KeyError(f"no object {name!r}; objects are {[o.name for o in self.objects]}")

    @property
    def is_randomized(self) -> bool:
        """True if building depends on the seed (free placements or random joints)."""
        for obj in self.objects:
            if obj.center is None and obj.position is None and obj.on is None and obj.inside is None:
                return True
            if any(v == "random" for v in obj.joint_init.values()):
                return True
        return False

    # construction ------------------------------------------------------------------
    @classmethod
    def parse(cls, data: dict[str, Any]) -> SceneConfig:
        """Validate a dict; raise :class:`SceneConfigError` with one line per problem."""
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise SceneConfigError(_format_validation_error(exc, "scene")) from None

    @classmethod
    def from_yaml(cls, source: str | Path) -> SceneConfig:
        """Load from a YAML file path or YAML text; RoboGen's list shape is converted."""
        from .bounded_input import load_yaml, read_text_bounded

        is_path = _looks_like_path(source)
        text = read_text_bounded(source) if is_path else str(source)
        data = load_yaml(text, str(source) if is_path else "<scene yaml>")
        if isinstance(data, list):
            return cls.from_robogen(data)
        if not isinstance(data, dict):
            raise SceneConfigError("a scene YAML must be a mapping (or RoboGen's list of entries)")
        return cls.parse(data)

    def to_yaml(self) -> str:
        """YAML text that :meth:`from_yaml` reads back to an equal config."""
        return yaml.safe_dump(self.to_dict(), sort_keys=False)

    def to_dict(self) -> dict[str, Any]:
        """A plain dict (JSON/YAML-ready, relation keys as ``on``/``in``)."""
        return self.model_dump(mode="json", by_alias=True, exclude_defaults=False)

    @classmethod
    def from_robogen(cls, entries: list[dict[str, Any]]) -> SceneConfig:
        """Convert RoboGen's ``config.yaml`` list into a :class:`SceneConfig`.

        Object entries (with ``name`` and ``type``/``path``) become objects;
        ``center`` strings such as ``"(0.3, 0.5, 0)"`` are parsed; ``size`` (the
        object's longest side in metres) is kept as ``lang`` metadata and turned
        into a scale by the builder when the asset's size is known (here: scale 1);
        ``spatial_relationships`` like ``"on, bowl, table"`` / ``"in, cube, box"``
        become ``on`` / ``in``; ``set_joint_angle_object_name`` is ignored.
        """
        objects: list[dict[str, Any]] = []
        relations: list[str] = []
        table = True
        for entry in entries:
            if not isinstance(entry, dict):
                raise SceneConfigError(f"RoboGen config entries must be mappings, got {entry!r}")
            if "use_table" in entry:
                table = bool(entry["use_table"])
            relations += list(entry.get("spatial_relationships") or [])
            if "name" in entry and ("type" in entry or "path" in entry or "asset" in entry):
                objects.append(_robogen_object(entry))
        for rel in relations:
            kind, *args = [part.strip() for part in str(rel).split(",")]
            if len(args) != 2 or kind not in ("on", "in"):
                raise SceneConfigError(
                    f"spatial relationship {rel!r} not understood; expected 'on, A, B' or 'in, A, B'"
                )
            child, parent = args
            if parent == "table":
                continue
            for obj in objects:
                if obj["name"] == child:
                    obj["on" if kind == "on" else "in"] = parent
        return cls.parse({"objects": objects, "table": table})


def _robogen_object(entry: dict[str, Any]) -> dict[str, Any]:
    obj: dict[str, Any] = {"name": str(entry["name"]), "asset": str(entry.get("asset", entry["name"]))}
    center = entry.get("center")
    if isinstance(center, str):
        center = ast.literal_eval(center)
    if center is not None:
        obj["center"] = (float(center[0]), float(center[1]))
    if "lang" in entry:
        obj["lang"] = str(entry["lang"])
    if entry.get("movable") is not None:
        obj["fixed"] = not bool(entry["movable"])
    return obj


def _looks_like_path(source: str | Path) -> bool:
    if isinstance(source, Path):
        return True
    return "\n" not in source and source.endswith((".yaml", ".yml")) and Path(source).exists()


def _format_validation_error(exc: ValidationError, root: str) -> str:
    lines = [f"invalid {root} configuration ({exc.error_count()} problem(s)):"]
    for err in exc.errors():
        path = root
        for part in err["loc"]:
            path += f"[{part}]" if isinstance(part, int) else f".{part}"
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = "unknown key; remove it or check its spelling"
        value = err.get("input")
        shown = "" if err["type"] == "missing" else f" (got {_short(value)})"
        lines.append(f"  {path}: {msg}{shown}")
    return "\n".join(lines)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def yaw_quaternion(yaw_deg: float) -> tuple[float, float, float, float]:
    """Quaternion (x, y, z, w) of a rotation about z by ``yaw_deg`` degrees."""
    half = math.radians(yaw_deg) / 2.0
    return (0.0, 0.0, math.sin(half), math.cos(half))
