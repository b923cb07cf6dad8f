"""The scripted oracle's placements: pick a part up, carry it over its target, put it down.

:class:`PlaceMoves` holds the place-goal half of :class:`~simjudge.skills.scripted.ScriptedPolicy`
(approach the part's top, attach, lift, carry above the target, lower, release; ``inside``
goals go in through the enclosure's front). The policy mixes it in; the joint-goal half and
the phase bookkeeping stay there.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simjudge.envs.goals import PlaceGoal
from simjudge.envs.sim_env import SimEnv
from simjudge.envs.transforms import quat_align_z, quat_angle_between

_PRE_CONTACT = 0.05
"""Distance (m) out from a contact point at which the gripper lines up before moving in."""
_INSERT_CLEARANCE = 0.12
_INSERT_DEPTH = 0.13
"""``inside`` placements: the object's centre goes 12 cm in front of the enclosure, then
13 cm in behind its front face."""
_SWUNG_OUT = 0.05
_SWUNG_CLEARANCE = 0.04
"""A part of the enclosure reaching more than 5 cm out in front of its opening (an open door)
blocks 4 cm more of the opening's width on each side (2-6 cm put the bread in the microwave
on pybullet and mujoco, 0 and 8 cm do not on mujoco), see :meth:`PlaceMoves._free_y`."""
_STALL = 0.001
"""A lowering step that descends less than this (m) has stalled: something already carries
the held part (e.g. it rests on a bowl's rim or floor), so pushing on only presses it in."""
_SIDE_TILT = 1.0
"""tan of the downward tilt (45°) of the gripper when approaching side-facing surfaces:
the Panda reaches low front handles near its base far better tilted than horizontal."""


def approach_axis(normal: np.ndarray, side_tilt: float = _SIDE_TILT) -> np.ndarray:
    """Gripper axis for a surface with outward ``normal``.

    Straight in for top and bottom faces, tilted downwards for side faces (by ``side_tilt``,
    the tan of the angle: 45° by default).
    """
    inward = -np.asarray(normal, dtype=float)
    if abs(inward[2]) > 0.5:
        return inward / np.linalg.norm(inward)
    horizontal = inward.copy()
    horizontal[2] = 0.0
    axis = horizontal / np.linalg.norm(horizontal) + np.array([0.0, 0.0, -side_tilt])
    return axis / np.linalg.norm(axis)


@dataclass
class _Phase:
    name: str
    steps: int = 0


class PlaceMoves:
    """Place-goal actions of the scripted oracle (a mixin of ``ScriptedPolicy``)."""

    env: SimEnv
    phase: _Phase
    _retreat_to: np.ndarray | None
    _lower_z: float | None

    def _move(self, target: np.ndarray, target_orn: np.ndarray | None, suction: bool) -> np.ndarray:
        raise NotImplementedError  # pragma: no cover - ScriptedPolicy's

    def _at(self, target: np.ndarray, target_orn: np.ndarray | None, tol: float = 0.01) -> bool:
        raise NotImplementedError  # pragma: no cover - ScriptedPolicy's

    def switch_phase(self, name: str) -> None:
        """Continue from phase ``name`` (``ScriptedPolicy.switch_phase``)."""
        raise NotImplementedError  # pragma: no cover - ScriptedPolicy's

    def _placed_to_let_go(self, goal: PlaceGoal) -> bool:
        """Whether lowering ends with the part let go where it is placed.

        At once for a part ``in`` a container, else once lowering stalled (< :data:`_STALL`
        down since the last step). Why: where the target does not give way (a bowl that
        stays on the table), the drop height is never reached and pressing on until the phase
        times out overloads the suction, or squeezes a part in a container out over the rim
        where the suction is compliant (SAPIEN's drive); a part already placed is let go where
        it rests.
        """
        z = float(self.env.scene.robot.ee_pose()[0][2])
        last, self._lower_z = self._lower_z, z
        stalled = last is not None and not z < last - _STALL
        if goal.relation != "in" and not stalled:
            return False
        return bool(goal.evaluate(self.env.view).get("is_placed"))

    def _place_region(self, goal: PlaceGoal) -> tuple[np.ndarray, np.ndarray]:
        """The box to put the object in / on: the target, or the open part of its link.

        For a ``target_link`` (a drawer) the part of the link's box that sticks out of the
        target's base, along each horizontal axis, is where the object can drop in. A part
        put ``in`` an articulated target goes in its base (a box's open lid raises the whole
        box's top out of the arm's reach, PutCubeInBox).
        """
        view = self.env.view
        if goal.target_link is None:
            if goal.relation == "in" and len(self.env.scene.objects[goal.target].link_index) > 1:
                return view.aabb(goal.target, "base")  # the container, not its open lid
            return view.aabb(goal.target)
        t_lo, t_hi = (np.array(v, dtype=float) for v in view.aabb(goal.target, goal.target_link))
        b_lo, b_hi = view.aabb(goal.target, "base")
        for a in (0, 1):
            if t_lo[a] < b_lo[a] - 0.03:
                t_hi[a] = min(t_hi[a], b_lo[a])
            elif t_hi[a] > b_hi[a] + 0.03:
                t_lo[a] = max(t_lo[a], b_hi[a])
        return t_lo, t_hi

    def _free_y(self, goal: PlaceGoal, t_lo: np.ndarray, t_hi: np.ndarray) -> float:
        """Middle of the widest stretch of the front not blocked by a part at or before it.

        Parts swung out in front (an open door) or set in the front face (buttons) block
        their width of the opening; a part swung out more than :data:`_SWUNG_OUT` blocks
        :data:`_SWUNG_CLEARANCE` more on each side, because the arm reaching in beside it
        sweeps into it and shuts it on what it carries (a microwave door on MuJoCo).
        """
        view, obj = self.env.view, self.env.scene.objects[goal.target]
        blocked = []
        for link in obj.link_index:
            lo, hi = view.aabb(goal.target, link)
            if link != "base" and lo[0] < t_lo[0] + 0.02:
                margin = _SWUNG_CLEARANCE if lo[0] < t_lo[0] - _SWUNG_OUT else 0.0
                blocked.append((float(lo[1]) - margin, float(hi[1]) + margin))
        edges, start = [], float(t_lo[1])
        for lo_y, hi_y in sorted(blocked):
            edges.append((start, lo_y))
            start = max(start, hi_y)
        edges.append((start, float(t_hi[1])))
        low, high = max(edges, key=lambda e: e[1] - e[0])
        return (low + high) / 2.0

    def _insert_action(self, goal: PlaceGoal) -> np.ndarray:
        """Into an enclosure through its front (``inside``): tilted, in from the robot's side."""
        view = self.env.view
        lo, hi = (np.asarray(v, dtype=float) for v in view.aabb(goal.object))
        t_lo, t_hi = self._place_region(goal)
        centre = (lo + hi) / 2.0
        pos, orn = self.env.scene.robot.ee_pose()
        tilt = quat_align_z(orn, approach_axis(np.array([-1.0, 0.0, 0.0])))
        height = t_lo[2] + 0.03 + (hi[2] - lo[2]) / 2.0
        outside = np.array([t_lo[0] - _INSERT_CLEARANCE, self._free_y(goal, t_lo, t_hi), height])
        inside = np.array([t_lo[0] + _INSERT_DEPTH, outside[1], height])
        name = self.phase.name
        if name == "lift":  # up and tilted, where it was
            target = np.array([centre[0], centre[1], max(height, lo[2]) + 0.12])
            if self.phase.steps > 30 or (abs(centre[2] - target[2]) < 0.02
                                         and quat_angle_between(orn, tilt) < np.radians(8)):
                self.switch_phase("carry")
            return self._move(pos + target - centre, tilt, suction=True)
        if name == "carry":  # in front of the opening
            if float(np.linalg.norm(centre - outside)) < 0.02 or self.phase.steps > 80:
                self.switch_phase("lower")
            return self._move(pos + outside - centre, tilt, suction=True)
        if name == "lower":  # in through the opening
            if float(np.linalg.norm(centre - inside)) < 0.02 or self.phase.steps > 60:
                self.switch_phase("release")
            return self._move(pos + inside - centre, tilt, suction=True)
        return self._move(pos + np.array([-0.02, 0.0, 0.0]), None, suction=False)

    def _place_action(self, goal: PlaceGoal) -> np.ndarray:
        held = self.env.scene.robot.attachment is not None
        if goal.relation == "inside" and self.phase.name not in ("approach", "contact") and (
                held or self.phase.name == "release"):
            return self._insert_action(goal)
        return self._top_down_place(goal)

    def _over_then_down(self, pre: np.ndarray, orn: np.ndarray) -> np.ndarray | None:
        """After a stage's retreat: across at the retreat height first (None: go down now)."""
        if self._retreat_to is None:
            return None
        pos, _ = self.env.scene.robot.ee_pose()
        if float(np.linalg.norm((pre - pos)[:2])) > 0.03 and self.phase.steps < 60:
            return self._move(np.array([pre[0], pre[1], max(pos[2], pre[2])]), orn, suction=False)
        self._retreat_to = None
        self.phase.steps = 0
        return None

    def _top_down_place(self, goal: PlaceGoal) -> np.ndarray:
        view = self.env.view
        lo, hi = view.aabb(goal.object)
        t_lo, t_hi = self._place_region(goal)
        top = np.array([(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, hi[2]])
        down = quat_align_z(self.env.scene.robot.ee_pose()[1], np.array([0.0, 0.0, -1.0]))
        attached = self.env.scene.robot.attachment is not None
        carry_z = t_hi[2] + (hi[2] - lo[2]) + 0.08
        above = np.array([(t_lo[0] + t_hi[0]) / 2, (t_lo[1] + t_hi[1]) / 2, carry_z])
        name = self.phase.name
        if name == "approach":
            pre = top + np.array([0, 0, _PRE_CONTACT])
            across = self._over_then_down(pre, down)
            if across is not None:
                return across
            if self._at(pre, down, tol=0.015) or self.phase.steps > 60:
                self.switch_phase("contact")
            return self._move(pre, down, suction=False)
        if name == "contact":
            if attached:
                self.switch_phase("lift")
            elif self.phase.steps > 30:
                self.switch_phase("approach")
            return self._move(top - np.array([0, 0, 0.01]), down, suction=True)
        if not attached and name != "release":
            self.switch_phase("approach")
            return self._move(top + np.array([0, 0, _PRE_CONTACT]), down, suction=False)
        if name == "lift":
            pos, _ = self.env.scene.robot.ee_pose()
            lifted = np.array([pos[0], pos[1], carry_z])
            if pos[2] > carry_z - 0.02:
                self.switch_phase("carry")
            return self._move(lifted, down, suction=True)
        if name == "carry":
            pos, _ = self.env.scene.robot.ee_pose()
            near = float(np.linalg.norm((above - pos)[:2])) < 0.03  # blocked above it: go down
            if self._at(above, None, tol=0.02) or (near and self.phase.steps > 40):
                self.switch_phase("lower")
            return self._move(above, down, suction=True)
        if name == "lower":
            drop = above.copy()
            drop[2] = t_hi[2] + (hi[2] - lo[2]) + 0.01 if goal.relation == "on" else t_hi[2] + 0.02
            if self._at(drop, None, tol=0.015) or self.phase.steps > 40 or self._placed_to_let_go(goal):
                self.switch_phase("release")
            return self._move(drop, down, suction=True)
        return self._move(above + np.array([0, 0, 0.05]), down, suction=False)
