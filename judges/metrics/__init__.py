"""Episode and solution metrics: OPD dense-progress metrics and ATSR/ASSR success rates.

* :mod:`~simjudge.judges.metrics.opd`: MC, MP, PPL, CRA, STR of a progress potential
  ("PRM-as-a-Judge: A Dense Evaluation Paradigm for Fine-Grained Robotic Auditing"), batch
  and streaming, ε calibration, MC@k summaries and audit failure fingerprints.
* :mod:`~simjudge.judges.metrics.success_rates`: ATSR, ASSR, subtasks per solution (VERGSA),
  with Wilson intervals.
"""

from __future__ import annotations

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
    progress,
    summarize_episodes,
)

# Success rates of executed solutions
from .success_rates import (
    SolutionOutcome,
    SuccessRates,
    assr,
    atsr,
    avg_subtasks,
    success_rates,
    wilson_interval,
)

__all__ = [
    # OPD metrics of one episode
    "DELTA",
    "OPDMetrics",
    "StreamingOPD",
    "calibrate_epsilon",
    "milestone_coverage",
    "opd_metrics",
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
    "SolutionOutcome",
    "SuccessRates",
    "assr",
    "atsr",
    "avg_subtasks",
    "success_rates",
    "wilson_interval",
]
