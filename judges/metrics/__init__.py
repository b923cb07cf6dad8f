"""Episode and solution metrics: OPD dense-progress metrics and ATSR/ASSR success rates.

* :mod:`~simjudge.judges.metrics.opd`: MC, MP, PPL, CRA, STR of a progress potential
  ("PRM-as-a-Judge: A Dense Evaluation Paradigm for Fine-Grained Robotic Auditing"), batch
  and streaming, ε calibration, MC@k summaries and audit failure fingerprints.
* :mod:`~simjudge.tasks.spec`: ATSR, ASSR, subtasks per solution (VERGSA),
  with Wilson intervals.
"""

from __future__ import annotations

# Success rates of executed solutions
from simjudge.tasks.spec.outcome import (
    Outcome,
    SuccessRates,
    assr,
    atsr,
    avg_subtasks,
    success_rates,
    wilson_interval,
)

# OPD metrics of one episode
from .opd import (
    DELTA,
    FAILURE_TYPES,
    MC_THRESHOLDS,
    FailureFingerprint,
    OPDMetrics,
    StreamingOPD,
    calibrate_epsilon,
    failure_fingerprints,
    format_markdown_table,
    mc_at_k,
    milestone_coverage,
    opd_metrics,
    opd_scorer,
    progress,
    summarize_episodes,
)

__all__ = [
    # OPD metrics of one episode
    "DELTA",
    "OPDMetrics",
    "StreamingOPD",
    "calibrate_epsilon",
    "milestone_coverage",
    "opd_metrics",
    "opd_scorer",
    "progress",
    # OPD reports over episodes and policies
    "FAILURE_TYPES",
    "MC_THRESHOLDS",
    "FailureFingerprint",
    "failure_fingerprints",
    "format_markdown_table",
    "mc_at_k",
    "summarize_episodes",
    # Success rates of executed solutions
    "Outcome",
    "SuccessRates",
    "assr",
    "atsr",
    "avg_subtasks",
    "success_rates",
    "wilson_interval",
]
