"""PyBullet implementation of :class:`~simjudge.envs.backends.base.Backend`.

The only module in simjudge that imports ``pybullet``. Each instance owns one
physics client in DIRECT mode, and every call passes ``physicsClientId``, so any
number of simulations can live in one process. Rendering uses the CPU
``ER_TINY_RENDERER``: headless, no GPU, no display.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain
from pathlib import Path
from typing import Any, Literal

import numpy as np

from . import flat_boxes
from .base import (
    BASE_LINK,
    BackendError,
    BodyQuery,
    CameraSpec,
    CollisionShape,
    Contact,
    JointInfo,
    RenderResult,
)

__all__ = ["LIMIT_SLACK", "PyBulletBackend"]

LIMIT_SLACK = 0.005
"""How far (a fraction of the joint's range) an object joint may get beyond a limit before
the backend's hard stop puts it back (see :meth:`PyBulletBackend.set_joint_limits`)."""

_JOINT_TYPES: dict[int, Literal["revolute", "prismatic", "fixed", "spherical", "planar"]] = {
    0: "revolute", 1: "prismatic", 2: "spherical", 3: "planar", 4: "fixed",
}
_SHAPE_KINDS = {2: "sphere", 3: "box", 4: "cylinder", 5: "mesh", 6: "plane", 7: "capsule"}


def _frozen(first: np.ndarray, second: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    for array in (first, second):
        array.setflags(write=False)
    return first, second


def _floats(values) -> list[float]:
    """Plain numbers for pybullet (``tolist`` for arrays, lists as they are)."""
    if isinstance(values, np.ndarray):
        return values.ravel().tolist()
    return values if type(values) is list else [float(v) for v in values]


def _aabb_union(boxes: list[tuple]) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Union of ``(min, max)`` engine tuples; NaN propagates as with ``np.min``."""
    (lx, ly, lz), (hx, hy, hz) = boxes[0]
    total = 0.0
    for (ax, ay, az), (bx, by, bz) in boxes:
        total += ax + ay + az + bx + by + bz
        lx, ly, lz = min(lx, ax), min(ly, ay), min(lz, az)
        hx, hy, hz = max(hx, bx), max(hy, by), max(hz, bz)
    if total != total:  # a NaN somewhere: min/max above may have skipped it
        arr = np.array(boxes, dtype=np.float64)
        return tuple(arr[:, 0].min(axis=0).tolist()), tuple(arr[:, 1].max(axis=0).tolist())
    return (lx, ly, lz), (hx, hy, hz)


def _import_pybullet():
    try:
        import pybullet
        import pybullet_data
    except ImportError as exc:  # pragma: no cover - pybullet is a core dependency
        raise BackendError(
            "pybullet is not installed; install simjudge's core dependencies with "
            "`pip install simjudge` (or `pip install pybullet`)."
        ) from exc
    return pybullet, pybullet_data


class PyBulletBackend:
    """A headless PyBullet world.

    Args:
        timestep: Physics timestep in seconds (100 Hz by default, as RoboGen).
        gravity: Gravity along z.
        solver_iterations: Constraint solver iterations per step.
    """

    def __init__(
        self, timestep: float = 0.01, gravity: float = -9.81, solver_iterations: int = 50
    ) -> None:
        self._p, pybullet_data = _import_pybullet()
        self.timestep = float(timestep)
        self._gravity = float(gravity)
        self._solver_iterations = int(solver_iterations)
        self._client = self._p.connect(self._p.DIRECT)
        if self._client < 0:
            raise BackendError("could not start a PyBullet DIRECT client")
        self._p.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=self._client)
        self._joint_cache: dict[int, list[JointInfo]] = {}
        self._reads: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}
        self._raw: dict[tuple, Any] = {}  # engine tuples, link-box dicts, signatures
        self._queries: dict[int, tuple[BodyQuery, list[float], np.ndarray | None]] = {}
        self._batches: dict[int, tuple[Sequence[BodyQuery], np.ndarray]] = {}
        self._movable_cache: dict[int, list[int] | None] = {}
        self._fixed_bodies: set[int] = set()
        self._still: dict[tuple, tuple] = {}  # reads kept across steps, see "state" below
        self._body_aabbs: dict[int, tuple] = {}
        self._settled = False
        self._limits: dict[int, dict[int, tuple[float, float, float]]] = {}
        self._flat_boxes = flat_boxes.FlatBoxes(self._p, self._client)
        self._configure()

    # lifecycle -----------------------------------------------------------------
    def _configure(self) -> None:
        p, c = self._p, self._client
        p.setGravity(0.0, 0.0, self._gravity, physicsClientId=c)
        p.setPhysicsEngineParameter(
            fixedTimeStep=self.timestep,
            numSolverIterations=self._solver_iterations,
            deterministicOverlappingPairs=1,
            physicsClientId=c,
        )

    def reset_world(self) -> None:
        """Remove every body and constraint; restore gravity and timestep."""
        self._p.resetSimulation(physicsClientId=self._client)
        self._limits.clear()
        self._flat_boxes.clear()
        self._joint_cache.clear()
        self._movable_cache.clear()
        self._fixed_bodies.clear()
        self._moved()
        self._configure()

    def close(self) -> None:
        """Disconnect the client (idempotent)."""
        if self._client is not None and self._client >= 0:
            try:
                self._p.disconnect(physicsClientId=self._client)
            except Exception:  # noqa: BLE001 - already disconnected
                pass
            self._client = -1

    def __del__(self) -> None:  # pragma: no cover - interpreter shutdown order
        try:
            self.close()
        except Exception:  # noqa: BLE001
            pass

    @property
    def data_path(self) -> str:
        """The ``pybullet_data`` directory (robots and meshes shipped with pybullet)."""
        import pybullet_data

        return pybullet_data.getDataPath()

    # loading -------------------------------------------------------------------
    def load_urdf(
        self,
        path: str | Path,
        position=(0.0, 0.0, 0.0),
        orientation=(0.0, 0.0, 0.0, 1.0),
        fixed_base: bool = False,
        scale: float = 1.0,
    ) -> int:
        """Load a URDF file; self-collision is enabled for non-adjacent links."""
        p = self._p
        self._moved()
        flags = p.URDF_USE_SELF_COLLISION_EXCLUDE_PARENT | p.URDF_USE_INERTIA_FROM_FILE
        try:
            body = p.loadURDF(
                str(path),
                basePosition=list(map(float, position)),
                baseOrientation=list(map(float, orientation)),
                useFixedBase=bool(fixed_base),
                globalScaling=float(scale),
                flags=flags,
                physicsClientId=self._client,
            )
        except p.error as exc:
            raise BackendError(f"cannot load URDF {path}: {exc}") from exc
        if fixed_base:
            self._fixed_bodies.add(int(body))
            if flat_boxes.ENABLED:  # its base's box panels are ray-cast in frames
                self._flat_boxes.add_base_boxes(int(body))
        return int(body)

    def add_box(self, half_extents, position, mass: float = 0.0, rgba=(0.6, 0.6, 0.6, 1.0)) -> int:
        """Add a box body; ``mass=0`` makes it static (and ray-cast in frames, see flat_boxes)."""
        p, c = self._p, self._client
        col = p.createCollisionShape(p.GEOM_BOX, halfExtents=list(half_extents), physicsClientId=c)
        flat = mass == 0.0 and flat_boxes.ENABLED
        if flat:
            vis = self._flat_boxes.visual(half_extents, rgba)
        else:
            vis = p.createVisualShape(
                p.GEOM_BOX, halfExtents=list(half_extents), rgbaColor=list(rgba), physicsClientId=c
            )
        self._moved()
        body = int(
            p.createMultiBody(mass, col, vis, basePosition=list(position), physicsClientId=c)
        )
        if mass == 0.0:
            self._fixed_bodies.add(body)
        if flat:
            self._flat_boxes.add(body, half_extents, rgba)
        return body

    def body_handles(self) -> list[int]:
        """Handles of all bodies in the world."""
        p, c = self._p, self._client
        return [p.getBodyUniqueId(i, physicsClientId=c) for i in range(p.getNumBodies(physicsClientId=c))]

    def joint_infos(self, body: int) -> list[JointInfo]:
        """Static joint descriptions (cached per body)."""
        cached = self._joint_cache.get(body)
        if cached is not None:
            return cached
        p, c = self._p, self._client
        infos = []
        for j in range(p.getNumJoints(body, physicsClientId=c)):
            raw = p.getJointInfo(body, j, physicsClientId=c)
            infos.append(
                JointInfo(
                    index=j,
                    name=raw[1].decode(),
                    type=_JOINT_TYPES[raw[2]],
                    link_name=raw[12].decode(),
                    parent_index=int(raw[16]),
                    lower=float(raw[8]),
                    upper=float(raw[9]),
                    max_force=float(raw[10]),
                    max_velocity=float(raw[11]),
                    damping=float(raw[6]),
                    friction=float(raw[7]),
                    axis=(float(raw[13][0]), float(raw[13][1]), float(raw[13][2])),
                )
            )
        self._joint_cache[body] = infos
        return infos

    def base_name(self, body: int) -> str:
        """Name of the body's base link."""
        return self._p.getBodyInfo(body, physicsClientId=self._client)[0].decode()

    # state ---------------------------------------------------------------------
    # Reads are memoised until the next call that changes the world (step,
    # teleport, restore); every such call goes through this class and clears the
    # memo (``_forget`` after a step, ``_moved`` after anything else), and
    # returned arrays are read-only so no caller can corrupt it. Levels: ``_raw``
    # holds what the engine returned, ``_reads`` the arrays made from it, and
    # ``_queries`` / ``_batches`` what ``read_bodies`` assembled, so a batched
    # read serves later single getters without a second engine call.
    #
    # Some reads outlive a step (``_still``, ``_body_aabbs``; cleared by
    # ``_moved``): a fixed base's pose, and a body's link frames and link AABBs
    # while its "signature" (base pose and joint positions) is bit-identical to
    # the last read after a step, as those are functions of the signature
    # alone. Reusing link frames skips a forward-kinematics call, which is safe
    # because FK on unchanged joints recomputes exactly what the last call left
    # in the engine (trajectories stay bit-identical); the reuse depends on the
    # state, not on who asked before, so runs stay deterministic.
    def _forget(self) -> None:
        """Forget the reads of the current world state (physics advanced)."""
        self._reads.clear()
        self._raw.clear()
        self._queries.clear()
        self._batches.clear()

    def _moved(self) -> None:
        """Forget every read, static AABBs included (something teleported or loaded)."""
        self._forget()
        self._body_aabbs.clear()
        self._still.clear()
        self._settled = False

    def _raw_base(self, body: int) -> tuple:
        key = ("base", body)
        hit = self._raw.get(key)
        if hit is None:
            hit = self._still.get(key)  # a fixed base only moves by teleport
            if hit is None:
                hit = self._p.getBasePositionAndOrientation(body, physicsClientId=self._client)
                if self._settled and body in self._fixed_bodies:
                    self._still[key] = hit
            self._raw[key] = hit
        return hit

    def _raw_joints(self, key: tuple, body: int, joints) -> tuple:
        hit = self._raw.get(key)
        if hit is None:
            hit = self._p.getJointStates(body, joints, physicsClientId=self._client)
            self._raw[key] = hit
        return hit

    def _raw_links(self, key: tuple, body: int, links) -> tuple:
        """Engine link states of child links (never the base); reused while the body is still."""
        hit = self._raw.get(key)
        if hit is None:
            signature = self._pose_signature(body)
            last = self._still.get(key)
            if last is not None and last[0] == signature:
                hit = last[1]
            else:
                # always with forward kinematics: it updates the engine's cached link
                # frames, so reading without it would change later physics
                hit = self._p.getLinkStates(
                    body, links, computeForwardKinematics=1, physicsClientId=self._client
                )
                if self._settled:
                    self._still[key] = (signature, hit)
            self._raw[key] = hit
        return hit

    def get_base_pose(self, body: int) -> tuple[np.ndarray, np.ndarray]:
        """World position and orientation of the base (read-only arrays)."""
        key = ("base", body)
        hit = self._reads.get(key)
        if hit is None:
            pos, orn = self._raw_base(body)
            hit = self._reads[key] = _frozen(np.array(pos), np.array(orn))
        return hit

    def set_base_pose(self, body: int, position, orientation) -> None:
        """Teleport the base and zero its velocity."""
        p, c = self._p, self._client
        self._moved()
        p.resetBasePositionAndOrientation(body, list(position), list(orientation), physicsClientId=c)
        p.resetBaseVelocity(body, [0, 0, 0], [0, 0, 0], physicsClientId=c)

    def get_base_velocity(self, body: int) -> tuple[np.ndarray, np.ndarray]:
        """Linear and angular base velocity."""
        lin, ang = self._p.getBaseVelocity(body, physicsClientId=self._client)
        return np.asarray(lin, dtype=np.float64), np.asarray(ang, dtype=np.float64)

    def get_joint_states(self, body: int, joints: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """Positions and velocities of the given joints (read-only arrays)."""
        if not joints:
            return np.zeros(0), np.zeros(0)
        key = ("joints", body, *joints)
        hit = self._reads.get(key)
        if hit is None:
            states = self._raw_joints(key, body, joints)
            hit = self._reads[key] = _frozen(
                np.array([s[0] for s in states]), np.array([s[1] for s in states])
            )
        return hit

    def reset_joint_states(self, body: int, joints: list[int], positions, velocities=None) -> None:
        """Teleport joints."""
        p, c = self._p, self._client
        self._moved()
        velocities = np.zeros(len(joints)) if velocities is None else velocities
        for j, q, v in zip(joints, positions, velocities, strict=True):
            p.resetJointState(body, j, float(q), float(v), physicsClientId=c)

    def get_link_poses(self, body: int, links: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """World poses of link frames (``-1`` = base; read-only arrays)."""
        key = ("links", body, *links)
        hit = self._reads.get(key)
        if hit is None:
            if BASE_LINK in links:
                hit = self._read_poses_with_base(body, links)
            else:
                states = self._raw_links(key, body, links)
                hit = np.array([s[4] for s in states]), np.array([s[5] for s in states])
            hit = self._reads[key] = _frozen(*hit)
        return hit

    def _read_poses_with_base(self, body: int, links: list[int]) -> tuple[np.ndarray, np.ndarray]:
        positions = np.zeros((len(links), 3))
        orientations = np.zeros((len(links), 4))
        child_links = [link for link in links if link != BASE_LINK]
        key = ("links", body, *child_links)
        states = self._raw_links(key, body, child_links) if child_links else ()
        it = iter(states)
        for i, link in enumerate(links):
            if link == BASE_LINK:
                pos, orn = self._raw_base(body)
            else:
                state = next(it)
                pos, orn = state[4], state[5]
            positions[i] = pos
            orientations[i] = orn
        return positions, orientations

    def get_aabb(self, body: int, link: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """AABB of one link, or the union over all links of the body (read-only arrays)."""
        key = ("aabb", body, link)
        hit = self._reads.get(key)
        if hit is None:
            lo, hi = self._raw_body_aabb(body) if link is None else self._raw_aabb(body, link)
            hit = self._reads[key] = _frozen(np.array(lo), np.array(hi))
        return hit

    def _raw_aabb(self, body: int, link: int) -> tuple:
        """One link's AABB as engine tuples."""
        key = ("aabb", body, link)
        hit = self._raw.get(key)
        if hit is None:
            boxes = self._raw.get(("boxes", body))  # from a whole-body read in this state
            hit = boxes.get(link) if boxes is not None else None
            if hit is None:
                hit = self._p.getAABB(body, link, physicsClientId=self._client)
            self._raw[key] = hit
        return hit

    def _raw_body_aabb(self, body: int) -> tuple:
        """Whole-body AABB: the union of the link AABBs (each memoised).

        Why the reuse: a link's box is a function of the body's base pose and
        joint positions alone, and most bodies sit still most of the time, so
        while those are bit-identical to the last read after a step the link
        boxes of that read are reused instead of asked for one by one.
        """
        raw = self._raw
        key = ("aabb", body, None)
        hit = raw.get(key)
        if hit is not None:
            return hit
        signature = self._pose_signature(body)
        last = self._body_aabbs.get(body)
        if last is not None and last[0] == signature:
            _, boxes, hit = last
        else:
            get_aabb, client = self._p.getAABB, self._client
            links = range(-1, len(self.joint_infos(body)))
            boxes = {link: get_aabb(body, link, physicsClientId=client) for link in links}
            hit = _aabb_union(list(boxes.values()))
            if self._settled:  # never keep reads taken right after a teleport
                self._body_aabbs[body] = (signature, boxes, hit)
        raw[("boxes", body)] = boxes  # the link boxes, for single-link reads (_raw_aabb)
        raw[key] = hit
        return hit

    def _pose_signature(self, body: int) -> object:
        """Engine values that fix where every link of ``body`` is: base pose, joint positions.

        A body with multi-DoF (spherical, planar) joints, whose positions one
        number per joint does not capture, gets a fresh object: it never matches.
        """
        key = ("signature", body)
        hit = self._raw.get(key)
        if hit is not None:
            return hit
        if body not in self._movable_cache:
            infos = self.joint_infos(body)
            multi_dof = any(j.type in ("spherical", "planar") for j in infos)
            movable = None if multi_dof else [j.index for j in infos if j.type != "fixed"]
            self._movable_cache[body] = movable
        movable = self._movable_cache[body]
        if movable is None:
            hit = self._raw[key] = object()
            return hit
        base = self._raw_base(body)
        if not movable:
            hit = self._raw[key] = base
            return hit
        states = self._raw_joints(("joints", body, *movable), body, movable)
        hit = self._raw[key] = (base, [state[0] for state in states])
        return hit

    def read_bodies(self, queries: Sequence[BodyQuery]) -> np.ndarray:
        """Several bodies' state in one flat vector (layout: :meth:`Backend.read_bodies`).

        Fills the memo on the way, so the single getters called later in the
        same state (by the robot, the state API, goals) need no engine call.
        Each query's numbers, and the (read-only) reading of a whole batch, are
        memoised too, by object: callers keep their queries and ask again.
        """
        batches, batch_id = self._batches, id(queries)
        hit = batches.get(batch_id)
        if hit is not None and hit[0] is queries:  # the memo holds its key: ids stay unique
            return hit[1]
        per_query = self._queries
        if len(queries) == 1:  # one query of a larger batch read in this state: its slice
            known = per_query.get(id(queries[0]))
            if known is not None and known[0] is queries[0] and known[2] is not None:
                batches[batch_id] = (queries, known[2])
                return known[2]
        flat: list[float] = []
        parts = []
        for query in queries:
            query_id = id(query)
            known = per_query.get(query_id)
            if known is None or known[0] is not query:
                known = per_query[query_id] = (query, self._read_query(query), None)
            parts.append(known)
            flat += known[1]
        reading = np.fromiter(flat, np.float64, len(flat))  # cheaper than np.array on a list
        reading.setflags(write=False)
        batches[batch_id] = (queries, reading)
        if len(parts) > 1:
            start = 0
            for query, values, _ in parts:
                end = start + len(values)
                per_query[id(query)] = (query, values, reading[start:end])
                start = end
        return reading

    def _read_query(self, query: BodyQuery) -> list[float]:
        # memo hits inline (the common case: another read in this state asked first)
        raw, body = self._raw, query.body
        flat: list[float] = []
        if query.base:
            pos, orn = raw.get(("base", body)) or self._raw_base(body)
            flat += pos
            flat += orn
        if query.aabb:
            lo, hi = raw.get(("aabb", body, None)) or self._raw_body_aabb(body)
            flat += lo
            flat += hi
        joints = query.joints
        if joints:
            key = ("joints", body, *joints)
            flat += [state[0] for state in raw.get(key) or self._raw_joints(key, body, joints)]
        links = query.links
        if links and BASE_LINK in links:
            pos_arr, orn_arr = self.get_link_poses(body, list(links))
            flat += pos_arr.ravel().tolist()
            flat += orn_arr.ravel().tolist()
        elif links:
            key = ("links", body, *links)
            states = raw.get(key) or self._raw_links(key, body, links)
            for state in states:
                flat += state[4]
            for state in states:
                flat += state[5]
        if query.link_aabbs:
            boxes = raw.get(("boxes", body))  # the link boxes of a whole-body read, if any
            for link in query.link_aabbs:
                box = boxes.get(link) if boxes is not None else None
                lo, hi = box if box is not None else self._raw_aabb(body, link)
                flat += lo
                flat += hi
        return flat

    def set_joint_position_targets(
        self, body: int, joints: list[int], positions, forces, position_gain: float = 0.3
    ) -> None:
        """Position control with bounded force."""
        p = self._p
        p.setJointMotorControlArray(
            body,
            joints,
            p.POSITION_CONTROL,
            targetPositions=_floats(positions),
            forces=_floats(forces),
            positionGains=[position_gain] * len(joints),
            physicsClientId=self._client,
        )

    def set_joint_friction(self, body: int, joints: list[int], forces) -> None:
        """Zero-velocity motors with bounded force behave like joint friction."""
        p = self._p
        p.setJointMotorControlArray(
            body,
            joints,
            p.VELOCITY_CONTROL,
            targetVelocities=[0.0] * len(joints),
            forces=[float(f) for f in forces],
            physicsClientId=self._client,
        )

    def set_dynamics(
        self,
        body: int,
        link: int,
        lateral_friction: float | None = None,
        joint_damping: float | None = None,
        linear_damping: float | None = None,
        angular_damping: float | None = None,
    ) -> None:
        """Change contact and damping parameters of one link."""
        kwargs = {}
        if lateral_friction is not None:
            kwargs["lateralFriction"] = lateral_friction
        if joint_damping is not None:
            kwargs["jointDamping"] = joint_damping
        if linear_damping is not None:
            kwargs["linearDamping"] = linear_damping
        if angular_damping is not None:
            kwargs["angularDamping"] = angular_damping
        if kwargs:
            self._p.changeDynamics(body, link, physicsClientId=self._client, **kwargs)

    def set_joint_limits(
        self, body: int, joint: int, lower: float, upper: float, max_force: float = 1e4
    ) -> None:
        """Enforce a joint's position limits: a stiff limit constraint plus a hard stop.

        PyBullet's limit constraint only stops the velocity that would take the joint
        further out: with split impulse (PyBullet's default) it never pushes a joint back
        from beyond its limit, and one timestep of a hard push (the arm's suction weld
        drove a faucet handle with range 0-0.61 rad to -1.2 rad, where it stayed) carries
        it far past. So every timestep also ends with a hard stop (:meth:`_hold_limits`):
        a joint more than :data:`LIMIT_SLACK` of its range outside its limits is put back
        on the limit, its outward velocity removed. Overshoot is bounded by the slack
        whatever pushes, and a released joint is within its limits.
        """
        lower, upper = float(lower), float(upper)
        self._p.changeDynamics(
            body, joint, jointLowerLimit=lower, jointUpperLimit=upper,
            jointLimitForce=float(max_force), physicsClientId=self._client,
        )
        if upper > lower:
            slack = LIMIT_SLACK * (upper - lower)
            self._limits.setdefault(int(body), {})[int(joint)] = (lower, upper, slack)

    def _hold_limits(self) -> None:
        """Put every limited joint that got beyond its limits (and slack) back on the limit."""
        p, c = self._p, self._client
        for body, limits in self._limits.items():
            joints = list(limits)
            for joint, (q, v, *_) in zip(
                joints, p.getJointStates(body, joints, physicsClientId=c), strict=True
            ):
                lower, upper, slack = limits[joint]
                if q < lower - slack:
                    p.resetJointState(body, joint, lower, max(v, 0.0), physicsClientId=c)
                elif q > upper + slack:
                    p.resetJointState(body, joint, upper, min(v, 0.0), physicsClientId=c)

    def step(self, n: int = 1) -> None:
        """Advance physics ``n`` timesteps (each ends with the joint-limit stop)."""
        p, c = self._p, self._client
        self._forget()
        self._settled = True
        hold = self._hold_limits if self._limits else None
        for _ in range(n):
            p.stepSimulation(physicsClientId=c)
            if hold is not None:
                hold()

    # contacts and queries ---------------------------------------------------------
    @staticmethod
    def _contact(raw) -> Contact:
        return Contact(
            body_a=raw[1],
            body_b=raw[2],
            link_a=raw[3],
            link_b=raw[4],
            position_a=np.asarray(raw[5]),
            position_b=np.asarray(raw[6]),
            normal_b_to_a=np.asarray(raw[7]),
            distance=float(raw[8]),
            normal_force=float(raw[9]),
        )

    def contacts(self, body_a: int, body_b: int | None = None, link_a: int | None = None):
        """Contacts from the last step involving ``body_a``."""
        kwargs = {"bodyA": body_a, "physicsClientId": self._client}
        if body_b is not None:
            kwargs["bodyB"] = body_b
        if link_a is not None:
            kwargs["linkIndexA"] = link_a
        return [self._contact(raw) for raw in self._p.getContactPoints(**kwargs)]

    def closest_points(self, body_a: int, body_b: int, max_distance: float, link_a=None, link_b=None):
        """Point pairs closer than ``max_distance``, computed now."""
        kwargs = {
            "bodyA": body_a,
            "bodyB": body_b,
            "distance": float(max_distance),
            "physicsClientId": self._client,
        }
        if link_a is not None:
            kwargs["linkIndexA"] = link_a
        if link_b is not None:
            kwargs["linkIndexB"] = link_b
        return [self._contact(raw) for raw in self._p.getClosestPoints(**kwargs)]

    def update_collisions(self) -> None:
        """Refresh broad-phase AABBs after teleporting."""
        self._moved()
        self._p.performCollisionDetection(physicsClientId=self._client)

    def create_fixed_constraint(
        self, parent_body: int, parent_link: int, child_body: int, child_link: int, max_force=500.0
    ) -> int:
        """Weld two links in their current relative pose.

        PyBullet expresses constraint frames relative to each link's centre of
        mass, not its URDF frame, so the relative pose is computed between the
        two COM frames (using URDF frames would start the weld offset by the
        COM offsets and yank the held part).
        """
        p, c = self._p, self._client
        pp, po = self._com_pose(parent_body, parent_link)
        cp, co = self._com_pose(child_body, child_link)
        inv_pp, inv_po = p.invertTransform(pp, po)
        rel_pos, rel_orn = p.multiplyTransforms(inv_pp, inv_po, cp, co)
        cid = p.createConstraint(
            parent_body,
            parent_link,
            child_body,
            child_link,
            p.JOINT_FIXED,
            [0, 0, 0],
            parentFramePosition=rel_pos,
            childFramePosition=[0, 0, 0],
            parentFrameOrientation=rel_orn,
            childFrameOrientation=[0, 0, 0, 1],
            physicsClientId=c,
        )
        p.changeConstraint(cid, maxForce=float(max_force), physicsClientId=c)
        return int(cid)

    def _com_pose(self, body: int, link: int) -> tuple[list[float], list[float]]:
        """World pose of a link's centre-of-mass frame (the base pose is already COM)."""
        p, c = self._p, self._client
        if link == BASE_LINK:
            pos, orn = p.getBasePositionAndOrientation(body, physicsClientId=c)
        else:
            state = p.getLinkState(body, link, computeForwardKinematics=1, physicsClientId=c)
            pos, orn = state[0], state[1]
        return list(pos), list(orn)

    def remove_constraint(self, constraint: int) -> None:
        """Remove a constraint."""
        self._p.removeConstraint(constraint, physicsClientId=self._client)

    def set_collision_between(self, body_a: int, link_a: int, body_b: int, link_b: int, enabled: bool) -> None:
        """Enable or disable collision between two links."""
        self._p.setCollisionFilterPair(
            body_a, body_b, link_a, link_b, int(enabled), physicsClientId=self._client
        )

    def inverse_kinematics(
        self,
        body: int,
        link: int,
        position,
        orientation,
        lower,
        upper,
        rest,
        max_iterations: int = 20,
        threshold: float = 1e-4,
    ) -> np.ndarray:
        """Damped-least-squares IK with null-space bias towards ``rest``."""
        kwargs = {
            "lowerLimits": list(lower),
            "upperLimits": list(upper),
            "jointRanges": [float(h - lo) for lo, h in zip(lower, upper, strict=True)],
            "restPoses": list(rest),
            "maxNumIterations": int(max_iterations),
            "residualThreshold": float(threshold),
            "physicsClientId": self._client,
        }
        if orientation is not None:
            kwargs["targetOrientation"] = list(orientation)
        q = self._p.calculateInverseKinematics(body, link, list(position), **kwargs)
        return np.asarray(q, dtype=np.float64)

    def jacobian(self, body: int, link: int, positions: np.ndarray) -> np.ndarray:
        """Geometric Jacobian of the link frame origin over all movable joints."""
        q = _floats(positions)
        zeros = [0.0] * len(q)
        lin, ang = self._p.calculateJacobian(
            body, link, [0.0, 0.0, 0.0], q, zeros, zeros, physicsClientId=self._client
        )
        # rows flattened first: a flat iterator converts faster than nested tuples
        rows = lin + ang
        flat = np.fromiter(chain.from_iterable(rows), np.float64, len(rows) * len(q))
        return flat.reshape(len(rows), len(q))

    def collision_shapes(self, body: int, link: int) -> list[CollisionShape]:
        """Primitive collision shapes of a link in world coordinates."""
        p, c = self._p, self._client
        # getCollisionShapeData gives shape poses relative to each link's inertial
        # (centre-of-mass) frame, for the base as for child links, so compose with
        # the COM world pose: getBasePositionAndOrientation for the base,
        # getLinkState items 0 and 1 for a child link (items 4, 5 are the URDF frame).
        if link == BASE_LINK:
            frame = p.getBasePositionAndOrientation(body, physicsClientId=c)
        else:
            state = p.getLinkState(body, link, computeForwardKinematics=1, physicsClientId=c)
            frame = (state[0], state[1])
        shapes = []
        for raw in p.getCollisionShapeData(body, link, physicsClientId=c):
            kind = _SHAPE_KINDS.get(raw[2], "unknown")
            dims = tuple(float(x) for x in raw[3])
            if kind == "box":
                dims = tuple(d / 2.0 for d in dims)
            elif kind in ("cylinder", "capsule"):
                dims = (dims[1], dims[0])
            elif kind == "sphere":
                dims = (dims[0],)
            pos, orn = p.multiplyTransforms(frame[0], frame[1], raw[5], raw[6])
            shapes.append(CollisionShape(kind, dims, np.asarray(pos), np.asarray(orn)))
        return shapes

    # snapshots ---------------------------------------------------------------------
    def save_state(self) -> int:
        """In-memory snapshot (includes contact warm-start data)."""
        return int(self._p.saveState(physicsClientId=self._client))

    def restore_state(self, state: int) -> None:
        """Restore a snapshot of this client."""
        self._moved()
        try:
            self._p.restoreState(stateId=state, physicsClientId=self._client)
        except self._p.error as exc:
            raise BackendError(f"cannot restore state {state}: {exc}") from exc

    def remove_state(self, state: int) -> None:
        """Forget a snapshot."""
        self._p.removeState(state, physicsClientId=self._client)

    # rendering ------------------------------------------------------------------------
    def render(self, camera: CameraSpec, depth: bool = False) -> RenderResult:
        """Render with the CPU tiny renderer."""
        p, c = self._p, self._client
        view = p.computeViewMatrix(camera.eye, camera.target, camera.up, physicsClientId=c)
        aspect = camera.width / camera.height
        proj = p.computeProjectionMatrixFOV(
            camera.fov, aspect, camera.near, camera.far, physicsClientId=c
        )
        flags = 0 if depth else p.ER_NO_SEGMENTATION_MASK
        _, _, rgba, zbuf, seg = p.getCameraImage(
            camera.width,
            camera.height,
            view,
            proj,
            renderer=p.ER_TINY_RENDERER,
            flags=flags,
            physicsClientId=c,
        )
        shape = (camera.height, camera.width)
        frame = np.asarray(rgba, dtype=np.uint8).reshape(*shape, 4)
        z = np.array(zbuf, dtype=np.float32).reshape(shape)
        seg_arr = np.array(seg, dtype=np.int32).reshape(shape) if depth else None
        if self._flat_boxes.boxes:  # static boxes, ray-cast (flat_boxes.py)
            frame = np.require(frame, requirements=("C", "W"))
            self._flat_boxes.paint(camera, frame, z, seg_arr)
        result = RenderResult(rgb=flat_boxes.rgb_of(frame), depth=np.zeros((0, 0), np.float32))
        if seg_arr is not None:
            near, far = camera.near, camera.far
            result.depth = (far * near / (far - (far - near) * z)).astype(np.float32)
            result.segmentation = seg_arr
        return result
