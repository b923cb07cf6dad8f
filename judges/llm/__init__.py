"""LLM judges of plans and episodes, their prompts and their tolerant reply parsing.

* :class:`LLMPlanJudge` — VERGSA's LLM-as-a-judge: one subtask's code → 1 / 0 / 0.5.
* :class:`LLMEpisodeJudge` — EQA-RM's structured judgement: an episode →
  ``<critique>…</critique><score>0–10</score>``, Φ = score / 10.
* Test-time scaling: ``k`` samples with distinct seeds, aggregated by mean or vote
  (:func:`aggregate_scores`), per-sample scores and spread in the details.

The client is injected (anything with ``.complete(messages, temperature=, max_tokens=,
seed=, json_schema=)``), e.g. ``simjudge.llm.make_client("llamacpp:smollm2-135m")``.
"""

from __future__ import annotations

from .judges import LLMEpisodeJudge, LLMPlanJudge
from .parse import (
    PLAN_SCORES,
    SUPPORTED_AGGREGATES,
    AggregateScore,
    ParsedScore,
    aggregate_scores,
    parse_episode_score,
    parse_plan_score,
)
from .prompts import (
    ALLOWED_APIS,
    DEFAULT_CLAIM,
    EPISODE_SCHEMA,
    PLAN_SCHEMA,
    PROMPT_VERSION,
    episode_messages,
    keyframe_indices,
    plan_messages,
    state_events,
    summarize_state,
)

__all__ = [
    # Judges
    "LLMEpisodeJudge",
    "LLMPlanJudge",
    # Parsing and test-time scaling
    "PLAN_SCORES",
    "SUPPORTED_AGGREGATES",
    "AggregateScore",
    "ParsedScore",
    "aggregate_scores",
    "parse_episode_score",
    "parse_plan_score",
    # Prompts
    "ALLOWED_APIS",
    "DEFAULT_CLAIM",
    "EPISODE_SCHEMA",
    "PLAN_SCHEMA",
    "PROMPT_VERSION",
    "episode_messages",
    "keyframe_indices",
    "plan_messages",
    "state_events",
    "summarize_state",
]
