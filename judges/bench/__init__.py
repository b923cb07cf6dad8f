"""Benchmarks of judges against the privileged ground truth (scoring; needs only ``envs``).

* :mod:`~simjudge.judges.bench.episodes` — cached rollouts with Φ and full states;
* :mod:`~simjudge.judges.bench.pairs` — RoboPulse-style pulse pairs (hop bins, frame-gap
  strata, balanced labels, genuine regressions, neutral pairs);
* :mod:`~simjudge.judges.bench.scoring` — any live judge on recorded states, pair accuracy;
* :mod:`~simjudge.judges.bench.noise` — state and image noise for robustness;
* :mod:`~simjudge.judges.bench.scores` — 0–10 ground truth, Acc@τ, RMSE, test-time scaling;
* :mod:`~simjudge.judges.bench.perturb` — perturbation contrasts (shuffle, truncate,
  wrong target, reverse);
* :mod:`~simjudge.judges.bench.inject` — labelled error injection, plan-judge precision/recall;
* :mod:`~simjudge.judges.bench.runs` — the sections of a run for one judge;
* :mod:`~simjudge.judges.bench.report` — the markdown report.

The runner that makes rollouts (policies, tasks) is :mod:`simjudge.pipelines.judge_bench`
(``simjudge judge-bench``).
"""

from __future__ import annotations

from .episodes import BENCH_EPISODES_FORMAT, BenchEpisode, load_episodes, save_episodes, to_record
from .inject import (
    ERROR_TYPES,
    PlanCase,
    PlanResult,
    build_plan_cases,
    inject_error,
    normalize_code,
    rename_locals,
    score_plan_cases,
    summarize_plan_results,
)
from .noise import IMAGE_ALPHAS, corrupt_image, perturb_state
from .pairs import (
    GAP_STRATA,
    HOP_BINS,
    PAIR_KINDS,
    PulsePair,
    build_pulse_pairs,
    gap_stratum,
    hop_bin,
    monotone_phases,
    pair_stats,
)
from .perturb import (
    LAST_STAGE_PHI,
    PERTURBATIONS,
    contrast_summary,
    perturb_order,
    swap_target,
    truncation_point,
)
from .report import format_report, markdown_table
from .runs import episode_mode, episode_score, episode_section, pair_section, perturb_section
from .scores import (
    OUTCOME_WEIGHT,
    acc_at,
    ground_truth_score,
    phi_episode_score,
    process_score,
    rmse,
    scaling_curve,
    score_summary,
    soft_accuracy,
)
from .scoring import PairResult, judge_states, score_pairs, summarize_pairs

__all__ = [
    # Episodes
    "BENCH_EPISODES_FORMAT",
    "BenchEpisode",
    "load_episodes",
    "save_episodes",
    "to_record",
    # Pulse pairs
    "GAP_STRATA",
    "HOP_BINS",
    "PAIR_KINDS",
    "PulsePair",
    "build_pulse_pairs",
    "gap_stratum",
    "hop_bin",
    "monotone_phases",
    "pair_stats",
    # Judging recorded states
    "PairResult",
    "judge_states",
    "score_pairs",
    "summarize_pairs",
    # Noise
    "IMAGE_ALPHAS",
    "corrupt_image",
    "perturb_state",
    # Episode scores
    "OUTCOME_WEIGHT",
    "acc_at",
    "ground_truth_score",
    "phi_episode_score",
    "process_score",
    "rmse",
    "scaling_curve",
    "score_summary",
    "soft_accuracy",
    # Perturbation contrasts
    "LAST_STAGE_PHI",
    "PERTURBATIONS",
    "contrast_summary",
    "perturb_order",
    "swap_target",
    "truncation_point",
    # Rule injection
    "ERROR_TYPES",
    "PlanCase",
    "PlanResult",
    "build_plan_cases",
    "inject_error",
    "normalize_code",
    "rename_locals",
    "score_plan_cases",
    "summarize_plan_results",
    # Sections of a run
    "episode_mode",
    "episode_score",
    "episode_section",
    "pair_section",
    "perturb_section",
    # Report
    "format_report",
    "markdown_table",
]
