"""TaskGoal: the independent definition of success for any task, built-in or new.

A task's goal is derived from the task spec (its name, description and the object's
articulation tree) by its own path — a built-in task's reference goal, the deterministic
parser of :mod:`simjudge.tasks.spec.goal_parser`, or an LLM writing this schema — and
**never from a proposal**. The executor checks it over the reset state and every subtask's
end state in order (verified success), the start-state check uses
:meth:`TaskGoal.implied_initial_joints`, and proposers are shown :meth:`TaskGoal.describe` so
that they aim at what they will be judged by.

A goal is a conjunction of targets, all of which must hold at the end (and, with
``hold_steps`` = k > 0, over the last k steps):

- :class:`JointTarget`: an object's joint must end inside an interval ``[low, high]`` of
  its range fraction (0 = the lower limit = closed / released, 1 = the upper limit), moving
  in ``direction`` from its start; ``link`` is the part to reach or grasp (a handle on the
  door, the knob itself).
- :class:`PlaceTarget`: an object must end on / in another one, released.

Amount vocabulary (:data:`AMOUNTS`), as intervals of the range fraction measured from the
closed / lower limit. Relative amounts ("slightly", "a quarter", "three quarters") measure
how far the part travels, so for closing they are mirrored (``1 - high, 1 - low``):

==================  ==========================================  ======================
amount              words                                       interval (open; close)
==================  ==========================================  ======================
``open``            open, pull out, lift, raise, unfold, turn   ``[floor, 1]`` (below)
                    on (no amount word)
``press``           press, push (a button), flush, pump, click  ``[floor, 1]`` (0.6)
``turn``            turn, rotate, twist, tilt (no amount)       ``[floor, 1]``
``close``           close, shut, lower, fold, push in, turn off ``[0, 0.15]``
``fully``           fully, completely, all the way, wide        ``[0.9, 1]``; ``[0, 0.1]``
``halfway``         halfway, half way, half, half a turn        ``[0.35, 0.65]``
``a quarter``       a quarter, quarter turn, quarter of the way ``[0.15, 0.35]``;
                                                                ``[0.65, 0.85]``
``three quarters``  three quarters, three-quarter               ``[0.65, 0.85]``;
                                                                ``[0.15, 0.35]``
``slightly``        slightly, a crack, a bit, a little, ajar,   ``[0.08, 0.4]``;
                    barely, nudge (open)                        ``[0.6, 0.92]``
``partly``          partly, partially, partway                  ``[0.15, 0.85]``
``N%``              40%, 40 percent                             ``[N - 0.1, N + 0.1]``
``N degrees``       90 degrees, 90° (hinges, knobs)             rad / range ± 0.1
==================  ==========================================  ======================

``floor`` — the least fraction that counts as open / pressed / turned for a kind of part,
calibrated on the built-in tasks' reference thresholds (:data:`OPEN_FLOOR`): door, lid,
screen, seat 0.35; window, lamp head 0.5; drawer, faucet handle, button, pump 0.6; knob /
dial 0.2; any other part 0.6 (near the upper limit).

Implied start (:meth:`TaskGoal.implied_initial_joints`): an opening / pressing / turning
target starts at 0 (closed); a closing one at 0.9 of the range (1.0 when the target interval
reaches above 0.85), unless the task fixes it (a built-in scene's ``joint_init``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from simjudge.envs.goals import AllOfGoal, Goal, JointGoal, JointRangeGoal, PlaceGoal
from simjudge.envs.success import (
    TARGET_TOLERANCE,
    AllOf,
    JointChange,
    JointIn,
    Predicate,
    joint_fraction,
    range_fraction,
)

from .goal_eval import joint_target_holds
from .goal_parts import StartCondition, UnchangedPart

if TYPE_CHECKING:
    from simjudge.envs.state_api import StateView

    from .task import TaskSpec

__all__ = [
    "AMOUNTS",
    "GOAL_SOURCES",
    "OPEN_FLOOR",
    "JointTarget",
    "PlaceTarget",
    "Target",
    "TaskGoal",
    "amount_interval",
]

GOAL_SOURCES: tuple[str, ...] = ("reference", "parser", "llm")
"""Where a goal came from: a built-in task's reference goal, the parser, or an LLM."""

OPEN_FLOOR: dict[str, float] = {
    "door": 0.35,
    "screen": 0.35,
    "seat": 0.35,
    "lid": 0.35,
    "window": 0.5,
    "head": 0.5,
    "drawer": 0.6,
    "handle": 0.6,
    "button": 0.6,
    "pump": 0.6,
    "knob": 0.2,
}
"""Least range fraction that counts as open / pressed / turned, by part semantic.

Calibrated on the built-in tasks' reference thresholds; other parts use
:data:`DEFAULT_OPEN_FLOOR`.
"""

DEFAULT_OPEN_FLOOR = 0.6
"""Open floor of a part not in :data:`OPEN_FLOOR`: near the upper limit."""

AMOUNTS: dict[str, tuple[tuple[float, float], tuple[float, float]] | None] = {
    "open": None,
    "press": None,
    "turn": None,
    "close": ((0.0, 0.15), (0.0, 0.15)),
    "fully": ((0.9, 1.0), (0.0, 0.1)),
    "halfway": ((0.35, 0.65), (0.35, 0.65)),
    "a quarter": ((0.15, 0.35), (0.65, 0.85)),
    "three quarters": ((0.65, 0.85), (0.15, 0.35)),
    "slightly": ((0.08, 0.4), (0.6, 0.92)),
    "partly": ((0.15, 0.85), (0.15, 0.85)),
}
"""Amount word -> (interval when opening, interval when closing), range fractions.

None: the part's open floor up to the upper limit (``[floor, 1]``), or ``[0, 0.15]``
when closing. Percentages and degrees are computed by :func:`amount_interval`.
"""

Direction = Literal["open", "close"]

_MOTION = {"button": "pressing", "pump": "pressing", "knob": "turning", "handle": "turning",
           "head": "turning"}


def amount_interval(amount: str, direction: Direction, semantic: str = "") -> tuple[float, float]:
    """The target interval of an amount word for a part moving in ``direction``.

    Args:
        amount: A key of :data:`AMOUNTS`.
        direction: ``open`` (away from the lower limit) or ``close``.
        semantic: The part's semantic (``drawer``, ``door`` ...) for the open floor.

    Returns:
        ``(low, high)`` range fractions.

    Raises:
        KeyError: ``amount`` is not in the vocabulary (the message lists it).
    """
    if amount not in AMOUNTS:
        raise KeyError(f"unknown amount {amount!r}; amounts are {sorted(AMOUNTS)}")
    pair = AMOUNTS[amount]
    if pair is None:
        if direction == "close":
            return AMOUNTS["close"][1]  # type: ignore[index]
        return OPEN_FLOOR.get(semantic, DEFAULT_OPEN_FLOOR), 1.0
    return pair[0] if direction == "open" else pair[1]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class JointTarget(_Strict):
    """One joint of one object must end inside an interval of its range.

    Attributes:
        kind: ``joint``.
        object: Scene object name.
        joint: The joint that moves the part.
        part: The link the joint moves (``link_0``, the drawer).
        link: The link to reach or grasp (the drawer's handle ``link_1``, or the part).
        semantic: What the part is, as in the articulation tree (``slider drawer``).
        low: Lower end of the target interval (range fraction, 0 = lower limit = closed).
        high: Upper end of the target interval.
        direction: ``open`` (moving up from the start) or ``close`` (moving down).
        amount: The amount word that produced the interval (``halfway``, ``open``,
            ``reference`` for a built-in task's threshold).
        requires_grasp: Whether the part is grasped (not for pressing).
        spring: The joint springs back when released (buttons, pumps): it must be held.
        start: Range fraction the scene must start at; None = implied by the direction.
        relative: ``low``/``high`` measure the change from the start in ``direction``
            ("open it slightly": a change of 0.05-0.35), not the end position.
        reached: The episode's largest fraction must reach at least this (the first step
            of a two-step task: "open it fully, then close it halfway"); None = no such step.
        words: The words the target was read from (for the goal card).
    """

    kind: Literal["joint"] = "joint"
    object: str
    joint: str
    part: str
    link: str
    semantic: str = ""
    low: float = Field(ge=0.0, le=1.0)
    high: float = Field(ge=0.0, le=1.0)
    direction: Direction = "open"
    amount: str = "open"
    requires_grasp: bool = True
    spring: bool = False
    start: float | None = Field(default=None, ge=0.0, le=1.0)
    relative: bool = False
    reached: float | None = Field(default=None, ge=0.0, le=1.0)
    words: str = ""

    @model_validator(mode="after")
    def _ordered(self) -> JointTarget:
        if self.low > self.high:
            raise ValueError(f"low {self.low} is above high {self.high}; give low <= high")
        return self

    @property
    def key(self) -> str:
        """``<object>/<joint>``, the key of the executor's joint records."""
        return f"{self.object}/{self.joint}"

    def implied_start(self) -> float:
        """The range fraction the scene should start at for the target not to hold at once."""
        if self.start is not None:
            return self.start
        if self.direction == "open":
            return 0.0
        if self.relative:
            return 1.0
        return 1.0 if self.high > 0.85 else 0.9

    def absolute(self, start: float | None = None) -> tuple[float, float]:
        """The target interval as end positions (a relative one from ``start``)."""
        if not self.relative:
            return self.low, self.high
        origin = self.implied_start() if start is None else start
        if self.direction == "open":
            return min(1.0, origin + self.low), min(1.0, origin + self.high)
        return max(0.0, origin - self.high), max(0.0, origin - self.low)

    def success_predicate(self) -> JointIn | JointChange:
        """The end condition as a shared predicate (:mod:`simjudge.envs.success`).

        A :class:`~simjudge.envs.success.JointIn` on ``[low, high]`` with
        :data:`~simjudge.envs.success.TARGET_TOLERANCE`, an end at a limit (0 or 1) open (a
        joint may read a hair past its limit); a relative target's is a
        :class:`~simjudge.envs.success.JointChange` from the start. A spring joint's is tested
        on the episode's largest fraction and ``reached`` on the episode
        (:func:`~simjudge.tasks.spec.goal_eval.joint_target_holds`).
        """
        if self.relative:
            return JointChange(self.object, self.joint, self.low, self.high, self.direction,
                               tolerance=TARGET_TOLERANCE)
        return self.interval_predicate()

    def interval_predicate(self) -> JointIn:
        """``[low, high]`` as a :class:`~simjudge.envs.success.JointIn` (a limit end open)."""
        return JointIn(self.object, self.joint, low=self.low if self.low > 0.0 else None,
                       high=self.high if self.high < 1.0 else None, tolerance=TARGET_TOLERANCE)

    def contains(self, fraction: float) -> bool:
        """Whether ``fraction`` is inside the interval (an end at a limit is open-ended)."""
        return self.interval_predicate().contains(fraction)

    def env_goal(self) -> JointGoal | JointRangeGoal:
        """The env goal: a :class:`JointGoal` when the interval is one-sided, else a range."""
        common: dict[str, Any] = {
            "object": self.object, "joint": self.joint, "link": self.link,
            "direction": self.direction, "requires_grasp": self.requires_grasp,
        }
        low, high = self.absolute()
        if self.direction == "open" and high >= 1.0:
            return JointGoal(threshold=low, **common)
        if self.direction == "close" and low <= 0.0:
            return JointGoal(threshold=high, **common)
        return JointRangeGoal(low=low, high=high, **common)

    def interval_text(self) -> str:
        """``at ≥ 0.60``, ``at ≤ 0.15`` or ``between 0.35 and 0.65``."""
        if self.relative:
            way = "up" if self.direction == "open" else "down"
            return f"{self.low:.2f}-{self.high:.2f} {way} from its start"
        if self.high >= 1.0:
            return f"at ≥ {self.low:.2f}"
        if self.low <= 0.0:
            return f"at ≤ {self.high:.2f}"
        return f"between {self.low:.2f} and {self.high:.2f}"

    def describe(self) -> str:
        """One line for a prompt or a report."""
        via = f"; grasp {self.link}" if self.requires_grasp else f"; press {self.link}"
        what = f"{self.semantic} {self.part}" if self.semantic else self.part
        verb = _MOTION.get(self.semantic.split(" ")[-1], "opening")
        verb = verb if self.direction == "open" else "closing"
        text = (f"{self.object} {self.joint} ({what}{via}) must end {self.interval_text()} "
                f"of its range ({self.amount}; {verb}), starting from {self.implied_start():.2f}")
        if self.reached is not None:
            text += f", after reaching ≥ {self.reached:.2f} first"
        if self.spring:
            text += "; it springs back when released, so hold it there at the end"
        return text


class PlaceTarget(_Strict):
    """An object must end on / in another one, released.

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

    @property
    def key(self) -> str:
        """``<object> <relation> <target>``."""
        return f"{self.object} {self.relation} {self.target}"

    def env_goal(self) -> PlaceGoal:
        """The env goal."""
        return PlaceGoal(object=self.object, target=self.target, relation=self.relation)

    def success_predicate(self) -> AllOf:
        """Placed and released, as a shared predicate (the env goal's own)."""
        return self.env_goal().success_predicate()

    def describe(self) -> str:
        """One line for a prompt or a report."""
        return f"{self.object} must end {self.relation} {self.target}, released"


Target = Annotated[JointTarget | PlaceTarget, Field(discriminator="kind")]
"""One target of a :class:`TaskGoal`, discriminated by ``kind``."""


class TaskGoal(_Strict):
    """What must hold at the end of a task: a conjunction of targets.

    Example:
        >>> goal = TaskGoal(task="Open Drawer", source="parser", targets=[JointTarget(
        ...     object="Cabinet", joint="joint_0", part="link_0", link="link_1",
        ...     semantic="slider drawer", low=0.6, high=1.0)])
        >>> print(goal.describe())
        Cabinet joint_0 (slider drawer link_0; grasp link_1) must end at ≥ 0.60 of its range (open; opening), starting from 0.00.
        >>> TaskGoal.from_json(goal.to_json()) == goal
        True
        >>> goal.env_goal().threshold, goal.implied_initial_joints()
        (0.6, {('Cabinet', 'joint_0'): 0.0})

    Attributes:
        task: The task's name.
        targets: Everything that must hold (all of them).
        hold_steps: 0 = hold at the final state; k > 0 = over the last k steps as well.
        source: ``reference`` (a built-in task), ``parser`` or ``llm``.
        explanation: Why these targets: the words and tree facts they came from.
        unchanged: Parts that must stay where they started ("leave the right door shut").
        starts: Start conditions the words state ("the door starts open").
    """

    task: str = ""
    targets: tuple[Target, ...] = Field(min_length=1)
    hold_steps: int = Field(default=0, ge=0)
    source: Literal["reference", "parser", "llm"] = "parser"
    explanation: str = ""
    unchanged: tuple[UnchangedPart, ...] = ()
    starts: tuple[StartCondition, ...] = ()

    # -- construction ------------------------------------------------------------------
    @classmethod
    def from_json(cls, text: str | bytes) -> TaskGoal:
        """Inverse of :meth:`to_json`."""
        return cls.model_validate_json(text)

    def to_json(self, indent: int | None = None) -> str:
        """JSON text that :meth:`from_json` reads back."""
        return self.model_dump_json(indent=indent)

    @classmethod
    def from_reference(cls, spec: TaskSpec) -> TaskGoal:
        """A built-in task's reference goal, wrapped (``source="reference"``).

        The targets reproduce the reference goal exactly: ``env_goal()`` equals
        ``spec.goal``, and the start is the scene's ``joint_init`` when it sets one.

        Raises:
            ValueError: The task has no reference goal.
        """
        goal = spec.goal
        if goal is None:
            raise ValueError(f"task {spec.name!r} has no reference goal to wrap")
        leaves = goal.goals if isinstance(goal, AllOfGoal) else (goal,)
        targets = [_reference_target(spec, leaf) for leaf in leaves]
        return cls(task=spec.name, targets=tuple(targets), source="reference",
                   explanation=f"the reference goal of the built-in task {spec.env_id}")

    # -- what the executor and the verifiers use -------------------------------------------
    @property
    def joint_targets(self) -> list[JointTarget]:
        """The joint targets, in order."""
        return [t for t in self.targets if isinstance(t, JointTarget)]

    def env_goal(self) -> Goal:
        """An env goal (``SimEnv(goal=...)``): success facts and a staged progress Φ.

        One target gives its own goal (a :class:`~simjudge.envs.goals.JointGoal` for a
        one-sided interval, a :class:`~simjudge.envs.goals.JointRangeGoal` otherwise, a
        :class:`~simjudge.envs.goals.PlaceGoal`); several give an
        :class:`~simjudge.envs.goals.AllOfGoal`.
        """
        goals = [target.env_goal() for target in self.targets]
        return goals[0] if len(goals) == 1 else AllOfGoal(goals=tuple(goals))

    def success_predicate(self) -> Predicate:
        """The targets' end condition as one shared predicate (an ``AllOf`` of several).

        Parts judged on the run's record (``unchanged``, a spring joint's largest
        fraction, a two-step target's first step) are checked by :meth:`check` and
        :func:`~simjudge.tasks.spec.goal_eval.outcome_check`, not by this state predicate.
        """
        parts = [target.success_predicate() for target in self.targets]
        return parts[0] if len(parts) == 1 else AllOf(*parts)

    def check(
        self, view: StateView, reached: Mapping[str, Any] | None = None
    ) -> tuple[bool, list[dict[str, Any]]]:
        """Whether every target holds on ``view``'s current state, with per-target facts.

        Args:
            view: The state view of a scene that has the goal's objects.
            reached: Optional ``{"<object>/<joint>": fraction | {"fraction": f}}`` of the
                largest fraction reached during execution, reported beside each target
                (``max_fraction``) for the record; it does not change the verdict.

        Returns:
            ``(holds, facts)``: one dict per target with ``target``, ``kind``, ``holds``
            and, for joints, ``fraction``, ``initial_fraction``, ``low``, ``high``,
            ``direction``; for placements, the place goal's facts.
        """
        facts = [_check_target(view, target, reached or {}) for target in self.targets]
        facts += [_check_unchanged(view, part, reached or {}) for part in self.unchanged]
        return all(f["holds"] for f in facts), facts

    def holds_over(self, history: Sequence[bool]) -> bool:
        """Whether the goal held long enough.

        It must hold at the last step, and over the last ``hold_steps`` steps when that is
        > 0 (``history``: per-step success, in order).
        """
        need = max(1, self.hold_steps)
        return len(history) >= need and all(history[-need:])

    def implied_initial_joints(self) -> dict[tuple[str, str], float]:
        """``{(object, joint): fraction}`` the scene must start at for a non-trivial task.

        A closing target starts open, an opening one closed; a stated start
        (:attr:`starts`) wins.
        """
        out = {(t.object, t.joint): t.implied_start() for t in self.joint_targets}
        out.update({(c.object, c.joint): c.start_at() for c in self.starts})
        return out

    def describe(self) -> str:
        """A short text for an LLM prompt or a report (one line per target)."""
        lines = [t.describe() for t in self.targets]
        lines += [u.describe() for u in self.unchanged] + [c.describe() for c in self.starts]
        hold = f" Hold it for the last {self.hold_steps} steps." if self.hold_steps else ""
        if len(lines) == 1:
            return lines[0] + "." + hold
        body = "\n".join(f"{i}. {line}" for i, line in enumerate(lines, start=1))
        return f"All of these must hold at the end:\n{body}" + (f"\n{hold.strip()}" if hold else "")


def _reference_target(spec: TaskSpec, goal: Goal) -> JointTarget | PlaceTarget:
    """One reference env goal as a target (the start from the scene's ``joint_init``)."""
    if isinstance(goal, PlaceGoal):
        # an enclosure (inside) is "in" here
        return PlaceTarget(object=goal.object, target=goal.target,
                           relation="on" if goal.relation == "on" else "in")
    if not isinstance(goal, JointGoal | JointRangeGoal):  # pragma: no cover - no such tasks
        raise ValueError(f"cannot wrap a {type(goal).__name__} as a target")
    from simjudge.envs.catalogue import default_catalogue

    obj = next((o for o in spec.scene.objects if o.name == goal.object), None)
    part, semantic, spring = goal.link, "", False
    asset = obj.asset if obj is not None else spec.asset
    entry = default_catalogue().get(asset) if asset in default_catalogue() else None
    if entry is not None and entry.tree is not None:
        joint = entry.tree.joint(goal.joint)
        link = entry.tree.link(joint.child)
        part, semantic, spring = joint.child, f"{link.kind} {link.semantic}", joint.spring
    init = obj.joint_init.get(goal.joint) if obj is not None else None
    start = float(init) if isinstance(init, int | float) else None
    if isinstance(goal, JointGoal):
        low, high = (goal.threshold, 1.0) if goal.direction == "open" else (0.0, goal.threshold)
    else:
        low, high = goal.low, goal.high
    return JointTarget(object=goal.object, joint=goal.joint, part=part, link=goal.link,
                       semantic=semantic, low=low, high=high, direction=goal.direction,
                       amount="reference", requires_grasp=goal.requires_grasp, spring=spring,
                       start=start)


def _check_target(
    view: StateView, target: JointTarget | PlaceTarget, reached: Mapping[str, Any]
) -> dict[str, Any]:
    """Facts of one target on the current state."""
    if isinstance(target, PlaceTarget):
        facts = target.env_goal().evaluate(view)
        return {"target": target.key, "kind": "place", "holds": target.success_predicate()(view),
                **{k: v for k, v in facts.items() if k != "success"}}
    initial, fraction = _fractions(view, target.object, target.joint)
    seen = reached.get(target.key)
    peak = None if seen is None else float(seen["fraction"] if isinstance(seen, Mapping) else seen)
    holds = joint_target_holds(target, float(initial), float(fraction),
                               max(float(initial), float(fraction), peak or 0.0))
    out: dict[str, Any] = {
        "target": target.key, "kind": "joint", "holds": holds,
        "fraction": round(float(fraction), 4), "initial_fraction": round(float(initial), 4),
        "low": target.low, "high": target.high, "direction": target.direction,
    }
    if peak is not None:
        out["max_fraction"] = peak
    return out


def _fractions(view: StateView, obj: str, joint: str) -> tuple[float, float]:
    """``(initial, current)`` range fractions of a joint."""
    lo, hi = view.joint_limit(obj, joint)
    return range_fraction(view.initial_joint_value(obj, joint), lo, hi), joint_fraction(
        view, obj, joint)


def _check_unchanged(view: StateView, part: UnchangedPart,
                     reached: Mapping[str, Any]) -> dict[str, Any]:
    """Facts of one part that must stay put."""
    initial, fraction = _fractions(view, part.object, part.joint)
    seen = reached.get(part.key)
    peak = max(initial, fraction) if seen is None else float(
        seen["fraction"] if isinstance(seen, Mapping) else seen)
    return {"target": part.key, "kind": "unchanged",
            "holds": part.holds(initial, fraction, peak),
            "fraction": round(float(fraction), 4), "initial_fraction": round(float(initial), 4)}
