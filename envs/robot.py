"""The Franka Panda with a suction end effector, as in RoboGen.

Why suction: RoboGen and VERGSA execute subtasks with a suction gripper — when
suction turns on, the link in contact with the gripper is welded to it by a
fixed constraint; when it turns off the constraint is removed. The fingers stay
closed so their pads form the suction cup. A parallel-jaw gripper can be added
as another :class:`EndEffector` later without touching the env.

The robot talks to physics only through a :class:`~simjudge.envs.backends.Backend`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .backends import BASE_LINK, Backend, BodyQuery
from .catalogue import ASSETS_DIR
from .transforms import quat_to_matrix
from .world import ROBOT_BASE_POSITION

__all__ = ["Attachment", "PandaSuction", "HOME_QPOS"]

PANDA_URDFS: dict[str, str] = {
    "lowpoly": str(ASSETS_DIR / "robots" / "panda_lowpoly" / "panda.urdf"),
    "stock": "franka_panda/panda.urdf",
}
"""The Panda's URDF by visual: ``lowpoly`` (decimated visual meshes, made by
``tools/decimate_panda.py``; collision meshes, inertia and joints are the stock robot's, so
physics is the same) or ``stock`` (pybullet_data's, ~12x the triangles: every CPU-rendered
frame and the memory of every env paid for them)."""
PANDA_VISUAL = "lowpoly"
"""The visual used when :class:`PandaSuction` is given none (a key of :data:`PANDA_URDFS`)."""

HOME_QPOS = np.array([0.0, -0.5, 0.0, -2.2, 0.0, 1.75, 0.785])
"""Arm joint positions at reset: gripper above the table, pointing down."""

_ARM_FORCES = np.array([87.0, 87.0, 87.0, 87.0, 12.0, 12.0, 12.0]) * 2.0
_FORCES = np.concatenate([_ARM_FORCES, [40.0, 40.0]])
"""Arm torques, then finger forces (fingers stay closed: they are the suction cup)."""
_FINGER_JOINTS = [9, 10]
_HAND_LINK = 8
_SUCTION_LINKS = (8, 9, 10)
_EE_LINK = 11
_POSTURE_MARGIN = 0.3
"""Distance (rad) from a joint limit within which the IK step pulls the arm towards home."""
_POSTURE_GAIN = 0.05
"""Share of the way to the home posture a step near a limit adds (in the null space)."""
_SUCTION_FORCE = 300.0
"""Largest force (N) the suction weld transmits."""
_MAX_STRETCH = 0.03
"""Weld stretch (m) beyond which suction is lost."""
_SUCTION_REACH = 0.015
"""Largest gap (m) between a finger pad and a surface at which suction grips."""


def _rotation_error(current, target, cap: float) -> tuple[float, float, float]:
    """World-frame rotation vector taking ``current`` to ``target`` (capped at ``cap`` rad).

    Plain-float arithmetic: on 4-vectors it is several times faster than numpy.
    """
    x1, y1, z1, w1 = target
    x2, y2, z2, w2 = current
    x2, y2, z2 = -x2, -y2, -z2
    # q = target * conj(current)
    w = w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2
    x = w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2
    y = w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2
    z = w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2
    if w < 0.0:
        x, y, z, w = -x, -y, -z, -w
    sin = (x * x + y * y + z * z) ** 0.5
    if sin < 1e-12:
        return 0.0, 0.0, 0.0
    # numpy's arctan2, not math.atan2: the two differ in the last bit
    angle = min(2.0 * float(np.arctan2(sin, w)), cap)
    scale = angle / sin
    return x * scale, y * scale, z * scale


_CAP_SQUARE_BELOW = 0.05**2 * (1.0 - 1e-9)
"""Squared offsets below this are surely under the 5 cm cap, whatever the rounding."""

_SOLVE1: Callable[[np.ndarray, np.ndarray], np.ndarray]
try:  # numpy's own LAPACK kernel, which np.linalg.solve calls after its checks
    from numpy.linalg._umath_linalg import solve1 as _solve1
    _SOLVE1 = _solve1
except ImportError:  # pragma: no cover - other numpy layouts
    _SOLVE1 = np.linalg.solve
"""``np.linalg.solve`` for a float64 square matrix and a vector, bit for bit.

Why: the wrapper's checks cost several times a 6x6 solve, every control
step. Its one extra behaviour, raising ``LinAlgError`` on an exactly singular
matrix, cannot occur for a damped (positive-definite) system, which is the
only one solved with it.
"""


def _outside(values: list[float], lower: list[float], upper: list[float]) -> bool:
    """Whether any value lies below its lower or above its upper bound (NaN lies in neither).

    ``((q < lower) | (q > upper)).any()`` on plain floats, minus numpy's per-call overhead.
    """
    for value, low, high in zip(values, lower, upper, strict=True):
        if value < low or value > high:
            return True
    return False


def _floats(values) -> list[float]:
    """A short vector (array or sequence) as plain floats."""
    return values.tolist() if isinstance(values, np.ndarray) else [float(v) for v in values]


@dataclass(frozen=True)
class Attachment:
    """What the suction cup holds.

    Attributes:
        body: Backend handle of the held body.
        link: Link index on that body (``-1`` = base).
        constraint: Backend handle of the fixed constraint.
    """

    body: int
    link: int
    constraint: int
    offset: tuple[float, float, float] = (0.0, 0.0, 0.0)
    """The held link's origin in the hand frame when the weld was made."""


class PandaSuction:
    """A Panda arm with suction, position-controlled through IK.

    Args:
        backend: The physics backend to load into.
        base_position: Where the robot base stands (world).
        base_orientation: Base orientation quaternion (x, y, z, w).
        visual: ``lowpoly`` or ``stock`` (:data:`PANDA_URDFS`); None = :data:`PANDA_VISUAL`.
    """

    ee_link: int = _EE_LINK
    arm_joints: list[int] = list(range(7))
    ik_iterations: int = 20
    """IK solver iterations per control step; the loop closes over steps, so a few suffice."""

    def __init__(
        self,
        backend: Backend,
        base_position=ROBOT_BASE_POSITION,
        base_orientation=(0.0, 0.0, 0.0, 1.0),
        visual: str | None = None,
    ) -> None:
        self.backend = backend
        visual = PANDA_VISUAL if visual is None else visual
        if visual not in PANDA_URDFS:
            raise ValueError(f"visual={visual!r} is not a Panda visual; use one of {list(PANDA_URDFS)}")
        self.visual = visual
        self.body = backend.load_urdf(
            PANDA_URDFS[visual], base_position, base_orientation, fixed_base=True
        )
        infos = backend.joint_infos(self.body)
        self._movable = [j.index for j in infos if j.type != "fixed"]
        self._set_limits(
            np.array([infos[j].lower for j in self.arm_joints]),
            np.array([infos[j].upper for j in self.arm_joints]),
        )
        self._ik_lower = np.array([infos[j].lower for j in self._movable])
        self._ik_upper = np.array([infos[j].upper for j in self._movable])
        self._ik_rest = np.concatenate([HOME_QPOS, np.zeros(len(self._movable) - 7)])
        self._targets = np.zeros(len(self._movable))
        """Motor targets buffer: arm targets then closed fingers."""
        self._finger_targets = [0.0] * (len(self._movable) - 7)
        self._forces = _FORCES[: len(self._movable)].tolist()
        self._query: BodyQuery | None = None
        self._queries: tuple[BodyQuery, ...] = ()
        self._state: tuple[np.ndarray, tuple] | None = None
        self._damping: tuple[float, np.ndarray] = (float("nan"), np.zeros((6, 6)))
        self.attachment: Attachment | None = None
        self.suction_on = False
        self.command_log: list[list[Any]] | None = None
        """When a list, every public command (``command``, ``activate_suction``, ``attach``,
        ``release``, ``break_overloaded_suction``) appends ``[name, args]`` to it, so a run can
        be replayed exactly; :meth:`simjudge.envs.sim_env.SimEnv.record_commands` turns it on."""
        for link in (*range(-1, 12),):
            backend.set_dynamics(self.body, link, linear_damping=0.0, angular_damping=0.0)
        for link in _SUCTION_LINKS:
            backend.set_dynamics(self.body, link, lateral_friction=1.5)

    @property
    def lower(self) -> np.ndarray:
        """Arm joint lower limits (7, read-only; assign a new array to change them)."""
        return self._lower

    @lower.setter
    def lower(self, value: np.ndarray) -> None:
        self._set_limits(value, self._upper)

    @property
    def upper(self) -> np.ndarray:
        """Arm joint upper limits (7, read-only; assign a new array to change them)."""
        return self._upper

    @upper.setter
    def upper(self, value: np.ndarray) -> None:
        self._set_limits(self._lower, value)

    def _set_limits(self, lower: np.ndarray, upper: np.ndarray) -> None:
        """Keep the limits and, as plain floats, the bounds the IK step checks every step.

        Why plain floats: the two range checks of a control step on 7 floats cost a
        fifth of the step as numpy expressions; the arrays are read-only so the floats
        cannot go stale behind them.
        """
        self._lower = np.array(lower, dtype=float)
        self._upper = np.array(upper, dtype=float)
        self._lower.setflags(write=False)
        self._upper.setflags(write=False)
        self._limits = (self._lower.tolist(), self._upper.tolist())
        self._near_limits = (
            (self._lower + _POSTURE_MARGIN).tolist(), (self._upper - _POSTURE_MARGIN).tolist()
        )

    # state ----------------------------------------------------------------------
    def reset_home(self, qpos: np.ndarray | None = None) -> None:
        """Teleport the arm to ``qpos`` (home by default), fingers closed, suction off."""
        q = HOME_QPOS if qpos is None else np.asarray(qpos, dtype=float)
        self.release()
        self.backend.reset_joint_states(self.body, self.arm_joints, q)
        self.backend.reset_joint_states(self.body, _FINGER_JOINTS, np.zeros(2))
        self.hold(q)

    def state_query(self) -> BodyQuery:
        """The batched read (:meth:`Backend.read_bodies`) that covers this robot's own reads.

        Its reading holds the movable joint positions (arm, then fingers), the
        suction point position (3) and orientation (4). Why: the observation reads
        the robot through it, and the backend memoises that read, so the next
        :meth:`differential_ik` needs no further joint or pose query.
        """
        query = self._query
        if query is None or query.links[0] != self.ee_link:
            joints, links = tuple(self._movable), (self.ee_link,)
            query = self._query = BodyQuery(self.body, base=False, joints=joints, links=links)
            self._queries = (query,)
        return query

    def read_state(self) -> tuple[np.ndarray, tuple[float, ...], tuple[float, ...]]:
        """Movable joint positions, suction point position and orientation, in one read.

        Why: a control step needs all three; one memoised batched read
        (:meth:`state_query`) answers them without a per-quantity query each.

        Returns:
            The joint positions (arm, then fingers; a read-only array), and the
            position (3) and quaternion (4) as tuples of plain floats.
        """
        query = self._query
        if query is None or query.links[0] != self.ee_link:
            self.state_query()
        reading = self.backend.read_bodies(self._queries)  # memoised per state, by this tuple
        last = self._state
        if last is not None and last[0] is reading:
            return last[1]
        n = len(self._movable)
        values = reading[n:].tolist()
        state = reading[:n], tuple(values[:3]), tuple(values[3:])
        self._state = (reading, state)
        return state

    def arm_qpos(self) -> np.ndarray:
        """Arm joint positions (7)."""
        return self.backend.get_joint_states(self.body, self._movable)[0][:7]

    def ee_pose(self) -> tuple[np.ndarray, np.ndarray]:
        """End-effector (suction point) position and orientation."""
        pos, orn = self.backend.get_link_poses(self.body, [self.ee_link])
        return pos[0], orn[0]

    # control ----------------------------------------------------------------------
    def solve_ik(
        self, position: np.ndarray, orientation: np.ndarray | None, rest: np.ndarray | None = None
    ) -> np.ndarray:
        """Arm joint positions that put the suction point at the pose (clipped to limits)."""
        rest_all = self._ik_rest if rest is None else np.concatenate([rest, self._ik_rest[7:]])
        q = self.backend.inverse_kinematics(
            self.body,
            self.ee_link,
            position,
            orientation,
            self._ik_lower,
            self._ik_upper,
            rest_all,
            max_iterations=self.ik_iterations,
        )
        return np.clip(q[:7], self.lower, self.upper)

    def differential_ik(
        self, position: np.ndarray, orientation: np.ndarray, damping: float = 0.05
    ) -> np.ndarray:
        """Arm joint targets one damped-least-squares step towards the pose.

        Why one step: a control step moves the gripper by at most a few
        centimetres and degrees, where one linearisation is accurate, and the
        loop closes over control steps. It costs a Jacobian and a 6x6 solve
        (an order of magnitude less than an iterative IK solve), which keeps the
        env step cheap next to physics. Position error is capped at 5 cm and
        rotation at 0.3 rad per step so far targets are approached smoothly.
        """
        return self._differential_ik(self.read_state(), position, orientation, damping)

    def _differential_ik(
        self,
        state: tuple[np.ndarray, tuple[float, ...], tuple[float, ...]],
        position,
        orientation,
        damping: float = 0.05,
    ) -> np.ndarray:
        """:meth:`differential_ik` from a :meth:`read_state` the caller already made."""
        q_all, (px, py, pz), orn = state
        # the error on plain floats (numpy's per-call overhead dominates on
        # 3-vectors); the norm stays a numpy dot so results stay bit-identical
        tx, ty, tz = _floats(position)
        dx, dy, dz = tx - px, ty - py, tz - pz
        # cap at 5 cm; a plain-float square decides unless it is within rounding
        # of the cap, where the exact numpy norm (also the scale's) is needed
        square = dx * dx + dy * dy + dz * dz
        if not square < _CAP_SQUARE_BELOW:
            delta = np.array((dx, dy, dz))
            norm = math.sqrt(delta @ delta)
            if not norm <= 0.05:
                scale = 0.05 / norm
                dx, dy, dz = dx * scale, dy * scale, dz * scale
        rotation = _rotation_error(orn, _floats(orientation), 0.3)
        error = np.array((dx, dy, dz, *rotation))
        jac = self.backend.jacobian(self.body, self.ee_link, q_all)[:, :7]
        transposed = jac.T
        gram = jac @ transposed
        gram += self._damping_matrix(damping)  # + damping² on the diagonal
        solve = _SOLVE1 if damping > 0.0 else np.linalg.solve
        solution = solve(gram, error)
        q0 = q_all[:7]
        q = q0 + transposed @ solution
        if _outside(q0.tolist(), *self._near_limits):
            q += self._posture_pull(q0, jac, transposed, gram, solve)
        if _outside(q.tolist(), *self._limits):
            return self._clamped_step(q0, q, jac, error, damping)
        return q

    @staticmethod
    def _posture_pull(
        q0: np.ndarray,
        jac: np.ndarray,
        transposed: np.ndarray,
        gram: np.ndarray,
        solve: Callable[[np.ndarray, np.ndarray], np.ndarray],
    ) -> np.ndarray:
        """A self-motion towards :data:`HOME_QPOS` (through the Jacobian's null space).

        Why: with a joint held at its limit (:meth:`_clamped_step`) the others carry the
        motion, and over many steps the arm winds up against its limits (shoulder turned to
        its stop, upper arm rolled the other way) where the next target's motion needs a held
        joint and the hand cannot move towards it at all (HeatBreadInMicrowave's door stage).
        Near a limit the step therefore also pulls the joints towards the home posture, in
        the null space so the hand's motion is kept to first order (gradient projection with
        the step's damped pseudo-inverse). Away from every limit nothing is added: those steps
        are the plain step. ``solve`` is the step's own solve of ``gram``.
        """
        pull = _POSTURE_GAIN * (HOME_QPOS - q0)
        return pull - transposed @ solve(gram, jac @ pull)

    def _clamped_step(
        self, q0: np.ndarray, q: np.ndarray, jac: np.ndarray, error: np.ndarray, damping: float
    ) -> np.ndarray:
        """The damped-least-squares step with joints that would leave their range held at it.

        Why: clipping the free step afterwards drops the share of the motion those joints
        carried, so the hand stalls (or turns away) whenever one joint sits at its limit; solving
        again for the remaining error over the joints still free lets them take it over (joint
        clamping). Reached only when the free step leaves the range, so steps inside the range
        are unchanged.
        """
        lower, upper = self.lower, self.upper
        damp = self._damping_matrix(damping)
        held = (q < lower) | (q > upper)
        for _ in range(7):  # each pass holds at least one more joint
            q = np.minimum(np.maximum(q, lower), upper)
            free = ~held
            if not free.any():
                break
            rest = error - jac[:, held] @ (q[held] - q0[held])
            part = jac[:, free]
            gram = part @ part.T + damp
            solution = _SOLVE1(gram, rest) if damping > 0.0 else np.linalg.lstsq(gram, rest)[0]
            q[free] = q0[free] + part.T @ solution
            out = (q < lower) | (q > upper)
            if not out.any():
                return q
            held |= out
        return np.minimum(np.maximum(q, lower), upper)

    def _damping_matrix(self, damping: float) -> np.ndarray:
        """``damping² · I`` (6x6), kept for the last damping asked for."""
        cached = self._damping
        if cached[0] != damping:
            cached = self._damping = (damping, np.eye(6) * damping**2)
        return cached[1]

    def command(self, qpos: np.ndarray) -> None:
        """Drive the arm towards ``qpos``; keep the fingers closed."""
        if self.command_log is not None:
            self.command_log.append(["command", [np.asarray(qpos, dtype=float).tolist()]])
        if isinstance(qpos, np.ndarray) and qpos.shape == (7,):  # the common case, as floats
            targets = qpos.tolist() + self._finger_targets
        else:
            targets = self._targets
            targets[:7] = qpos
        self.backend.set_joint_position_targets(
            self.body, self._movable, targets, self._forces, position_gain=0.4
        )

    def hold(self, qpos: np.ndarray | None = None) -> None:
        """Keep the arm where it is (or at ``qpos``)."""
        self.command(self.arm_qpos() if qpos is None else qpos)

    # suction ---------------------------------------------------------------------------
    def suction_candidates(self, exclude: set[int]) -> list[tuple[float, int, int]]:
        """Links within suction reach of the finger pads: ``(distance, body, link)`` sorted."""
        found: dict[tuple[int, int], float] = {}
        for body in self.backend.body_handles():
            if body == self.body or body in exclude:
                continue
            for link in _SUCTION_LINKS:
                for c in self.backend.closest_points(self.body, body, _SUCTION_REACH, link_a=link):
                    key = (c.body_b, c.link_b)
                    found[key] = min(found.get(key, np.inf), c.distance)
        return sorted((d, b, lk) for (b, lk), d in found.items())

    def activate_suction(self, exclude: set[int]) -> Attachment | None:
        """Turn suction on; weld the nearest link in reach (if any) to the hand."""
        if self.command_log is not None:
            self.command_log.append(["activate_suction", [sorted(exclude)]])
        self.suction_on = True
        if self.attachment is not None:
            return self.attachment
        candidates = self.suction_candidates(exclude)
        if not candidates:
            return None
        _, body, link = candidates[0]
        self.attachment = self._weld(body, link)
        return self.attachment

    def attach(self, body: int, link: int) -> Attachment:
        """Weld a given link to the hand in the current relative pose (for state restore)."""
        if self.command_log is not None:
            self.command_log.append(["attach", [body, link]])
        self._drop()
        self.attachment = self._weld(body, link)
        self.suction_on = True
        return self.attachment

    def _weld(self, body: int, link: int) -> Attachment:
        hand_pos, hand_orn = self.backend.get_link_poses(self.body, [_HAND_LINK])
        link_pos, _ = self.backend.get_link_poses(body, [link])
        offset = quat_to_matrix(hand_orn[0]).T @ (link_pos[0] - hand_pos[0])
        cid = self.backend.create_fixed_constraint(
            self.body, _HAND_LINK, body, link, max_force=_SUCTION_FORCE
        )
        return Attachment(body, link, cid, (float(offset[0]), float(offset[1]), float(offset[2])))

    def attachment_stretch(self) -> float:
        """How far (m) the held link has drifted from where the weld holds it."""
        att = self.attachment
        if att is None:
            return 0.0
        hand_pos, hand_orn = self.backend.get_link_poses(self.body, [_HAND_LINK])
        link_pos, _ = self.backend.get_link_poses(att.body, [att.link])
        expected = hand_pos[0] + quat_to_matrix(hand_orn[0]) @ np.asarray(att.offset)
        return float(np.linalg.norm(link_pos[0] - expected))

    def break_overloaded_suction(self, max_stretch: float = _MAX_STRETCH) -> bool:
        """Drop the held link if the weld is overloaded (stretched past ``max_stretch``).

        Why: a fixed constraint with bounded force stretches instead of letting
        go, so an arm driven away from a part it cannot move would drag a
        phantom grasp across the workspace; a real suction cup detaches.
        Suction stays on (it may grip again on contact). Returns True if it broke.
        """
        if self.command_log is not None:
            self.command_log.append(["break_overloaded_suction", [max_stretch]])
        if self.attachment is None or self.attachment_stretch() <= max_stretch:
            return False
        constraint = self.attachment.constraint
        self.attachment = None
        self.backend.remove_constraint(constraint)
        return True

    def release(self) -> None:
        """Turn suction off and drop whatever is held."""
        if self.command_log is not None:
            self.command_log.append(["release", []])
        self._drop()

    def _drop(self) -> None:
        if self.attachment is not None:
            self.backend.remove_constraint(self.attachment.constraint)
        self.attachment = None
        self.suction_on = False

    @property
    def base_link(self) -> int:
        """Base link index (for collision queries)."""
        return BASE_LINK
