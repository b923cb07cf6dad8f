"""The physical tier: execute a plan step by step in the simulator and re-read milestones.

Each skill is bound to real execution in a :class:`~simjudge.envs.SimEnv`:

- ``scripted`` backend (default): the privileged closed-loop oracle
  (:class:`~simjudge.skills.scripted.ScriptedPolicy`) driven towards a per-step goal: a
  :class:`~simjudge.envs.goals.JointGoal` on the step's part for ``open``/``close``/
  ``turn``/``press``/``push``/``pull``/``grasp``, a :class:`~simjudge.envs.goals.PlaceGoal`
  for ``pick_up``/``place``; ``release`` turns suction off and lets things settle.
- ``primitives`` backend: ``grasp``, ``pick_up`` (grasp), ``release`` and ``move_to`` run
  the OMPL motion-planning primitives of :mod:`simjudge.skills.primitives`; joint motion
  and carrying stay with the oracle.

A :class:`~simjudge.judges.milestones.MilestoneJudge` re-reads every milestone predicate
after every control step (``env.observe_steps``), so "ever reached" respects the DAG at
the simulator's resolution; "held at the end" is read after the last step. Execution
faults (:class:`ExecutionFault`) perturb one step's actions for the failure-analysis items.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from simjudge.envs.goals import AllOfGoal, JointGoal, PlaceGoal, SequenceGoal
from simjudge.envs.sim_env import SimEnv
from simjudge.envs.sim_state import SimState
from simjudge.judges.signals import Transition
from simjudge.skills.scripted import _FOLLOW_THROUGH, ScriptedPolicy, interaction_frame

from .groundtruth import PlanObject, TaskPlan
from .records import Completion, StepRecord, completion_score
from .schema import JOINT_SKILLS, PlanNode
from .symbolic import Binding, bind_step

__all__ = ["EXECUTION_FAULTS", "BACKENDS", "ExecutionFault", "PhysicalRunner", "PhysicalRun"]

BACKENDS: tuple[str, ...] = ("scripted", "primitives")
EXECUTION_FAULTS: tuple[str, ...] = (
    "position_offset", "wrong_rotation", "suction_failure", "trajectory_noise", "early_stop",
)
"""Execution faults (RoboBench's execution-failure taxonomy)."""
_EARLY_STOP_STEPS = 4
"""An early-stopped skill gets this many control steps."""
_WRIST_TURN = 0.9
"""A part whose hinge is this parallel (|cos|) to its face's normal is turned by the wrist."""
_OFF_LIMIT = 0.05
"""The follow-through past a joint step's target stops this share of the range off a limit."""
_RETREAT_BUDGET = 40
"""Control steps of the retreat after letting go of a part (the oracle's own bound)."""


@dataclass(frozen=True)
class ExecutionFault:
    """A labelled perturbation of one plan step's execution.

    Attributes:
        kind: One of :data:`EXECUTION_FAULTS`.
        step: Index of the plan step it perturbs (and, for persistent faults, the later ones).
        seed: Seed of the noise.
    """

    kind: str
    step: int
    seed: int = 0

    def applies_to(self, index: int) -> bool:
        """Whether the fault perturbs step ``index``.

        Hardware-like faults (an offset calibration, suction that does not engage) persist
        from their step on; the others hit their step only.
        """
        persistent = self.kind in ("position_offset", "suction_failure")
        return index >= self.step if persistent else index == self.step

    def __post_init__(self) -> None:
        if self.kind not in EXECUTION_FAULTS:
            raise ValueError(f"unknown execution fault {self.kind!r}; use one of {list(EXECUTION_FAULTS)}")


class _GoalPolicy(ScriptedPolicy):
    """The scripted oracle driven towards a given goal instead of the task's."""

    def __init__(self, env: SimEnv, goal: JointGoal | PlaceGoal) -> None:
        super().__init__(env)
        self.goal = goal

    def __call__(self, obs: object = None) -> np.ndarray:
        """The next action towards ``self.goal``."""
        if self.phase.name == "retreat":
            action = self._retreat_action()
        elif isinstance(self.goal, JointGoal):
            action = self._joint_action(self.goal)
        else:
            action = self._place_action(self.goal)
        self.phase.steps += 1
        return np.clip(action, -1.0, 1.0)


@dataclass
class PhysicalRun:
    """A physical execution: its completion and the states after each step.

    Attributes:
        completion: Milestones reached / held and the step records.
        states: Simulator snapshot after each step (when requested).
        holds_after: Milestone name -> holds, after each step.
    """

    completion: Completion
    states: list[SimState]
    holds_after: list[dict[str, bool]]


class PhysicalRunner:
    """Runs plans of one task in its simulator.

    Args:
        plan: The task's reference plan and milestones.
        backend: One of :data:`BACKENDS`.
        step_budget: Control steps one skill may take.
        seed: Reset seed.
    """

    def __init__(self, plan: TaskPlan, backend: str = "scripted", step_budget: int = 150,
                 seed: int = 0) -> None:
        if backend not in BACKENDS:
            raise ValueError(f"unknown skill backend {backend!r}; use one of {list(BACKENDS)}")
        self.plan = plan
        self.backend = backend
        self.step_budget = int(step_budget)
        self.seed = int(seed)
        self.env = SimEnv(**{**plan.spec.env_kwargs(), "translation_mode": "delta-translation"})
        self.free = {o.object for o in plan.plan.objects if o.movable}
        self._fault: ExecutionFault | None = None
        self._rng = np.random.default_rng(0)
        self._tele: dict[str, float] = {}
        self._last_action: np.ndarray | None = None
        self._target: PlanObject | None = None
        self._then = "open"
        self._retreated: np.ndarray | None = None

    def close(self) -> None:
        """Release the simulator."""
        self.env.close()

    # ------------------------------------------------------------------------------------
    def run(self, nodes: list[PlanNode], *, start: SimState | None = None,
            fault: ExecutionFault | None = None, snapshots: bool = False) -> PhysicalRun:
        """Execute ``nodes`` from the reset state (or ``start``), milestones every control step."""
        env = self.env
        env.reset(seed=self.seed, options={"state": start} if start is not None else None)
        self._retreated = None
        judge = self.plan.milestone_judge()
        judge.reset()
        tick = [0]
        last: dict[str, dict[str, bool]] = {}

        def observe() -> None:
            signal = judge.observe(Transition(step=tick[0], view=env.view))
            last["holding"] = dict(signal.details["holding"])
            tick[0] += 1

        observe()
        records, states, holds_after = [], [], []
        with env.observe_steps(observe):
            for i, node in enumerate(nodes):
                before = set(n for n, at in judge.reached_at.items() if at is not None)
                self._fault = fault if fault is not None and fault.applies_to(i) else None
                if self._fault is not None:
                    self._rng = np.random.default_rng(self._fault.seed)
                start_steps = env.elapsed_steps
                self._then = self._next_direction(nodes, i)
                record, changed = self._step(i, node)
                record.control_steps = env.elapsed_steps - start_steps
                record.reached = [n for n, at in judge.reached_at.items()
                                  if at is not None and n not in before]
                if record.ok and not changed and not record.reached and node.skill != "move_to":
                    record.label, record.reason = "redundant_step", "changed nothing"
                records.append(record)
                holds_after.append(dict(last["holding"]))
                if snapshots:
                    states.append(env.get_state())
        self._fault = None
        reached = [n for n in judge.order if judge.reached_at[n] is not None]
        held = [n for n in judge.order if last["holding"][n]]
        total = len(judge.order)
        completion = Completion("physical", completion_score(len(reached), total),
                                completion_score(len(held), total), reached, held, total, records)
        return PhysicalRun(completion, states, holds_after)

    # ------------------------------------------------------------------------------------
    def _state_key(self) -> tuple:
        view, out = self.env.view, list[object]()
        for o in self.plan.plan.objects:
            if o.joint:
                lo, hi = view.joint_limit(o.object, o.joint)
                frac = (view.joint_value(o.object, o.joint) - lo) / max(hi - lo, 1e-9)
                out.append(round(frac * 20))
            if o.movable:
                out.append(tuple(np.round(view.aabb(o.object)[0] * 20).tolist()))
        return (view.grasped(), tuple(out))

    def _step(self, index: int, node: PlanNode) -> tuple[StepRecord, bool]:
        """Run one step; returns its record and whether the world changed."""
        record = StepRecord(index=index, text=node.text or str(node), skill=node.skill)
        b = bind_step(self.plan, node)
        if b.label:
            record.ok, record.label, record.reason = False, b.label, b.reason
            return record, False
        why = self._precondition(b)
        if why:
            record.ok, record.label, record.reason = False, "physics_violation", why
            return record, False
        before = None if b.node.skill == "release" and self._held() is None else self._state_key()
        start_fraction = self._fraction(b) if b.obj is not None and b.obj.joint else None
        self._tele = {"steps": 0, "suction": 0, "jerk": 0.0, "closest": float("inf")}
        self._last_action = None
        self._target = b.obj
        ok, reason = self._execute(b)
        record.ok, record.reason = ok, reason
        record.telemetry = self._telemetry(b, start_fraction)
        if not ok:
            record.label = "skill_failed"
        return record, before is not None and self._state_key() != before

    def _next_direction(self, nodes: list[PlanNode], index: int) -> str:
        """Direction of the first later joint step on the part step ``index`` grasps (else open).

        Why: the oracle poses a grasp for the turn that follows it (a laptop screen to be
        closed is grasped tilted with its turn, see
        :meth:`~simjudge.skills.scripted.ScriptedPolicy._reach_tilt`); a ``grasp`` step carries
        no direction, so it takes the one of the step that moves what it holds.
        """
        b = bind_step(self.plan, nodes[index])
        if b.node.skill != "grasp" or b.obj is None or b.obj.joint is None:
            return "open"
        for later in nodes[index + 1:]:
            n = bind_step(self.plan, later)
            if n.obj is None or (n.obj.object, n.obj.link) != (b.obj.object, b.obj.link):
                continue
            return n.direction if n.node.skill in JOINT_SKILLS and n.direction else "open"
        return "open"

    def _held(self) -> tuple[str, str] | None:
        return self.env.view.grasped()

    def _precondition(self, b: Binding) -> str:
        held, skill, obj = self._held(), b.node.skill, b.obj
        holds_free = held is not None and held[0] in self.free
        if skill in JOINT_SKILLS | {"pick_up", "grasp"} and holds_free:
            if not (obj is not None and held is not None and obj.object == held[0]
                    and skill in ("pick_up", "grasp")):
                return f"{skill} while holding {held[0] if held else ''} (free the hand first)"
        if skill == "place" and obj is not None and (held is None or held[0] != obj.object):
            return f"place {obj.name} while not holding it"
        return ""

    # skills -----------------------------------------------------------------------------
    def _execute(self, b: Binding) -> tuple[bool, str]:
        skill = b.node.skill
        if skill == "release":
            return self._release()
        if self.backend == "primitives" and skill in ("grasp", "pick_up", "move_to"):
            return self._primitive(b)
        if skill == "move_to":
            return self._move_to(b)
        if skill in ("grasp", "pick_up"):
            return self._grasp(b, lift=skill == "pick_up")
        if skill == "place":
            return self._place(b)
        return self._actuate(b)

    def _drive(self, policy: _GoalPolicy, done: Callable[[], bool], budget: int | None = None) -> bool:
        budget = budget or self.step_budget
        fault = self._fault
        if fault is not None and fault.kind == "early_stop":
            budget = min(budget, _EARLY_STOP_STEPS)
        for _ in range(budget):
            if done():
                return True
            action = self._perturb(policy(), policy.phase.name)
            self._measure(action)
            self.env.step(action)
        return done()

    def _measure(self, action: np.ndarray) -> None:
        tele = self._tele
        tele["steps"] += 1
        tele["suction"] += int(action[6] > 0)
        if self._last_action is not None:
            tele["jerk"] += float(np.linalg.norm(action[:6] - self._last_action[:6]))
        self._last_action = action
        obj = self._target
        if obj is not None:
            view = self.env.view
            lo, hi = view.aabb(obj.object, obj.link) if obj.link else view.aabb(obj.object)
            gap = float(np.linalg.norm(view.eef_pose()[0] - (lo + hi) / 2.0))
            tele["closest"] = min(tele["closest"], gap)

    def _telemetry(self, b: Binding, start_fraction: float | None) -> dict[str, float]:
        tele, steps = self._tele, max(self._tele["steps"], 1)
        out = {
            "suction_commanded": round(tele["suction"] / steps, 3),
            "attached": float(self._held() is not None),
            "action_jerk": round(tele["jerk"] / steps, 3),
        }
        if np.isfinite(tele["closest"]):
            out["closest_approach"] = round(tele["closest"], 4)
        if start_fraction is not None:
            sign = -1.0 if b.direction == "close" else 1.0
            out["joint_change"] = round(sign * (self._fraction(b) - start_fraction), 3)
        return out

    def _perturb(self, action: np.ndarray, phase: str) -> np.ndarray:
        fault = self._fault
        if fault is None:
            return action
        action = action.copy()
        if fault.kind == "position_offset" and phase in ("approach", "contact", "carry", "lower"):
            action[:3] += np.array([0.0, 1.0, 0.0])  # a steady 3 cm sideways offset
        elif fault.kind == "wrong_rotation":
            if phase == "actuate":
                action[:6] = -action[:6]  # turns the part the wrong way
            else:
                action[3:6] += np.array([1.0, 0.0, 0.0])
        elif fault.kind == "suction_failure":
            action[6] = -1.0
        elif fault.kind == "trajectory_noise":
            action[:6] += self._rng.normal(0.0, 0.8, 6)
        return np.clip(action, -1.0, 1.0)

    def _attached_to(self, obj_name: str, link: str | None) -> bool:
        held = self._held()
        return held is not None and held[0] == obj_name and (link is None or held[1] == link)

    def _joint_goal(self, b: Binding, grasp: bool) -> JointGoal:
        obj = b.obj
        assert obj is not None and obj.joint and obj.link
        closing = (b.direction or (self._then if b.node.skill == "grasp" else "open")) == "close"
        return JointGoal(object=obj.object, joint=obj.joint, link=obj.link,
                         direction="close" if closing else "open",
                         threshold=obj.close_to if closing else obj.open_to,
                         requires_grasp=grasp)

    def _grasp(self, b: Binding, lift: bool) -> tuple[bool, str]:
        obj = b.obj
        assert obj is not None
        if obj.movable or obj.link is None:
            policy = self._policy(PlaceGoal(object=obj.object, target=obj.object))
            start_z = float(self.env.view.aabb(obj.object)[0][2])
            if lift:
                ok = self._drive(policy, lambda: self._attached_to(obj.object, None) and float(
                    self.env.view.aabb(obj.object)[0][2]) > start_z + 0.05)
                return ok, "" if ok else f"{obj.name} was not picked up"
            ok = self._drive(policy, lambda: self._attached_to(obj.object, None))
            return ok, "" if ok else f"suction did not take hold of {obj.name}"
        if self._held() is not None and not self._attached_to(obj.object, obj.link):
            self._release()
        policy = self._policy(self._joint_goal(b, grasp=True))
        if self._wrist_turn(policy):
            # held, and pressed in the step the oracle presses in on taking hold (its contact
            # phase then hands over to actuate): stopped at the first touch, a safe's dial was
            # held 3 cm off its axis instead of 2 and the turn wrenched it the wrong way
            ok = self._drive(policy, lambda: self._attached_to(obj.object, obj.link)
                             and policy.phase.name == "actuate")
            ok = ok or self._attached_to(obj.object, obj.link)
        else:
            ok = self._drive(policy, lambda: self._attached_to(obj.object, obj.link))
        return ok, "" if ok else f"suction did not take hold of {obj.name}"

    def _wrist_turn(self, policy: _GoalPolicy) -> bool:
        """Whether the goal's part turns about the axis the gripper comes in along (a dial, a knob)."""
        goal = policy.goal
        assert isinstance(goal, JointGoal)
        obj = self.env.scene.objects[goal.object]
        info, _, hinge = policy._hinge(goal, obj)
        _, normal = interaction_frame(self.env, obj, goal.link)
        return info.type != "prismatic" and abs(float(normal @ hinge)) > _WRIST_TURN

    def _fraction(self, b: Binding) -> float:
        obj = b.obj
        assert obj is not None and obj.joint
        view = self.env.view
        lo, hi = view.joint_limit(obj.object, obj.joint)
        return (view.joint_value(obj.object, obj.joint) - lo) / max(hi - lo, 1e-9)

    def _actuate(self, b: Binding) -> tuple[bool, str]:
        obj = b.obj
        assert obj is not None
        grasp = obj.grasp and b.node.skill != "press"
        if self._held() is not None and not self._attached_to(obj.object, obj.link):
            self._release()
        policy = self._policy(self._joint_goal(b, grasp=grasp))
        if grasp and self._attached_to(obj.object, obj.link):
            policy.switch_phase("actuate")
        if b.direction == "open":
            ok = self._drive(policy, lambda: self._fraction(b) >= obj.open_to)
        else:
            ok = self._drive(policy, lambda: self._fraction(b) <= obj.close_to)
        if ok and grasp and self._attached_to(obj.object, obj.link):
            # a little past the target, as the oracle does between stages: a released door
            # springs back, and one opened just to its target leaves a gap too narrow to put
            # the bread in beside it (HeatBreadInMicrowave); not into the joint's limit, off
            # which a drawer pulled against it springs back shut once let go
            self._drive(policy, lambda: not _OFF_LIMIT < self._fraction(b) < 1.0 - _OFF_LIMIT,
                        budget=_FOLLOW_THROUGH)
        if not grasp:  # back off the button
            policy.switch_phase("approach")
            self._drive(policy, lambda: False, budget=8)
        target = obj.open_to if b.direction == "open" else obj.close_to
        return ok, "" if ok else (f"{obj.name} reached {self._fraction(b):.2f} of its range, "
                                  f"not {target:.2f}")

    def _place(self, b: Binding) -> tuple[bool, str]:
        obj, target = b.obj, b.target
        assert obj is not None and target is not None
        goal = self._placement(obj.object, target.object, "in" if b.relation == "in" else "on")
        policy = self._policy(goal)
        policy.switch_phase("lift")
        self._drive(policy, lambda: policy.phase.name == "release")
        self._release()
        facts = goal.evaluate(self.env.view)
        ok = bool(facts["is_placed"])
        return ok, "" if ok else f"{obj.name} did not end up {goal.relation} {target.name}"

    def _placement(self, obj: str, target: str, relation: str) -> PlaceGoal:
        """The placement a ``place`` step drives towards: the task goal's own, if it has one.

        Why: a plan names the container (``in_cabinet``), not the link the part goes in or
        how (``in`` a drawer's link, ``inside`` a microwave through its front); placed in the
        cabinet's whole box, the cube was carried over the cabinet's top with the arm
        stretched straight, and dropped. A placement of the same part on/in the same target
        in the task's goal (a composed goal's stages included) lends its ``target_link`` and
        relation; any other placement is the plain one.
        """
        pending = [self.env.goal]
        while pending:
            goal = pending.pop(0)
            if isinstance(goal, (SequenceGoal, AllOfGoal)):
                pending.extend(goal.goals)
            elif (isinstance(goal, PlaceGoal) and (goal.object, goal.target) == (obj, target)
                  and (goal.relation == "on") == (relation == "on")):
                return goal
        kind = relation if relation in ("on", "in", "inside") else "in"
        return PlaceGoal(object=obj, target=target, relation=kind)  # type: ignore[arg-type]

    def _move_to(self, b: Binding) -> tuple[bool, str]:
        obj = b.obj
        if obj is None:
            return True, "no target: stayed"
        if obj.link and obj.joint:
            policy = self._policy(self._joint_goal(b, grasp=True))
        else:
            policy = self._policy(PlaceGoal(object=obj.object, target=obj.object))
        ok = self._drive(policy, lambda: policy.phase.name != "approach", budget=80)
        return ok, "" if ok else f"could not reach {obj.name}"

    def _release(self) -> tuple[bool, str]:
        held = self._held()
        hold = np.zeros(7, dtype=np.float32)
        hold[6] = -1.0
        self.env.scene.robot.release()
        for _ in range(10):
            self.env.step(hold)
        if held is not None:
            self._retreat()
        return True, "" if held else "nothing was held"

    def _retreat(self) -> None:
        """Back away from what was let go, as the oracle does between stages.

        Why: from a part just let go the straight way to the next one can sweep through what
        was opened; going from the handle of a microwave door opened 60 % to the bread beside
        it, the arm pushed the door shut (HeatBreadInMicrowave). The retreat point is handed
        to the next skill's policy, which then goes over at that height before coming down
        (``ScriptedPolicy._over_from_behind``).
        """
        anything = next(iter(self.env.scene.objects))  # the retreat reads no goal
        policy = _GoalPolicy(self.env, PlaceGoal(object=anything, target=anything))
        policy._start_retreat()
        self._drive(policy, lambda: policy.phase.name != "retreat", budget=_RETREAT_BUDGET)
        self._retreated = policy._retreat_to

    def _policy(self, goal: JointGoal | PlaceGoal) -> _GoalPolicy:
        """The oracle driven towards ``goal``, going over from the last retreat point if any."""
        policy = _GoalPolicy(self.env, goal)
        policy._retreat_to, self._retreated = self._retreated, None
        return policy

    def _primitive(self, b: Binding) -> tuple[bool, str]:
        from simjudge.skills import primitives

        obj = b.obj
        if b.node.skill == "move_to":
            if obj is None:
                return True, "no target: stayed"
            result = (primitives.approach_object_link(self.env, obj.object, obj.link) if obj.link
                      else primitives.approach_object(self.env, obj.object))
            return result.success, result.reason
        assert obj is not None
        result = (primitives.grasp_object_link(self.env, obj.object, obj.link)
                  if obj.link and not obj.movable else primitives.grasp_object(self.env, obj.object))
        if not result.success or b.node.skill == "grasp":
            return result.success, result.reason
        pos, _ = self.env.scene.robot.ee_pose()
        lifted = primitives.move_to_pose(self.env, pos + np.array([0.0, 0.0, 0.12]))
        return lifted.success, lifted.reason

