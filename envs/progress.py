"""Staged progress Φ: the one definition behind ``info["progress"]`` and the privileged judge.

The env's ``info["progress"]`` and :class:`~simjudge.judges.privileged.PrivilegedProgressJudge`
both compute it, through :meth:`simjudge.envs.goals.JointGoal.progress` and its siblings.

Why staged from the first step: a progress that is ~0 until the suction cup holds the part
scores a policy that reaches the handle and fails to grasp like a random one, and gives an
RL agent trained from scratch nothing to climb. So every leaf goal's Φ adds up stages that
each start paying as soon as the robot works towards them:

1. **approach** ``a = clip(1 − d / d_ref, 0, 1)``: ``d`` is the distance (m) from the
   suction point to the centre of the part that must be moved (the goal's link, or the
   object to place); ``d_ref`` is the distance from :data:`HOME_SUCTION_POINT` (where the
   suction point is with the arm at its home posture, :data:`~simjudge.envs.robot.HOME_QPOS`)
   to that same part, at least :data:`MIN_REFERENCE`. The reference follows the part, so
   the scale is per task and per episode (a randomized placement moves it) while Φ stays a
   function of the current state alone: a restored snapshot, the env and a judge that
   joined late all read the same Φ. ``a`` ≈ 0 at reset (the arm starts near home),
   ≈ 0.5 halfway to the part, 1 while the part is held.
2. **grasp** ``g``: 1 while suction holds the part: for joint goals a link the goal's joint
   moves (fact ``holds_part``; holding another drawer of the same cabinet does not count),
   for placements the object (goals that need a grasp).
3. the goal's own stage: **joint progress** ``j`` (the joint's normalised advance from its
   initial value to the success threshold, clipped to [0, 1]), or for placements **carry**
   ``c = clip(1 − h / h_ref, 0, 1)`` while held or placed (``h``: horizontal distance from the
   object's centre to the target's centre; ``h_ref``: the same distance from where the object
   started, at least :data:`MIN_CARRY_REFERENCE`) and **placed** ``p``.

Weights (:data:`JOINT_WEIGHTS`, :data:`PRESS_WEIGHTS`, :data:`PLACE_WEIGHTS`):

- joint goal with a grasp: Φ = 0.3·a + 0.1·g + 0.6·j (0.4 at attachment);
- joint goal without a grasp (press, push): Φ = 0.4·a + 0.6·j;
- placement: Φ = 0.3·a + 0.1·g + 0.4·c + 0.2·p (g counts while placed too).

Φ = 1 exactly when the goal's ``success`` fact holds and is clipped to at most 0.999
otherwise. Composed goals stage their sub-goals (:class:`~simjudge.envs.goals.SequenceGoal`:
(stages done + Φ of the current stage) / n; :class:`~simjudge.envs.goals.AllOfGoal`: the
mean), so each sub-goal's approach counts too.

Example:
    >>> round(approach(HOME_SUCTION_POINT, (0.3, 0.0, 0.2)), 3)
    0.0
    >>> halfway = [(h + p) / 2 for h, p in zip(HOME_SUCTION_POINT, (0.3, 0.0, 0.2))]
    >>> round(approach(halfway, (0.3, 0.0, 0.2)), 3)
    0.5
    >>> joint_phi(approach=0.5, grasped=False, joint_progress=0.0, requires_grasp=True)
    0.15
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from .articulation import ArticulationTree

__all__ = [
    "HOME_SUCTION_POINT",
    "JOINT_WEIGHTS",
    "MIN_CARRY_REFERENCE",
    "MIN_REFERENCE",
    "PLACE_WEIGHTS",
    "PRESS_WEIGHTS",
    "approach",
    "carry",
    "joint_phi",
    "moving_part",
    "place_phi",
]

HOME_SUCTION_POINT: tuple[float, float, float] = (-0.18918, 0.0, 0.47487)
"""World position (m) of the suction point with the arm at ``HOME_QPOS`` and its base at
``ROBOT_BASE_POSITION`` (the same on every backend; ``tests/envs/test_progress.py`` checks
it against the robot)."""
MIN_REFERENCE = 0.1
"""Smallest approach reference distance (m), for a part that sits near the home point."""
MIN_CARRY_REFERENCE = 0.05
"""Smallest carry reference distance (m), for an object that starts near its target."""
JOINT_WEIGHTS: tuple[float, float, float] = (0.3, 0.1, 0.6)
"""(approach, grasp, joint progress) of a joint goal that needs a grasp."""
PRESS_WEIGHTS: tuple[float, float] = (0.4, 0.6)
"""(approach, joint progress) of a joint goal without a grasp (press, push)."""
PLACE_WEIGHTS: tuple[float, float, float, float] = (0.3, 0.1, 0.4, 0.2)
"""(approach, grasp, carry, placed) of a placement."""
_BELOW_ONE = 0.999
"""Φ's ceiling while the goal does not hold."""


def _clip01(value: float) -> float:
    return 0.0 if value < 0.0 else 1.0 if value > 1.0 else value


def approach(eef: Sequence[float], part: Sequence[float]) -> float:
    """The approach stage ``clip(1 − d / d_ref, 0, 1)`` (see the module docstring).

    Args:
        eef: The suction point (x, y, z).
        part: The centre of the part to move (x, y, z).
    """
    ex, ey, ez = eef
    px, py, pz = part
    hx, hy, hz = HOME_SUCTION_POINT
    d = math.sqrt((ex - px) ** 2 + (ey - py) ** 2 + (ez - pz) ** 2)
    reference = math.sqrt((hx - px) ** 2 + (hy - py) ** 2 + (hz - pz) ** 2)
    return _clip01(1.0 - d / max(reference, MIN_REFERENCE))


def moving_part(tree: ArticulationTree | None, joint: str, link: str) -> frozenset[str]:
    """The links ``joint`` moves (its child and every link below it) and ``link`` itself.

    Holding one of them is holding the part for the grasp stage (fact ``holds_part``);
    holding another drawer of the same cabinet is not.
    """
    part = {link}
    if tree is None:
        return frozenset(part)
    below: dict[str, list[str]] = {}
    for spec in tree.joints:
        below.setdefault(spec.parent, []).append(spec.child)
    stack = [tree.joint(joint).child]
    while stack:
        current = stack.pop()
        part.add(current)
        stack.extend(child for child in below.get(current, ()) if child not in part)
    return frozenset(part)


def carry(distance: float, reference: float) -> float:
    """The carry stage ``clip(1 − h / h_ref, 0, 1)``, ``h_ref`` at least :data:`MIN_CARRY_REFERENCE`."""
    return _clip01(1.0 - float(distance) / max(float(reference), MIN_CARRY_REFERENCE))


def joint_phi(
    *, approach: float, grasped: bool, joint_progress: float, requires_grasp: bool
) -> float:
    """Φ of a joint goal that does not hold yet (< 1; see the module docstring).

    While the part is held the approach stage counts in full.
    """
    if requires_grasp:
        w_approach, w_grasp, w_goal = JOINT_WEIGHTS
        held = 1.0 if grasped else 0.0
        reach = 1.0 if grasped else float(approach)
        phi = w_approach * reach + w_grasp * held + w_goal * float(joint_progress)
    else:
        w_approach, w_goal = PRESS_WEIGHTS
        phi = w_approach * float(approach) + w_goal * float(joint_progress)
    return min(_clip01(phi), _BELOW_ONE)


def place_phi(*, approach: float, grasped: bool, placed: bool, carry: float) -> float:
    """Φ of a placement that does not hold yet (< 1; see the module docstring).

    The approach and grasp stages count in full while the object is held or placed, and
    ``carry`` counts only then.
    """
    w_approach, w_grasp, w_carry, w_placed = PLACE_WEIGHTS
    holding = grasped or placed
    reach = 1.0 if holding else float(approach)
    moved = float(carry) if holding else 0.0
    phi = (w_approach * reach + w_grasp * (1.0 if holding else 0.0) + w_carry * moved
           + w_placed * (1.0 if placed else 0.0))
    return min(_clip01(phi), _BELOW_ONE)
