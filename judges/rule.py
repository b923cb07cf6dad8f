"""The rule judge: checks a subtask's code before execution, exactly and instantly.

The VERGSA paper's LLM-as-a-judge baseline is asked to find, in one subtask: primitive blocks
missing the ``rgbs, final_state`` assignment or the ``success`` condition; reward functions
missing reward components or a success condition, or badly weighted; wrong object, link or
joint names; APIs outside the allowed list; grammatical or logical errors. Most of these are
mechanical, so :class:`RuleJudge` does them with the AST and the articulation tree
(a baseline the paper did not have):

- allowlist, syntax, missing ``success`` / return: :func:`simjudge.envs.codegen.check_source`;
- primitive results not assigned to ``rgbs, final_state``; calls without ``self``;
- object/link/joint string literals (or names bound once to one) not in the scene / tree;
- a link the code reaches for (a distance to it, ``check_grasped``) that the joint it drives
  does not move (:mod:`~simjudge.judges.rule_links`);
- reward functions without a success output, with a constant success, or whose reward does
  not read the state (no reward terms);
- weighting: a Euclidean distance entering the reward with a positive sign; a hard-coded
  joint target (warning; an error when outside the joint's limits, e.g. ``3.14`` for a door
  that opens to 1.57);
- direction: with a task verb in the context (``open`` → upper limit, ``close`` → lower),
  a reward term or success comparison driving the joint the other way.

Score (the LLM judge's scale): 1 = no issues, 0.5 = warnings only, 0 = any error.
"""

from __future__ import annotations

import ast

from .base import Judge
from .context import JudgeContext
from .rule_checks import (
    RuleIssue,
    check_direction,
    check_joint_targets,
    check_names,
    check_primitive_outputs,
    check_reward_outputs,
    check_static,
    check_weighting,
)
from .rule_facts import CodeFacts
from .rule_links import check_link_targets
from .signals import FAILURE, SUCCESS, UNDECIDED, JudgeSignal

__all__ = ["RuleJudge", "rule_issues"]

_KINDS = ("primitive", "reward", "success")


def rule_issues(kind: str, code: str, context: JudgeContext | None = None) -> list[RuleIssue]:
    """Every issue the rule judge finds in one subtask's code, sorted by line.

    Raises:
        ValueError: ``kind`` is not ``primitive``, ``reward`` or ``success``.
    """
    if kind not in _KINDS:
        raise ValueError(f"kind must be one of {list(_KINDS)}, got {kind!r}")
    context = context or JudgeContext()
    issues = check_static(kind, code)
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError):
        return issues  # the static check reported it
    facts = CodeFacts.parse(tree)
    issues += check_names(facts, context)
    if kind == "primitive":
        issues += check_primitive_outputs(facts)
    if kind == "reward":
        issues += check_reward_outputs(facts)
        issues += check_weighting(facts)
    issues += check_joint_targets(facts, context)
    issues += check_link_targets(facts, context)
    issues += check_direction(facts, context, kind)
    unique = list(dict.fromkeys(issues))
    return sorted(unique, key=lambda i: (i.line is None, i.line or 0, i.severity != "error"))


class RuleJudge(Judge):
    r"""Check a subtask's code before execution (see the module docstring).

    ``judge_plan(kind, code, context)`` returns a signal with ``reward`` = the score
    (1 / 0.5 / 0), no Φ, verdict ``success`` (1), ``undecided`` (0.5) or ``failure`` (0), the
    issues as the reason, and details ``score`` (float), ``errors`` / ``warnings`` (lists of
    str), ``issues`` (list of dicts: code, message, severity, line), ``names_checked`` (bool:
    whether the context knew the scene's names). It does not judge live transitions.

    Examples:
        >>> ctx = JudgeContext(object_names=("Cabinet",), links={"Cabinet": ("base", "link_0")},
        ...                    joints={"Cabinet": ("joint_0",)})
        >>> code = 'rgbs, final_state = grasp_object_link(self, "Cabinet", "link_9")\n' \
        ...        'success = check_grasped(self, "Cabinet", "link_9")'
        >>> s = RuleJudge().judge_plan("primitive", code, ctx)
        >>> s.reward, s.details["issues"][0]["code"]
        (0.0, 'unknown-link')

    Args:
        max_issues_in_reason: How many issues the one-line reason lists.
    """

    name = "rule"
    provides_potential = False
    max_reward = 1.0

    def __init__(self, max_issues_in_reason: int = 3) -> None:
        super().__init__()
        self.max_issues_in_reason = int(max_issues_in_reason)

    def _judge_plan(self, kind: str, code: str, context: JudgeContext) -> JudgeSignal:
        issues = rule_issues(kind, code, context)
        errors = [i for i in issues if i.severity == "error"]
        warnings = [i for i in issues if i.severity != "error"]
        if errors:
            score, verdict = 0.0, FAILURE
        elif warnings:
            score, verdict = 0.5, UNDECIDED
        else:
            score, verdict = 1.0, SUCCESS
        shown = (errors + warnings)[: self.max_issues_in_reason]
        reason = "; ".join(str(i) for i in shown) or "no issues found"
        if len(issues) > len(shown):
            reason += f" (and {len(issues) - len(shown)} more)"
        details = {
            "score": score,
            "errors": [str(i) for i in errors],
            "warnings": [str(i) for i in warnings],
            "issues": [i.to_dict() for i in issues],
            "names_checked": bool(context.object_names),
        }
        return JudgeSignal(reward=score, phi=None, verdict=verdict, reason=reason, details=details)
