"""Predicate and milestone judges (RoboBench's task-completion score, in simulation).

A :class:`MilestoneJudge` holds a DAG of :class:`Milestone` s (a predicate plus the
milestones that must come first). On every step it re-reads all predicates and marks a
milestone *reached* the first time its predicate holds while all its prerequisites were
reached **at an earlier step** (``strict_order``; otherwise the same step counts too), so
completion respects the DAG order. Φ = reached / total, the RoboBench completion score
Y/X ("ever reached"; ``details["holding"]`` gives "held now"). Success when every milestone
is reached (and, with ``require_held``, every predicate holds now).

Example:
    >>> from simjudge.judges.predicates import Holding, JointOpen
    >>> judge = MilestoneJudge([
    ...     Milestone("grasp", Holding("StorageFurniture", "link_1")),
    ...     Milestone("open", JointOpen("StorageFurniture", "joint_0", 0.5), after=("grasp",)),
    ... ])
    >>> judge.order
    ('grasp', 'open')
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from .base import Judge
from .context import JudgeContext
from .predicates import Predicate
from .signals import SUCCESS, UNDECIDED, JudgeSignal, Transition

__all__ = ["Milestone", "MilestoneJudge", "PredicateJudge"]

_NO_VIEW = "{judge} reads simulator state but the transition has no StateView; wrap a SimEnv"


@dataclass(frozen=True)
class Milestone:
    """One critical state change of a task.

    Attributes:
        name: Unique name (``"drawer opened"``).
        predicate: When it is reached.
        after: Names of the milestones that must be reached first (DAG edges).
    """

    name: str
    predicate: Predicate
    after: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "after", tuple(self.after))
        if not isinstance(self.predicate, Predicate):
            raise TypeError(f"milestone {self.name!r}: predicate must be a Predicate")


def _topological_order(milestones: Sequence[Milestone]) -> tuple[str, ...]:
    names = [m.name for m in milestones]
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(f"milestone names must be unique; repeated: {dup}")
    known = set(names)
    for m in milestones:
        missing = [p for p in m.after if p not in known]
        if missing:
            raise ValueError(
                f"milestone {m.name!r} comes after unknown milestones {missing}; known: {names}"
            )
    deps = {m.name: set(m.after) for m in milestones}
    order: list[str] = []
    while deps:
        ready = [n for n in names if n in deps and not deps[n] - set(order)]
        if not ready:
            raise ValueError(f"the milestone graph has a cycle among {sorted(deps)}; make it a DAG")
        for n in ready:
            order.append(n)
            del deps[n]
    return tuple(order)


class MilestoneJudge(Judge):
    """Φ = share of milestones reached in DAG order; success when all are reached.

    The reward term is Φ (``max_reward`` = 1). Details (same keys every step):
    ``reached`` (milestone -> bool), ``holding`` (milestone -> bool, predicate holds now),
    ``completion_score`` (int, RoboBench's ⌊10·Y/X⌋).

    Args:
        milestones: The milestones (any order; edges via ``after``).
        strict_order: Prerequisites must be reached at an earlier step (RoboBench); False
            also accepts the same step.
        require_held: Success also needs every predicate to hold at the current step.
    """

    name = "milestones"
    provides_potential = True
    max_reward = 1.0

    def __init__(
        self,
        milestones: Sequence[Milestone],
        strict_order: bool = True,
        require_held: bool = False,
    ) -> None:
        super().__init__()
        if not milestones:
            raise ValueError("MilestoneJudge needs at least one milestone")
        self.milestones = {m.name: m for m in milestones}
        self.order = _topological_order(list(milestones))
        self.strict_order = bool(strict_order)
        self.require_held = bool(require_held)
        self.reached_at: dict[str, int | None] = {}

    def _reset(self, context: JudgeContext) -> None:
        self.reached_at = {name: None for name in self.order}

    def _prerequisites_met(self, milestone: Milestone, step: int) -> bool:
        for parent in milestone.after:
            at = self.reached_at[parent]
            if at is None or (self.strict_order and at >= step):
                return False
        return True

    def _observe(self, transition: Transition) -> JudgeSignal:
        view = transition.view
        if view is None:
            raise ValueError(_NO_VIEW.format(judge=self.label))
        holding = {name: self.milestones[name].predicate(view) for name in self.order}
        newly = []
        for name in self.order:
            milestone = self.milestones[name]
            if self.reached_at[name] is None and holding[name]:
                if self._prerequisites_met(milestone, transition.step):
                    self.reached_at[name] = transition.step
                    newly.append(name)
        reached = {name: at is not None for name, at in self.reached_at.items()}
        count, total = sum(reached.values()), len(self.order)
        done = count == total and (not self.require_held or all(holding.values()))
        pending = [n for n in self.order if not reached[n]]
        if done:
            reason = f"all {total} milestones reached"
        elif newly:
            reason = f"reached {', '.join(newly)} ({count}/{total})"
        else:
            reason = f"{count}/{total} milestones; next: {', '.join(pending) or 'hold all'}"
        details = {
            "reached": reached,
            "holding": holding,
            "completion_score": math.floor(10 * count / total + 1e-9),
        }
        return JudgeSignal(
            reward=count / total,
            phi=count / total,
            verdict=SUCCESS if done else UNDECIDED,
            reason=reason,
            details=details,
        )


class PredicateJudge(Judge):
    """Success while one predicate holds; Φ = 1 when it holds, else 0.

    A binary judge (no partial progress): what a success checker looks like to the OPD
    metrics. Details: ``holds`` (bool).

    Args:
        predicate: The success condition.
    """

    name = "predicate"
    provides_potential = True
    max_reward = 1.0

    def __init__(self, predicate: Predicate) -> None:
        super().__init__()
        if not isinstance(predicate, Predicate):
            raise TypeError(f"PredicateJudge needs a Predicate, got {type(predicate).__name__}")
        self.predicate = predicate

    def _observe(self, transition: Transition) -> JudgeSignal:
        if transition.view is None:
            raise ValueError(_NO_VIEW.format(judge=self.label))
        holds = self.predicate(transition.view)
        text = self.predicate.describe()
        return JudgeSignal(
            reward=float(holds),
            phi=float(holds),
            verdict=SUCCESS if holds else UNDECIDED,
            reason=f"{text} holds" if holds else f"{text} does not hold",
            details={"holds": holds},
        )
