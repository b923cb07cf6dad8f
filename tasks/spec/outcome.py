"""How executing a solution went, and the success rates over many executions.

:class:`Outcome` is the one execution-outcome type of simjudge: the executor returns it, the
acquisition loop and the dataset builder checkpoint it, the exemplar pool and the PRM labels
read it. It keeps **claimed** success (the solution's own success code held for every
subtask) apart from **verified** success (the independent task goal, checked
over the reset state and every subtask's end state in order);
``task_success`` is what counts for ATSR, the pool and the labels.

Metrics of the VERGSA paper (``docs/methods.md`` (vergsa), "Metrics") are defined here once: over a
set of executed solutions, ATSR = successful solutions / evaluated solutions, ASSR =
successful subtasks / evaluated subtasks (pooled over all solutions), and the average number
of subtasks per solution. A solution counts as successful when its whole task succeeded,
whatever its subtasks did. Only evaluated (executed) subtasks belong in ``subtask_success``;
subtasks skipped after an earlier failure were not evaluated.

Confidence intervals for ATSR are Wilson score intervals (no continuity correction): they
stay inside [0, 1] and keep close to nominal coverage for small n and rates near 0 or 1,
where the normal (Wald) interval collapses. Solutions are treated as independent trials.

Example:
    >>> outcomes = [Outcome((True, True), True), Outcome((True, False), False)]
    >>> r = success_rates(outcomes)
    >>> r.atsr, r.assr, r.avg_subtasks
    (0.5, 0.75, 2.0)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, fields
from statistics import NormalDist
from typing import Any

import numpy as np

__all__ = [
    "Outcome",
    "SubtaskVerdict",
    "SuccessRates",
    "assr",
    "atsr",
    "avg_subtasks",
    "success_rates",
    "wilson_interval",
]


@dataclass
class SubtaskVerdict:
    """Outcome of one subtask (one line of a run's ``verdicts.jsonl``).

    Attributes:
        index: Position in the solution.
        name: Subtask name.
        kind: ``primitive`` or ``reward``.
        success: Whether the subtask's success condition held at its end.
        solver: ``motion-planning``, ``sac``, ``mpc`` or ``oracle``.
        reason: Why it failed (empty on success).
        error_type: Type name of the generated-code error, if one occurred.
        steps: Env steps spent (SAC: training plus the final rollout).
        wall_time_s: Wall time.
        policy: Saved SAC policy (``.zip``), if any.
        details: Primitive calls, or SAC metrics and evaluation history.
    """

    index: int
    name: str
    kind: str
    success: bool
    solver: str = ""
    reason: str = ""
    error_type: str | None = None
    steps: int = 0
    wall_time_s: float = 0.0
    policy: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SubtaskVerdict:
        """Inverse of :meth:`to_dict`."""
        return cls(**data)


def _check_bool(value: object, where: str) -> bool:
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"{where} must be a bool, got {value!r} ({type(value).__name__}).")
    return bool(value)


def _check_optional_bool(value: object, where: str) -> bool | None:
    return None if value is None else _check_bool(value, where)


@dataclass
class Outcome:
    """How executing one solution went.

    Attributes:
        subtask_success: Success of each evaluated subtask, in order (may be empty, e.g. a
            solution whose scene failed to build). Any iterable of bools is stored as a tuple.
        task_success: Whether the whole task succeeded: what counts for ATSR, the exemplar
            pool and PRM labels.
        claimed_success: Every subtask ran and its own success code held (None: not recorded).
        verified_success: The independent task goal held, checked over the reset state and
            every subtask's end state in order (None: no goal was available to check).
        verdict: One word for the whole execution: ``verified``, ``claimed_not_verified``
            (the subtasks' own success held but the task goal does not), ``failed``,
            ``trivial_start`` (the goal held before anything ran: nothing was executed),
            ``unverifiable`` (no task goal), ``verified_despite_subtasks``, or ``""`` when
            not recorded.
        reason: Why, in a sentence (the first failure's reason, or ``success: ...``).
        task: The task name.
        goal_facts: The task goal's facts on the final state.
        verdicts: Per-subtask verdicts, in order.
        env_steps: Env steps over all subtasks (SAC training included).
        wall_time_s: Wall time of the execution.
        out_dir: The run directory.
        initial_joints: ``{"<object>/<joint>": {"value", "fraction"}}`` of every movable
            joint at the start (fraction 0 = lower limit, 1 = upper limit).
        final_joints: The same on the final state.
        max_joints: The largest fraction each joint reached during execution.
        final_poses: ``{"<object>": {"position", "orientation"}}`` on the final state.
    """

    subtask_success: tuple[bool, ...]
    task_success: bool
    claimed_success: bool | None = None
    verified_success: bool | None = None
    verdict: str = ""
    reason: str = ""
    task: str = ""
    goal_facts: dict[str, Any] = field(default_factory=dict)
    verdicts: list[SubtaskVerdict] = field(default_factory=list)
    env_steps: int = 0
    wall_time_s: float = 0.0
    out_dir: str = ""
    initial_joints: dict[str, dict[str, float]] = field(default_factory=dict)
    final_joints: dict[str, dict[str, float]] = field(default_factory=dict)
    max_joints: dict[str, dict[str, float]] = field(default_factory=dict)
    final_poses: dict[str, dict[str, list[float]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if isinstance(self.subtask_success, str | bytes) or not isinstance(
            self.subtask_success, Iterable
        ):
            raise TypeError(
                "Outcome.subtask_success must be a sequence of bools, got "
                f"{self.subtask_success!r}."
            )
        self.subtask_success = tuple(
            _check_bool(v, f"Outcome.subtask_success[{i}]")
            for i, v in enumerate(self.subtask_success)
        )
        self.task_success = _check_bool(self.task_success, "Outcome.task_success")
        self.claimed_success = _check_optional_bool(self.claimed_success, "Outcome.claimed_success")
        self.verified_success = _check_optional_bool(
            self.verified_success, "Outcome.verified_success"
        )

    @property
    def n_subtasks(self) -> int:
        """Number of evaluated subtasks."""
        return len(self.subtask_success)

    @property
    def n_successful_subtasks(self) -> int:
        """Number of successful subtasks."""
        return sum(self.subtask_success)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (verdicts as dicts)."""
        data = asdict(self)
        data["subtask_success"] = list(self.subtask_success)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Outcome:
        """Inverse of :meth:`to_dict`; unknown keys are ignored (records carry extras)."""
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        values["verdicts"] = [
            v if isinstance(v, SubtaskVerdict) else SubtaskVerdict.from_dict(v)
            for v in values.get("verdicts", [])
        ]
        return cls(**values)


def _check_outcomes(outcomes: Sequence[Outcome]) -> None:
    if len(outcomes) == 0:
        raise ValueError(
            "`outcomes` is empty; pass the Outcome of at least one executed solution."
        )
    for i, o in enumerate(outcomes):
        if not isinstance(o, Outcome):
            raise TypeError(
                f"`outcomes[{i}]` must be a Outcome, got {type(o).__name__}; build it "
                "with Outcome(subtask_success=(...), task_success=...)."
            )


def atsr(outcomes: Sequence[Outcome]) -> float:
    """Average Task Success Rate: successful solutions / evaluated solutions (VERGSA).

    Raises:
        ValueError: If ``outcomes`` is empty.
    """
    _check_outcomes(outcomes)
    return sum(o.task_success for o in outcomes) / len(outcomes)


def assr(outcomes: Sequence[Outcome]) -> float:
    """Average Subtask Success Rate: successful subtasks / evaluated subtasks (VERGSA).

    Subtasks are pooled over solutions, so long solutions weigh more.

    Raises:
        ValueError: If ``outcomes`` is empty or contains no subtask at all.
    """
    _check_outcomes(outcomes)
    n = sum(o.n_subtasks for o in outcomes)
    if n == 0:
        raise ValueError(
            f"none of the {len(outcomes)} solutions has an evaluated subtask, so ASSR is "
            "undefined; record each executed subtask's success in subtask_success."
        )
    return sum(o.n_successful_subtasks for o in outcomes) / n


def avg_subtasks(outcomes: Sequence[Outcome]) -> float:
    """Average number of evaluated subtasks per solution (VERGSA).

    Raises:
        ValueError: If ``outcomes`` is empty.
    """
    _check_outcomes(outcomes)
    return sum(o.n_subtasks for o in outcomes) / len(outcomes)


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (no continuity correction).

    With p̂ = successes/n and z = z_{1−(1−confidence)/2}:
    centre = (p̂ + z²/2n) / (1 + z²/n), half-width = z·√(p̂(1−p̂)/n + z²/4n²) / (1 + z²/n).

    Args:
        successes: Number of successes, 0 <= successes <= n.
        n: Number of trials, >= 1.
        confidence: Two-sided confidence level in (0, 1).

    Returns:
        ``(low, high)`` with 0 <= low <= successes/n <= high <= 1.

    Raises:
        ValueError: If the counts or the confidence level are invalid.
    """
    if n < 1 or not 0 <= successes <= n:
        raise ValueError(f"need n >= 1 and 0 <= successes <= n, got successes={successes}, n={n}.")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"`confidence` must be in (0, 1), got {confidence!r} (e.g. 0.95).")
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    p = successes / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1.0 - p) / n + z * z / (4 * n * n)) / denom
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return low, high


@dataclass(frozen=True)
class SuccessRates:
    """ATSR, ASSR and solution length over a set of executed solutions.

    Attributes:
        atsr: Successful solutions / evaluated solutions.
        atsr_ci: Wilson score interval of ATSR at ``confidence``.
        assr: Successful subtasks / evaluated subtasks (NaN if there is no subtask).
        avg_subtasks: Average number of evaluated subtasks per solution.
        n_solutions: Evaluated solutions.
        n_successful_solutions: Solutions whose task succeeded.
        n_subtasks: Evaluated subtasks over all solutions.
        n_successful_subtasks: Successful subtasks over all solutions.
        confidence: Confidence level of ``atsr_ci``.
    """

    atsr: float
    atsr_ci: tuple[float, float]
    assr: float
    avg_subtasks: float
    n_solutions: int
    n_successful_solutions: int
    n_subtasks: int
    n_successful_subtasks: int
    confidence: float

    def as_dict(self, percent: bool = False) -> dict[str, float]:
        """Flat dict for tables: rates (×100 if ``percent``), CI bounds, counts."""
        scale = 100.0 if percent else 1.0
        return {
            "ATSR": scale * self.atsr,
            "ATSR_low": scale * self.atsr_ci[0],
            "ATSR_high": scale * self.atsr_ci[1],
            "ASSR": scale * self.assr,
            "avg_subtasks": self.avg_subtasks,
            "n": self.n_solutions,
        }


def success_rates(outcomes: Sequence[Outcome], confidence: float = 0.95) -> SuccessRates:
    """Compute ATSR (with a Wilson interval), ASSR and the average number of subtasks.

    Metrics from the VERGSA paper (``docs/methods.md`` (vergsa)). Unlike :func:`assr`, a set of
    solutions without any subtask gives ``assr = nan`` instead of raising.

    Args:
        outcomes: One :class:`Outcome` per executed solution.
        confidence: Two-sided confidence level of the ATSR interval.

    Returns:
        The :class:`SuccessRates`.

    Raises:
        ValueError: If ``outcomes`` is empty or ``confidence`` is not in (0, 1).
    """
    _check_outcomes(outcomes)
    n_ok = sum(o.task_success for o in outcomes)
    n_sub = sum(o.n_subtasks for o in outcomes)
    n_sub_ok = sum(o.n_successful_subtasks for o in outcomes)
    return SuccessRates(
        atsr=n_ok / len(outcomes),
        atsr_ci=wilson_interval(n_ok, len(outcomes), confidence),
        assr=n_sub_ok / n_sub if n_sub else math.nan,
        avg_subtasks=n_sub / len(outcomes),
        n_solutions=len(outcomes),
        n_successful_solutions=n_ok,
        n_subtasks=n_sub,
        n_successful_subtasks=n_sub_ok,
        confidence=confidence,
    )
