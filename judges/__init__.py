"""simjudge.judges: the judge protocol, live judge wrappers, judges and metrics.

A judge is ``reset(context)`` and then ``observe(transition)`` on every step (the reset state
included), answering with a :class:`JudgeSignal`: reward term, progress potential Φ ∈ [0, 1]
(or None), verdict ``success``/``failure``/``undecided``, reason and details. Judges of whole
episodes or of code before execution answer ``judge_episode(record)`` /
``judge_plan(kind, code, context)`` (the rule judge, the LLM judges of
:mod:`~simjudge.judges.llm`, the PRM verifier of :mod:`~simjudge.judges.prm`). Benchmarks of
judges against the privileged ground truth live in :mod:`simjudge.judges.bench`. Three
Gymnasium wrappers put any judge into a rollout:
:class:`JudgeReward` (reward + potential-based shaping), :class:`JudgeVerify` (terminate on
verdicts, ``info["judge"]``, ``info["is_success"]``) and :class:`JudgeRecord` (signals,
streaming OPD metrics, JSON episode records).

Examples:
    >>> from simjudge.judges import JudgeReward, JudgeVerify, make_judge
    >>> from simjudge.tasks.spec import make_task_env
    >>> judge = make_judge("privileged")
    >>> env = JudgeVerify(JudgeReward(make_task_env("OpenDrawer-v0"), judge), judge)
    >>> obs, info = env.reset(seed=0)
    >>> info["judge"]["verdict"]
    'undecided'
"""

from __future__ import annotations

# Imports are sorted; __all__ below lists the public API in groups.
from .base import CallStats, Judge, JudgeResetNeeded
from .code import CodeRewardJudge, CodeSuccessJudge, success_part
from .context import VERB_TARGETS, JudgeContext, infer_verb, parse_articulation_text
from .degraded import DegradedNoisyJudge, DegradedPairwiseJudge, DegradedQuantizedJudge
from .episode import EPISODE_FORMAT, EpisodeRecord, StepRecord
from .judge_record import JudgeRecord
from .judge_reward import SUPPORTED_COMBINE, SUPPORTED_REWARD_MODES, JudgeReward
from .judge_verify import JudgeVerify, signal_info
from .llm import (
    SUPPORTED_AGGREGATES,
    AggregateScore,
    LLMEpisodeJudge,
    LLMPlanJudge,
    ParsedScore,
    aggregate_scores,
    parse_episode_score,
    parse_plan_score,
)
from .metrics import (
    DELTA,
    FAILURE_TYPES,
    MC_THRESHOLDS,
    FailureFingerprint,
    OPDMetrics,
    Outcome,
    StreamingOPD,
    SuccessRates,
    assr,
    atsr,
    avg_subtasks,
    calibrate_epsilon,
    failure_fingerprints,
    format_markdown_table,
    mc_at_k,
    milestone_coverage,
    opd_metrics,
    progress,
    success_rates,
    summarize_episodes,
    wilson_interval,
)
from .milestones import Milestone, MilestoneJudge, PredicateJudge
from .panel import SUPPORTED_VOTES, JudgePanel
from .predicates import (
    And,
    Holding,
    Inside,
    JointClosed,
    JointOpen,
    NearLink,
    Not,
    On,
    Or,
    Predicate,
    Pressed,
    joint_fraction,
)
from .privileged import LinkGoal, PrivilegedProgressJudge, progress_goal
from .prm import AGGREGATIONS, PRMConfig, PRMExample, PRMVerifier, aggregate
from .registry import make_judge, parse_judge_spec, register_judge, registered_judges
from .rule import RuleJudge, rule_issues
from .rule_checks import RULE_CODES, RuleIssue
from .rule_links import check_link_targets
from .signals import FAILURE, SUCCESS, UNDECIDED, VERDICTS, JudgeSignal, Transition, Verdict
from .stepping import BaseJudgeWrapper

__all__ = [
    # The judge protocol
    "CallStats",
    "EPISODE_FORMAT",
    "EpisodeRecord",
    "FAILURE",
    "Judge",
    "JudgeContext",
    "JudgeResetNeeded",
    "JudgeSignal",
    "StepRecord",
    "SUCCESS",
    "Transition",
    "UNDECIDED",
    "VERB_TARGETS",
    "VERDICTS",
    "Verdict",
    "infer_verb",
    "parse_articulation_text",
    # Live wrappers
    "BaseJudgeWrapper",
    "JudgeRecord",
    "JudgeReward",
    "JudgeVerify",
    "SUPPORTED_COMBINE",
    "SUPPORTED_REWARD_MODES",
    "signal_info",
    # Code judges
    "CodeRewardJudge",
    "CodeSuccessJudge",
    "success_part",
    # Predicate and milestone judges
    "And",
    "Holding",
    "Inside",
    "JointClosed",
    "JointOpen",
    "Milestone",
    "MilestoneJudge",
    "NearLink",
    "Not",
    "On",
    "Or",
    "Predicate",
    "PredicateJudge",
    "Pressed",
    "joint_fraction",
    # Privileged progress (ground truth)
    "LinkGoal",
    "PrivilegedProgressJudge",
    "progress_goal",
    # Rule judge (before execution)
    "RULE_CODES",
    "RuleIssue",
    "RuleJudge",
    "check_link_targets",
    "rule_issues",
    # LLM judges (client injected) and test-time scaling
    "AggregateScore",
    "LLMEpisodeJudge",
    "LLMPlanJudge",
    "ParsedScore",
    "SUPPORTED_AGGREGATES",
    "aggregate_scores",
    "parse_episode_score",
    "parse_plan_score",
    # Process reward model (PRM) verifier
    "AGGREGATIONS",
    "PRMConfig",
    "PRMExample",
    "PRMVerifier",
    "aggregate",
    # Panels
    "JudgePanel",
    "SUPPORTED_VOTES",
    # Degraded judges (for experiments only)
    "DegradedNoisyJudge",
    "DegradedPairwiseJudge",
    "DegradedQuantizedJudge",
    # Registry
    "make_judge",
    "parse_judge_spec",
    "register_judge",
    "registered_judges",
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
    "Outcome",
    "SuccessRates",
    "assr",
    "atsr",
    "avg_subtasks",
    "success_rates",
    "wilson_interval",
]
