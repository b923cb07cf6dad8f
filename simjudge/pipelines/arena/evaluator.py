"""The arena's evaluator: progress 0–100 per side, a preference with a tie rule, a reason.

An evaluator sees the two sides of a blind match through their judge signals only — a
progress trace Φ_0..Φ_T ∈ [0, 1] and a success flag per side — never the policies' names.
Sources of signals (``--evaluator``):

* ``oracle``: the simulator's verified success (the task goal on the state) and privileged
  Φ of every step;
* ``judge:SPEC``: any registered judge (:func:`simjudge.judges.make_judge`), its Φ and its
  success verdict (e.g. ``judge:noisy:sigma=0.1`` to study a noisy evaluator);
* ``panel:SPEC+SPEC``: a :class:`~simjudge.judges.JudgePanel` of registered judges (mean Φ,
  majority verdict).

**Progress score** = 100 · max_t Φ_t (RoboArena's "maximum progress reached").

**Tie rule** (:class:`TieRule`), applied in order; the first that decides wins:

1. exactly one side succeeded → that side;
2. the progress scores differ by at least ``margin`` points → the higher;
3. both succeeded and one needed at most (1 − ``speed_margin``) of the other's steps to
   first success → the faster;
4. neither succeeded and one kept at least ``margin`` more of its progress at the end
   (100·Φ_T) → that side (the other regressed);
5. otherwise a tie.

So a preference can disagree with the progress scores (speed, keeping what was reached),
as RoboArena's evaluators' did in 11% of pairs. The reason is a sentence templated from
the deciding signals; ``details`` also keep a compact summary of each side's signals
(:func:`signal_summary`: sampled progress curve, milestone steps), from which an LLM can
write a critique afterwards (:mod:`.critique`) without ever changing the preference.

Example:
    >>> verdict = judge_match(SideSignals([0, .5, 1.0], True), SideSignals([0, .4, .6], False))
    >>> verdict.preference, verdict.progress_a, verdict.progress_b
    ('A', 100.0, 60.0)
    >>> verdict.reason
    'A reached the goal (progress 100), B did not (progress 60)'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from simjudge.judges.metrics.opd import opd_metrics

__all__ = ["SideSignals", "TieRule", "Verdict", "judge_match", "signal_summary"]

MILESTONES: tuple[float, ...] = (0.25, 0.5, 0.75, 1.0)
"""Progress levels whose first step :func:`signal_summary` records (OPD's MC@k edges)."""
CURVE_POINTS = 9
"""Samples of the progress curve kept per side."""


@dataclass(frozen=True)
class TieRule:
    """Thresholds of the preference rule (module docstring).

    Attributes:
        margin: Progress points (0–100) that count as a real difference.
        speed_margin: Relative step saving that makes a success preferable.
        epsilon: The stagnation threshold ε of the OPD metrics reported per side (STR);
            recorded with every match (``details.tie_rule.epsilon``).
    """

    margin: float = 10.0
    speed_margin: float = 0.2
    epsilon: float = 0.01


@dataclass(frozen=True)
class SideSignals:
    """What the evaluator saw of one side.

    Attributes:
        progress: Φ per step, reset state first, in [0, 1].
        success: The side reached the goal (by the evaluator's source).
        first_success_step: Step at which success first held (None: never or unknown).
    """

    progress: Sequence[float]
    success: bool
    first_success_step: int | None = None

    @property
    def score(self) -> float:
        """Progress score 0–100 (max Φ)."""
        return 100.0 * float(max(self.progress)) if len(self.progress) else 0.0

    @property
    def final(self) -> float:
        """Progress kept at the end, 0–100."""
        return 100.0 * float(self.progress[-1]) if len(self.progress) else 0.0

    @property
    def steps_to_success(self) -> int:
        """Steps to first success (the episode length when unknown)."""
        if self.first_success_step is not None:
            return self.first_success_step
        return max(len(self.progress) - 1, 0)


@dataclass(frozen=True)
class Verdict:
    """The evaluator's answer for one match.

    Attributes:
        progress_a: A's progress score 0–100.
        progress_b: B's progress score 0–100.
        preference: ``A``, ``B`` or ``tie``.
        reason: Why, in one sentence.
        rule: Which step of the tie rule decided (``success``, ``progress``, ``speed``,
            ``kept``, ``tie``).
        details: The signals behind it (OPD metrics, steps, success per side).
    """

    progress_a: float
    progress_b: float
    preference: str
    reason: str
    rule: str
    details: dict[str, Any] = field(default_factory=dict)


def _opd(side: SideSignals, epsilon: float) -> dict[str, float]:
    if len(side.progress) == 0:
        return {}
    values = np.clip(np.asarray(side.progress, dtype=float), 0.0, 1.0)
    return {k: round(float(v), 4) for k, v in opd_metrics(values, epsilon=epsilon).as_dict().items()}


def signal_summary(side: SideSignals, points: int = CURVE_POINTS) -> dict[str, Any]:
    """A compact, JSON-safe view of one side's signals (what a critique is written from).

    Returns:
        ``curve``: ``[step, progress 0-100]`` at ``points`` evenly spaced steps (first and
        last included); ``milestones``: first step with Φ >= each of :data:`MILESTONES`
        (keys ``"25"`` ... ``"100"``, None = never); ``peak_step``: first step of the
        maximum; ``final``: progress kept at the end (0-100).
    """
    phi = np.clip(np.asarray(side.progress, dtype=float), 0.0, 1.0)
    if phi.size == 0:
        return {"curve": [], "milestones": {}, "peak_step": None, "final": 0.0}
    steps = sorted({int(round(x)) for x in np.linspace(0, phi.size - 1, max(points, 2))})
    reached = {f"{round(100 * q)}": (int(np.argmax(phi >= q)) if bool(np.any(phi >= q)) else None)
               for q in MILESTONES}
    return {"curve": [[k, round(100.0 * float(phi[k]), 1)] for k in steps],
            "milestones": reached, "peak_step": int(np.argmax(phi)),
            "final": round(100.0 * float(phi[-1]), 1)}


def _decide(a: SideSignals, b: SideSignals, rule: TieRule) -> tuple[str, str, str]:
    """(preference, rule name, reason) by the tie rule."""
    pa, pb = a.score, b.score
    if a.success != b.success:
        win, lose = ("A", "B") if a.success else ("B", "A")
        hi, lo = (pa, pb) if a.success else (pb, pa)
        return win, "success", (f"{win} reached the goal (progress {hi:.0f}), {lose} did not "
                                f"(progress {lo:.0f})")
    if abs(pa - pb) >= rule.margin:
        win, lose, hi, lo = ("A", "B", pa, pb) if pa > pb else ("B", "A", pb, pa)
        both = "both reached the goal but " if a.success else ""
        return win, "progress", (f"{both}{win} made more progress ({hi:.0f} vs {lo:.0f}); "
                                 f"{lose} stalled earlier")
    if a.success:
        sa, sb = a.steps_to_success, b.steps_to_success
        if min(sa, sb) <= (1.0 - rule.speed_margin) * max(sa, sb):
            win, fast, slow = ("A", sa, sb) if sa < sb else ("B", sb, sa)
            return win, "speed", (f"both reached the goal; {win} was faster ({fast} vs "
                                  f"{slow} steps)")
        return "tie", "tie", f"both reached the goal in similar time ({sa} vs {sb} steps)"
    fa, fb = a.final, b.final
    if abs(fa - fb) >= rule.margin:
        win, lose, hi, lo = ("A", "B", fa, fb) if fa > fb else ("B", "A", fb, fa)
        return win, "kept", (f"neither reached the goal; similar peak progress ({pa:.0f} vs "
                             f"{pb:.0f}) but {lose} fell back to {lo:.0f} while {win} kept {hi:.0f}")
    return "tie", "tie", (f"neither reached the goal; progress {pa:.0f} vs {pb:.0f} is within "
                          f"{rule.margin:.0f} points")


def judge_match(
    a: SideSignals, b: SideSignals, rule: TieRule | None = None, prefer: Any = None
) -> Verdict:
    """Score both sides and state a preference by the tie rule (module docstring).

    ``prefer``: a preference judge (``make_judge("preference")``, Φ mode) deciding instead
    of the tie rule from the two progress traces (rule ``preference``, its reason).
    """
    rule = rule or TieRule()
    preference, decided_by, reason = _decide(a, b, rule)
    if prefer is not None:
        signal = prefer.judge_pair(list(a.progress), list(b.progress))
        preference, decided_by, reason = signal.details["preference"], "preference", signal.reason
    details = {
        "rule": decided_by,
        "A": {"success": a.success, "steps": max(len(a.progress) - 1, 0),
              "steps_to_success": a.steps_to_success if a.success else None, "opd": _opd(a, rule.epsilon),
              "signals": signal_summary(a)},
        "B": {"success": b.success, "steps": max(len(b.progress) - 1, 0),
              "steps_to_success": b.steps_to_success if b.success else None, "opd": _opd(b, rule.epsilon),
              "signals": signal_summary(b)},
        "tie_rule": {"margin": rule.margin, "speed_margin": rule.speed_margin,
                     "epsilon": rule.epsilon},
    }
    return Verdict(round(a.score, 3), round(b.score, 3), preference, reason, decided_by, details)
