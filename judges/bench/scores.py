"""Episode scores on a 0–10 scale: the privileged ground truth and accuracy metrics.

**Ground truth** (EQA-RM's rubric weights, 60% outcome, 40% process), from the privileged
Φ_0..Φ_T of an episode and whether it ended in success::

    s_gt = 10 · (0.6 · success + 0.4 · process),   process = (MP + PPL) / 2

with MP = max_t Φ_t (how far it got) and PPL = Φ_T · max(Φ_T − Φ_0, 0) / (TV + δ) (how
efficiently, gated by where it ended) from the OPD metrics. Why both: MP alone ignores
regressions and detours, PPL alone gives 0 to an episode that reached 90% and then lost it
all; their mean rewards progress and penalises undoing it. A clean successful episode
scores 10; a monotone failure that reached Φ = 0.9 scores 3.6.

A potential judge's **episode score** is the same formula on its own Φ̂ trace, with
success = its verdict on the last state (:func:`phi_episode_score`); the privileged judge
therefore reproduces s_gt exactly.

**Metrics**: Acc@τ = share with |s_pred − s_gt| ≤ τ (τ = 2, inclusive; an invalid
prediction counts as a miss), RMSE over valid predictions (with the invalid count beside
it), soft accuracy = mean of max(0, 1 − (|s − s_gt| / 10)²) (invalid = 0).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..llm.parse import aggregate_scores
from ..metrics import opd_metrics

__all__ = [
    "OUTCOME_WEIGHT",
    "acc_at",
    "ground_truth_score",
    "phi_episode_score",
    "process_score",
    "rmse",
    "scaling_curve",
    "score_summary",
    "soft_accuracy",
]

OUTCOME_WEIGHT = 0.6
"""Weight of the outcome in a 0–10 episode score (EQA-RM: 60% outcome, 40% process)."""


def process_score(phi: Sequence[float]) -> float:
    """(MP + PPL) / 2 of a Φ trace, in [0, 1]."""
    metrics = opd_metrics([min(max(float(p), 0.0), 1.0) for p in phi], epsilon=0.0)
    return 0.5 * (metrics.mp + metrics.ppl)


def ground_truth_score(phi: Sequence[float], success: bool) -> float:
    """s_gt = 10 · (0.6 · success + 0.4 · (MP + PPL) / 2) from the privileged Φ."""
    return 10.0 * (OUTCOME_WEIGHT * float(bool(success))
                   + (1.0 - OUTCOME_WEIGHT) * process_score(phi))


def phi_episode_score(phi: Sequence[float | None], success: bool) -> float | None:
    """A potential judge's 0–10 score: the ground-truth formula on its Φ̂.

    Returns:
        The score, or None if any Φ̂ is missing.
    """
    values = [float(p) for p in phi if p is not None]
    if not phi or len(values) != len(phi):
        return None
    return ground_truth_score(values, success)


def _pairs(pred: Sequence[float | None], gt: Sequence[float]) -> list[tuple[float, float]]:
    if len(pred) != len(gt):
        raise ValueError(f"pred and gt differ in length ({len(pred)} vs {len(gt)})")
    return [(float(p), float(g)) for p, g in zip(pred, gt, strict=True) if p is not None]


def acc_at(pred: Sequence[float | None], gt: Sequence[float], tau: float = 2.0) -> float:
    """Acc@τ: share of episodes with |pred − gt| ≤ τ; invalid (None) predictions miss."""
    if not gt:
        return math.nan
    hits = sum(abs(p - g) <= tau + 1e-9 for p, g in _pairs(pred, gt))
    return hits / len(gt)


def rmse(pred: Sequence[float | None], gt: Sequence[float]) -> float:
    """Root mean squared error over valid predictions (NaN when none is valid)."""
    pairs = _pairs(pred, gt)
    if not pairs:
        return math.nan
    return math.sqrt(sum((p - g) ** 2 for p, g in pairs) / len(pairs))


def soft_accuracy(pred: Sequence[float | None], gt: Sequence[float]) -> float:
    """Mean of max(0, 1 − (|pred − gt| / 10)²); invalid predictions score 0."""
    if not gt:
        return math.nan
    total = sum(max(0.0, 1.0 - (abs(p - g) / 10.0) ** 2) for p, g in _pairs(pred, gt))
    return total / len(gt)


def score_summary(pred: Sequence[float | None], gt: Sequence[float],
                  tau: float = 2.0) -> dict[str, Any]:
    """Acc@τ, RMSE, soft accuracy, counts and the mean signed error."""
    pairs = _pairs(pred, gt)
    return {
        f"acc@{tau:g}": acc_at(pred, gt, tau),
        "rmse": rmse(pred, gt),
        "soft_acc": soft_accuracy(pred, gt),
        "bias": float(np.mean([p - g for p, g in pairs])) if pairs else math.nan,
        "n": len(gt),
        "invalid": len(gt) - len(pairs),
    }


def scaling_curve(
    samples: Sequence[Sequence[float | None]],
    gt: Sequence[float],
    ks: Sequence[int] = (1, 3, 5),
    method: str = "mean",
    tau: float = 2.0,
) -> dict[int, dict[str, Any]]:
    """Test-time scaling: :func:`score_summary` of the aggregate of the first K samples.

    Why prefixes of one sample set: K = 1, 3, 5 then differ only in how many of the same
    judgements are pooled, not in which were drawn (a nested design; the curve is
    monotone in expectation and cheap — the largest K is sampled once).

    Args:
        samples: Per episode, the per-sample scores in sampling order (None = invalid).
        gt: Ground-truth score per episode.
        ks: Values of K (each ≤ the number of samples).
        method: ``mean`` or ``vote``.
        tau: Tolerance of Acc@τ.
    """
    curve = {}
    for k in ks:
        if any(len(s) < k for s in samples):
            raise ValueError(f"K={k} needs {k} samples per episode; judge with k >= {k}")
        pred = [aggregate_scores(list(s[:k]), method).score for s in samples]
        spread = [aggregate_scores(list(s[:k]), method).spread for s in samples]
        summary = score_summary(pred, gt, tau)
        summary["spread_mean"] = float(np.mean(spread)) if spread else math.nan
        curve[int(k)] = summary
    return curve
