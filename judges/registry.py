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

import ast
import difflib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .base import Judge
from .code import CodeRewardJudge, CodeSuccessJudge
from .degraded import DegradedNoisyJudge, DegradedPairwiseJudge, DegradedQuantizedJudge
from .learned import ImageProgressJudge, ObsProgressJudge
from .llm import LLMEpisodeJudge, LLMPlanJudge
from .privileged import PrivilegedProgressJudge
from .rule import RuleJudge
from .vlm import ImageEpisodeJudge, PreferenceJudge, VLMStepJudge, make_terminal_reward

__all__ = [
    "JudgeEntry",
    "make_judge",
    "parse_judge_spec",
    "parse_spec_params",
    "register_judge",
    "registered_judges",
]


@dataclass(frozen=True)
class JudgeEntry:
    """A registered judge.

    Attributes:
        name: Registry name.
        factory: Callable taking the spec's keyword parameters.
        summary: One line for listings.
    """

    name: str
    factory: Callable[..., Judge]
    summary: str


_REGISTRY: dict[str, JudgeEntry] = {}
_WORDS = {"true": True, "false": False, "none": None, "null": None}


def register_judge(
    name: str, factory: Callable[..., Judge], summary: str = "", *, replace: bool = False
) -> None:
    """Register ``factory`` under ``name`` (letters, digits, ``-``, ``_``).

    Raises:
        ValueError: The name is malformed, or taken and ``replace`` is False.
    """
    if not name or not all(c.isalnum() or c in "-_" for c in name):
        raise ValueError(f"judge names use letters, digits, '-' and '_'; got {name!r}")
    if name in _REGISTRY and not replace:
        raise ValueError(f"judge {name!r} is already registered; pass replace=True to override it")
    doc = summary or (inspect.getdoc(factory) or "").split("\n")[0]
    _REGISTRY[name] = JudgeEntry(name, factory, doc)


def registered_judges() -> dict[str, str]:
    """Registered names -> one-line summaries, sorted by name."""
    return {name: _REGISTRY[name].summary for name in sorted(_REGISTRY)}


def _value(text: str) -> Any:
    text = text.strip()
    if text.lower() in _WORDS:
        return _WORDS[text.lower()]
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _split_top_level(text: str) -> list[str]:
    """Split on commas outside brackets and quotes (``goal={'a': 1, 'b': 2}`` stays whole)."""
    parts, depth, quote, start = [], 0, "", 0
    for i, char in enumerate(text):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def parse_spec_params(spec: str, rest: str, kind: str = "judge",
                      error: type[ValueError] = ValueError) -> dict[str, Any]:
    """The typed parameters of a spec's ``key=value,...`` part ``rest`` (judges, policies).

    Values are read as Python literals (``true``/``none`` too), else kept as text; commas
    inside brackets or quotes do not split.

    Raises:
        ValueError: (or ``error``) A parameter is not ``key=value`` or is repeated; the
            message names the ``kind`` of spec.
    """
    params: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in _split_top_level(rest))):
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq or not key.isidentifier():
            raise error(f"{kind} spec {spec!r}: parameter {part!r} must be written key=value")
        if key in params:
            raise error(f"{kind} spec {spec!r}: parameter {key!r} is given twice")
        params[key] = _value(value)
    return params


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
    entry = _REGISTRY.get(name)
    if entry is None:
        close = difflib.get_close_matches(name, list(_REGISTRY), n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise KeyError(f"unknown judge {name!r}; registered judges are {sorted(_REGISTRY)}.{hint}")
    params.update(overrides)
    accepted = _parameters(entry.factory)
    unknown = sorted(set(params) - set(accepted)) if accepted is not None else []
    if unknown:
        raise TypeError(f"judge {name!r} takes no parameter(s) {unknown}; it takes {accepted}")
    judge = entry.factory(**params)
    judge.spec = str(spec).strip() if not overrides else None
    return judge


def _parameters(factory: Callable[..., Any]) -> list[str] | None:
    try:
        sig = inspect.signature(factory)
    except (TypeError, ValueError):  # pragma: no cover - builtins
        return None
    if any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
        return None
    return [
        n for n, p in sig.parameters.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    ]


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
