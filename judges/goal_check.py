r"""The goal check: is a candidate's own success condition at least as strong as the task goal?

A solution declares its own success (each subtask's ``success``); the task goal is derived
independently (:mod:`simjudge.tasks.spec`, a built-in task's reference goal or the parser's
goal). Before anything runs, :func:`goal_issues` reads the candidate's success conditions with
the AST and compares what they require of each goal joint — an interval of the joint's range
fraction — with what the goal requires:

``goal-unchecked``   no success condition constrains the goal's joint at all (no amount:
                     only ``check_grasped``, or nothing)                              error
``wrong-joint``      success conditions constrain another joint of the object, not the
                     goal's (the safe's door instead of its dial)                     error
``wrong-direction``  the condition is met on the wrong side (``≤`` for an opening task)  error
``weaker-threshold`` the condition accepts fractions the goal does not (opens to 0.1 when
                     the task says open, 0.6): the solution could claim success and
                     fail verification                                                error
``no-upper-bound``   the goal is an interval (halfway, slightly) but the condition has no
                     far side, so overshooting counts as success                      warning
``place-unchecked``  a placement goal whose object and target no success condition reads
                                                                                      error

What a condition requires is read from comparisons of a joint's fraction
(``(J - lower) / (upper - lower)``) or of its raw position with constants, limits and
arithmetic on them (``J > lower + 0.6 * (upper - lower)``), and from ``abs(F - c) < tol``.
The last subtask that constrains a joint decides what the solution claims about it.

Example:
    >>> from simjudge.envs.goals import JointGoal
    >>> goal = JointGoal(object="Cabinet", joint="joint_0", link="link_0", threshold=0.6)
    >>> code = ("def _compute_reward(self):\n"
    ...         "    lo, hi = get_joint_limit(self, 'Cabinet', 'joint_0')\n"
    ...         "    f = (get_joint_state(self, 'Cabinet', 'joint_0') - lo) / (hi - lo)\n"
    ...         "    return f, f > 0.1\n")
    >>> [i.code for i in goal_issues([("reward", code)], goal)]
    ['weaker-threshold']
"""

from __future__ import annotations

import ast
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from .context import JudgeContext
from .rule_checks import RuleIssue
from .rule_facts import CodeFacts, constant, dotted

__all__ = ["GOAL_CODES", "JointInterval", "goal_intervals", "goal_issues", "goal_score"]

GOAL_CODES: tuple[str, ...] = (
    "goal-unchecked", "wrong-joint", "wrong-direction", "weaker-threshold", "no-upper-bound",
    "place-unchecked",
)
TOLERANCE = 0.02
"""Slack (range fraction) before a threshold counts as weaker than the goal's."""


@dataclass(frozen=True)
class JointInterval:
    """What a goal (or a success condition) requires of one joint: ``low ≤ fraction ≤ high``.

    Attributes:
        object: Scene object.
        joint: Joint name.
        low: Lower bound of the range fraction (0 = no bound).
        high: Upper bound (1 = no bound).
    """

    object: str
    joint: str
    low: float = 0.0
    high: float = 1.0


def goal_intervals(goal: Any) -> tuple[list[JointInterval], list[tuple[str, str]]]:
    """Joint intervals and ``(object, target)`` placements of an env goal (conjunctions too).

    Reads ``JointGoal`` (``open`` past ``threshold`` → ``[threshold, 1]``, ``close`` →
    ``[0, threshold]``), ``JointRangeGoal`` (``[low, high]``), ``PlaceGoal`` and ``AllOfGoal``
    by their fields, so any goal of :mod:`simjudge.envs.goals` is understood.
    """
    kind = getattr(goal, "kind", None)
    if kind == "all":
        joints: list[JointInterval] = []
        places: list[tuple[str, str]] = []
        for sub in goal.goals:
            j, p = goal_intervals(sub)
            joints += j
            places += p
        return joints, places
    if kind == "joint":
        t = float(goal.threshold)
        low, high = (t, 1.0) if goal.direction == "open" else (0.0, t)
        return [JointInterval(goal.object, goal.joint, low, high)], []
    if kind == "joint_range":
        return [JointInterval(goal.object, goal.joint, float(goal.low), float(goal.high))], []
    if kind == "place":
        return [], [(goal.object, goal.target)]
    return [], []


# --------------------------------------------------------------------------------------
# reading success conditions
# --------------------------------------------------------------------------------------
_BINOPS = {ast.Add: float.__add__, ast.Sub: float.__sub__, ast.Mult: float.__mul__,
           ast.Div: float.__truediv__}


def _value(facts: CodeFacts, node: ast.AST, limits: dict[str, float], depth: int = 0) -> float | None:
    """A number from constants, joint limits and + - * / on them (None if not one)."""
    if depth > 6:
        return None
    side = facts.limit_of(node)
    if side is not None and side[0] in limits:
        return limits[side[0]]
    number = constant(facts, node)
    if number is not None:
        return float(number)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        left = _value(facts, node.left, limits, depth + 1)
        right = _value(facts, node.right, limits, depth + 1)
        if left is None or right is None or (isinstance(node.op, ast.Div) and right == 0):
            return None
        return _BINOPS[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _value(facts, node.operand, limits, depth + 1)
        return None if inner is None else -inner
    if isinstance(node, ast.Name):
        values = facts.assigns.get(node.id, [])
        if len(values) == 1:
            return _value(facts, values[0], limits, depth + 1)
    return None


def _joint_and_scale(
    facts: CodeFacts, node: ast.AST, context: JudgeContext
) -> tuple[tuple[str, str], float, float] | None:
    """``((object, joint), lower, span)`` if ``node`` is a fraction (span 1) or a position."""
    joint = facts.fraction_of(node)
    if joint is not None and all(joint):
        return (str(joint[0]), str(joint[1])), 0.0, 1.0
    joint = facts.joint_of(node)
    if joint is not None and all(joint):
        limits = context.joint_limit(str(joint[0]), str(joint[1]))
        if limits is not None and limits[1] > limits[0]:
            return (str(joint[0]), str(joint[1])), limits[0], limits[1] - limits[0]
    return None


def _limits(context: JudgeContext, joint: tuple[str, str]) -> dict[str, float]:
    """``{"lower": lo, "upper": hi}`` of a joint from the context's trees ({} if unknown)."""
    limits = context.joint_limit(*joint)
    return {} if limits is None else dict(zip(("lower", "upper"), limits, strict=True))


def _bounds(
    facts: CodeFacts, node: ast.Compare, context: JudgeContext
) -> Iterator[tuple[tuple[str, str], str, float]]:
    """``((object, joint), "low" | "high", fraction)`` bounds a comparison puts on a joint."""
    for left, op, right in zip([node.left, *node.comparators], node.ops, node.comparators,
                               strict=False):
        for side, other, flip in ((left, right, False), (right, left, True)):
            found = _joint_and_scale(facts, side, context)
            if found is None or not isinstance(op, ast.Gt | ast.GtE | ast.Lt | ast.LtE):
                continue
            joint, lower, span = found
            value = _value(facts, other, _limits(context, joint))
            if value is None or not math.isfinite(value):
                continue
            greater = isinstance(op, ast.Gt | ast.GtE) != flip
            yield joint, "low" if greater else "high", (value - lower) / span
            break
    yield from _tolerance_bounds(facts, node, context)


def _tolerance_bounds(
    facts: CodeFacts, node: ast.Compare, context: JudgeContext
) -> Iterator[tuple[tuple[str, str], str, float]]:
    """``abs(F - c) < tol`` → ``c - tol ≤ F ≤ c + tol``."""
    if len(node.ops) != 1 or not isinstance(node.ops[0], ast.Lt | ast.LtE):
        return
    call = node.left
    if not (isinstance(call, ast.Call) and dotted(call.func) in ("abs", "np.abs", "math.fabs")
            and call.args and isinstance(call.args[0], ast.BinOp)
            and isinstance(call.args[0].op, ast.Sub)):
        return
    tol = _value(facts, node.comparators[0], {})
    inner = call.args[0]
    for a, b in ((inner.left, inner.right), (inner.right, inner.left)):
        found = _joint_and_scale(facts, a, context)
        if found is None or tol is None:
            continue
        joint, lower, span = found
        centre = _value(facts, b, _limits(context, joint))
        if centre is not None:
            yield joint, "low", (centre - tol - lower) / span
            yield joint, "high", (centre + tol - lower) / span
        return


def _success_roots(facts: CodeFacts, kind: str) -> list[ast.expr]:
    if kind == "reward":
        return [s for _, _, s in facts.reward_outputs() if s is not None]
    roots = list(facts.assigns.get("success", []))
    roots += [n.value for n in ast.walk(facts.tree) if isinstance(n, ast.Return) and n.value]
    return roots


def success_constraints(
    kind: str, code: str, context: JudgeContext
) -> tuple[dict[tuple[str, str], JointInterval], set[str]]:
    """What one subtask's success condition requires of each joint, and the names it reads.

    Returns:
        ``({(object, joint): JointInterval}, {string literals read by the condition})``.
    """
    try:
        facts = CodeFacts.parse(ast.parse(code))
    except SyntaxError:
        return {}, set()
    found: dict[tuple[str, str], JointInterval] = {}
    names: set[str] = set()
    for root in _success_roots(facts, kind):
        for expr in facts.expand(root):
            for node in ast.walk(expr):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    names.add(node.value)
                elif isinstance(node, ast.Name) and node.id in facts.strings:
                    names.add(facts.strings[node.id])
                if isinstance(node, ast.Compare):
                    for joint, side, value in _bounds(facts, node, context):
                        now = found.get(joint, JointInterval(*joint))
                        if side == "low":
                            now = JointInterval(*joint, max(now.low, value), now.high)
                        else:
                            now = JointInterval(*joint, now.low, min(now.high, value))
                        found[joint] = now
    return found, names


# --------------------------------------------------------------------------------------
# comparing with the goal
# --------------------------------------------------------------------------------------
def _compare(want: JointInterval, claimed: JointInterval) -> list[RuleIssue]:
    name = f"{want.object}.{want.joint}"
    goal = f"[{want.low:.2f}, {want.high:.2f}]"
    opening = want.low > TOLERANCE and want.high >= 1.0 - TOLERANCE
    closing = want.low <= TOLERANCE and want.high < 1.0 - TOLERANCE
    if opening and claimed.low <= TOLERANCE and claimed.high < 1.0 - TOLERANCE:
        return [RuleIssue("wrong-direction", (
            f"the success condition accepts {name} at ≤ {claimed.high:.2f} of its range, the "
            f"wrong side: the task goal needs it in {goal}; compare with ≥"))]
    if closing and claimed.high >= 1.0 - TOLERANCE and claimed.low > TOLERANCE:
        return [RuleIssue("wrong-direction", (
            f"the success condition accepts {name} at ≥ {claimed.low:.2f} of its range, the "
            f"wrong side: the task goal needs it in {goal}; compare with ≤"))]
    issues = []
    if claimed.low < want.low - TOLERANCE:
        issues.append(RuleIssue("weaker-threshold", (
            f"the success condition accepts {name} from {claimed.low:.2f} of its range, but "
            f"the task goal needs at least {want.low:.2f} (goal {goal}); raise the threshold")))
    if claimed.high > want.high + TOLERANCE and want.high < 1.0:
        if claimed.high >= 1.0 - TOLERANCE and want.low > 0.0:
            issues.append(RuleIssue("no-upper-bound", (
                f"the task goal is the interval {goal} of {name}'s range but the success "
                f"condition has no upper bound, so overshooting counts; add "
                f"fraction <= {want.high:.2f}"), "warning"))
        else:
            issues.append(RuleIssue("weaker-threshold", (
                f"the success condition accepts {name} up to {claimed.high:.2f} of its range, "
                f"but the task goal needs at most {want.high:.2f} (goal {goal}); lower the "
                "threshold")))
    return issues


def goal_issues(
    subtasks: Sequence[tuple[str, str]], goal: Any, context: JudgeContext | None = None
) -> list[RuleIssue]:
    """Every way a candidate's success conditions are weaker than the task goal.

    Args:
        subtasks: ``(kind, code)`` per subtask, in order.
        goal: The task's env goal (``JointGoal``, ``JointRangeGoal``, ``PlaceGoal``,
            ``AllOfGoal``), or None (nothing to check against: no issues).
        context: Judge context with the objects' articulation trees (joint limits for
            conditions on raw joint positions).

    Returns:
        The issues (codes in :data:`GOAL_CODES`), errors first.
    """
    if goal is None:
        return []
    context = context or JudgeContext()
    wanted, places = goal_intervals(goal)
    claimed: dict[tuple[str, str], JointInterval] = {}
    names: set[str] = set()
    for kind, code in subtasks:
        found, read = success_constraints(kind, code, context)
        claimed.update(found)  # the last subtask that constrains a joint decides
        names |= read
    issues: list[RuleIssue] = []
    for want in wanted:
        key = (want.object, want.joint)
        if key in claimed:
            issues += _compare(want, claimed[key])
            continue
        others = sorted(j for o, j in claimed if o == want.object)
        if others:
            issues.append(RuleIssue("wrong-joint", (
                f"the success conditions check {want.object}'s {', '.join(others)}, but the "
                f"task is about {want.joint}; check {want.joint}'s fraction of its range")))
        else:
            issues.append(RuleIssue("goal-unchecked", (
                f"no success condition checks how far {want.object}.{want.joint} moved; the "
                f"task goal needs its fraction in [{want.low:.2f}, {want.high:.2f}]")))
    for obj, target in places:
        if not {obj, target} <= names:
            issues.append(RuleIssue("place-unchecked", (
                f"no success condition reads both {obj} and {target}; the task goal is "
                f"{obj} placed relative to {target} (check it with in_bbox / positions)")))
    return sorted(issues, key=lambda i: i.severity != "error")


def goal_score(issues: Sequence[RuleIssue]) -> float:
    """1 = as strong as the goal, 0.5 = warnings only, 0 = weaker (the rule judge's scale)."""
    if any(i.severity == "error" for i in issues):
        return 0.0
    return 0.5 if issues else 1.0
