"""Declarative task goals: success facts, privileged progress and dense reward.

A goal is what a built-in task checks. Following ManiSkill, :meth:`Goal.evaluate`
returns facts only (``success``, ``fail`` and named predicates such as
``is_grasped``); :meth:`Goal.progress` turns facts into a staged progress
potential Φ ∈ [0, 1]; the env's dense reward reads those, never re-querying
contacts.

Staged progress (the privileged ground truth other judges are measured against) is defined
once, in :mod:`simjudge.envs.progress` (stages, weights, the approach reference); the goals
here compute its facts and call it:

- ``joint`` goals: approach, grasp, joint progress: Φ = 0.3·approach + 0.1·grasped +
  0.6·joint_progress (0.4·approach + 0.6·joint_progress for pressing/pushing goals), where
  ``approach`` = 1 − d / d_ref for the distance d from the suction point to the target
  link's bounding-box centre (d_ref: from the arm's home suction point to that link),
  ``grasped`` is 1 while suction holds the part the joint moves (fact ``holds_part``: the
  target link or a link that moves with it; ``is_grasped`` says any link of the object), and
  ``joint_progress`` is the joint's normalised advance from its initial value towards the
  success threshold, clipped to [0, 1]. Φ = 1 on success.
- ``place`` goals: Φ = 0.3·approach(object) + 0.1·grasped + 0.4·carry + 0.2·placed,
  carry = 1 − h / h_ref for the horizontal distance h from the object's centre to the
  target's (h_ref: the same from where the object started). Φ = 1 on success (placed and
  released).
- ``joint_range`` goals (:class:`JointRangeGoal`): like ``joint`` goals, but the target is
  an interval ``[low, high]`` of the range fraction ("halfway", "slightly open");
  ``joint_progress`` = 1 − distance to the interval / distance at reset, so overshooting
  past the far side lowers Φ again.
- ``all`` goals (:class:`AllOfGoal`): a conjunction; Φ = the mean of the sub-goals' Φ.
- ``sequence`` goals (:class:`SequenceGoal`): ordered stages; Φ = (stages done + Φ of the
  current stage) / n, and a stage done out of order does not count.

Success itself is defined once, in :mod:`simjudge.envs.success` (the vocabulary the task goal
and the plan milestones share): each state goal's :meth:`success_predicate` gives its success
condition as one of those predicates (a :class:`~simjudge.envs.success.JointIn`, a
:class:`~simjudge.envs.success.Placed` and not :class:`~simjudge.envs.success.Holding`, an
:class:`~simjudge.envs.success.AllOf`), and the per-step evaluators test their batched reads
with that predicate's own functions, so the ``success`` fact is the predicate's verdict.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Annotated, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from .backends import BodyQuery, body_reading_offsets
from .progress import approach, carry, joint_phi, moving_part, place_phi
from .state_api import StateView
from .success import (
    AllOf,
    Holding,
    JointIn,
    Not,
    Placed,
    Predicate,
    is_holding,
    placed,
    range_fraction,
)

__all__ = [
    "Goal",
    "JointGoal",
    "JointRangeGoal",
    "PlaceGoal",
    "AllOfGoal",
    "SequenceGoal",
    "GoalSpec",
    "MAX_DENSE_REWARD",
]

MAX_DENSE_REWARD = 5.0
"""Dense reward is ``MAX_DENSE_REWARD * Φ``; normalised reward is Φ."""


def _clip(value: float, low: float, high: float) -> float:
    """``float(np.clip(value, low, high))`` for one float, minus numpy's overhead.

    Written as numpy's own clip behaves (NaN passes through; ties keep the value).
    """
    value = float(value)
    value = low if value < low else value
    return high if value > high else value


def _scene_reader(
    view: StateView, pick: Callable[[tuple[BodyQuery, ...], tuple[int, ...]], list[int]]
) -> Callable[[], list[float]]:
    """A reader of plain floats from the scene's shared batched read (``scene.state_queries()``).

    ``pick(queries, starts)`` gives the positions of the wanted numbers in the
    reading. Why: the observation reads that batch every step and the backend
    memoises it per state, so a goal reads the same state at the cost of a
    memo lookup and one gather.
    """
    scene = view._scene
    backend = scene.robot.backend
    bound: tuple[tuple[BodyQuery, ...], np.ndarray] | None = None

    def read() -> list[float]:
        nonlocal bound
        queries = scene.state_queries()
        if bound is None or bound[0] is not queries:  # first call, or the robot's query changed
            bound = (queries, np.array(pick(queries, scene.state_query_starts()), dtype=np.intp))
        values: list[float] = backend.read_bodies(queries)[bound[1]].tolist()
        return values

    return read


def _joint_link_reader(
    view: StateView, obj: str, joint: str, link: str
) -> tuple[float, float, float, Callable[[], list[float]]]:
    """Static values and a per-step reader for a goal on one joint and one link.

    Returns:
        ``(lower limit, upper limit, initial range fraction, read)``; ``read()`` gives the
        suction point (3 floats), the joint value and the link's bounding box (6 floats).
    """
    lo, hi = view.joint_limit(obj, joint)
    initial = range_fraction(view.initial_joint_value(obj, joint), lo, hi)
    _, index = view._joint(obj, joint)
    _, link_index = view._link(obj, link)
    k = list(view._scene.objects).index(obj) + 1  # its part of the scene read

    def pick(queries: tuple[BodyQuery, ...], starts: tuple[int, ...]) -> list[int]:
        eef = starts[0] + body_reading_offsets(queries[0])["link_positions"]
        at = body_reading_offsets(queries[k])
        value = starts[k] + at["joints"] + queries[k].joints.index(index)
        box = starts[k] + at["link_aabbs"] + 6 * queries[k].link_aabbs.index(link_index)
        return [eef, eef + 1, eef + 2, value, *range(box, box + 6)]

    return lo, hi, initial, _scene_reader(view, pick)


class _GoalBase(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    def evaluate(self, view: StateView) -> dict[str, float | bool]:
        """Success facts and named predicates for the current state."""
        return self.bind(view)()

    def bind(self, view: StateView) -> Callable[[], dict[str, float | bool]]:  # pragma: no cover
        """An evaluator of this goal on ``view``'s scene; ``bind(view)()`` = ``evaluate(view)``.

        Why: names are resolved (unknown ones raise here) and static values
        such as joint limits are read once, so an env that evaluates the goal
        every step pays only for the state that changes. The evaluator stays
        valid for as long as the view's scene exists.
        """
        raise NotImplementedError

    def progress(self, facts: dict[str, float | bool]) -> float:  # pragma: no cover
        """Staged progress potential Φ ∈ [0, 1] from :meth:`evaluate`'s facts."""
        raise NotImplementedError

    def success_predicate(self) -> Predicate:  # pragma: no cover
        """The ``success`` fact as a shared predicate (:mod:`simjudge.envs.success`)."""
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

    @property
    def sign(self) -> float:
        """``1.0`` when the joint opens (moves towards its upper limit), ``-1.0`` when it closes."""
        return 1.0 if self.direction == "open" else -1.0

    def success_predicate(self) -> JointIn:
        """``JointIn(low=threshold)`` when opening, ``JointIn(high=threshold)`` when closing."""
        if self.direction == "open":
            return JointIn(self.object, self.joint, low=self.threshold)
        return JointIn(self.object, self.joint, high=self.threshold)

    def bind(self, view: StateView) -> Callable[[], dict[str, float | bool]]:
        """Evaluator of the facts: joint fraction and progress, distance to the link, approach, grasp."""
        lo, hi, initial, read = _joint_link_reader(view, self.object, self.joint, self.link)
        name, threshold, opening = self.object, self.threshold, self.direction == "open"
        part = moving_part(view._object(self.object).tree, self.joint, self.link)
        contains = self.success_predicate().contains

        def evaluate() -> dict[str, float | bool]:
            # suction point, joint value and link box from the scene's shared read
            ex, ey, ez, value, lx, ly, lz, hx, hy, hz = read()
            fraction = range_fraction(value, lo, hi)
            # to the link's box centre: eef - (lo + hi) / 2
            cx, cy, cz = (lx + hx) / 2.0, (ly + hy) / 2.0, (lz + hz) / 2.0
            dx, dy, dz = ex - cx, ey - cy, ez - cz
            distance = math.sqrt(dx * dx + dy * dy + dz * dz)
            held = view.grasped()
            if opening:
                advance = (fraction - initial) / max(threshold - initial, 1e-6)
            else:
                advance = (initial - fraction) / max(initial - threshold, 1e-6)
            is_grasped = is_holding(held, name)
            return {
                "success": contains(fraction),
                "fail": False,
                "is_grasped": is_grasped,
                "holds_part": is_grasped and held is not None and held[1] in part,
                "joint_fraction": float(fraction),
                "joint_progress": _clip(advance, 0.0, 1.0),
                "distance_to_link": distance,
                "approach": approach((ex, ey, ez), (cx, cy, cz)),
            }

        return evaluate

    def progress(self, facts: dict[str, float | bool]) -> float:
        """Staged Φ: approach, grasp, joint progress (:func:`~simjudge.envs.progress.joint_phi`)."""
        if facts["success"]:
            return 1.0
        return joint_phi(approach=float(facts["approach"]), grasped=bool(facts["holds_part"]),
                         joint_progress=float(facts["joint_progress"]),
                         requires_grasp=self.requires_grasp)


class PlaceGoal(_GoalBase):
    """Put an object on or into another.

    Attributes:
        kind: ``place``.
        object: The object to move.
        target: The object to put it on / in.
        relation: ``on``, ``in`` (an open container: the object's bottom between the
            target's bottom and top) or ``inside`` (an enclosure such as a microwave: the
            whole object below the target's top as well).
        target_link: A link of ``target`` whose bounding box is the place (a drawer of a
            cabinet, the cavity behind a door); None: the target's whole body.
    """

    kind: Literal["place"] = "place"
    object: str
    target: str
    relation: Literal["on", "in", "inside"] = "in"
    target_link: str | None = None

    def placement(self) -> Placed:
        """The ``is_placed`` fact as a shared predicate."""
        return Placed(self.object, self.target, self.relation, self.target_link)

    def success_predicate(self) -> AllOf:
        """Placed and released: ``AllOf(Placed(...), Not(Holding(object)))``."""
        return AllOf(self.placement(), Not(Holding(self.object)))

    def bind(self, view: StateView) -> Callable[[], dict[str, float | bool]]:
        """Evaluator of the facts: grasp, distances to the object and target, approach, carry, placed."""
        view._object(self.object)  # unknown names raise here
        view._object(self.target)
        names = list(view._scene.objects)
        parts = (names.index(self.object) + 1, names.index(self.target) + 1)
        link_index = None if self.target_link is None else view._link(self.target, self.target_link)[1]

        def box_start(queries: tuple[BodyQuery, ...], starts: tuple[int, ...], k: int) -> int:
            at = body_reading_offsets(queries[k])
            if k == parts[1] and link_index is not None:  # the target's link, not its whole body
                return starts[k] + at["link_aabbs"] + 6 * queries[k].link_aabbs.index(link_index)
            return starts[k] + at["aabb"]

        def pick(queries: tuple[BodyQuery, ...], starts: tuple[int, ...]) -> list[int]:
            eef = starts[0] + body_reading_offsets(queries[0])["link_positions"]
            boxes = [box_start(queries, starts, k) for k in parts]
            return [*range(eef, eef + 3), *(i for box in boxes for i in range(box, box + 6))]

        read = _scene_reader(view, pick)
        name = self.object
        where = self.placement()
        relation, margin = where.relation, where.margin
        start_x, start_y = (float(v) for v in view.initial_pose(self.object)[0][:2])

        def evaluate() -> dict[str, float | bool]:
            # suction point and both bodies' boxes from the scene's shared read
            values = read()
            ex, ey, ez, lx, ly, bottom, hx, hy, hz, tlx, tly, _, thx, thy, _ = values
            cx, cy, cz = (lx + hx) / 2.0, (ly + hy) / 2.0, (bottom + hz) / 2.0
            is_grasped = is_holding(view.grasped(), name)
            is_placed = placed(relation, values[3:9], values[9:15], margin)
            rx, ry, rz = ex - cx, ey - cy, ez - cz
            gx, gy = (tlx + thx) / 2.0, (tly + thy) / 2.0
            tx, ty = cx - gx, cy - gy
            to_target = math.sqrt(tx * tx + ty * ty)
            return {
                "success": is_placed and not is_grasped,  # success_predicate()
                "fail": False,
                "is_grasped": is_grasped,
                "is_placed": is_placed,
                "distance_to_object": math.sqrt(rx * rx + ry * ry + rz * rz),
                "distance_to_target": to_target,
                "approach": approach((ex, ey, ez), (cx, cy, cz)),
                "carry": carry(to_target, math.hypot(start_x - gx, start_y - gy)),
            }

        return evaluate

    def progress(self, facts: dict[str, float | bool]) -> float:
        """Staged Φ: approach, grasp, carry, place (:func:`~simjudge.envs.progress.place_phi`)."""
        if facts["success"]:
            return 1.0
        return place_phi(approach=float(facts["approach"]), grasped=bool(facts["is_grasped"]),
                         placed=bool(facts["is_placed"]), carry=float(facts["carry"]))


class JointRangeGoal(_GoalBase):
    """Bring one joint of an object into an interval of its range (and not past it).

    The target is an interval ``[low, high]`` of the range fraction (0 = lower limit =
    closed): "halfway" is about ``[0.35, 0.65]``, "slightly open" ``[0.08, 0.4]``.
    Overshooting the interval is not success, and Φ falls again past it.

    Facts: ``success`` (the fraction is inside ``[low, high]``), ``fail``,
    ``is_grasped`` (any link of the object held), ``holds_part`` (a link the joint moves
    held), ``joint_fraction``, ``joint_progress`` (1 − the distance from the
    interval over the distance at reset, clipped to [0, 1], so overshoot lowers it),
    ``overshoot`` (how far the fraction is past the interval's far side, ≥ 0),
    ``distance_to_link`` and ``approach``. Φ is staged as for :class:`JointGoal`.

    Attributes:
        kind: ``joint_range``.
        object: Scene object name.
        joint: Joint name.
        link: Link to reach / grasp (a handle, button, knob ...).
        low: Lower end of the target interval (range fraction).
        high: Upper end of the target interval (range fraction).
        direction: ``open`` (the joint moves up from its start) or ``close`` (down); the
            far side of the interval is ``high`` for ``open`` and ``low`` for ``close``.
        requires_grasp: Whether progress stages include holding ``link``.
    """

    kind: Literal["joint_range"] = "joint_range"
    object: str
    joint: str
    link: str
    low: float = Field(ge=0.0, le=1.0)
    high: float = Field(ge=0.0, le=1.0)
    direction: Literal["open", "close"] = "open"
    requires_grasp: bool = True

    @model_validator(mode="after")
    def _ordered(self) -> JointRangeGoal:
        if self.low > self.high:
            raise ValueError(f"low {self.low} is above high {self.high}; give low <= high")
        return self

    def success_predicate(self) -> JointIn:
        """``JointIn(low, high)``."""
        return JointIn(self.object, self.joint, low=self.low, high=self.high)

    def bind(self, view: StateView) -> Callable[[], dict[str, float | bool]]:
        """Evaluator of the facts: fraction, progress, overshoot, distance to the link, grasp."""
        lo, hi, initial, read = _joint_link_reader(view, self.object, self.joint, self.link)
        name, low, high, opening = self.object, self.low, self.high, self.direction == "open"
        part = moving_part(view._object(self.object).tree, self.joint, self.link)
        start_gap = max(low - initial, initial - high, 0.05)
        contains = self.success_predicate().contains

        def evaluate() -> dict[str, float | bool]:
            ex, ey, ez, value, lx, ly, lz, hx, hy, hz = read()
            fraction = range_fraction(value, lo, hi)
            cx, cy, cz = (lx + hx) / 2.0, (ly + hy) / 2.0, (lz + hz) / 2.0
            dx, dy, dz = ex - cx, ey - cy, ez - cz
            gap = max(low - fraction, fraction - high, 0.0)
            held = view.grasped()
            is_grasped = is_holding(held, name)
            return {
                "success": contains(fraction),
                "fail": False,
                "is_grasped": is_grasped,
                "holds_part": is_grasped and held is not None and held[1] in part,
                "joint_fraction": float(fraction),
                "joint_progress": _clip(1.0 - gap / start_gap, 0.0, 1.0),
                "overshoot": max(fraction - high if opening else low - fraction, 0.0),
                "distance_to_link": math.sqrt(dx * dx + dy * dy + dz * dz),
                "approach": approach((ex, ey, ez), (cx, cy, cz)),
            }

        return evaluate

    def progress(self, facts: dict[str, float | bool]) -> float:
        """Staged Φ: approach, grasp, joint progress (as :meth:`JointGoal.progress`)."""
        return JointGoal.progress(self, facts)  # type: ignore[arg-type]


Leaf = Annotated[JointGoal | JointRangeGoal | PlaceGoal, Field(discriminator="kind")]
"""One goal that is not a conjunction."""


def _unprefixed(facts: dict[str, float | bool], index: int) -> dict[str, float | bool]:
    """Sub-goal ``index``'s facts (keys ``g<index>.*`` of a composed goal), unprefixed."""
    prefix = f"g{index}."
    return {k[len(prefix):]: v for k, v in facts.items() if k.startswith(prefix)}


class AllOfGoal(_GoalBase):
    """A conjunction: every sub-goal must hold (open both doors; open a lid and press).

    Facts: ``success`` (all sub-goals succeed), ``fail`` (any fails), ``is_grasped`` (any
    sub-goal's object is held), ``goals_done`` (how many succeed), and each sub-goal's
    facts prefixed with its index, ``g0.joint_fraction``, ``g1.success`` .... Φ is the
    mean of the sub-goals' Φ (1 for each that succeeds), 1 on success.

    Attributes:
        kind: ``all``.
        goals: The sub-goals, in the order they are usually done.
    """

    kind: Literal["all"] = "all"
    goals: tuple[Leaf, ...] = Field(min_length=1)

    def bind(self, view: StateView) -> Callable[[], dict[str, float | bool]]:
        """Evaluator of every sub-goal's facts, prefixed, and the conjunction's."""
        evaluators = [goal.bind(view) for goal in self.goals]

        def evaluate() -> dict[str, float | bool]:
            facts: dict[str, float | bool] = {}
            done, fail, held = 0, False, False
            for i, evaluator in enumerate(evaluators):
                sub = evaluator()
                done += bool(sub["success"])
                fail = fail or bool(sub["fail"])
                held = held or bool(sub.get("is_grasped", False))
                facts.update({f"g{i}.{key}": value for key, value in sub.items()})
            facts.update(success=done == len(evaluators), fail=fail, is_grasped=held,
                         goals_done=float(done))
            return facts

        return evaluate

    def success_predicate(self) -> AllOf:
        """``AllOf`` of the sub-goals' predicates."""
        return AllOf(*(goal.success_predicate() for goal in self.goals))

    def sub_facts(self, facts: dict[str, float | bool], index: int) -> dict[str, float | bool]:
        """The facts of sub-goal ``index`` from :meth:`evaluate`'s facts, unprefixed."""
        return _unprefixed(facts, index)

    def progress(self, facts: dict[str, float | bool]) -> float:
        """Mean of the sub-goals' Φ (1 for each that succeeds); 1 on success."""
        if facts["success"]:
            return 1.0
        phis = [goal.progress(self.sub_facts(facts, i)) for i, goal in enumerate(self.goals)]
        return _clip(sum(phis) / len(phis), 0.0, 0.999)


class SequenceGoal(_GoalBase):
    """Stages that must be done in order (open the drawer, put the cube in, close it).

    A stage counts once it succeeds while it is the current stage and after it was seen
    not succeeding since the previous stage was done (a rising edge): doing stage 2
    before stage 1 does not count, and a stage already true when its turn comes must be
    redone. Done stages stay done (closing the drawer does not undo "drawer opened").
    The evaluator from :meth:`bind` therefore has memory: it must see every step of an
    episode from its start (the env binds the goal again on ``reset`` and ``set_state``).
    Its first evaluation counts the longest run of stages, from the first, that already
    hold (a restored snapshot keeps the stages it shows done; at a task's reset none
    hold); after that, one stage at most per evaluation.

    Facts: ``success`` (every stage done), ``fail`` (any stage fails), ``is_grasped``,
    ``stages_done``, ``stage`` (index of the current stage; ``n`` when done), ``armed``
    (the current stage may count: it has been seen false since its turn came) and each
    stage's facts prefixed with its index (``g0.success``, ``g1.is_placed`` ...). Staged
    Φ = (stages done + Φ of the current stage) / n, where the current stage's Φ is 0
    while it is not armed; 1 on success.

    Attributes:
        kind: ``sequence``.
        goals: The stages, in the order they must be done.
    """

    kind: Literal["sequence"] = "sequence"
    goals: tuple[Leaf, ...] = Field(min_length=1)

    def bind(self, view: StateView) -> Callable[[], dict[str, float | bool]]:
        """Evaluator (with memory of the stages done) of every stage's facts, prefixed."""
        evaluators = [goal.bind(view) for goal in self.goals]
        n = len(evaluators)
        memory = {"done": 0, "armed": True, "first": True}

        def evaluate() -> dict[str, float | bool]:
            facts: dict[str, float | bool] = {}
            fail, held = False, False
            for i, evaluator in enumerate(evaluators):
                sub = evaluator()
                fail = fail or bool(sub["fail"])
                held = held or bool(sub.get("is_grasped", False))
                facts.update({f"g{i}.{key}": value for key, value in sub.items()})
            done = memory["done"]
            if memory["first"]:  # stages a restored state already shows done, in order
                memory["first"] = False
                while done < n - 1 and facts[f"g{done}.success"] and facts[f"g{done + 1}.success"]:
                    done += 1
                memory["done"] = done
            if done < n:
                current = bool(facts[f"g{done}.success"])
                if current and memory["armed"]:
                    done = memory["done"] = done + 1
                    # the next stage may only count after it has been seen false
                    memory["armed"] = done >= n or not bool(facts[f"g{done}.success"])
                elif not current:
                    memory["armed"] = True
            facts.update(success=done == n, fail=fail, is_grasped=held, stages_done=float(done),
                         stage=float(done), armed=bool(memory["armed"]))
            return facts

        return evaluate

    def sub_facts(self, facts: dict[str, float | bool], index: int) -> dict[str, float | bool]:
        """The facts of stage ``index`` from :meth:`evaluate`'s facts, unprefixed."""
        return _unprefixed(facts, index)

    def success_predicate(self) -> Predicate:
        """Not a state predicate: a sequence's success depends on the order of the episode.

        Raises:
            TypeError: Always; each stage has one (``goals[i].success_predicate()``).
        """
        raise TypeError("a sequence goal's success depends on the episode's order, not one "
                        "state; use each stage's goals[i].success_predicate()")

    def progress(self, facts: dict[str, float | bool]) -> float:
        """(stages done + Φ of the current stage) / n; 1 on success."""
        if facts["success"]:
            return 1.0
        n = len(self.goals)
        done = int(facts["stages_done"])
        current = 0.0
        if done < n and facts["armed"]:
            current = self.goals[done].progress(self.sub_facts(facts, done))
        return _clip((done + current) / n, 0.0, 0.999)


GoalSpec = Annotated[
    JointGoal | JointRangeGoal | PlaceGoal | AllOfGoal | SequenceGoal, Field(discriminator="kind")
]
"""Any goal, discriminated by ``kind``."""

Goal = JointGoal | JointRangeGoal | PlaceGoal | AllOfGoal | SequenceGoal
