"""The privileged progress judge: the ground truth other judges are measured against.

Φ is computed from privileged simulator state with the staged definitions of
:mod:`simjudge.envs.progress` (approach → contact/attach → joint or object goal; the goals of
:mod:`simjudge.envs.goals` compute the facts), so that built-in tasks, the env's
``info["progress"]`` and generated subtasks are scored on one scale:

- **joint** goals (:class:`~simjudge.envs.goals.JointGoal`): Φ = 0.3·approach + 0.1·grasped +
  0.6·joint_progress with grasp (0.4·approach + 0.6·joint_progress for press/push goals);
  approach = 1 − d / d_ref, clipped to [0, 1], for the distance d (m) from the suction point
  to the target link's bounding-box centre, with d_ref the distance from the arm's home
  suction point to that link (1 while grasped: Φ = 0.4 at attachment); joint_progress = the
  joint's normalised advance from its initial value to the threshold fraction of its range,
  clipped to [0, 1].
- **place** goals (:class:`~simjudge.envs.goals.PlaceGoal`): Φ = 0.3·approach + 0.1·grasped +
  0.4·carry + 0.2·placed (carry: the share of the horizontal way from the object's start to
  the target covered while it is held).
- **link** goals (:class:`LinkGoal`, for reach/grasp subtasks of generated solutions): the
  first two joint-goal stages renormalised, Φ = (0.3·approach + 0.1·grasped) / 0.4 with grasp,
  Φ = approach without; success = the link is held (or d ≤ ``tolerance`` for reach goals).

Φ = 1 exactly on success and stays below 1 otherwise. Verdicts: ``success`` when the goal's
facts say so, ``failure`` on ``fail`` (physics errors), else ``undecided``. The reward term
is Φ (``max_reward`` = 1).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

import numpy as np

from simjudge.envs.goals import JointGoal, PlaceGoal
from simjudge.envs.progress import JOINT_WEIGHTS, approach
from simjudge.envs.state_api import StateView, get_link_state

from .base import Judge, JudgeResetNeeded
from .context import JudgeContext
from .signals import (
    FAILURE,
    FAILURE_CODE,
    SUCCESS,
    SUCCESS_CODE,
    UNDECIDED,
    UNDECIDED_CODE,
    FastSignal,
    JudgeSignal,
    Transition,
    _check_phi,
)

_new_tuple = tuple.__new__
"""``tuple.__new__``: a FastSignal from its fields without the NamedTuple's Python ``__new__``."""

__all__ = ["LinkGoal", "PrivilegedProgressJudge", "progress_goal"]

_NO_GOAL = (
    "{judge} has no goal: pass goal= (a JointGoal/PlaceGoal/LinkGoal or a light spec dict "
    "such as {{'object': 'Cabinet', 'joint': 'joint_0', 'direction': 'open'}}), or use a "
    "context with a goal (JudgeContext.from_env on a built-in task)"
)
_NO_VIEW = (
    "{judge} reads privileged state but the transition has no StateView; wrap a SimEnv "
    "(or pass Transition(view=env.unwrapped.view))"
)


@dataclass(frozen=True)
class LinkGoal:
    """Reach (and optionally hold) one link: the goal of a grasp/approach subtask.

    Attributes:
        object: Scene object name.
        link: Link name.
        requires_grasp: Success needs suction on this link (else only proximity).
        tolerance: Reach distance (m) counted as success when no grasp is required.
    """

    object: str
    link: str
    requires_grasp: bool = True
    tolerance: float = 0.03
    kind: str = "link"

    def evaluate(self, view: StateView) -> dict[str, float | bool]:
        """Facts: distance to the link, whether it is held, success."""
        eef, _ = view.eef_pose()
        centre = get_link_state(view, self.object, self.link)
        distance = float(np.linalg.norm(eef - centre))
        held = view.grasped()
        is_grasped = held is not None and held == (self.object, self.link)
        success = is_grasped if self.requires_grasp else distance <= self.tolerance
        return {
            "success": bool(success),
            "fail": False,
            "is_grasped": bool(is_grasped),
            "distance_to_link": distance,
            "approach": approach(eef.tolist(), centre.tolist()),
        }

    def progress(self, facts: Mapping[str, float | bool]) -> float:
        """Staged Φ: approach then grasp (see the module docstring)."""
        if facts["success"]:
            return 1.0
        reach = float(facts["approach"])
        if not self.requires_grasp:
            return float(min(reach, 0.999))
        w_approach, w_grasp, _ = JOINT_WEIGHTS
        grasped = 1.0 if facts["is_grasped"] else 0.0
        reach = 1.0 if grasped else reach
        return float(min((w_approach * reach + w_grasp * grasped) / (w_approach + w_grasp), 0.999))


Goal = JointGoal | PlaceGoal | LinkGoal


def _moving_joint(tree: Mapping[str, Any], link: str) -> tuple[str, str] | None:
    """The movable joint that moves ``link`` (through fixed joints), and its child link."""
    joints = {j["child"]: j for j in tree.get("joints", ())}
    current = link
    for _ in range(len(joints) + 1):
        joint = joints.get(current)
        if joint is None:
            return None
        if joint["type"] != "fixed":
            return joint["name"], joint["child"]
        current = joint["parent"]
    return None


def progress_goal(spec: Any, context: JudgeContext | None = None) -> Goal:
    """Build a staged goal from a goal object or a light spec dict.

    Spec keys: ``object`` and one of ``target`` (place: ``relation`` ``in``/``on``),
    ``joint`` and/or ``link`` with ``direction`` (joint goal; ``threshold``,
    ``requires_grasp``), or ``link`` alone (link goal; ``requires_grasp``). A missing joint is
    found from the link through fixed joints (a handle moves with its drawer), a missing link
    is the joint's child; both need the object's tree in ``context``. Any other env goal
    (an object with ``progress`` and ``bind`` or ``evaluate``, e.g. ``JointRangeGoal``,
    ``AllOfGoal`` or ``TaskGoal.env_goal()``) is used as it is.

    Raises:
        ValueError: The spec is incomplete or names nothing the context knows.
    """
    if isinstance(spec, JointGoal | PlaceGoal | LinkGoal):
        return spec
    if hasattr(spec, "progress") and (hasattr(spec, "bind") or hasattr(spec, "evaluate")):
        return spec  # any env goal (JointRangeGoal, AllOfGoal, TaskGoal.env_goal())
    if not isinstance(spec, Mapping) or "object" not in spec:
        raise ValueError(f"a progress goal spec needs at least 'object'; got {spec!r}")
    spec = dict(spec)
    kind = spec.pop("kind", None)
    if kind == "place" or "target" in spec:
        return PlaceGoal(**spec)
    if kind == "link" or ("direction" not in spec and "joint" not in spec):
        if "link" not in spec:
            raise ValueError(f"a link goal needs 'link'; got {spec!r}")
        return LinkGoal(**spec)
    tree = (context.trees.get(spec["object"]) if context else None) or {}
    if "joint" not in spec:
        found = _moving_joint(tree, spec.get("link", ""))
        if found is None:
            raise ValueError(
                f"cannot find the joint that moves {spec.get('object')}.{spec.get('link')}; "
                "give 'joint' explicitly or a context with the object's articulation tree"
            )
        spec["joint"] = found[0]
    if "link" not in spec:
        child = next(
            (j["child"] for j in tree.get("joints", ()) if j["name"] == spec["joint"]), None
        )
        if child is None:
            raise ValueError(
                f"cannot find the link of {spec['object']}.{spec['joint']}; give 'link' "
                "explicitly or a context with the object's articulation tree"
            )
        spec["link"] = child
    return JointGoal(**spec)


class PrivilegedProgressJudge(Judge):
    """Φ from privileged state with the staged goal definitions (see the module docstring).

    The goal is ``goal`` if given, else the context's goal (the env's goal for built-in
    tasks, set by ``JudgeContext.from_env``).

    Example:
        >>> from simjudge.tasks.spec import make_task_env
        >>> env = make_task_env("OpenDrawer-v0")
        >>> obs, info = env.reset(seed=0)
        >>> judge = PrivilegedProgressJudge()
        >>> judge.reset(JudgeContext.from_env(env))
        >>> s = judge.observe(Transition(step=0, view=env.view, info=info))
        >>> s.verdict, abs(s.phi - info["progress"]) < 1e-12
        ('undecided', True)

    Args:
        goal: A goal object, a light spec dict (see :func:`progress_goal`), or None.
    """

    name = "privileged"
    provides_potential = True
    max_reward = 1.0
    _transient = ("_evaluator", "_evaluator_view", "_info_view", "_info_values")

    def __init__(self, goal: Any = None) -> None:
        super().__init__()
        self.goal_spec = goal
        self.goal: Goal | None = None
        self._good_note: Any = None  # the note of the last step without a physics error
        self._evaluator: Any = None
        self._evaluator_view: StateView | None = None
        self._info_keys: tuple[str, ...] | None = None
        self._info_view: StateView | None = None
        self._info_values: Callable[[Mapping[str, Any]], tuple[Any, ...]] | None = None
        self._kind = ""  # the goal's kind, for the fast path's note
        self._spec_used: Any = None  # goal_spec when the goal was derived (see _rearm)

    def _reset(self, context: JudgeContext) -> None:
        self._spec_used = self.goal_spec
        spec = self.goal_spec if self.goal_spec is not None else context.goal
        if spec is None:
            raise ValueError(_NO_GOAL.format(judge=self.label))
        goal = progress_goal(spec, context)
        if goal is not self.goal:
            self._info_keys = self._info_view = None
        self.goal = goal
        self._kind = goal.kind
        self._evaluator = self._evaluator_view = None
        keys, self._info_view = self._env_facts()
        if keys is not self._info_keys or self._info_values is None:  # else: kept from before
            self._info_values = _values_getter(keys)
        self._info_keys = keys

    def _rearm(self, context: JudgeContext) -> None:
        owner = self._owner() if self._owner is not None else None
        if (
            self.goal is None  # never derived
            or self.goal_spec is not self._spec_used  # its spec was changed since
            or (self._info_keys is not None and getattr(owner, "goal", None) is not self.goal)
        ):  # (the last: the env whose info it reads has another goal now)
            self._reset(context)
        else:
            self._evaluator = self._evaluator_view = None  # bound once per view and episode

    def _env_facts(self) -> tuple[tuple[str, ...] | None, StateView | None]:
        """The goal's fact keys if the env this judge serves reports this very goal's facts.

        Why: the env evaluates its goal on every step and puts the facts and Φ into
        ``info``; evaluating the same goal again would double the cost for the same numbers.
        Only when the env (the judge's owner, see :meth:`Judge.claim`) holds the *same* goal
        object and reports full info; the fast path then also checks that the view is the
        env's.
        """
        owner = self._owner() if self._owner is not None else None
        view = getattr(owner, "view", None)
        if (
            owner is None
            or view is None
            or getattr(owner, "goal", None) is not self.goal
            or getattr(owner, "info_mode", "full") != "full"
        ):
            return None, None
        if self._info_view is not view or self._info_keys is None:  # else: same goal and view
            return tuple(self.facts(view)), view
        return self._info_keys, view

    def _goal(self) -> Goal:
        if self.goal is None:
            raise JudgeResetNeeded(
                f"{self.label} has no goal before reset(context); call "
                "judge.reset(JudgeContext(...)) first"
            )
        return self.goal

    def facts(self, view: StateView) -> dict[str, float | bool]:
        """The goal's facts on ``view`` (``success``, ``fail``, named predicates).

        Goals that can bind to a view (``goal.bind(view)``: names resolved, limits read
        once) are bound once per view and episode, as the env does; the facts are the same.
        """
        goal = self._goal()
        bind = getattr(goal, "bind", None)
        if bind is None:
            return dict(goal.evaluate(view))
        if self._evaluator is None or self._evaluator_view is not view:
            self._evaluator, self._evaluator_view = bind(view), view
        return dict(self._evaluator())

    def _observe(self, transition: Transition) -> JudgeSignal:
        if transition.view is None:
            raise ValueError(_NO_VIEW.format(judge=self.label))
        return self._explain(self._judged(transition.view, transition.info))

    def _fast(
        self,
        step: int,
        view: Any,
        info: Mapping[str, Any],
        done: bool,
        transition: Transition | None,
    ) -> FastSignal:
        # the hot path: read Φ and the verdict the env computed for this very goal
        progress = info.get("progress")
        if view is not self._info_view or view is None or progress is None:
            return self._judged(view, info)
        if info.get("physics_error"):
            return self._diverged()
        phi = float(progress)
        if not (0.0 <= phi <= 1.0):
            phi = _check_phi(phi)
        if info.get("fail"):
            code = FAILURE_CODE
        elif info["success"]:
            code = SUCCESS_CODE
        else:
            code = UNDECIDED_CODE
        # the facts' values, not the info dict: a recorder keeps every step's note, and the
        # env's info dicts kept for a whole episode crowd the physics out of the CPU caches
        values = self._info_values(info)  # type: ignore[misc]  # set with _info_view by reset()
        note = self._good_note = (self._info_keys, values, self._kind)
        return _new_tuple(FastSignal, (phi, phi, code, note))  # FastSignal's fields, in order

    def _judged(self, view: Any, info: Mapping[str, Any]) -> FastSignal:
        """(Φ, Φ, verdict code, note) from the goal's facts evaluated on ``view``."""
        if info.get("physics_error"):
            return self._diverged()
        if view is None:
            raise ValueError(_NO_VIEW.format(judge=self.label))
        goal = self._goal()
        facts = self.facts(view)
        phi = float(goal.progress(facts))
        if not (0.0 <= phi <= 1.0):
            phi = _check_phi(phi)
        if facts.get("fail"):
            code = FAILURE_CODE
        elif facts["success"]:
            code = SUCCESS_CODE
        else:
            code = UNDECIDED_CODE
        note = self._good_note = (None, facts, goal.kind)
        return FastSignal(phi, phi, code, note)

    def _diverged(self) -> FastSignal:
        """Meta-World's rule on simulator instability: a failure, the key set kept, zeroed."""
        return FastSignal(0.0, 0.0, FAILURE_CODE, (None, self._good_note, ""))

    def _explain(self, fast: FastSignal) -> JudgeSignal:
        phi, _, code, (keys, facts, kind) = fast
        if keys is None and not isinstance(facts, dict):  # a physics error
            zero = _details(facts)
            details = {k: type(v)() for k, v in zero.items()}
            details.update(success=False, fail=True)
            return JudgeSignal(0.0, 0.0, FAILURE, "physics error: the simulation diverged", details)
        details = _details((keys, facts, kind))
        if code == FAILURE_CODE:
            verdict, reason = FAILURE, "the goal reports a failure (e.g. a physics error)"
        elif code == SUCCESS_CODE:
            verdict, reason = SUCCESS, f"{kind} goal reached"
        else:
            verdict, reason = UNDECIDED, f"progress {phi:.3f}"
        return JudgeSignal(reward=phi, phi=phi, verdict=verdict, reason=reason, details=details)


def _details(note: Any) -> dict[str, Any]:
    """Details from a fast-path note: bools stay bools (numpy ones too), numbers become floats.

    A note is (None, facts dict, kind) or, read from the env's info, (keys, their values, kind).
    """
    if note is None:
        return {"success": False, "fail": False}
    keys, facts, _ = note
    pairs = facts.items() if keys is None else zip(keys, facts, strict=True)
    return {k: v if type(v) is bool else bool(v) if type(v) is np.bool_ else float(v)
            for k, v in pairs}


def _values_getter(
    keys: tuple[str, ...] | None,
) -> Callable[[Mapping[str, Any]], tuple[Any, ...]] | None:
    """A function returning the values of ``keys`` in a mapping, as a tuple (C-level, no frame)."""
    if keys is None:
        return None
    if len(keys) >= 2:
        return itemgetter(*keys)
    return lambda info: tuple(info[k] for k in keys)
