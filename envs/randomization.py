"""Per-seed world variation (ManiSkill-style): what ``reset(seed)`` samples, and how.

A :class:`Randomization` says, per task, how far each object's placement may move
(``±dx``/``±dy`` metres and ``±yaw`` degrees about its nominal pose), in which interval of
its range each articulation starts, how much the arm's initial joints are jittered and how
much the render camera (eye, target) and the image brightness vary. :meth:`Randomization.sample`
draws one :class:`WorldSample` from a seeded generator; :func:`apply_world` moves the
bodies and joints of an already built scene there (nothing is rebuilt, so a reset stays
cheap). The sampled values are plain numbers (:meth:`WorldSample.to_dict`) and are recorded
with every episode and snapshot.

Task files state ranges in a ``randomization:`` section (see :func:`merge_randomization`);
without one a task gets :func:`default_randomization`, derived from its scene and goal: a
task that opens a joint starts it near closed (well below the threshold), one that closes
it starts it clearly open (above the threshold with margin). ``randomization: none`` keeps
the fixed start of the scene as configured.

Example:
    >>> r = Randomization.parse({"objects": {"Cube": {"dx": 0.02, "dy": 0.02, "yaw": 10}},
    ...                          "robot_qpos": 0.0})
    >>> r.objects["Cube"].dx
    0.02
    >>> try:
    ...     Randomization.parse({"objects": {"Cube": {"dx": 0.5}}})
    ... except RandomizationError as exc:
    ...     print(str(exc).splitlines()[1])
      randomization.objects.Cube.dx: Input should be less than or equal to 0.15 (got 0.5)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .errors import SimjudgeError
from .scene import CameraConfig, SceneConfig, _format_validation_error, yaw_quaternion
from .transforms import quat_multiply

if TYPE_CHECKING:
    from .scene_builder import BuiltScene

__all__ = [
    "CameraJitter",
    "PlacementJitter",
    "Randomization",
    "RandomizationError",
    "WorldSample",
    "apply_world",
    "default_randomization",
    "merge_randomization",
]

FIXED_PLACEMENT = (0.03, 0.05, 8.0)
"""Default ``(dx, dy, yaw)`` of a fixed-base object (furniture, appliances): ±3 cm in depth,
±5 cm sideways, ±8°."""
FREE_PLACEMENT = (0.04, 0.04, 25.0)
"""Default ``(dx, dy, yaw)`` of a free object (cube, bread, bowl): ±4 cm, ±4 cm, ±25°."""
ROBOT_QPOS = 0.03
"""Default jitter (± rad, uniform, each of the 7 arm joints) of the robot's initial posture."""
CAMERA = (0.03, 0.02, 0.08)
"""Default camera jitter: eye ±3 cm and target ±2 cm per axis, brightness ±8 %."""
OPEN_START = (0.25, 0.1)
"""An *open* goal's joint starts in ``[0, min(0.25 · threshold, 0.1)]`` of its range."""
CLOSE_START = (0.25, 0.2, 0.1)
"""A *close* goal's joint starts in ``[max(threshold + 0.25, init − 0.2), min(1, init + 0.1)]``
(``init``: the scene's ``joint_init``)."""
_MAX_TRIES = 50


class RandomizationError(SimjudgeError, ValueError):
    """A ``randomization:`` section is invalid; the message names the field and the fix."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PlacementJitter(_Strict):
    """How far an object may move from its nominal pose (uniform, symmetric).

    Attributes:
        dx: ± metres along x (towards / away from the robot).
        dy: ± metres along y (sideways).
        yaw: ± degrees about z, about the object's base origin.
    """

    dx: float = Field(default=0.0, ge=0.0, le=0.15)
    dy: float = Field(default=0.0, ge=0.0, le=0.15)
    yaw: float = Field(default=0.0, ge=0.0, le=45.0)


class CameraJitter(_Strict):
    """Render-camera and lighting variation (state observations are not affected).

    Attributes:
        eye: ± metres per axis added to every camera's eye.
        target: ± metres per axis added to every camera's look-at point.
        brightness: ± fraction by which rendered RGB is scaled (light intensity).
    """

    eye: float = Field(default=0.0, ge=0.0, le=0.2)
    target: float = Field(default=0.0, ge=0.0, le=0.2)
    brightness: float = Field(default=0.0, ge=0.0, le=0.5)


class Randomization(_Strict):
    """Ranges of the per-seed world variation of one task.

    Attributes:
        objects: Object name -> placement jitter (objects not listed stay put; an object
            resting ``on``/``in`` another moves with it).
        joints: Object name -> joint name -> ``[low, high]``: the joint starts uniformly
            inside that interval of its range (fractions, 0 = lower limit = closed).
        robot_qpos: ± radians added to each arm joint of the initial posture.
        camera: Camera and lighting jitter.
    """

    objects: dict[str, PlacementJitter] = Field(default_factory=dict)
    joints: dict[str, dict[str, tuple[float, float]]] = Field(default_factory=dict)
    robot_qpos: float = Field(default=0.0, ge=0.0, le=0.2)
    camera: CameraJitter = CameraJitter()

    @field_validator("joints")
    @classmethod
    def _intervals(cls, value: dict[str, dict[str, tuple[float, float]]]) -> dict[str, dict[str, tuple[float, float]]]:
        for obj, joints in value.items():
            for joint, (low, high) in joints.items():
                if not 0.0 <= low <= high <= 1.0:
                    raise ValueError(
                        f"joints.{obj}.{joint} = [{low}, {high}] is not an interval of the joint "
                        "range; give [low, high] with 0 <= low <= high <= 1 (0 = closed)"
                    )
        return value

    @classmethod
    def parse(cls, data: Any, source: str = "randomization") -> Randomization:
        """Validate a mapping; raise :class:`RandomizationError` naming each bad field."""
        if not isinstance(data, dict):
            raise RandomizationError(
                f"{source}: expected a mapping (objects, joints, robot_qpos, camera) or the word "
                f"'none', got {data!r}"
            )
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise RandomizationError(_format_validation_error(exc, source)) from None

    @property
    def is_empty(self) -> bool:
        """True if nothing varies."""
        return (not any(j.dx or j.dy or j.yaw for j in self.objects.values())
                and not self.joints and not self.robot_qpos
                and not (self.camera.eye or self.camera.target or self.camera.brightness))

    def check_scene(self, config: SceneConfig) -> None:
        """Every named object is in the scene and no object in a relation has its own jitter.

        Raises:
            RandomizationError: A name is unknown or names a relation child.
        """
        names = [o.name for o in config.objects]
        for section, keys in (("objects", self.objects), ("joints", self.joints)):
            for name in keys:
                if name not in names:
                    raise RandomizationError(
                        f"randomization.{section}.{name}: no object {name!r} in the scene; "
                        f"objects are {names}"
                    )
        for name in self.objects:
            obj = config.object(name)
            if obj.on or obj.inside:
                raise RandomizationError(
                    f"randomization.objects.{name}: {name!r} rests on/in {obj.on or obj.inside!r} "
                    "and moves with it; remove its entry (or jitter the object it rests on)"
                )

    def sample(self, world_seed: int, scene: BuiltScene) -> WorldSample:
        """Draw one world, deterministic in ``world_seed``.

        Placements whose footprints would overlap another object (or come within 10 cm of
        the robot base) are drawn again, up to 50 times.

        Raises:
            RandomizationError: A joint named in ``joints`` is not a movable joint of its
                object, or no non-overlapping placement was found.
        """
        rng = np.random.default_rng(world_seed)
        out = WorldSample(world_seed=int(world_seed))
        footprints = _footprints(scene)
        for attempt in range(_MAX_TRIES):
            placed = {}
            for name in sorted(self.objects):
                jitter = self.objects[name]
                placed[name] = {
                    "dx": float(rng.uniform(-jitter.dx, jitter.dx)),
                    "dy": float(rng.uniform(-jitter.dy, jitter.dy)),
                    "yaw": float(rng.uniform(-jitter.yaw, jitter.yaw)),
                }
            if not _overlapping(placed, footprints):
                out.objects = placed
                break
            if attempt == _MAX_TRIES - 1:
                raise RandomizationError(
                    f"no placement of {sorted(self.objects)} without overlap in {_MAX_TRIES} draws; "
                    "narrow randomization.objects (dx, dy) or move the objects apart"
                )
        for obj_name in sorted(self.joints):
            sobj = scene.objects[obj_name]
            for joint_name in sorted(self.joints[obj_name]):
                if joint_name not in sobj.joint_index:
                    raise RandomizationError(
                        f"randomization.joints.{obj_name}.{joint_name}: {obj_name!r} has no movable "
                        f"joint {joint_name!r}; movable joints are {sorted(sobj.joint_index)}"
                    )
                low, high = self.joints[obj_name][joint_name]
                out.joints.setdefault(obj_name, {})[joint_name] = float(rng.uniform(low, high))
        if self.robot_qpos:
            out.robot_qpos_offset = rng.uniform(-self.robot_qpos, self.robot_qpos, 7).tolist()
        cam = self.camera
        out.camera = {
            "eye": rng.uniform(-cam.eye, cam.eye, 3).tolist() if cam.eye else [0.0, 0.0, 0.0],
            "target": rng.uniform(-cam.target, cam.target, 3).tolist() if cam.target else [0.0, 0.0, 0.0],
            "brightness": float(rng.uniform(-cam.brightness, cam.brightness)) if cam.brightness else 0.0,
        }
        return out


@dataclass
class WorldSample:
    """One sampled world (plain numbers; recorded in episodes and snapshots).

    Attributes:
        world_seed: Seed the values were drawn from (drawn from the env's ``np_random``).
        objects: Object -> ``{"dx", "dy", "yaw"}`` (m, m, degrees) from its nominal pose.
        joints: Object -> joint -> start as a fraction of the joint's range.
        robot_qpos_offset: Radians added to each arm joint of the home posture.
        camera: ``{"eye": [3], "target": [3], "brightness": f}`` offsets.
    """

    world_seed: int
    objects: dict[str, dict[str, float]] = field(default_factory=dict)
    joints: dict[str, dict[str, float]] = field(default_factory=dict)
    robot_qpos_offset: list[float] = field(default_factory=lambda: [0.0] * 7)
    camera: dict[str, Any] = field(default_factory=lambda: {"eye": [0.0] * 3, "target": [0.0] * 3,
                                                             "brightness": 0.0})

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (fresh containers)."""
        camera = self.camera
        return {"world_seed": self.world_seed,
                "objects": {k: dict(v) for k, v in self.objects.items()},
                "joints": {k: dict(v) for k, v in self.joints.items()},
                "robot_qpos_offset": list(self.robot_qpos_offset),
                "camera": {"eye": list(camera["eye"]), "target": list(camera["target"]),
                           "brightness": camera["brightness"]}}

    def jitter_camera(self, cam: CameraConfig) -> tuple[tuple[float, float, float],
                                                        tuple[float, float, float]]:
        """``(eye, target)`` of ``cam`` in this world."""
        (ex, ey, ez), (tx, ty, tz) = self.camera["eye"], self.camera["target"]
        eye = (cam.eye[0] + ex, cam.eye[1] + ey, cam.eye[2] + ez)
        target = (cam.target[0] + tx, cam.target[1] + ty, cam.target[2] + tz)
        return eye, target

    def brighten(self, rgb: np.ndarray) -> np.ndarray:
        """``rgb`` scaled by ``1 + brightness`` (unchanged, same array, at 0)."""
        b = float(self.camera["brightness"])
        if b == 0.0:
            return rgb
        return np.clip(rgb.astype(np.float32) * (1.0 + b), 0.0, 255.0).astype(rgb.dtype)


def _footprints(scene: BuiltScene) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The xy AABB of each object (and the robot base, key ``""``) in the nominal world."""
    backend = scene.robot.backend
    out = {}
    for name, sobj in scene.objects.items():
        lo, hi = backend.get_aabb(sobj.body)
        out[name] = (np.asarray(lo[:2], float), np.asarray(hi[:2], float))
    lo, hi = backend.get_aabb(scene.robot.body, -1)
    out[""] = (np.asarray(lo[:2], float) - 0.1, np.asarray(hi[:2], float) + 0.1)
    return out


def _overlapping(placed: dict[str, dict[str, float]], footprints: dict[str, tuple[np.ndarray, np.ndarray]]) -> bool:
    boxes = {}
    for name, (lo, hi) in footprints.items():
        d = placed.get(name)
        if d is None:
            boxes[name] = (lo, hi)
            continue
        # the yaw turns the box about its base: grow it by the turn's sweep of the half extent
        half = (hi - lo) / 2.0
        grow = float(np.linalg.norm(half)) * abs(math.sin(math.radians(d["yaw"])))
        shift = np.array([d["dx"], d["dy"]])
        boxes[name] = (lo + shift - grow, hi + shift + grow)
    names = sorted(placed)
    for name in names:
        lo, hi = boxes[name]
        for other, (olo, ohi) in boxes.items():
            if other == name or (other in placed and other < name):
                continue
            nominal_overlap = other in footprints and name in footprints and other != "" and bool(
                np.all(footprints[name][0] < footprints[other][1]) and np.all(footprints[name][1] > footprints[other][0]))
            if nominal_overlap:  # overlapping as configured (a part on a shelf): not ours to judge
                continue
            if np.all(lo < ohi) and np.all(hi > olo):
                return True
    return False


def apply_world(scene: BuiltScene, sample: WorldSample, home: np.ndarray,
                nominal_poses: dict[str, tuple[np.ndarray, np.ndarray]] | None = None) -> None:
    """Move ``scene`` (at its nominal initial state) into ``sample``'s world.

    ``nominal_poses``: the objects' settled poses the offsets apply to (default
    ``scene.initial_poses``).

    Objects are teleported by their offsets (objects resting on or in a moved object move
    with it), sampled joints are set (their friction then holds them; spring joints
    relax from there under physics) and the arm goes to ``home`` plus its offset.
    """
    from .scene_builder import _configure_joints, _placement_order

    backend = scene.robot.backend
    config = scene.config
    poses = scene.initial_poses if nominal_poses is None else nominal_poses
    moved: dict[str, tuple[np.ndarray, float, np.ndarray]] = {}
    for obj in _placement_order(config):
        parent = obj.on or obj.inside
        if obj.name in sample.objects:
            d = sample.objects[obj.name]
            pos, _ = poses[obj.name]
            moved[obj.name] = (np.asarray(pos, float), d["yaw"], np.array([d["dx"], d["dy"], 0.0]))
        elif parent in moved:
            moved[obj.name] = moved[parent]
        else:
            continue
        pivot, yaw, shift = moved[obj.name]
        pos, quat = poses[obj.name]
        turn = yaw_quaternion(yaw)
        c, s = math.cos(math.radians(yaw)), math.sin(math.radians(yaw))
        rel = np.asarray(pos, float) - pivot
        rel = np.array([c * rel[0] - s * rel[1], s * rel[0] + c * rel[1], rel[2]])
        backend.set_base_pose(scene.objects[obj.name].body, pivot + rel + shift,
                              np.asarray(quat_multiply(np.asarray(turn), quat), float))
    for obj_name, joints in sample.joints.items():
        sobj = scene.objects[obj_name]
        tree = sobj.tree
        assert tree is not None, "sample() checks the joints exist"
        names = list(joints)
        values = []
        for name in names:
            joint = tree.joint(name)
            values.append(joint.lower + joints[name] * (joint.upper - joint.lower))
        backend.reset_joint_states(sobj.body, [sobj.joint_index[n] for n in names],
                                   np.array(values), np.zeros(len(names)))
        _configure_joints(backend, sobj)
    scene.robot.reset_home(np.asarray(home, float) + np.asarray(sample.robot_qpos_offset, float))


def _goal_leaves(goal: Any) -> list[Any]:
    if goal is None:
        return []
    inner = getattr(goal, "goals", None)
    if inner is not None:
        return [leaf for g in inner for leaf in _goal_leaves(g)]
    return [goal]


def default_randomization(config: SceneConfig, goal: Any) -> Randomization:
    """The default ranges of a task (see the module docstring and the constants above).

    Args:
        config: The task's scene.
        goal: Its goal spec (a joint, place, joint_range, ``all`` or ``sequence`` goal) or None.
    """
    from .scene_builder import resolve_asset

    objects = {}
    for obj in config.objects:
        if obj.on or obj.inside:
            continue
        entry = resolve_asset(obj.asset)
        fixed = bool(entry.meta.get("default_fixed_base", entry.kind == "articulated"))
        fixed = fixed if obj.fixed is None else obj.fixed
        dx, dy, yaw = FIXED_PLACEMENT if fixed else FREE_PLACEMENT
        objects[obj.name] = PlacementJitter(dx=dx, dy=dy, yaw=yaw)
    joints: dict[str, dict[str, tuple[float, float]]] = {}
    for leaf in _goal_leaves(goal):
        kind = getattr(leaf, "kind", None)
        if kind not in ("joint", "joint_range"):
            continue
        obj_name, joint_name = leaf.object, leaf.joint
        if joint_name in joints.get(obj_name, {}):
            continue  # the first stage that moves a joint says where it starts
        tree = resolve_asset(config.object(obj_name).asset).tree
        if tree is None or tree.joint(joint_name).spring:
            continue  # a spring part (button, lever) always starts at rest
        if kind == "joint":
            threshold = float(leaf.threshold)
        else:
            threshold = float(leaf.low if leaf.direction == "open" else leaf.high)
        init_raw = config.object(obj_name).joint_init.get(joint_name, 0.0)
        init = 0.5 if init_raw == "random" else float(init_raw)
        if leaf.direction == "open":
            interval = (0.0, min(OPEN_START[0] * threshold, OPEN_START[1]))
        else:
            margin, below, above = CLOSE_START
            low = min(max(threshold + margin, init - below), 1.0)
            interval = (low, max(low, min(1.0, init + above)))
        joints.setdefault(obj_name, {})[joint_name] = interval
    return Randomization(objects=objects, joints=joints, robot_qpos=ROBOT_QPOS,
                         camera=CameraJitter(eye=CAMERA[0], target=CAMERA[1], brightness=CAMERA[2]))


def merge_randomization(default: Randomization, section: Any, source: str = "randomization") -> Randomization | None:
    """A task file's ``randomization:`` section applied to the task's default.

    Args:
        default: :func:`default_randomization` of the task.
        section: None (no section: the default), ``"none"`` (no variation: returns None),
            or a mapping whose keys (``objects``, ``joints``, ``robot_qpos``, ``camera``)
            replace the default's sections; keys left out keep the default's.
        source: Name used in error messages.

    Raises:
        RandomizationError: The section is invalid.
    """
    if section is None:
        return default
    if isinstance(section, str) and section.strip().lower() == "none":
        return None
    if isinstance(section, Randomization):
        given = section
    else:
        given = Randomization.parse(section, source)
    return default.model_copy(update={k: getattr(given, k) for k in given.model_fields_set})



class WorldVariation:
    """Samples and applies worlds on one built scene, keeping its nominal start.

    :meth:`reset` returns the scene to the nominal settled snapshot, draws a world, moves
    the scene there and makes that the scene's start: ``initial_poses`` and
    ``initial_joint_values`` (what the goals' progress reads) are the world's, and
    ``scene.after_restore`` moves the scene into the world again whenever
    :func:`~simjudge.envs.sim_state.restore_state` restores the settled snapshot. Why not
    a snapshot per world: PyBullet's ``saveState`` costs ~2 ms, moving the bodies ~0.1 ms.

    Args:
        scene: The built scene, at its nominal initial state.
        randomization: The ranges.
    """

    def __init__(self, scene: BuiltScene, randomization: Randomization) -> None:
        randomization.check_scene(scene.config)
        self.scene = scene
        self.randomization = randomization
        self.nominal_state = scene.initial_state
        self.nominal_poses = dict(scene.initial_poses)
        self.nominal_joints = dict(scene.initial_joint_values)

    def reset(self, world_seed: int) -> WorldSample:
        """Move the scene to the world drawn from ``world_seed``; return the sample."""
        from .robot import HOME_QPOS
        from .scene_builder import _configure_joints, _record_initial

        scene = self.scene
        backend = scene.robot.backend
        scene.after_restore = None
        backend.restore_state(self.nominal_state)
        for sobj in scene.objects.values():
            _configure_joints(backend, sobj)
        scene.initial_poses = dict(self.nominal_poses)
        scene.initial_joint_values = dict(self.nominal_joints)
        sample = self.randomization.sample(world_seed, scene)
        home = np.asarray(scene.config.robot.home_qpos or HOME_QPOS, dtype=float)
        nominal_poses = self.nominal_poses

        def enter() -> None:
            apply_world(scene, sample, home, nominal_poses)

        enter()
        _record_initial(backend, scene)
        scene.after_restore = enter
        return sample
