"""The physics backend protocol.

Why a protocol: the environment, the state API, planners and judges talk to
physics only through these calls, so MuJoCo and SAPIEN can implement them next.
Nothing here mentions a simulator's own types: bodies and constraints are plain
integer handles chosen by the backend, links are integer indices with ``-1``
for a body's base, poses are numpy arrays, quaternions are ``(x, y, z, w)``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

import numpy as np

from ..errors import SimjudgeError

__all__ = [
    "BASE_LINK",
    "Backend",
    "BackendError",
    "BodyQuery",
    "CameraSpec",
    "CollisionShape",
    "Contact",
    "JointInfo",
    "RenderResult",
    "BatchSlices",
    "body_reading_offsets",
    "body_reading_size",
    "read_bodies_via_getters",
]

BASE_LINK = -1
"""Link index of a body's base."""


class BackendError(SimjudgeError, RuntimeError):
    """A physics backend could not do what it was asked (bad handle, file, state)."""


@dataclass(frozen=True)
class JointInfo:
    """Static description of one joint of a loaded body.

    Attributes:
        index: Joint index; equal to the index of its child link.
        name: Joint name from the description file.
        type: ``revolute``, ``prismatic``, ``fixed`` or ``continuous``-like
            ``revolute`` without limits (``lower > upper`` in the file).
        link_name: Child link name.
        parent_index: Parent link index (``-1`` = base).
        lower: Lower position limit.
        upper: Upper position limit.
        max_force: Motor force / torque limit from the file.
        max_velocity: Velocity limit from the file.
        damping: Joint damping.
        friction: Joint friction.
        axis: Joint axis in the child link frame (zeros for fixed joints).
    """

    index: int
    name: str
    type: Literal["revolute", "prismatic", "fixed", "spherical", "planar"]
    link_name: str
    parent_index: int
    lower: float
    upper: float
    max_force: float
    max_velocity: float
    damping: float
    friction: float
    axis: tuple[float, float, float] = (0.0, 0.0, 0.0)


@dataclass(frozen=True)
class Contact:
    """One contact or closest-point pair between two bodies.

    Attributes:
        body_a: First body handle.
        link_a: Link index on ``body_a``.
        body_b: Second body handle.
        link_b: Link index on ``body_b``.
        position_a: Point on ``body_a`` (world).
        position_b: Point on ``body_b`` (world).
        normal_b_to_a: Contact normal pointing from B to A.
        distance: Signed distance; negative means penetration.
        normal_force: Normal force (0 for closest-point queries).
    """

    body_a: int
    link_a: int
    body_b: int
    link_b: int
    position_a: np.ndarray
    position_b: np.ndarray
    normal_b_to_a: np.ndarray
    distance: float
    normal_force: float


@dataclass(frozen=True)
class BodyQuery:
    """What :meth:`Backend.read_bodies` reads of one body.

    Why batched: a control step reads the same handful of quantities of every
    body each time; asking for them in one call lets a backend skip per-call
    overhead, which matters next to a physics step of ~100 µs.

    Attributes:
        body: Body handle.
        base: Read the base position (3) and orientation (4).
        aabb: Read the whole-body AABB, min (3) then max (3).
        joints: Joint indices whose positions to read (one value each).
        links: Link indices (``-1`` = base) whose frames to read: all positions
            (3 each), then all orientations (4 each).
        link_aabbs: Link indices whose own AABBs to read, min (3) then max (3) each.
    """

    body: int
    base: bool = True
    aabb: bool = False
    joints: tuple[int, ...] = ()
    links: tuple[int, ...] = ()
    link_aabbs: tuple[int, ...] = ()


def body_reading_size(query: BodyQuery) -> int:
    """How many numbers :meth:`Backend.read_bodies` returns for ``query``."""
    return body_reading_offsets(query)["end"]


class BatchSlices:
    """Where each query of the batches a backend read sits, so one query is served as a slice.

    Why: the robot reads its own query right after the observation read the whole scene (its
    query included) in the same state; a backend that memoises batch readings per state can
    answer the robot with the batch's slice instead of a second read. :meth:`note` records a
    multi-query batch's layout (once per batch object); :meth:`slice` finds ``query``'s part
    of the batch's reading, which the backend looks up in its own memo.
    """

    def __init__(self) -> None:
        self._of: dict[int, tuple[Sequence[BodyQuery], BodyQuery, int, int]] = {}

    def note(self, queries: Sequence[BodyQuery]) -> None:
        """Remember where each query of a batch of several sits in its reading."""
        if len(queries) < 2 or self._of.get(id(queries[0]), (None,))[0] is queries:
            return
        start = 0
        for query in queries:
            end = start + body_reading_size(query)
            self._of[id(query)] = (queries, query, start, end)
            start = end

    def slice(
        self, query: BodyQuery, reading_of: Callable[[Sequence[BodyQuery]], np.ndarray | None]
    ) -> np.ndarray | None:
        """``query``'s part of the reading of a batch that holds it, or None.

        ``reading_of(batch)`` is the batch's reading in this state (None: not read in it).
        """
        entry = self._of.get(id(query))
        if entry is None or entry[1] is not query:
            return None
        reading = reading_of(entry[0])
        return None if reading is None else reading[entry[2] : entry[3]]


def body_reading_offsets(query: BodyQuery) -> dict[str, int]:
    """Where each quantity starts in ``query``'s part of a :meth:`Backend.read_bodies` reading.

    Keys: ``base`` (position, then orientation), ``aabb``, ``joints``,
    ``link_positions``, ``link_orientations``, ``link_aabbs``, and ``end`` (the
    part's length). A quantity the query does not ask for has no numbers, so
    its offset equals the next one's.
    """
    offsets = {"base": 0}
    offsets["aabb"] = offsets["base"] + 7 * query.base
    offsets["joints"] = offsets["aabb"] + 6 * query.aabb
    offsets["link_positions"] = offsets["joints"] + len(query.joints)
    offsets["link_orientations"] = offsets["link_positions"] + 3 * len(query.links)
    offsets["link_aabbs"] = offsets["link_orientations"] + 4 * len(query.links)
    offsets["end"] = offsets["link_aabbs"] + 6 * len(query.link_aabbs)
    return offsets


def read_bodies_via_getters(backend: Backend, queries: Sequence[BodyQuery]) -> np.ndarray:
    """:meth:`Backend.read_bodies` in terms of the single-quantity getters.

    A reference implementation: a backend without a faster path can answer
    ``read_bodies`` with it, and tests compare a fast path against it.
    """
    parts: list[np.ndarray] = []
    for query in queries:
        if query.base:
            parts += backend.get_base_pose(query.body)
        if query.aabb:
            parts += backend.get_aabb(query.body)
        if query.joints:
            parts.append(backend.get_joint_states(query.body, list(query.joints))[0])
        if query.links:
            pos, orn = backend.get_link_poses(query.body, list(query.links))
            parts += [pos.ravel(), orn.ravel()]
        for link in query.link_aabbs:
            parts += backend.get_aabb(query.body, link)
    return np.concatenate(parts, dtype=np.float64) if parts else np.zeros(0)


@dataclass(frozen=True)
class CollisionShape:
    """A primitive collision shape of a link, in world coordinates at query time.

    Attributes:
        kind: ``box``, ``cylinder``, ``sphere``, ``capsule`` or ``mesh``.
        dimensions: Box half-extents (3); cylinder/capsule ``(radius, length)``;
            sphere ``(radius,)``; mesh scale (3).
        position: World position of the shape frame.
        orientation: World orientation of the shape frame (x, y, z, w).
    """

    kind: str
    dimensions: tuple[float, ...]
    position: np.ndarray
    orientation: np.ndarray


@dataclass(frozen=True)
class CameraSpec:
    """A pinhole camera looking at a target.

    Attributes:
        name: Camera name, used in ``render`` outputs.
        eye: Camera position (world).
        target: Point the camera looks at (world).
        up: Up vector.
        fov: Vertical field of view in degrees.
        width: Image width in pixels.
        height: Image height in pixels.
        near: Near clipping distance.
        far: Far clipping distance.
    """

    name: str = "front"
    eye: tuple[float, float, float] = (1.1, -0.9, 0.9)
    target: tuple[float, float, float] = (0.0, 0.0, 0.2)
    up: tuple[float, float, float] = (0.0, 0.0, 1.0)
    fov: float = 50.0
    width: int = 320
    height: int = 240
    near: float = 0.05
    far: float = 5.0


@dataclass
class RenderResult:
    """Images of one camera.

    Attributes:
        rgb: ``uint8`` array ``(H, W, 3)``.
        depth: ``float32`` metric depth ``(H, W)`` in metres.
        segmentation: ``int32`` body handle per pixel ``(H, W)``; -1 = nothing.
    """

    rgb: np.ndarray
    depth: np.ndarray
    segmentation: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.int32))


@runtime_checkable
class Backend(Protocol):
    """What the rest of simjudge needs from a physics engine.

    Every method works on the backend's own world; several backends (worlds)
    may live in one process. Handles returned by one backend mean nothing to
    another.
    """

    timestep: float
    name: str
    """The backend's registry name (``pybullet``, ``mujoco``, ``sapien``), recorded with results."""

    # lifecycle -----------------------------------------------------------
    def reset_world(self) -> None:
        """Remove every body and constraint; restore gravity and timestep."""

    def close(self) -> None:
        """Release the engine's resources; the backend is unusable afterwards."""

    # loading ---------------------------------------------------------------
    def load_urdf(
        self,
        path: str | Path,
        position: np.ndarray | tuple[float, float, float] = (0.0, 0.0, 0.0),
        orientation: np.ndarray | tuple[float, float, float, float] = (0.0, 0.0, 0.0, 1.0),
        fixed_base: bool = False,
        scale: float = 1.0,
    ) -> int:
        """Load a URDF file and return the new body's handle."""

    def add_box(
        self,
        half_extents: tuple[float, float, float],
        position: tuple[float, float, float],
        mass: float = 0.0,
        rgba: tuple[float, float, float, float] = (0.6, 0.6, 0.6, 1.0),
    ) -> int:
        """Add a box body (``mass=0`` makes it static) and return its handle."""

    def body_handles(self) -> list[int]:
        """Handles of all bodies in the world."""

    def joint_infos(self, body: int) -> list[JointInfo]:
        """Static joint descriptions of ``body``, one per link, in index order."""

    def base_name(self, body: int) -> str:
        """Name of the body's base link."""

    # state -----------------------------------------------------------------
    def get_base_pose(self, body: int) -> tuple[np.ndarray, np.ndarray]:
        """World position (3) and orientation (4) of the body's base."""

    def set_base_pose(
        self,
        body: int,
        position: np.ndarray | tuple[float, float, float],
        orientation: np.ndarray | tuple[float, float, float, float],
    ) -> None:
        """Teleport a body's base; velocities are zeroed."""

    def get_base_velocity(self, body: int) -> tuple[np.ndarray, np.ndarray]:
        """Linear (3) and angular (3) velocity of the body's base."""

    def get_joint_states(
        self, body: int, joints: list[int]
    ) -> tuple[np.ndarray, np.ndarray]:
        """Positions and velocities of ``joints`` of ``body``."""

    def reset_joint_states(
        self,
        body: int,
        joints: list[int],
        positions: np.ndarray,
        velocities: np.ndarray | None = None,
    ) -> None:
        """Teleport joints (no dynamics)."""

    def get_link_poses(
        self, body: int, links: list[int]
    ) -> tuple[np.ndarray, np.ndarray]:
        """World positions ``(n, 3)`` and orientations ``(n, 4)`` of link frames."""

    def get_aabb(self, body: int, link: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """World AABB of a link, or of the whole body when ``link`` is None."""

    def read_bodies(self, queries: Sequence[BodyQuery]) -> np.ndarray:
        """Several bodies' state in one flat ``float64`` vector, query after query.

        Per query, in this order: base position (3) and orientation (4) if
        ``base``; whole-body AABB min (3) and max (3) if ``aabb``; the joint
        positions; the link frame positions (3 per link), then their
        orientations (4 per link); then each of ``link_aabbs``' AABB, min (3)
        and max (3). Values equal what the single-quantity getters return;
        :func:`read_bodies_via_getters` is a complete implementation.
        """

    def set_joint_position_targets(
        self,
        body: int,
        joints: list[int],
        positions: np.ndarray,
        forces: np.ndarray,
        position_gain: float = 0.3,
    ) -> None:
        """Drive joints towards target positions with bounded force."""

    def set_joint_friction(self, body: int, joints: list[int], forces: np.ndarray) -> None:
        """Make joints passive with Coulomb-like friction (a zero-velocity motor)."""

    def set_dynamics(
        self,
        body: int,
        link: int,
        lateral_friction: float | None = None,
        joint_damping: float | None = None,
        linear_damping: float | None = None,
        angular_damping: float | None = None,
    ) -> None:
        """Change a link's contact and damping parameters."""

    def set_joint_limits(
        self, body: int, joint: int, lower: float, upper: float, max_force: float = 1e4
    ) -> None:
        """Enforce a joint's position limits (stiffly: an arm must not push through)."""

    def step(self, n: int = 1) -> None:
        """Advance physics by ``n`` timesteps."""

    # contacts and queries ---------------------------------------------------
    def contacts(
        self, body_a: int, body_b: int | None = None, link_a: int | None = None
    ) -> list[Contact]:
        """Contacts from the last step involving ``body_a`` (optionally filtered)."""

    def closest_points(
        self,
        body_a: int,
        body_b: int,
        max_distance: float,
        link_a: int | None = None,
        link_b: int | None = None,
    ) -> list[Contact]:
        """Point pairs closer than ``max_distance`` (computed now, not from a step)."""

    def update_collisions(self) -> None:
        """Refresh broad-phase data after teleporting bodies, before queries."""

    def create_fixed_constraint(
        self,
        parent_body: int,
        parent_link: int,
        child_body: int,
        child_link: int,
        max_force: float = 500.0,
    ) -> int:
        """Weld the child link to the parent link in their current relative pose."""

    def remove_constraint(self, constraint: int) -> None:
        """Remove a constraint made by :meth:`create_fixed_constraint`."""

    def set_collision_between(
        self, body_a: int, link_a: int, body_b: int, link_b: int, enabled: bool
    ) -> None:
        """Enable or disable collision between two links."""

    def inverse_kinematics(
        self,
        body: int,
        link: int,
        position: np.ndarray,
        orientation: np.ndarray | None,
        lower: np.ndarray,
        upper: np.ndarray,
        rest: np.ndarray,
        max_iterations: int = 20,
        threshold: float = 1e-4,
    ) -> np.ndarray:
        """Joint positions (all movable joints, index order) that put ``link`` at the pose."""

    def jacobian(self, body: int, link: int, positions: np.ndarray) -> np.ndarray:
        """Geometric Jacobian ``(6, n)`` of a link origin (linear rows, then angular).

        The columns are the body's ``n`` movable joints, evaluated at joint positions
        ``positions``.
        """

    def collision_shapes(self, body: int, link: int) -> list[CollisionShape]:
        """Primitive collision shapes of a link in world coordinates."""

    # snapshots ---------------------------------------------------------------
    def save_state(self) -> int:
        """Snapshot the full dynamic state (contacts included) in memory."""

    def restore_state(self, state: int) -> None:
        """Restore a snapshot made by :meth:`save_state` in this backend."""

    def remove_state(self, state: int) -> None:
        """Forget a snapshot."""

    # rendering ---------------------------------------------------------------
    def render(self, camera: CameraSpec, depth: bool = False) -> RenderResult:
        """Render RGB (and metric depth and segmentation) headless."""
