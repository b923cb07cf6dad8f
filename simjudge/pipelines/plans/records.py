"""What executing a plan produced: per-step records, milestone progress, completion.

Both tiers (symbolic and physical) report a :class:`Completion`: the milestones reached in
an order consistent with the DAG ("ever reached", RoboBench's Y of ⌊10·Y/X⌋), the ones that
hold at the end, and one :class:`StepRecord` per plan step with its automatic error label.

Error labels (from the rollout log, RoboBench's failure taxonomy):
``impossible_action`` (skill not in the vocabulary, or an object without that affordance),
``wrong_object`` (names nothing in the scene), ``physics_violation`` (a precondition
violated, e.g. pick while holding, place without holding), ``redundant_step`` (changed
nothing), ``skill_failed`` (physical: the skill ran but its effect did not happen).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from .groundtruth import MilestoneSpec

__all__ = ["ERROR_LABELS", "Completion", "DagTracker", "StepRecord", "completion_score"]

ERROR_LABELS: tuple[str, ...] = (
    "impossible_action", "wrong_object", "physics_violation", "redundant_step", "skill_failed",
)
"""Labels a step record can carry ("" = the step did what it should)."""


def completion_score(reached: int, total: int) -> int:
    """⌊10·Y/X⌋."""
    return math.floor(10 * reached / total + 1e-9) if total else 0


@dataclass
class StepRecord:
    """One executed plan step.

    Attributes:
        index: Position in the plan.
        text: The step as written.
        skill: Normalised skill.
        ok: The step ran and did what its skill promises.
        label: Error label (one of :data:`ERROR_LABELS`) or "".
        reason: Why, in words.
        reached: Milestones first reached during this step.
        control_steps: Simulator control steps spent (physical tier; 0 symbolic).
        telemetry: Physical measurements of the step: ``suction_commanded`` (share of
            control steps with suction on), ``attached`` (suction holds something after
            it), ``closest_approach`` (m, suction point to the step's part or object),
            ``joint_change`` (range fraction moved by the step's joint, signed towards the
            step's direction), ``action_jerk`` (mean ‖Δaction‖ between control steps).
    """

    index: int
    text: str
    skill: str
    ok: bool = True
    label: str = ""
    reason: str = ""
    reached: list[str] = field(default_factory=list)
    control_steps: int = 0
    telemetry: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return asdict(self)


@dataclass
class Completion:
    """Task completion of one plan in one tier.

    Attributes:
        tier: ``symbolic`` or ``physical``.
        score: ⌊10·Y/X⌋ over milestones ever reached in DAG order.
        held_score: ⌊10·Y/X⌋ over milestones whose predicate holds at the end.
        reached: Milestones ever reached (DAG order respected).
        held_at_end: Milestones whose predicate holds after the last step.
        total: X, the number of milestones.
        steps: One record per plan step.
    """

    tier: str
    score: int
    held_score: int
    reached: list[str]
    held_at_end: list[str]
    total: int
    steps: list[StepRecord]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        data = asdict(self)
        data["steps"] = [s.to_dict() for s in self.steps]
        return data

    def labels(self) -> list[str]:
        """The error labels of the steps, in order (non-empty ones)."""
        return [s.label for s in self.steps if s.label]


class DagTracker:
    """Marks milestones reached in DAG order over a sequence of ticks.

    Same rule as :class:`~simjudge.judges.milestones.MilestoneJudge` (strict order): a
    milestone is reached the first tick its predicate holds while all its prerequisites
    were reached at an earlier tick.
    """

    def __init__(self, milestones: Sequence[MilestoneSpec]) -> None:
        self.milestones = list(milestones)
        self.reached_at: dict[str, int | None] = {m.name: None for m in self.milestones}
        self.holding: dict[str, bool] = {m.name: False for m in self.milestones}

    def observe(self, holds: Mapping[str, bool], tick: int) -> list[str]:
        """Record one tick; returns the milestones newly reached."""
        self.holding = dict(holds)
        newly = []
        for m in self.milestones:
            if self.reached_at[m.name] is not None or not holds[m.name]:
                continue
            parents = [self.reached_at[p] for p in m.after]
            if all(at is not None and at < tick for at in parents):
                self.reached_at[m.name] = tick
                newly.append(m.name)
        return newly

    def completion(self, tier: str, steps: list[StepRecord]) -> Completion:
        """The completion so far."""
        reached = [n for n, at in self.reached_at.items() if at is not None]
        held = [n for n, h in self.holding.items() if h]
        total = len(self.milestones)
        return Completion(tier, completion_score(len(reached), total),
                          completion_score(len(held), total), reached, held, total, steps)
