"""Arm collision queries for motion planning, through the backend protocol.

Why a module of its own: the planner asks "is this arm configuration free?"
thousands of times per query, so the checker is built for that question. It
caches what does not change while a plan is computed (the robot's self-collision
link pairs, every other body's link boxes) and answers each query with a cheap
box-overlap test first, asking the backend for exact closest points only for the
link pairs whose boxes (grown by the margin) overlap. It talks to physics only
through :class:`~simjudge.envs.backends.Backend` calls and never keeps the arm
where it put it: :func:`preserved_state` wraps every use.

What is checked, as in RoboGen: arm self-collision between non-adjacent links;
moving arm links against every other body (objects, table, floor); and a held
object (moved with the hand) against everything but the hand.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from simjudge.envs.backends import BASE_LINK, Backend
from simjudge.envs.scene_builder import BuiltScene
from simjudge.envs.transforms import quat_conjugate, quat_multiply, quat_rotate

__all__ = ["Collision", "CollisionChecker", "GRIPPER_LINKS", "preserved_state"]

GRIPPER_LINKS: tuple[int, ...] = (8, 9, 10, 11)
"""Panda hand, fingers and suction point: the links that touch what suction holds."""

_FINGER_JOINTS = [9, 10]
_NEVER_CLOSE = 0.03
"""Link pairs never closer than this (m) over the samples are not checked."""
_PAIR_SAMPLES = 1000
_PAIR_CACHE: dict[tuple, list[tuple[int, int]]] = {}


@contextmanager
def preserved_state(backend: Backend) -> Iterator[None]:
    """Snapshot the backend's world and restore it afterwards, whatever happens inside.

    Why: planning teleports the arm (and a held object) thousands of times; the
    simulation must end exactly where it started (the next step then finds the contacts
    afresh, as after any restore).
    """
    snapshot = backend.save_state()
    try:
        yield
    finally:
        backend.restore_state(snapshot)
        backend.remove_state(snapshot)


@dataclass(frozen=True)
class Collision:
    """The first pair found closer than the margin.

    Attributes:
        kind: ``self`` (arm vs arm), ``world`` (arm vs another body) or ``held``
            (the held object vs another body or the arm).
        body_a: Body of the moving part (the robot or the held body).
        link_a: Its link.
        body_b: The other body.
        link_b: The other link.
        distance: Signed distance (negative = penetration).
    """

    kind: str
    body_a: int
    link_a: int
    body_b: int
    link_b: int
    distance: float

    def describe(self, names: dict[tuple[int, int | None], str] | None = None) -> str:
        """Human-readable pair; ``names`` maps ``(body, link)`` (or ``(body, None)``) to names."""
        names = names or {}

        def name(body: int, link: int) -> str:
            if (body, link) in names:
                return names[(body, link)]
            return f"{names.get((body, None), f'body {body}')} link {link}"

        return (
            f"{self.kind} collision: {name(self.body_a, self.link_a)} vs "
            f"{name(self.body_b, self.link_b)} (distance {self.distance:+.4f} m)"
        )


def _overlap(lo_a: np.ndarray, hi_a: np.ndarray, lo_b: np.ndarray, hi_b: np.ndarray) -> np.ndarray:
    """Boolean matrix ``(len(a), len(b))`` of overlapping boxes."""
    return np.all(
        (lo_a[:, None, :] <= hi_b[None, :, :]) & (hi_a[:, None, :] >= lo_b[None, :, :]), axis=2
    )


class CollisionChecker:
    """Validity of arm configurations in a built scene.

    Objects other than the robot and a held free object are assumed not to move
    while the checker is used (their boxes are read once, at construction).

    Args:
        scene: The built scene (robot, objects, table, floor).
        margin: Arm-to-world clearance in metres; closer counts as a collision.
        self_margin: Clearance between non-adjacent arm links.
        held_margin: Clearance of a held object to the world.
        ignore_bodies: Bodies left out of every check.
    """

    def __init__(
        self,
        scene: BuiltScene,
        margin: float = 0.01,
        self_margin: float = 0.002,
        held_margin: float = 0.005,
        ignore_bodies: tuple[int, ...] = (),
    ) -> None:
        self.scene = scene
        self.robot = scene.robot
        self.backend: Backend = scene.robot.backend
        self.margin = float(margin)
        self.self_margin = float(self_margin)
        self.held_margin = float(held_margin)
        self.checks = 0
        self._finger_q = np.zeros(len(_FINGER_JOINTS))
        self._lower = self.robot.lower - 1e-9
        self._upper = self.robot.upper + 1e-9
        body = self.robot.body
        infos = self.backend.joint_infos(body)
        shaped = [
            link
            for link in range(BASE_LINK, len(infos))
            if self.backend.collision_shapes(body, link)
        ]
        self._self_pairs = self._reachable_pairs(_self_collision_pairs(infos, shaped))
        self._pair_index = np.array(
            [(shaped.index(a), shaped.index(b)) for a, b in self._self_pairs], dtype=int
        ).reshape(-1, 2)
        self._shaped = shaped
        self._world_rows = [i for i, link in enumerate(shaped) if link != BASE_LINK]
        self._setup_held(ignore_bodies)
        self._setup_world(ignore_bodies)

    # set-up --------------------------------------------------------------------------
    def _reachable_pairs(self, pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """Drop link pairs that never come near each other (sampled once per robot model).

        Why: on the Panda about half the non-adjacent pairs (e.g. the base and
        ``link2``) cannot come within centimetres of each other, yet their loose
        boxes often overlap; checking them is a third of a query's cost. As in
        MoveIt's setup assistant, pairs that stay farther than
        :data:`_NEVER_CLOSE` apart over :data:`_PAIR_SAMPLES` random
        configurations are treated as never colliding.
        """
        key = (type(self.backend).__name__, self.backend.base_name(self.robot.body), tuple(pairs))
        hit = _PAIR_CACHE.get(key)
        if hit is not None:
            return hit
        robot, body = self.robot, self.robot.body
        rng = np.random.default_rng(0)
        close: set[tuple[int, int]] = set()
        with preserved_state(self.backend):
            self.backend.reset_joint_states(body, _FINGER_JOINTS, self._finger_q)
            for _ in range(_PAIR_SAMPLES):
                q = rng.uniform(robot.lower, robot.upper)
                self.backend.reset_joint_states(body, robot.arm_joints, q)
                for pair in pairs:
                    if pair not in close and self.backend.closest_points(
                        body, body, _NEVER_CLOSE, link_a=pair[0], link_b=pair[1]
                    ):
                        close.add(pair)
        kept = [pair for pair in pairs if pair in close]
        _PAIR_CACHE[key] = kept
        return kept

    def _setup_held(self, ignore: tuple[int, ...]) -> None:
        """Remember the held object's pose relative to the hand, if it moves with the arm."""
        att = self.robot.attachment
        self.held_body: int | None = None
        self.held_fixed_body: int | None = None
        if att is None or att.body in ignore:
            return
        fixed = {o.body: o.fixed for o in self.scene.objects.values()}.get(att.body, True)
        if fixed:
            # A part of a fixed object cannot follow the hand: keep it as an obstacle for
            # the arm, but not for the gripper that touches it.
            self.held_fixed_body = att.body
            return
        self.held_body = att.body
        self._held_links = list(range(BASE_LINK, len(self.backend.joint_infos(att.body))))
        hand_pos, hand_orn = self._hand_pose()
        base_pos, base_orn = self.backend.get_base_pose(att.body)
        inv = quat_conjugate(hand_orn)
        self._held_rel = (quat_rotate(inv, base_pos - hand_pos), quat_multiply(inv, base_orn))

    def _setup_world(self, ignore: tuple[int, ...]) -> None:
        """Read every other body's link boxes once: they stay put while planning."""
        keys: list[tuple[int, int]] = []
        lows: list[np.ndarray] = []
        highs: list[np.ndarray] = []
        for body in self.backend.body_handles():
            if body in (self.robot.body, self.held_body) or body in ignore:
                continue
            for link in range(BASE_LINK, len(self.backend.joint_infos(body))):
                lo, hi = self.backend.get_aabb(body, link)
                keys.append((body, link))
                lows.append(np.asarray(lo, dtype=float))
                highs.append(np.asarray(hi, dtype=float))
        self._world_keys = keys
        self._world_lo = np.asarray(lows, dtype=float).reshape(-1, 3)
        self._world_hi = np.asarray(highs, dtype=float).reshape(-1, 3)

    # placing -------------------------------------------------------------------------
    def _hand_pose(self) -> tuple[np.ndarray, np.ndarray]:
        pos, orn = self.backend.get_link_poses(self.robot.body, [GRIPPER_LINKS[0]])
        return np.asarray(pos[0]), np.asarray(orn[0])

    def place(self, qpos: np.ndarray) -> None:
        """Teleport the arm and a held free object to ``qpos``.

        Callers wrap this in :func:`preserved_state`; the checker never restores.
        No ``update_collisions`` here: ``closest_points`` and ``get_aabb`` are
        computed from the current poses (the protocol's "computed now"), and on
        PyBullet a collision pass in a colliding configuration leaves contact
        manifolds that ``restore_state`` does not remove, which nudges later
        physics steps (by about 1e-6); without it planning leaves no trace at all.
        """
        robot = self.robot
        self.backend.reset_joint_states(robot.body, robot.arm_joints, np.asarray(qpos, float))
        if self.held_body is not None:
            hand_pos, hand_orn = self._hand_pose()
            rel_pos, rel_orn = self._held_rel
            self.backend.set_base_pose(
                self.held_body,
                hand_pos + quat_rotate(hand_orn, rel_pos),
                quat_multiply(hand_orn, rel_orn),
            )

    # queries -------------------------------------------------------------------------
    def is_valid(self, qpos: np.ndarray) -> bool:
        """Whether ``qpos`` is within joint limits and collision-free (arm left there)."""
        return self.first_collision(qpos) is None

    def within_limits(self, qpos: np.ndarray) -> bool:
        """Whether every arm joint is inside its limits."""
        q = np.asarray(qpos, dtype=float)
        return not ((q < self._lower).any() or (q > self._upper).any())

    def first_collision(self, qpos: np.ndarray) -> Collision | None:
        """The first pair closer than its margin at ``qpos``, or None (arm left there).

        Out-of-limit configurations are reported as a self collision of distance
        ``-inf`` on the offending joint.
        """
        self.checks += 1
        q = np.asarray(qpos, dtype=float)
        if not self.within_limits(q):
            bad = int(np.argmax((q < self.robot.lower) | (q > self.robot.upper)))
            return Collision("limits", self.robot.body, bad, self.robot.body, bad, -np.inf)
        self.place(q)
        lo, hi = self._link_boxes(self.robot.body, self._shaped)
        hit = self._world_hits(lo, hi)
        if hit is None:
            hit = self._self_hits(lo, hi)
        if hit is None and self.held_body is not None:
            hit = self._held_hits(lo, hi)
        return hit

    def _link_boxes(self, body: int, links: list[int]) -> tuple[np.ndarray, np.ndarray]:
        boxes = [self.backend.get_aabb(body, link) for link in links]
        return (
            np.array([b[0] for b in boxes], dtype=float),
            np.array([b[1] for b in boxes], dtype=float),
        )

    def _closest(
        self, body_a, link_a, body_b, link_b, margin: float, kind: str
    ) -> Collision | None:
        points = self.backend.closest_points(body_a, body_b, margin, link_a=link_a, link_b=link_b)
        if not points:
            return None
        d = min(c.distance for c in points)
        return Collision(kind, body_a, link_a, body_b, link_b, float(d)) if d < margin else None

    def _world_hits(self, lo: np.ndarray, hi: np.ndarray) -> Collision | None:
        if not len(self._world_keys):
            return None
        # the base link never moves: it is left out (it stands on the table)
        rows = self._world_rows
        m = self.margin
        hits = _overlap(lo[rows] - m, hi[rows] + m, self._world_lo, self._world_hi)
        robot = self.robot.body
        for r, w in zip(*np.nonzero(hits), strict=True):
            link = self._shaped[rows[r]]
            body_b, link_b = self._world_keys[w]
            if body_b == self.held_fixed_body and link in GRIPPER_LINKS:
                continue
            found = self._closest(robot, link, body_b, link_b, m, "world")
            if found is not None:
                return found
        return None

    def _self_hits(self, lo: np.ndarray, hi: np.ndarray) -> Collision | None:
        if not len(self._pair_index):
            return None
        m = self.self_margin
        a, b = self._pair_index[:, 0], self._pair_index[:, 1]
        near = np.all((lo[a] - m <= hi[b]) & (hi[a] + m >= lo[b]), axis=1)
        robot = self.robot.body
        for k in np.nonzero(near)[0]:
            link_a, link_b = self._self_pairs[k]
            found = self._closest(robot, link_a, robot, link_b, m, "self")
            if found is not None:
                return found
        return None

    def _held_hits(self, arm_lo: np.ndarray, arm_hi: np.ndarray) -> Collision | None:
        body = self.held_body
        assert body is not None, "called only while the robot holds a body"
        lo, hi = self._link_boxes(body, self._held_links)
        m = self.held_margin
        if len(self._world_keys):
            hits = _overlap(lo - m, hi + m, self._world_lo, self._world_hi)
            for r, w in zip(*np.nonzero(hits), strict=True):
                body_b, link_b = self._world_keys[w]
                found = self._closest(body, self._held_links[r], body_b, link_b, m, "held")
                if found is not None:
                    return found
        arm_rows = [i for i, link in enumerate(self._shaped) if link not in GRIPPER_LINKS]
        hits = _overlap(lo - m, hi + m, arm_lo[arm_rows], arm_hi[arm_rows])
        for r, a in zip(*np.nonzero(hits), strict=True):
            link = self._shaped[arm_rows[a]]
            found = self._closest(body, self._held_links[r], self.robot.body, link, m, "held")
            if found is not None:
                return found
        return None


def _self_collision_pairs(infos, shaped: list[int]) -> list[tuple[int, int]]:
    """Link pairs that may collide: not adjacent, not siblings, both with shapes.

    Adjacency skips links without collision shapes (the Panda's flange ``link8``
    joins ``link7`` and the hand), so ``link7``–hand counts as adjacent. Siblings
    (the two fingers) touch by design.
    """
    parent = {info.index: info.parent_index for info in infos}
    shaped_set = set(shaped)

    def shaped_parent(link: int) -> int | None:
        p = parent.get(link)
        while p is not None and p != BASE_LINK and p not in shaped_set:
            p = parent.get(p)
        return p

    eff = {link: shaped_parent(link) for link in shaped}
    pairs = []
    for i, a in enumerate(shaped):
        for b in shaped[i + 1 :]:
            if eff.get(a) == b or eff.get(b) == a or (eff.get(a) == eff.get(b) and a != BASE_LINK):
                continue
            pairs.append((a, b))
    return pairs
