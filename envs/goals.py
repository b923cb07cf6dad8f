"""Declarative task goals: success facts, privileged progress and dense reward.

A goal is what a built-in task checks. Following ManiSkill, :meth:`Goal.evaluate`
returns facts only (``success``, ``fail`` and named predicates such as
``is_grasped``); :meth:`Goal.progress` turns facts into a staged progress
potential Φ ∈ [0, 1]; the env's dense reward reads those, never re-querying
contacts.

Staged progress (the privileged ground truth other judges are measured against):

- ``joint`` goals: Φ = w_reach·reach + w_grasp·grasped + w_goal·joint_progress,
  where ``reach = exp(-d / 0.05)`` for the distance d (m) from the suction point
  to the target link's bounding box centre, ``grasped`` is 1 while suction holds
  the target link (or any link of the object), and ``joint_progress`` is the
  joint's normalised advance from its initial value towards the success
  threshold, clipped to [0, 1]. Weights are (0.2, 0.1, 0.7) for goals that need
  a grasp and (0.3, 0, 0.7) for pressing/pushing goals. Φ = 1 on success.
- ``place`` goals: Φ = 0.2·reach(object) + 0.1·grasped(object) +
  0.5·closeness(object, target) + 0.2·placed, closeness = exp(-d / 0.1) for the
  horizontal distance d to the target's centre weighted with the height above
  it. Φ = 1 on success (placed and released).
"""

from __future__ import annotations

import math
from typing import Annotated, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from .state_api import StateView, get_link_state

__all__ = ["Goal", "JointGoal", "PlaceGoal", "GoalSpec", "MAX_DENSE_REWARD"]

MAX_DENSE_REWARD = 5.0
"""Dense reward is ``MAX_DENSE_REWARD * Φ``; normalised reward is Φ."""


class _GoalBase(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    def evaluate(self, view: StateView) -> dict[str, float | bool]:  # pragma: no cover
        """Success facts and named predicates for the current state."""
        raise NotImplementedError

    def progress(self, facts: dict[str, float | bool]) -> float:  # pragma: no cover
        """Staged progress potential Φ ∈ [0, 1] from :meth:`evaluate`'s facts."""
        raise NotImplementedError


class JointGoal(_GoalBase):
    """Move one joint of an object past a fraction of its range.

    Attributes:
        kind: ``joint``.
        object: Scene object name.
        joint: Joint name.
        link: Link to reach / grasp (a handle, button, knob ...).
        direction: ``open`` (towards the upper limit) or ``close`` (towards lower).
        threshold: Fraction of the joint range to pass: ``open`` succeeds when
            fraction ≥ threshold, ``close`` when fraction ≤ threshold.
        requires_grasp: Whether progress stages include holding ``link``.
    """

    kind: Literal["joint"] = "joint"
    object: str
    joint: str
    link: str
    direction: Literal["open", "close"] = "open"
    threshold: float = Field(default=0.7, ge=0.0, le=1.0)
    requires_grasp: bool = True

    def evaluate(self, view: StateView) -> dict[str, float | bool]:
        """Facts: joint fraction, initial fraction, distance to the link, grasp."""
        lo, hi = view.joint_limit(self.object, self.joint)
        span = max(hi - lo, 1e-9)
        fraction = (view.joint_value(self.object, self.joint) - lo) / span
        initial = (view.initial_joint_value(self.object, self.joint) - lo) / span
        eef, _ = view.eef_pose()
        distance = float(np.linalg.norm(eef - get_link_state(view, self.object, self.link)))
        held = view.grasped()
        is_grasped = held is not None and held[0] == self.object
        if self.direction == "open":
            success = fraction >= self.threshold
            advance = (fraction - initial) / max(self.threshold - initial, 1e-6)
        else:
            success = fraction <= self.threshold
            advance = (initial - fraction) / max(initial - self.threshold, 1e-6)
        return {
            "success": bool(success),
            "fail": False,
            "is_grasped": bool(is_grasped),
            "joint_fraction": float(fraction),
            "joint_progress": float(np.clip(advance, 0.0, 1.0)),
            "distance_to_link": distance,
        }

    def progress(self, facts: dict[str, float | bool]) -> float:
        """Staged Φ: reach, grasp, joint progress (see module docstring)."""
        if facts["success"]:
            return 1.0
        reach = math.exp(-float(facts["distance_to_link"]) / 0.05)
        if self.requires_grasp:
            grasped = 1.0 if facts["is_grasped"] else 0.0
            reach = 1.0 if grasped else reach
            phi = 0.2 * reach + 0.1 * grasped + 0.7 * float(facts["joint_progress"])
        else:
            phi = 0.3 * reach + 0.7 * float(facts["joint_progress"])
        return float(np.clip(phi, 0.0, 0.999))


class PlaceGoal(_GoalBase):
    """Put an object on or into another.

    Attributes:
        kind: ``place``.
        object: The object to move.
        target: The object to put it on / in.
        relation: ``on`` or ``in``.
    """

    kind: Literal["place"] = "place"
    object: str
    target: str
    relation: Literal["on", "in"] = "in"

    def evaluate(self, view: StateView) -> dict[str, float | bool]:
        """Facts: grasp, horizontal distance, height above target, placed."""
        obj_lo, obj_hi = view.aabb(self.object)
        tgt_lo, tgt_hi = view.aabb(self.target)
        centre = (obj_lo + obj_hi) / 2.0
        tgt_centre = (tgt_lo + tgt_hi) / 2.0
        eef, _ = view.eef_pose()
        held = view.grasped()
        is_grasped = held is not None and held[0] == self.object
        inside_xy = bool(np.all(centre[:2] > tgt_lo[:2]) and np.all(centre[:2] < tgt_hi[:2]))
        if self.relation == "in":
            placed = inside_xy and tgt_lo[2] - 0.01 <= obj_lo[2] <= tgt_hi[2]
        else:
            placed = inside_xy and abs(obj_lo[2] - tgt_hi[2]) < 0.03
        xy_distance = float(np.linalg.norm(centre[:2] - tgt_centre[:2]))
        return {
            "success": bool(placed and not is_grasped),
            "fail": False,
            "is_grasped": bool(is_grasped),
            "is_placed": bool(placed),
            "distance_to_object": float(np.linalg.norm(eef - centre)),
            "distance_to_target": xy_distance,
        }

    def progress(self, facts: dict[str, float | bool]) -> float:
        """Staged Φ: reach, grasp, carry, place (see module docstring)."""
        if facts["success"]:
            return 1.0
        grasped = 1.0 if facts["is_grasped"] else 0.0
        placed = 1.0 if facts["is_placed"] else 0.0
        reach = 1.0 if grasped or placed else math.exp(-float(facts["distance_to_object"]) / 0.05)
        carry = math.exp(-float(facts["distance_to_target"]) / 0.1) if (grasped or placed) else 0.0
        phi = 0.2 * reach + 0.1 * max(grasped, placed) + 0.5 * carry + 0.2 * placed
        return float(np.clip(phi, 0.0, 0.999))


GoalSpec = Annotated[JointGoal | PlaceGoal, Field(discriminator="kind")]
"""Any goal, discriminated by ``kind``."""

Goal = JointGoal | PlaceGoal
