"""A privileged scripted policy for built-in task goals.

Why: the main demo, judge benchmarks and tests need rollouts that really solve
tasks (and, with noise or early stops, that fail in realistic ways) without
training anything. The policy reads privileged state — link poses, joint axes,
each asset's recorded interaction point — and emits ordinary env actions, so
everything downstream (judges, recording) sees a normal rollout.

Phases for a :class:`~simjudge.envs.goals.JointGoal`: *approach* a pre-contact
pose 5 cm out along the interaction surface's normal with the gripper axis along
the inward normal; *contact* by moving in with suction on until it attaches (or,
for press goals, push in); *actuate* by moving along the joint's instantaneous
direction of motion (prismatic axis, or the tangent of the hinge arc), or by
turning the wrist for dials. For a :class:`~simjudge.envs.goals.PlaceGoal`:
approach the object's top, attach, lift, carry above the target, lower, release.

Ways round what stops a straight approach: a top face with a part hanging over it (a lamp's
head over the button on its foot) is approached tilted in from the robot's side; a lid hinged
at its far side is grasped tilted against its turn; a face that would point the gripper back
at the robot (an open laptop screen, grasped from behind) is grasped tilted with the turn when
the turn brings the gripper down; a hinge that stalls with the wrist at its joint limit is let
go and grasped again, tilted against the motion; a press that stalls short of its button backs
off and presses again, flatter.

Composed goals (:class:`~simjudge.envs.goals.SequenceGoal`, :class:`~simjudge.envs.goals.AllOfGoal`)
run stage after stage: the current stage is the sequence's ``stage`` fact (the first
sub-goal not yet done for ``all``); when it changes the oracle lets go and *retreats*
(backs away from the part it worked on) before approaching the next stage's part.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from simjudge.envs.goals import AllOfGoal, JointGoal, PlaceGoal, SequenceGoal
from simjudge.envs.scene_builder import SceneObject
from simjudge.envs.sim_env import SimEnv
from simjudge.envs.transforms import (
    quat_align_z,
    quat_angle_between,
    quat_conjugate,
    quat_from_axis_angle,
    quat_multiply,
    quat_rotate,
    quat_to_matrix,
)
from simjudge.envs.world import ROBOT_BASE_POSITION
from simjudge.skills.scripted_place import (
    _PRE_CONTACT,
    _SIDE_TILT,
    PlaceMoves,
    _Phase,
    approach_axis,
)

__all__ = ["PHASES", "ScriptedPolicy", "approach_axis", "interaction_frame"]

PHASES: tuple[str, ...] = (
    "approach", "contact", "actuate", "lift", "carry", "lower", "release", "retreat",
)
"""The oracle's phases: joint goals go approach → contact → actuate; placements go
approach → contact → lift → carry → lower → release; composed goals retreat between stages."""

_RETREAT_STEPS = 40
_RETREAT_DISTANCE = 0.1
_RETREAT_CLEARANCE = 0.05
_RETREAT_CEILING = 0.75
"""Retreat (at most 40 steps): 10 cm towards the robot's base and up, at least 5 cm over the
scene's tallest object (at most 75 cm high), so the next approach does not sweep through
what was opened (an arm crossing an open drawer pushes it shut)."""
_FOLLOW_THROUGH = 8
"""Steps a joint stage keeps actuating past its threshold before the oracle lets go (a
released door springs back a little)."""

_STALL_STEPS = 6
_STALL_ADVANCE = 0.005
"""A hinge actuation that turns its joint by less than this share of the range over
:data:`_STALL_STEPS` steps has stalled."""
_AT_LIMIT = 0.15
_WRIST = slice(4, 7)
"""A wrist joint (the arm's last three) this close (rad) to a limit is held there."""
_MAX_REGRASPS = 3
_MAX_REGRASP_TILT = 0.6
"""Regrasps per stage after a stall with the wrist held (at most 3), each tilting the
gripper against the motion by the turn still to go, at most 0.6 rad."""
_REACH_TILT = 1.5
_MAX_REACH_TILT = 1.2
_TILT_CLEARANCE = 0.1
"""A lid hinged at its far side is grasped tilted against its motion by 1.5 times the turn
to go (at most 1.2 rad) when it is at least 10 cm above the table (a gripper tilted that far
sweeps about that far below the point it holds), see :meth:`ScriptedPolicy._reach_tilt`."""
_POINTS_BACK = 0.5
_BACK_TILT = 0.6
"""A gripper whose direction's horizontal part towards the robot's base exceeds 0.5 (of
its length) points back at the robot; such a grasp on a part whose turn brings the gripper
down is tilted with the turn by 0.6 times the turn to go (0.5-0.7 fold the laptop screen on
every backend, 0.45 and 0.8 miss on two and one), see :meth:`ScriptedPolicy._reach_tilt`."""
_PRESS_STALL_STEPS = 10
_PRESS_ADVANCE = 0.001
_PRESS_RETRY_TILT = 0.5
"""A press whose hand comes no closer (by 1 mm) to its target over 10 steps has stalled
(on SAPIEN the hand tilted 45° down rests on the microwave's top front edge, short of its
button); it backs off to its pre-contact point and presses again tilted tan 0.5 down. An
overhung face's approach from the robot's side keeps its own tilt (flatter, it missed the
lamp's button in a noisy rollout that the retry at the same tilt presses)."""
_HAND_CLEARANCE = 0.25
"""Height (m) over a top face the gripper needs free to come straight down onto it."""


def interaction_frame(env: SimEnv, obj: SceneObject, link_name: str) -> tuple[np.ndarray, np.ndarray]:
    """World contact point and outward normal of a link, from the asset's metadata.

    Falls back to the centre of the link's front face (normal -x in the object
    frame) when the asset records no interaction point.
    """
    backend = env.backend
    index = obj.link_index[link_name]
    pos, orn = backend.get_link_poses(obj.body, [index])
    info = _link_meta(obj, link_name).get("interaction")
    if info:
        point = pos[0] + quat_rotate(orn[0], np.asarray(info["point"], dtype=float))
        normal = quat_rotate(orn[0], np.asarray(info["normal"], dtype=float))
        return point, normal / np.linalg.norm(normal)
    lo, hi = backend.get_aabb(obj.body, index)
    _, base_orn = backend.get_base_pose(obj.body)
    normal = quat_rotate(base_orn, np.array([-1.0, 0.0, 0.0]))
    centre = (lo + hi) / 2.0
    return centre + normal * float(np.abs((hi - lo) @ normal)) / 2.0, normal


def _link_meta(obj: SceneObject, link_name: str) -> dict:
    links = obj.entry.meta.get("links", {})
    if isinstance(links, dict):
        return links.get(link_name, {}) or {}
    return {}


class ScriptedPolicy(PlaceMoves):
    """Closed-loop oracle for a ``JointGoal``, a ``PlaceGoal`` or a composition of them.

    Args:
        env: The (unwrapped) :class:`SimEnv`; its ``translation_mode`` must be
            ``delta-translation``.
        noise: Std of Gaussian noise added to every action (for imperfect rollouts).
        seed: Seed of the noise.
    """

    def __init__(self, env: SimEnv, noise: float = 0.0, seed: int = 0) -> None:
        if env.goal is None:
            raise ValueError("ScriptedPolicy needs an env with a goal (a built-in task)")
        if env.translation_mode != "delta-translation":
            raise ValueError("ScriptedPolicy drives delta-translation actions; create the env with it")
        self.env = env
        self.noise = float(noise)
        self.rng = np.random.default_rng(seed)
        self.phase = _Phase("approach")
        self._arc_radius: float | None = None
        self._stage: int | None = None
        self._leaf: JointGoal | PlaceGoal | None = None
        self._follow = 0
        self._retreat_to: np.ndarray | None = None
        self._lower_z: float | None = None
        self._overhung: tuple[int, bool] | None = None
        self._regrasps = 0
        self._tilt = 0.0
        self._best_advance: float | None = None
        self._best_step = 0
        self._side_tilt = _SIDE_TILT

    def reset(self) -> None:
        """Start again from the approach phase (and the first stage)."""
        self.phase = _Phase("approach")
        self._arc_radius = None
        self._stage = None
        self._leaf = None
        self._follow = 0
        self._retreat_to = None
        self._lower_z = None
        self._overhung = None
        self._regrasps = 0
        self._tilt = 0.0
        self._side_tilt = _SIDE_TILT

    def current_stage(self) -> tuple[int, JointGoal | PlaceGoal]:
        """Index and goal of the stage to work on now (0 and the goal itself if not composed).

        Raises:
            TypeError: The env's goal (or a stage) is not one the oracle can solve.
        """
        goal = self.env.goal
        if isinstance(goal, (JointGoal, PlaceGoal)):
            return 0, goal
        if isinstance(goal, (SequenceGoal, AllOfGoal)):
            facts = self.env.evaluate()
            n = len(goal.goals)
            if isinstance(goal, SequenceGoal):
                index = int(facts.get("stage", 0))
            else:
                index = next((i for i in range(n) if not facts.get(f"g{i}.success")), n)
            leaf = goal.goals[min(index, n - 1)]
            if isinstance(leaf, (JointGoal, PlaceGoal)):
                return index, leaf
            goal = leaf
        raise TypeError(f"the scripted oracle solves joint, place, all and sequence goals, not {goal!r}")

    def __call__(self, obs=None) -> np.ndarray:
        """The next action."""
        index, goal = self.current_stage()
        if self._stage is not None and index != self._stage and self._leaf is not None:
            if self.phase.name == "actuate" and self._follow < _FOLLOW_THROUGH:
                self._follow += 1  # a little past the threshold before letting go
                index, goal = self._stage, self._leaf
            else:
                self._start_retreat()
        self._stage, self._leaf = index, goal
        self._fit_phase(goal)
        if self.phase.name == "retreat":
            action = self._retreat_action()
        elif isinstance(goal, JointGoal):
            action = self._joint_action(goal)
        else:
            action = self._place_action(goal)
        self.phase.steps += 1
        if self.noise > 0.0:
            action[:6] += self.rng.normal(0.0, self.noise, 6)
        return np.clip(action, -1.0, 1.0).astype(np.float32)

    # motion helpers -----------------------------------------------------------------
    def _move(self, target: np.ndarray, target_orn: np.ndarray | None, suction: bool) -> np.ndarray:
        pos, orn = self.env.scene.robot.ee_pose()
        action = np.zeros(7)
        action[:3] = np.clip((target - pos) / self.env.max_translation, -1.0, 1.0)
        if target_orn is not None:
            rel = quat_multiply(quat_conjugate(orn), target_orn)
            rel = rel if rel[3] >= 0 else -rel
            angle = 2.0 * np.arccos(np.clip(rel[3], -1.0, 1.0))
            if angle > 1e-6:
                axis = rel[:3] / max(np.linalg.norm(rel[:3]), 1e-9)
                action[3:6] = np.clip(axis * angle / self.env.max_rotation, -1.0, 1.0)
        action[6] = 1.0 if suction else -1.0
        return action

    def _at(self, target: np.ndarray, target_orn: np.ndarray | None, tol: float = 0.01) -> bool:
        pos, orn = self.env.scene.robot.ee_pose()
        close = np.linalg.norm(target - pos) < tol
        aligned = target_orn is None or quat_angle_between(orn, target_orn) < np.radians(8)
        return bool(close and aligned)

    def switch_phase(self, name: str) -> None:
        """Continue from phase ``name`` (e.g. ``actuate`` once a grasp is established).

        Raises:
            ValueError: ``name`` is not one of :data:`PHASES`.
        """
        if name not in PHASES:
            raise ValueError(f"unknown phase {name!r}; phases are {list(PHASES)}")
        self.phase = _Phase(name)
        self._arc_radius = None
        self._lower_z = None

    def _fit_phase(self, goal: JointGoal | PlaceGoal) -> None:
        """Map a phase set from outside (``actuate`` for a held object) onto the stage's kind."""
        held = self.env.scene.robot.attachment is not None
        if isinstance(goal, PlaceGoal) and self.phase.name == "actuate":
            self.switch_phase("lift" if held else "approach")
        elif isinstance(goal, JointGoal) and self.phase.name in ("lift", "carry", "lower", "release"):
            self.switch_phase("actuate" if held else "approach")

    # between stages ------------------------------------------------------------------------
    def _start_retreat(self) -> None:
        """Let go and back away: towards the robot's base, and up over the scene."""
        pos, _ = self.env.scene.robot.ee_pose()
        away = np.asarray(ROBOT_BASE_POSITION, dtype=float) - pos
        away[2] = 0.0
        target = pos + away / max(float(np.linalg.norm(away)), 1e-9) * _RETREAT_DISTANCE
        tallest = max(float(self.env.view.aabb(name)[1][2]) for name in self.env.scene.objects)
        target[2] = min(max(pos[2] + _RETREAT_DISTANCE, tallest + _RETREAT_CLEARANCE), _RETREAT_CEILING)
        self._retreat_to = target
        self._follow = 0
        self._regrasps = 0
        self._tilt = 0.0
        self._side_tilt = _SIDE_TILT
        self.switch_phase("retreat")

    def _retreat_action(self) -> np.ndarray:
        assert self._retreat_to is not None, "retreat starts in _start_retreat"
        if self.phase.steps >= _RETREAT_STEPS or self._at(self._retreat_to, None, tol=0.02):
            self.switch_phase("approach")
        return self._move(self._retreat_to, None, suction=False)

    # joint goals ----------------------------------------------------------------------------
    def _joint_action(self, goal: JointGoal) -> np.ndarray:
        obj = self.env.scene.objects[goal.object]
        point, normal = interaction_frame(self.env, obj, goal.link)
        axis = approach_axis(normal, self._side_tilt)
        if self._is_overhung(goal, point, axis):  # come in tilted from the robot's side
            facing_robot = np.asarray(ROBOT_BASE_POSITION, dtype=float) - point
            axis = approach_axis(facing_robot * [1.0, 1.0, 0.0])  # a side face towards the robot
        if self.phase.name == "approach" and self.phase.steps == 0 and not self._regrasps:
            self._tilt = self._reach_tilt(goal, obj, point, axis)
        if self._tilt:  # a reach tilt or a regrasp: turned about the hinge against the motion
            axis = quat_rotate(quat_from_axis_angle(self._hinge(goal, obj)[2] * self._tilt), axis)
        approach_orn = quat_align_z(self.env.scene.robot.ee_pose()[1], axis)
        pre = point - axis * _PRE_CONTACT
        if self.phase.name == "approach":
            across = self._over_from_behind(point, normal, pre, approach_orn)
            if across is not None:
                return across
            if self._at(pre, approach_orn, tol=0.015) or self.phase.steps > 60:
                self.switch_phase("contact")
            return self._move(pre, approach_orn, suction=False)
        if self.phase.name == "contact":
            if not goal.requires_grasp:
                press = point + axis * 0.03
                if self._press_stalled(press):  # press again, flatter
                    self._side_tilt = _PRESS_RETRY_TILT
                    self.switch_phase("approach")
                    return self._move(pre, approach_orn, suction=False)
                return self._move(press, approach_orn, suction=False)
            if self.env.scene.robot.attachment is not None:
                self.switch_phase("actuate")
            elif self.phase.steps > 30:
                self.switch_phase("approach")
            return self._move(point + axis * 0.01, approach_orn, suction=True)
        if self.env.scene.robot.attachment is None:
            self.switch_phase("approach")
            return self._move(pre, approach_orn, suction=False)
        return self._actuate(goal, obj)

    def _over_from_behind(
        self, point: np.ndarray, normal: np.ndarray, pre: np.ndarray, orn: np.ndarray
    ) -> np.ndarray | None:
        """After a stage's retreat, a hand behind the face's plane goes over to ``pre`` first.

        Why: from behind, the straight way to the face runs through the part. Going round
        a microwave door opened 58° to its handle on the outer face, the arm pushed the door
        on open (MuJoCo) until only its edge was in reach, and the door then shut onto the
        control panel's buttons. Across at the retreat height (over the scene's tallest
        object) and then down, the arm stays clear. None: approach as usual.
        """
        if self._retreat_to is None:
            return None
        hand, _ = self.env.scene.robot.ee_pose()
        if float((hand - point) @ normal) >= 0.0:  # in front of the face already
            self._retreat_to = None
            return None
        return self._over_then_down(pre, orn)

    def _is_overhung(self, goal: JointGoal, point: np.ndarray, axis: np.ndarray) -> bool:
        """Whether another part hangs over a top face within :data:`_HAND_CLEARANCE` (kept per stage).

        Why: a lamp's head over the button on its foot stops a gripper coming straight
        down; tilted in from the robot's side it fits under the head (PressLampButton).
        """
        stage = self._stage if self._stage is not None else 0
        if self._overhung is not None and self._overhung[0] == stage:
            return self._overhung[1]
        backend = self.env.backend
        over = axis[2] < -0.99 and any(  # straight down, with a box starting just above
            lo[0] <= point[0] <= hi[0] and lo[1] <= point[1] <= hi[1]
            and point[2] < lo[2] < point[2] + _HAND_CLEARANCE
            for name, obj in self.env.scene.objects.items()
            for link_name, index in obj.link_index.items()
            if not (name == goal.object and link_name == goal.link)
            for lo, hi in (backend.get_aabb(obj.body, index),)
        )
        self._overhung = (stage, bool(over))
        return bool(over)

    def _reach_tilt(self, goal: JointGoal, obj: SceneObject, point: np.ndarray, axis: np.ndarray) -> float:
        """Tilt (rad, about the hinge) for a grasp the hinge's turn would leave badly posed.

        Two cases, both of a grasped part on a horizontal hinge; 0 for every other approach,
        which is unchanged:

        - A top face whose turn points the gripper back at the robot. The gripper turns with
          the part, so a lid hinged at its far side (a kettle's, a trash can's, a folding
          chair's seat) turns the gripper to point back at the robot while the grasp moves away
          from it; the wrist then ends beyond the grasp and the arm, stretched straight, stalls
          short of the goal. Grasped tilted the other way by more than the turn to go, the
          gripper still points away from the robot at the end, and the wrist stays on the
          robot's side of the grasp. Not near the table (a laptop's lid), where the tilted
          gripper would sweep into it.
        - A face turned away from the robot, so the gripper would point back at it, on a part
          whose turn brings the gripper down (an open laptop screen leaning towards the robot,
          grasped from behind to fold it). The wrist bent back towards the robot's base
          barely reaches the face and the turn stalls at once; grasped tilted with the turn by
          :data:`_BACK_TILT` of the turn to go, the gripper points down over the screen and the
          turn carries it on past straight down.
        """
        if not goal.requires_grasp:
            return 0.0
        info, _, hinge = self._hinge(goal, obj)
        if info.type == "prismatic" or abs(hinge[2]) > 0.1:  # a horizontal hinge only
            return 0.0
        sign = goal.sign
        turned = quat_rotate(quat_from_axis_angle(hinge * sign * 0.3), axis)
        away = np.asarray(point, dtype=float) - np.asarray(ROBOT_BASE_POSITION, dtype=float)
        away = away[:2] / max(float(np.linalg.norm(away[:2])), 1e-9)
        if axis[2] < -0.99 and point[2] >= _TILT_CLEARANCE:  # straight down, clear of the table
            if float(turned[:2] @ away) >= 0.0:  # the turn points the gripper away: reach grows
                return 0.0
            return -sign * min(_REACH_TILT * self._joint_progress(goal, obj, info)[1], _MAX_REACH_TILT)
        if float(axis[:2] @ away) > -_POINTS_BACK or turned[2] >= axis[2]:
            return 0.0  # not pointing back at the robot, or the turn does not bring it down
        return sign * _BACK_TILT * self._joint_progress(goal, obj, info)[1]

    def _press_stalled(self, target: np.ndarray) -> bool:
        """Whether a press has stopped short of ``target`` (closer by < 1 mm in 10 steps).

        Only once per stage, at the default tilt: a flatter retry that stalls too presses on.
        """
        if self._side_tilt != _SIDE_TILT:
            return False
        gap = float(np.linalg.norm(target - self.env.scene.robot.ee_pose()[0]))
        return self._no_gain(-gap, _PRESS_ADVANCE, _PRESS_STALL_STEPS)

    def _no_gain(self, advance: float, gain: float, steps: int) -> bool:
        """Whether ``advance`` has not grown by more than ``gain`` over ``steps`` steps of this phase.

        The best value and the step it came at are kept per phase (a phase's first step
        starts afresh): the hinge's stall (:meth:`_stall_remaining`) and the press's
        (:meth:`_press_stalled`) both count from them.
        """
        best = self._best_advance
        if self.phase.steps == 0 or best is None or advance > best + gain:
            self._best_advance, self._best_step = advance, self.phase.steps
            return False
        return self.phase.steps - self._best_step >= steps

    def _hinge(self, goal: JointGoal, obj: SceneObject) -> tuple[Any, np.ndarray, np.ndarray]:
        """The goal joint's info, frame origin and world axis."""
        backend = self.env.backend
        index = obj.joint_index[goal.joint]
        info = backend.joint_infos(obj.body)[index]
        frame_pos, frame_orn = backend.get_link_poses(obj.body, [index])
        return info, frame_pos[0], quat_rotate(frame_orn[0], np.asarray(info.axis, dtype=float))

    def _joint_progress(self, goal: JointGoal, obj: SceneObject, info: Any) -> tuple[float, float]:
        """The goal joint's advance (share of its range, in the goal's direction) and turn to go.

        The turn to go (rad) is what is left to the goal's threshold (0 once past it).
        """
        value = float(self.env.backend.get_joint_states(obj.body, [obj.joint_index[goal.joint]])[0][0])
        sign = goal.sign
        span = max(info.upper - info.lower, 1e-6)
        return sign * (value - info.lower) / span, max(sign * (info.lower + goal.threshold * span - value), 0.0)

    def _stall_remaining(self, goal: JointGoal, obj: SceneObject, info: Any) -> float:
        """The turn still to go (rad) once the hinge has stalled with the wrist held, else 0.

        Why regrasp then: the gripper turns with a hinged part, so a door or lid that turns
        the hand further than the wrist bends stops with the wrist at its limit (the oven
        door hinged at its foot, the box lid closing). Grasping again, tilted against the
        motion by the turn still to go, gives the wrist that much room. Only stalls with the
        wrist held count: a stretched arm (a lid hinged at its far side) gains nothing from
        a regrasp, and actuations that do not stall are unchanged.
        """
        advance, remaining = self._joint_progress(goal, obj, info)
        if not self._no_gain(advance, _STALL_ADVANCE, _STALL_STEPS):
            return 0.0
        robot = self.env.scene.robot
        wrist, low, high = robot.arm_qpos()[_WRIST], robot.lower[_WRIST], robot.upper[_WRIST]
        if not np.any((wrist < low + _AT_LIMIT) | (wrist > high - _AT_LIMIT)):
            return 0.0
        return remaining

    def _actuate(self, goal: JointGoal, obj: SceneObject) -> np.ndarray:
        info, pivot, axis = self._hinge(goal, obj)
        sign = goal.sign
        if info.type != "prismatic" and self._regrasps < _MAX_REGRASPS:
            remaining = self._stall_remaining(goal, obj, info)
            if remaining:  # let go, grasp again tilted against the motion
                self._tilt = -sign * min(remaining, _MAX_REGRASP_TILT)
                self._regrasps += 1
                self._best_advance = None
                self.switch_phase("approach")
                return self._joint_action(goal)
        eef, orn = self.env.scene.robot.ee_pose()
        action = np.zeros(7)
        action[6] = 1.0
        if info.type == "prismatic":
            action[:3] = sign * axis / np.max(np.abs(axis))
            return action
        lever = eef - pivot
        lever -= np.dot(lever, axis) * axis
        radius = float(np.linalg.norm(lever))
        if self._arc_radius is None:
            self._arc_radius = radius
        # The suction weld fixes the gripper to the part, so the gripper must turn
        # with it: rotate the whole gripper pose about the joint axis by dθ.
        step = min(0.9 * self.env.max_rotation, 0.8 * self.env.max_translation / max(radius, 1e-6))
        turn = quat_from_axis_angle(axis * sign * step)
        target = pivot + quat_rotate(turn, eef - pivot)
        if radius > 1e-3:  # correct radial drift so the grasp stays on its circle
            target += (self._arc_radius - radius) * lever / radius
        action[:3] = np.clip((target - eef) / self.env.max_translation, -1.0, 1.0)
        local_axis = quat_to_matrix(orn).T @ axis
        action[3:6] = np.clip(local_axis * sign * step / self.env.max_rotation, -1.0, 1.0)
        return action
