"""Build a :class:`SceneConfig` into a physics world, deterministically.

``build_scene(backend, config, seed)`` is a pure function of its arguments:
the same config and seed give the same bodies, poses and joint values, bit for
bit. Placement resolves overlaps by searching nearby table positions with a
seeded generator; if an object cannot be placed the error names it and
suggests what to change. After building, the scene settles and its state is
saved so that ``reset`` can restore it.

Requested initial joint values (``joint_init``) survive settling: those joints
are held at their values by stiff position motors while the rest of the scene
settles, set exactly once more, and then released. Why that is enough for them
to stay: every passive joint gets Coulomb-like friction large enough to carry
its part's own weight anywhere in its range (a friction hinge: an oven door, a
sash window or a lid stays where it is left, by the builder or by the arm), so
nothing but the arm (or a spring) moves a joint afterwards. Spring joints
(buttons, pumps, flush levers) start at the requested value too, but their
spring pulls them back to ``lower`` once physics runs, as the real part does.
"""

from __future__ import annotations

import functools
import math
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .articulation import ArticulationTree, urdf_joint_link
from .backends import BASE_LINK, Backend, BodyQuery, body_reading_size
from .catalogue import AssetEntry, default_catalogue
from .errors import SimjudgeError
from .robot import HOME_QPOS, PandaSuction
from .scene import ObjectConfig, SceneConfig, yaw_quaternion
from .world import PLACEMENT_X, PLACEMENT_Y, TABLE_HEIGHT, TABLE_SIZE, normalized_to_table_xy

__all__ = ["BuiltScene", "SceneObject", "SceneBuildError", "build_scene", "resolve_asset"]

_CLEARANCE = 0.02
_MAX_PLACEMENT_TRIES = 200
_JOINT_FRICTION = 0.3
"""Least friction (N or N·m) of a passive joint."""
_HOLD_MARGIN = 1.5
"""Passive joint friction ÷ the largest gravity load on the joint (so parts stay put)."""
_HOLD_FORCE = 1000.0
"""Force (N or N·m) of the motors that hold requested joint values while settling."""
_GRAVITY = 9.81
_SPRING_FORCE = 3.0


class SceneBuildError(SimjudgeError, RuntimeError):
    """The scene cannot be built as configured; the message says what to change."""


@dataclass
class SceneObject:
    """An object as built in the world.

    Attributes:
        name: Scene name.
        entry: Catalogue entry of its asset.
        body: Backend body handle.
        fixed: Whether the base is fixed.
        link_index: Link name -> backend link index (``base`` -> -1).
        joint_index: Joint name -> backend joint index (movable joints only).
        joint_friction: Joint name -> friction of a passive (non-spring) movable
            joint: enough to hold the part against its own weight.
    """

    name: str
    entry: AssetEntry
    body: int
    fixed: bool
    link_index: dict[str, int] = field(default_factory=dict)
    joint_index: dict[str, int] = field(default_factory=dict)
    joint_friction: dict[str, float] = field(default_factory=dict)

    @property
    def tree(self) -> ArticulationTree | None:
        """The asset's articulation tree (None for rigid objects)."""
        return self.entry.tree


@dataclass
class BuiltScene:
    """Handles of a built scene.

    Attributes:
        config: The config it was built from.
        seed: The seed it was built with.
        robot: The robot.
        objects: Objects by name, in config order.
        table: Table body handle (None without a table).
        ground: Floor body handle.
        initial_state: Backend snapshot after settling.
        initial_joint_values: (object, joint) -> value after settling.
        initial_poses: object -> (position, orientation) after settling.
        after_restore: Called right after ``initial_state`` is restored (a randomized
            world moves the scene from the settled snapshot to its episode's start there).
    """

    config: SceneConfig
    seed: int
    robot: PandaSuction
    objects: dict[str, SceneObject]
    table: int | None
    ground: int
    initial_state: int = -1
    initial_joint_values: dict[tuple[str, str], float] = field(default_factory=dict)
    initial_poses: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    after_restore: Callable[[], None] | None = field(default=None, repr=False, compare=False)
    _reading_plan: tuple | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def static_bodies(self) -> set[int]:
        """Bodies that suction may never grab (table, floor)."""
        return {b for b in (self.table, self.ground) if b is not None}

    def state_queries(self) -> tuple[BodyQuery, ...]:
        """The batched read (:meth:`Backend.read_bodies`) of what a control step uses.

        The robot's :meth:`~simjudge.envs.robot.PandaSuction.state_query` first,
        then per object (config order) its base, AABB, movable joints (in
        ``joint_index`` order), link frames (child links) and the AABB of every
        link in ``link_index`` order (base included). Why one shared batch: the
        observation, the goal and the info summary all read this state, and the
        backend memoises a batch per state, so only the first reader pays.
        """
        return self._plan()[0]

    def state_query_starts(self) -> tuple[int, ...]:
        """Where each of :meth:`state_queries`' parts starts in the reading."""
        return self._plan()[1]

    def _plan(self) -> tuple:
        robot_query = self.robot.state_query()
        plan = self._reading_plan
        if plan is None or plan[0][0] is not robot_query:  # (re)built if the robot's changed
            queries = [robot_query]
            for obj in self.objects.values():
                queries.append(
                    BodyQuery(
                        obj.body,
                        aabb=True,
                        joints=tuple(obj.joint_index.values()),
                        links=tuple(i for i in obj.link_index.values() if i >= 0),
                        link_aabbs=tuple(obj.link_index.values()),
                    )
                )
            starts = [0]
            for query in queries[:-1]:
                starts.append(starts[-1] + body_reading_size(query))
            plan = self._reading_plan = (tuple(queries), tuple(starts))
        return plan


def resolve_asset(asset: str) -> AssetEntry:
    """Catalogue entry for an asset id or a category name (its instance 0)."""
    catalogue = default_catalogue()
    if asset in catalogue.categories():
        return catalogue.by_category(asset)[0]
    return catalogue.get(asset)


def build_scene(backend: Backend, config: SceneConfig, seed: int = 0) -> BuiltScene:
    """Build ``config`` into ``backend``'s (reset) world; deterministic in ``seed``.

    Requested initial joint values are held by motors while the scene settles,
    then set exactly and released (see the module docstring), so
    :attr:`BuiltScene.initial_joint_values` holds them as requested.
    """
    rng = np.random.default_rng(seed)
    backend.reset_world()
    ground = backend.add_box((3.0, 3.0, 0.05), (0.0, 0.0, -TABLE_HEIGHT - 0.05), rgba=(0.9, 0.9, 0.9, 1))
    table = None
    if config.table:
        hx, hy = TABLE_SIZE[0] / 2, TABLE_SIZE[1] / 2
        table = backend.add_box((hx, hy, 0.025), (0.0, 0.0, -0.025), rgba=(0.72, 0.6, 0.45, 1))
    robot = PandaSuction(
        backend, config.robot.position, yaw_quaternion(config.robot.yaw)
    )
    home = np.asarray(config.robot.home_qpos) if config.robot.home_qpos else HOME_QPOS
    robot.reset_home(home)
    scene = BuiltScene(config, seed, robot, {}, table, ground)
    for obj in _placement_order(config):
        scene.objects[obj.name] = _load_object(backend, scene, obj, rng)
    # keep config order for everything downstream
    scene.objects = {o.name: scene.objects[o.name] for o in config.objects}
    held: list[tuple[SceneObject, dict[str, float]]] = []
    for sobj in scene.objects.values():
        targets = _init_joints(backend, sobj, config.object(sobj.name), rng)
        if targets:
            held.append((sobj, targets))
    for sobj, targets in held:
        indices = [sobj.joint_index[name] for name in targets]
        values = np.array(list(targets.values()))
        backend.set_joint_position_targets(
            sobj.body, indices, values, np.full(len(indices), _HOLD_FORCE), 1.0
        )
    robot.reset_home(home)
    backend.step(config.settle_steps)
    for sobj, targets in held:  # exactly as requested, at rest; then passive again
        indices = [sobj.joint_index[name] for name in targets]
        backend.reset_joint_states(
            sobj.body, indices, np.array(list(targets.values())), np.zeros(len(indices))
        )
        _configure_joints(backend, sobj)
    robot.reset_home(home)
    _record_initial(backend, scene)
    scene.initial_state = backend.save_state()
    return scene


def _placement_order(config: SceneConfig) -> list[ObjectConfig]:
    """Objects with a relation come after the object they rest on or in."""
    placed: list[ObjectConfig] = []
    pending = list(config.objects)
    while pending:
        names = {o.name for o in placed}
        ready = [o for o in pending if (o.on or o.inside) in (None, *names)]
        placed += ready
        pending = [o for o in pending if o not in ready]
    return placed


def _load_object(backend: Backend, scene: BuiltScene, obj: ObjectConfig, rng) -> SceneObject:
    entry = resolve_asset(obj.asset)
    fixed = bool(entry.meta.get("default_fixed_base", entry.kind == "articulated"))
    fixed = fixed if obj.fixed is None else obj.fixed
    orientation = yaw_quaternion(obj.yaw)
    body = backend.load_urdf(entry.urdf_path, (0.0, 0.0, 5.0), orientation, fixed, obj.scale)
    sobj = SceneObject(obj.name, entry, body, fixed)
    _index_links(backend, sobj)
    sobj.joint_friction = _holding_friction(entry, obj.scale)
    position = _choose_position(backend, scene, obj, body, orientation, rng)
    backend.set_base_pose(body, position, orientation)
    _configure_joints(backend, sobj)
    return sobj


def _index_links(backend: Backend, sobj: SceneObject) -> None:
    sobj.link_index["base"] = BASE_LINK
    for info in backend.joint_infos(sobj.body):
        sobj.link_index[info.link_name] = info.index
        if info.type != "fixed":
            sobj.joint_index[info.name] = info.index


def _footprint(backend: Backend, body: int) -> tuple[np.ndarray, np.ndarray]:
    """Body AABB relative to its base position (placement-independent)."""
    backend.update_collisions()
    lo, hi = backend.get_aabb(body)
    base, _ = backend.get_base_pose(body)
    return lo - base, hi - base


def _choose_position(backend, scene, obj: ObjectConfig, body, orientation, rng) -> np.ndarray:
    rel_lo, rel_hi = _footprint(backend, body)
    if obj.position is not None:
        return np.asarray(obj.position, dtype=float)
    parent = obj.on or obj.inside
    if parent is not None:
        return _relation_position(backend, scene.objects[parent].body, obj.on is not None, rel_lo)
    if obj.center is not None:
        x, y = normalized_to_table_xy(*obj.center)
    else:
        x = rng.uniform(*PLACEMENT_X)
        y = rng.uniform(*PLACEMENT_Y)
    z = -rel_lo[2] + 0.001
    start = np.array([x, y, z])
    for attempt in range(_MAX_PLACEMENT_TRIES):
        candidate = start.copy()
        if attempt:
            radius = 0.02 * math.sqrt(attempt)
            angle = rng.uniform(0.0, 2 * math.pi)
            candidate[:2] += radius * np.array([math.cos(angle), math.sin(angle)])
        if not _overlaps(scene, backend, candidate + rel_lo, candidate + rel_hi):
            return candidate
    raise SceneBuildError(
        f"cannot place object {obj.name!r} ({obj.asset}) near {tuple(np.round(start[:2], 3))} "
        f"without overlapping other objects or the robot after {_MAX_PLACEMENT_TRIES} tries; "
        "give it a different `center`, a smaller `scale`, or remove a distractor"
    )


def _relation_position(backend, parent_body: int, on_top: bool, rel_lo) -> np.ndarray:
    backend.update_collisions()
    lo, hi = backend.get_aabb(parent_body)
    centre = (lo + hi) / 2.0
    if on_top:
        z = hi[2] - rel_lo[2] + 0.002
    else:
        z = lo[2] + 0.02 - rel_lo[2]
    return np.array([centre[0], centre[1], z])


def _overlaps(scene: BuiltScene, backend: Backend, lo: np.ndarray, hi: np.ndarray) -> bool:
    boxes = [backend.get_aabb(o.body) for o in scene.objects.values()]
    robot_lo, robot_hi = backend.get_aabb(scene.robot.body, BASE_LINK)
    boxes.append((robot_lo - 0.1, robot_hi + 0.1))
    for other_lo, other_hi in boxes:
        if np.all(lo[:2] < other_hi[:2] + _CLEARANCE) and np.all(hi[:2] > other_lo[:2] - _CLEARANCE):
            return True
    return False


def _configure_joints(backend: Backend, sobj: SceneObject) -> None:
    """Passive joints get friction that holds them; spring joints a weak return-to-lower motor."""
    tree = sobj.tree
    if tree is None:
        return
    for joint in tree.movable_joints:
        index = sobj.joint_index[joint.name]
        if joint.type != "continuous":
            backend.set_joint_limits(sobj.body, index, joint.lower, joint.upper)
        if joint.spring:
            backend.set_joint_position_targets(
                sobj.body, [index], np.array([joint.lower]), np.array([_SPRING_FORCE]), 0.2
            )
        else:
            friction = sobj.joint_friction.get(joint.name, _JOINT_FRICTION)
            backend.set_joint_friction(sobj.body, [index], np.array([friction]))


def _holding_friction(entry: AssetEntry, scale: float) -> dict[str, float]:
    """Friction per passive movable joint: at least enough to carry its part's weight.

    Why: with a token friction a sash window slides shut, an oven door falls open and a
    lid drops closed as soon as physics runs, so a requested initial value (or a value
    the arm leaves behind) is lost. Friction of :data:`_HOLD_MARGIN` times the largest
    static gravity load keeps every part where it is put; the arm (suction holds
    hundreds of newtons) still moves it easily.

    Args:
        entry: The asset.
        scale: Its uniform scale in the scene (lever arms scale, masses do not).

    Returns:
        Joint name -> friction (N for prismatic joints, N·m for rotational ones).
    """
    tree = entry.tree
    if tree is None:
        return {}
    loads = _gravity_loads(str(entry.urdf_path))
    friction = {}
    for joint in tree.movable_joints:
        if joint.spring:
            continue
        load, rotational = loads.get(joint.name, (0.0, False))
        load = load * scale if rotational else load
        friction[joint.name] = max(_JOINT_FRICTION, _HOLD_MARGIN * load)
    return friction


@functools.cache
def _gravity_loads(urdf_path: str) -> dict[str, tuple[float, bool]]:
    """Largest gravity load on each movable joint of a URDF, upright, at scale 1.

    The load is taken with the other joints at zero: for a rotational joint the
    weight of its subtree times the subtree's centre-of-mass distance from the axis
    times the sine of the axis' tilt from vertical (the largest torque over a turn),
    for a prismatic joint the weight times the axis' vertical component. A joint
    below another movable joint may be tilted by it, so it gets the untilted bound.

    Returns:
        Joint name -> ``(load, rotational)``; load in N·m (rotational) or N.
    """
    root = ET.parse(urdf_path).getroot()
    inertia: dict[str, tuple[float, np.ndarray]] = {}
    for link_tag in root.findall("link"):
        mass, com = 0.0, np.zeros(3)
        inertial = link_tag.find("inertial")
        if inertial is not None:
            mass_tag = inertial.find("mass")
            mass = float(mass_tag.get("value", 0.0)) if mass_tag is not None else 0.0
            com = _urdf_vector(inertial.find("origin"), "xyz")
        inertia[link_tag.get("name", "")] = (mass, com)
    children: dict[str, list[ET.Element]] = {}
    child_links = set()
    for joint in root.findall("joint"):
        children.setdefault(urdf_joint_link(joint, "parent"), []).append(joint)
        child_links.add(urdf_joint_link(joint, "child"))
    roots = [name for name in inertia if name not in child_links]
    # forward kinematics at zero joint values: link frames, joint axes, movable ancestry
    frames: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    axes: dict[str, tuple[str, str, np.ndarray, np.ndarray, bool]] = {}
    subtree: dict[str, list[str]] = {}
    stack: list[tuple[str, np.ndarray, np.ndarray, bool, tuple[str, ...]]] = [
        (name, np.eye(3), np.zeros(3), False, ()) for name in roots
    ]
    while stack:
        link, rotation, position, moved, above = stack.pop()
        frames[link] = (rotation, position)
        for joint_name in above:
            subtree[joint_name].append(link)
        for joint in children.get(link, []):
            name, kind = joint.get("name", ""), joint.get("type", "fixed")
            origin = joint.find("origin")
            child_rotation = rotation @ _rpy_matrix(_urdf_vector(origin, "rpy"))
            child_position = position + rotation @ _urdf_vector(origin, "xyz")
            child = urdf_joint_link(joint, "child")
            movable = kind != "fixed"
            if movable:
                axis_tag = joint.find("axis")
                axis = _urdf_vector(axis_tag, "xyz") if axis_tag is not None else np.eye(3)[0]
                axis = child_rotation @ (axis / (np.linalg.norm(axis) or 1.0))
                axes[name] = (kind, child, axis, child_position, moved)
                subtree[name] = []
            below = above + (name,) if movable else above
            stack.append((child, child_rotation, child_position, moved or movable, below))
    loads: dict[str, tuple[float, bool]] = {}
    up = np.array([0.0, 0.0, 1.0])
    for name, (kind, _child, axis, point, moved) in axes.items():
        masses = [inertia[link][0] for link in subtree[name]]
        total = sum(masses)
        if total <= 0.0:
            loads[name] = (0.0, kind != "prismatic")
            continue
        centre = sum(
            m * (frames[link][1] + frames[link][0] @ inertia[link][1])
            for m, link in zip(masses, subtree[name], strict=True)
        ) / total
        tilt = 1.0 if moved else float(np.linalg.norm(np.cross(axis, up)))
        if kind == "prismatic":
            vertical = 1.0 if moved else abs(float(axis[2]))
            loads[name] = (total * _GRAVITY * vertical, False)
        else:
            lever = centre - point
            lever = lever - float(lever @ axis) * axis
            loads[name] = (total * _GRAVITY * float(np.linalg.norm(lever)) * tilt, True)
    return loads


def _urdf_vector(tag: ET.Element | None, attribute: str) -> np.ndarray:
    """A URDF ``origin``/``axis`` triple (zeros when absent)."""
    if tag is None or tag.get(attribute) is None:
        return np.zeros(3)
    return np.array([float(x) for x in tag.get(attribute, "").split()])


def _rpy_matrix(rpy: np.ndarray) -> np.ndarray:
    """Rotation matrix of URDF roll-pitch-yaw (fixed axes x, y, z)."""
    (cr, cp, cy), (sr, sp, sy) = np.cos(rpy), np.sin(rpy)
    return np.array(
        [
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr],
        ]
    )


def _init_joints(backend: Backend, sobj: SceneObject, obj: ObjectConfig, rng) -> dict[str, float]:
    """Set the requested initial joint values.

    Returns:
        Joint name -> the value set (rad or m), for the builder to hold while settling.
    """
    tree = sobj.tree
    if tree is None:
        if obj.joint_init:
            raise SceneBuildError(
                f"object {obj.name!r} ({sobj.entry.asset_id}) is rigid and has no joints; "
                f"remove its joint_init {sorted(obj.joint_init)}"
            )
        return {}
    targets: dict[str, float] = {}
    for joint_name, value in obj.joint_init.items():
        if joint_name not in sobj.joint_index:
            raise SceneBuildError(
                f"object {obj.name!r} ({sobj.entry.asset_id}) has no movable joint "
                f"{joint_name!r}; movable joints are {sorted(sobj.joint_index)}"
            )
        joint = tree.joint(joint_name)
        fraction = rng.uniform(0.0, 1.0) if value == "random" else float(value)
        q = joint.lower + fraction * (joint.upper - joint.lower)
        backend.reset_joint_states(sobj.body, [sobj.joint_index[joint_name]], np.array([q]))
        targets[joint_name] = q
    return targets


def _record_initial(backend: Backend, scene: BuiltScene) -> None:
    for sobj in scene.objects.values():
        scene.initial_poses[sobj.name] = backend.get_base_pose(sobj.body)
        names = list(sobj.joint_index)
        if names:
            q, _ = backend.get_joint_states(sobj.body, [sobj.joint_index[n] for n in names])
            for name, value in zip(names, q, strict=True):
                scene.initial_joint_values[(sobj.name, name)] = float(value)
