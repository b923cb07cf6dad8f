"""The rule judge's checks: the VERGSA LLM-as-a-judge list, done mechanically.

Each check takes the parsed :class:`~simjudge.judges.rule_facts.CodeFacts` (and the
context) and returns :class:`RuleIssue` s. :data:`RULE_CODES` lists every issue code with
its severity; errors make a subtask wrong (score 0), warnings doubtful (score 0.5).
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, cast

from simjudge.envs.codegen import PRIMITIVE_NAMES, check_source
from simjudge.envs.codegen.syntax import Kind

from .context import JudgeContext
from .rule_facts import (
    CodeFacts,
    constant,
    distance_to_target,
    fraction_target,
    signed_terms,
)

__all__ = [
    "RULE_CODES",
    "RuleIssue",
    "check_direction",
    "check_joint_targets",
    "check_names",
    "check_primitive_outputs",
    "check_reward_outputs",
    "check_static",
    "check_weighting",
]

RULE_CODES: dict[str, str] = {
    "syntax / disallowed-* / unknown-name ...": "error: codegen's static check (allowlist)",
    "missing-success": "error: a primitive block or success code never assigns `success`",
    "unassigned-primitive": "error: a primitive's result is not assigned to `rgbs, final_state`",
    "primitive-output": "error: a primitive's result is assigned to other names",
    "missing-self": "error: a state API or primitive call does not pass `self` first",
    "unknown-object / unknown-link / unknown-joint": "error: a name not in the scene or tree",
    "missing-success-output": "error: the reward function returns no success value",
    "constant-reward": "error: the reward does not depend on the state (no reward terms)",
    "constant-success": "error: the success output is a constant",
    "positive-distance": "error: a Euclidean distance enters the reward with a + sign",
    "joint-out-of-range": "error: a hard-coded joint target outside the joint's limits",
    "wrong-direction": "error: the code drives a joint against the task verb",
    "link-not-moved": "error: the code reaches for a link the joint it drives does not move",
    "hard-coded-target": "warning: a hard-coded joint target (use get_joint_limit)",
    "no-primitive": "warning: a primitive block calls no primitive",
}
"""Issue codes of the rule judge and their severity."""

_OPEN_ENDED = ("lower", "upper")
_PRIMITIVES = frozenset(PRIMITIVE_NAMES)
_CONSTANT_SUCCESS = (
    "success is always `{expr}`; compute it from the state (e.g. a joint past a fraction of "
    "its range)"
)
_CONSTANT_REWARD = (
    "the reward `{expr}` does not depend on the state: add reward terms such as the negative "
    "distance to the target link or the joint's progress"
)
_POSITIVE_DISTANCE = (
    "the distance `{expr}` enters the reward with a positive sign, so the agent is paid to move "
    "away; subtract it (reward = -distance) or use np.exp(-distance)"
)
_OUT_OF_RANGE = (
    "the target {value:g} for {obj}.{joint} is outside its limits [{lo:g}, {hi:g}]; use "
    "get_joint_limit(self, {obj!r}, {joint!r})"
)
_HARD_CODED = (
    "hard-coded joint target {value:g}; use get_joint_limit(self, ...) so the code fits the "
    "object's actual range"
)
_WRONG_DIRECTION = (
    "the task verb {verb!r} moves joints towards their {target} limit, but this drives {name} "
    "towards its {toward} limit"
)


@dataclass(frozen=True)
class RuleIssue:
    """One finding.

    Attributes:
        code: Stable identifier (see :data:`RULE_CODES`).
        message: What is wrong and how to fix it.
        severity: ``error`` or ``warning``.
        line: 1-based line, or None.
    """

    code: str
    message: str
    severity: str = "error"
    line: int | None = None

    def __str__(self) -> str:
        where = f"line {self.line}: " if self.line is not None else ""
        return f"{where}{'warning: ' if self.severity == 'warning' else ''}{self.message}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {
            "code": self.code,
            "message": self.message,
            "severity": self.severity,
            "line": self.line,
        }


def check_static(kind: str, code: str) -> list[RuleIssue]:
    """The allowlist check of codegen; an unassigned primitive result is an error here (VERGSA)."""
    issues = []
    # cast: check_source validates ``kind`` against its Literal itself
    for issue in check_source(code, cast(Kind, kind), allow_primitives=kind == "primitive"):
        severity = "error" if issue.code == "unassigned-primitive" else issue.severity
        issues.append(RuleIssue(issue.code, issue.message, severity, issue.line))
    return issues


def _closest(name: str, valid: tuple[str, ...]) -> str:
    close = difflib.get_close_matches(name, list(valid), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def _check_member(
    code: str, kind: str, name: str, valid: tuple[str, ...], where: str, line: int
) -> RuleIssue:
    return RuleIssue(
        code,
        f"unknown {kind} {name!r}{where}; valid {kind}s are {list(valid)}{_closest(name, valid)}",
        "error",
        line,
    )


def check_names(facts: CodeFacts, context: JudgeContext) -> list[RuleIssue]:
    """Object/link/joint literals passed to state API and primitive calls exist."""
    issues = []
    objects = context.object_names
    for call in facts.calls:
        assert isinstance(call.func, ast.Name), "facts.calls holds calls of plain names"
        fn = call.func.id
        first = call.args[0] if call.args else None
        if not (isinstance(first, ast.Name) and first.id == "self"):
            issues.append(
                RuleIssue(
                    "missing-self",
                    f"{fn}() must be called as {fn}(self, ...)",
                    "error",
                    call.lineno,
                )
            )
            continue
        obj = facts.string(facts.argument(call, "object"))
        if obj is None or not objects:
            continue
        if obj not in objects:
            issues.append(_check_member("unknown-object", "object", obj, objects, "", call.lineno))
            continue
        for role, valid in (("link", context.link_names(obj)), ("joint", context.joint_names(obj))):
            name = facts.string(facts.argument(call, role))
            if name is None or valid is None or name in valid:
                continue
            issue = _check_member(f"unknown-{role}", role, name, valid, f" of {obj}", call.lineno)
            if role == "joint":
                issue = _joint_hint(issue, context, obj, name)
            issues.append(issue)
    return issues


def _joint_hint(issue: RuleIssue, context: JudgeContext, obj: str, name: str) -> RuleIssue:
    tree = context.tree(obj)
    if tree is None:
        return issue
    if name in tree.link_names:
        joint = tree.joint_of_link(name)
        hint = f" ({name!r} is a link; the joint above it is {joint.name!r})" if joint else ""
        return RuleIssue(issue.code, issue.message + hint, issue.severity, issue.line)
    if name in tree.joint_names:
        return RuleIssue(
            issue.code, issue.message + f" ({name!r} is a fixed joint)", issue.severity, issue.line
        )
    return issue


def check_primitive_outputs(facts: CodeFacts) -> list[RuleIssue]:
    """Each primitive call's result goes to ``rgbs, final_state`` (RoboGen's convention)."""
    issues = []
    for stmt in facts.tree.body:
        if not isinstance(stmt, ast.Assign):
            continue
        prims = [
            n.func.id
            for n in ast.walk(stmt.value)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in _PRIMITIVES
        ]
        if not prims:
            continue
        target = stmt.targets[0]
        names = (
            [e.id for e in target.elts if isinstance(e, ast.Name)]
            if isinstance(target, ast.Tuple)
            else []
        )
        if names != ["rgbs", "final_state"]:
            issues.append(
                RuleIssue(
                    "primitive-output",
                    f"assign the result of {prims[0]} to `rgbs, final_state`, not "
                    f"`{ast.unparse(target)}`",
                    "error",
                    stmt.lineno,
                )
            )
    return issues


def check_reward_outputs(facts: CodeFacts) -> list[RuleIssue]:
    """The reward function returns a success output, reward terms and a real condition."""
    issues = []
    for ret, reward, success in facts.reward_outputs():
        if success is None:
            issues.append(
                RuleIssue(
                    "missing-success-output",
                    "the reward function returns a single value; return `reward, success`",
                    "error",
                    ret.lineno,
                )
            )
        elif isinstance(success, ast.Constant) or not facts.reads_state(success):
            issues.append(
                RuleIssue(
                    "constant-success",
                    _CONSTANT_SUCCESS.format(expr=ast.unparse(success)),
                    "error",
                    ret.lineno,
                )
            )
        if reward is not None and not facts.reads_state(reward):
            issues.append(
                RuleIssue(
                    "constant-reward",
                    _CONSTANT_REWARD.format(expr=ast.unparse(reward)),
                    "error",
                    ret.lineno,
                )
            )
    return issues


def check_weighting(facts: CodeFacts) -> list[RuleIssue]:
    """A Euclidean distance with a positive sign pays the agent to move away."""
    issues, reported = [], set()
    for _, reward, _ in facts.reward_outputs():
        if reward is None:
            continue
        for term, sign in signed_terms(facts, reward):
            key = (getattr(term, "lineno", None), ast.unparse(term))
            if sign > 0 and facts.is_distance(term) and key not in reported:
                reported.add(key)
                issues.append(
                    RuleIssue(
                        "positive-distance",
                        _POSITIVE_DISTANCE.format(expr=key[1]),
                        "error",
                        key[0],
                    )
                )
    return issues


def _joint_constant_pairs(facts: CodeFacts) -> Iterator[tuple[ast.expr, tuple, float]]:
    for node in ast.walk(facts.tree):
        if isinstance(node, ast.Compare) and len(node.comparators) == 1:
            pair = (node.left, node.comparators[0])
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
            pair = (node.left, node.right)
        else:
            continue
        for a, b in (pair, pair[::-1]):
            joint, value = facts.joint_of(a), constant(facts, b)
            if joint is not None and value is not None:
                yield node, joint, value


def check_joint_targets(facts: CodeFacts, context: JudgeContext) -> list[RuleIssue]:
    """Hard-coded joint targets: out of the joint's limits (error) or merely hard-coded."""
    issues, reported = [], set()
    for node, (obj, joint), value in _joint_constant_pairs(facts):
        if (node.lineno, value) in reported:
            continue
        reported.add((node.lineno, value))
        limits = context.joint_limit(obj, joint) if obj and joint else None
        if limits is not None:
            lo, hi = limits
            slack = 0.05 * (hi - lo) + 1e-6
            if not lo - slack <= value <= hi + slack:
                issues.append(
                    RuleIssue(
                        "joint-out-of-range",
                        _OUT_OF_RANGE.format(value=value, obj=obj, joint=joint, lo=lo, hi=hi),
                        "error",
                        node.lineno,
                    )
                )
                continue
        issues.append(
            RuleIssue(
                "hard-coded-target",
                _HARD_CODED.format(value=value),
                "warning",
                node.lineno,
            )
        )
    return issues


def _target_side(
    facts: CodeFacts, context: JudgeContext, joint: tuple, node: ast.AST
) -> str | None:
    limit = facts.limit_of(node)
    if limit is not None:
        return limit[0]
    value = constant(facts, node)
    limits = context.joint_limit(*joint) if value is not None and all(joint) else None
    if value is None or limits is None:
        return None
    lo, hi = limits
    if abs(value - lo) == abs(value - hi):
        return None
    return "lower" if abs(value - lo) < abs(value - hi) else "upper"


def _relations(
    facts: CodeFacts, context: JudgeContext, kind: str
) -> Iterator[tuple[int, tuple, str]]:
    """(line, joint, side the code drives it towards)."""
    if kind == "reward":
        for _, reward, _ in facts.reward_outputs():
            for term, sign in signed_terms(facts, reward) if reward is not None else ():
                joint, side = _term_target(facts, context, term)
                if side:
                    toward = side if sign < 0 else _OPEN_ENDED[1 - _OPEN_ENDED.index(side)]
                    yield term.lineno, joint, toward
    for expr in _success_expressions(facts, kind):
        for node in ast.walk(expr):
            if isinstance(node, ast.Compare) and len(node.ops) == 1:
                yield from _compare_relation(facts, context, node)


def _term_target(facts: CodeFacts, context: JudgeContext, term: ast.AST) -> tuple[Any, Any]:
    """(joint, side) a distance-to-target term pulls the joint to.

    The term is ``abs(J - T)`` with T a limit or a constant, or ``abs(c - F)`` with F the
    joint's fraction of its range.
    """
    found = distance_to_target(facts, term)
    if found is not None:
        return found[0], _target_side(facts, context, *found)
    frac = fraction_target(facts, term)
    if frac is not None and frac[1] != 0.5:
        return frac[0], "upper" if frac[1] > 0.5 else "lower"
    return None, None


def _success_expressions(facts: CodeFacts, kind: str) -> list[ast.expr]:
    if kind == "reward":
        roots = [s for _, _, s in facts.reward_outputs() if s is not None]
    else:
        roots = list(facts.assigns.get("success", []))
        roots += [
            n.value
            for n in ast.walk(facts.tree)
            if isinstance(n, ast.Return) and n.value is not None
        ]
    return [e for root in roots for e in facts.expand(root)]


def _compare_relation(
    facts: CodeFacts, context: JudgeContext, node: ast.Compare
) -> Iterator[tuple[int, tuple, str]]:
    op, left, right = node.ops[0], node.left, node.comparators[0]
    joint, side = _term_target(facts, context, left)
    if joint is not None and isinstance(op, ast.Lt | ast.LtE):
        if side:
            yield node.lineno, joint, side
        return
    for joint_side, flip in ((left, False), (right, True)):
        joint = facts.joint_of(joint_side) or facts.fraction_of(joint_side)
        if joint is not None and isinstance(op, ast.Gt | ast.GtE | ast.Lt | ast.LtE):
            up = isinstance(op, ast.Gt | ast.GtE) != flip
            yield node.lineno, joint, "upper" if up else "lower"
            return


def check_direction(facts: CodeFacts, context: JudgeContext, kind: str) -> list[RuleIssue]:
    """Joints driven against the task verb (open → upper limit, close → lower limit)."""
    target = context.verb_target
    if target is None:
        return []
    issues, reported = [], set()
    for line, (obj, joint), toward in _relations(facts, context, kind):
        if toward != target and (line, obj, joint) not in reported:
            reported.add((line, obj, joint))
            name = f"{obj}.{joint}" if obj and joint else "the joint"
            issues.append(
                RuleIssue(
                    "wrong-direction",
                    _WRONG_DIRECTION.format(
                        verb=context.verb, target=target, name=name, toward=toward
                    ),
                    "error",
                    line,
                )
            )
    return issues
