"""Judges by name: ``make_judge("noisy:sigma=0.05,seed=1")``.

A spec is ``name`` or ``name:key=value,key=value``. Values are parsed as Python literals
(``0.05`` → float, ``4`` → int, ``true``/``false``/``none`` in any case, quoted strings);
anything else stays a string. Why strings: command lines, config files and benchmark
tables name judges, and a record stores the spec it was made from (``judge.spec``).

Objects that do not fit in a string are passed as overrides, e.g. the LLM client of the
LLM judges: ``make_judge("llm-episode:k=5", client=make_client("llamacpp:smollm2-135m"))``.

Example:
    >>> judge = make_judge("quantized:levels=4")
    >>> type(judge).__name__, judge.levels, judge.spec
    ('DegradedQuantizedJudge', 4, 'quantized:levels=4')
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from simjudge.envs.registry import Registry, RegistryEntry, parse_spec_params

from .base import Judge
from .code import CodeRewardJudge, CodeSuccessJudge
from .degraded import DegradedNoisyJudge, DegradedPairwiseJudge, DegradedQuantizedJudge
from .learned import ImageProgressJudge, ObsProgressJudge
from .llm import LLMEpisodeJudge, LLMPlanJudge
from .privileged import PrivilegedProgressJudge
from .rule import RuleJudge
from .vlm import ImageEpisodeJudge, PreferenceJudge, VLMStepJudge, make_terminal_reward

__all__ = [
    "JUDGES",
    "JudgeEntry",
    "make_judge",
    "parse_judge_spec",
    "parse_spec_params",
    "register_judge",
    "registered_judges",
]

JudgeEntry = RegistryEntry
"""A registered judge (the one registry type's entry)."""

JUDGES: Registry[Judge] = Registry("judge", error=KeyError)
"""The judges by name (:class:`simjudge.envs.registry.Registry`; plugins: entry-point group
``simjudge.judges``)."""


def register_judge(
    name: str, factory: Callable[..., Judge], summary: str = "", *, replace: bool = False
) -> None:
    """Register ``factory`` under ``name`` (letters, digits, ``-``, ``_``).

    Raises:
        ValueError: The name is malformed, or taken and ``replace`` is False.
    """
    JUDGES.register(name, factory, summary, replace=replace)


def registered_judges() -> dict[str, str]:
    """Registered names -> one-line summaries, sorted by name."""
    return JUDGES.summaries()


def parse_judge_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """Split ``name:key=value,...`` into the name and typed parameters.

    Raises:
        ValueError: A parameter is not ``key=value`` or is repeated.
    """
    name, _, rest = str(spec).strip().partition(":")
    return name.strip(), parse_spec_params(spec, rest)


def make_judge(spec: str, **overrides: Any) -> Judge:
    """Build a registered judge from ``name[:key=value,...]`` (``overrides`` win).

    Raises:
        KeyError: Unknown name (the message lists the registered names).
        TypeError: A parameter the judge does not take (the message lists those it takes).
    """
    name, params = parse_judge_spec(spec)
    params.update(overrides)
    judge = JUDGES.make(name, **params)
    judge.spec = str(spec).strip() if not overrides else None
    return judge


def _register_builtins() -> None:
    builtins: list[tuple[str, Callable[..., Judge], str]] = [
        (
            "privileged",
            PrivilegedProgressJudge,
            "ground-truth Φ from privileged state (staged goal)",
        ),
        (
            "noisy",
            DegradedNoisyJudge,
            "degraded: privileged Φ + seeded Gaussian noise (sigma, seed)",
        ),
        ("quantized", DegradedQuantizedJudge, "degraded: privileged Φ rounded down to levels"),
        ("pairwise", DegradedPairwiseJudge, "degraded: non-additive pairwise progress (drifts)"),
        ("rule", RuleJudge, "static checks of a subtask's code before execution (1/0.5/0)"),
        ("code-reward", CodeRewardJudge, "the proposal's reward function, run live"),
        ("code-success", CodeSuccessJudge, "the proposal's success condition, run live"),
        (
            "llm-plan",
            LLMPlanJudge,
            "VERGSA LLM-as-a-judge of a subtask's code, 1/0.5/0 (client=, k, aggregate)",
        ),
        (
            "llm-episode",
            LLMEpisodeJudge,
            "EQA-RM LLM critique + 0-10 score of an episode (client=, k, aggregate)",
        ),
        (
            "obs-progress",
            ObsProgressJudge,
            "learned Φ from the non-privileged observation + task text (weights=)",
        ),
        (
            "image-progress",
            ImageProgressJudge,
            "learned Φ from rendered frames (first frame as reference) + task text (weights=)",
        ),
        ("vlm-step", VLMStepJudge, "server VLM's 0-100 progress of keyframes every k steps, Φ held"),
        ("image-episode", ImageEpisodeJudge, "EQA-RM VLM critique + 0-10 score of N keyframe images"),
        ("terminal-reward", make_terminal_reward, "an episode judge's score as terminal reward"),
        ("preference", PreferenceJudge, "A/B/tie of two episodes from Φ traces or a server VLM"),
    ]
    for name, factory, summary in builtins:
        register_judge(name, factory, summary, replace=True)


_register_builtins()
