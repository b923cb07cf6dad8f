"""PyBullet implementation of :class:`~simjudge.envs.backends.base.Backend`.

The only module in simjudge that imports ``pybullet``. Each instance owns one
physics client in DIRECT mode, and every call passes ``physicsClientId``, so any
number of simulations can live in one process. Rendering uses the CPU
``ER_TINY_RENDERER``: headless, no GPU, no display. The memoised state reads are in
:mod:`.pybullet_reads`, contacts, constraints and kinematics in :mod:`.pybullet_queries`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from . import flat_boxes
from .base import (
    BackendError,
    BodyQuery,
    CameraSpec,
    JointInfo,
    RenderResult,
)
from .pybullet_queries import PyBulletQueries
from .pybullet_reads import PyBulletReads

__all__ = ["LIMIT_SLACK", "PyBulletBackend"]

LIMIT_SLACK = 0.005
"""How far (a fraction of the joint's range) an object joint may get beyond a limit before
the backend's hard stop puts it back (see :meth:`PyBulletBackend.set_joint_limits`)."""

_STATIC_GROUP, _STATIC_MASK = 2, -1 ^ 2
"""Bullet's ``StaticFilter`` and ``AllFilter ^ StaticFilter``: a fixed base's collision filter."""

_JOINT_TYPES: dict[int, Literal["revolute", "prismatic", "fixed", "spherical", "planar"]] = {
    0: "revolute", 1: "prismatic", 2: "spherical", 3: "planar", 4: "fixed",
}


def _floats(values) -> list[float]:
    """Plain numbers for pybullet (``tolist`` for arrays, lists as they are)."""
    if isinstance(values, np.ndarray):
        return values.ravel().tolist()
    return values if type(values) is list else [float(v) for v in values]


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


class PyBulletBackend(PyBulletReads, PyBulletQueries):
    """A headless PyBullet world.

    Args:
        timestep: Physics timestep in seconds (100 Hz by default, as RoboGen).
        gravity: Gravity along z.
        solver_iterations: Constraint solver iterations per step.
    """

    name = "pybullet"
    """The registry name, recorded with results."""

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
        self._batches: dict[int, tuple[Sequence[BodyQuery], np.ndarray, list[float] | None]] = {}
        self._movable_cache: dict[int, list[int] | None] = {}
        self._fixed_bodies: set[int] = set()
        self._colliders: list[tuple[int, int, int, int]] = []
        """(body, link, collision filter group, mask) of every link: see :meth:`restore_state`."""
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
        self._colliders.clear()
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
        """Load a URDF file; its links do not collide with each other.

        PyBullet checks self-collision only with ``URDF_USE_SELF_COLLISION``, which is not
        set (``..._EXCLUDE_PARENT`` alone changes nothing); the MuJoCo and SAPIEN backends
        match (``tests/envs/backends/test_collision_filters.py``).
        """
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
        self._add_colliders(int(body), p.getNumJoints(body, physicsClientId=self._client), bool(fixed_base))
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
        self._add_colliders(body, 0, mass == 0.0)
        if mass == 0.0:
            self._fixed_bodies.add(body)
        if flat:
            self._flat_boxes.add(body, half_extents, rgba)
        return body

    def _add_colliders(self, body: int, n_links: int, fixed_base: bool) -> None:
        """Record (and set) each link's collision filter: PyBullet's own defaults, made explicit.

        PyBullet files a fixed base under ``StaticFilter`` (group 2, mask all but 2) and every
        other link under ``DefaultFilter`` (group 1, mask all); none of simjudge's URDFs sets
        its own. Set here so that :meth:`restore_state` can set the very same values again.
        """
        p, c = self._p, self._client
        for link in range(-1, n_links):
            group, mask = (_STATIC_GROUP, _STATIC_MASK) if link == -1 and fixed_base else (1, -1)
            p.setCollisionFilterGroupMask(body, link, group, mask, physicsClientId=c)
            self._colliders.append((body, link, group, mask))

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

    # state: PyBulletReads (memoised reads, teleports); contacts, constraints, IK: PyBulletQueries
    # actuation -----------------------------------------------------------------------
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

    def _hold_limits(self, keep: bool = False) -> None:
        """Put every limited joint that got beyond its limits (and slack) back on the limit.

        With ``keep`` (the last timestep of a :meth:`step`), a body whose joints all stayed
        in bounds keeps this reading as the state's joint read, so the observation that
        follows reads those joints without asking the engine again (same state, same
        numbers).
        """
        p, c = self._p, self._client
        for body, limits in self._limits.items():
            joints = list(limits)
            states = p.getJointStates(body, joints, physicsClientId=c)
            held = False
            for joint, (q, v, *_) in zip(joints, states, strict=True):
                lower, upper, slack = limits[joint]
                if q < lower - slack:
                    p.resetJointState(body, joint, lower, max(v, 0.0), physicsClientId=c)
                    held = True
                elif q > upper + slack:
                    p.resetJointState(body, joint, upper, min(v, 0.0), physicsClientId=c)
                    held = True
            if keep and not held:
                self._raw[("joints", body, *joints)] = states

    def step(self, n: int = 1) -> None:
        """Advance physics ``n`` timesteps (each ends with the joint-limit stop)."""
        p, c = self._p, self._client
        self._forget()
        self._settled = True
        hold = self._hold_limits if self._limits else None
        for k in range(n, 0, -1):
            p.stepSimulation(physicsClientId=c)
            if hold is not None:
                hold(k == 1)

    # snapshots ---------------------------------------------------------------------
    def save_state(self) -> int:
        """In-memory snapshot of the bodies' state."""
        return int(self._p.saveState(physicsClientId=self._client))

    def restore_state(self, state: int) -> None:
        """Restore a snapshot of this client, with no contact manifold left over.

        Why: PyBullet's ``restoreState`` keeps the contact manifolds made after the save
        (the hand on a faucet handle) and the order the solver meets the others in depends on
        what ran since, so the same snapshot stepped the same way gave different numbers in
        the first episode and in later ones. Setting each link's collision filter again (the
        same values) makes Bullet drop the link's pairs and their manifolds; the next step
        finds the contacts afresh, in sorted pair order (``deterministicOverlappingPairs``),
        whatever ran before (``tests/envs/test_restore_determinism.py``).
        """
        p, c = self._p, self._client
        self._moved()
        try:
            p.restoreState(stateId=state, physicsClientId=c)
        except p.error as exc:
            raise BackendError(f"cannot restore state {state}: {exc}") from exc
        for body, link, group, mask in self._colliders:
            p.setCollisionFilterGroupMask(body, link, group, mask, physicsClientId=c)

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
