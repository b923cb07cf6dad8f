"""Labelled error injection into reference subtask code, and plan-judge precision/recall.

Clean code (template solutions, reference solutions) is normalised with ``ast.unparse`` so
that formatting never distinguishes clean from injected code. Injections (AST edits):

- ``wrong-link``: reward code — the reached-for link replaced by a link of the same object
  that the driven joint does not move (e.g. the base; a real name, so only the tree tells)
  or, half of the time or when there is none, by a name the tree does not have; primitive
  code — a name the tree does not have (a primitive alone does not say which part the task
  is about, so a wrong *existing* link there is undecidable without the task's target);
- ``wrong-direction`` (reward code, tasks whose verb fixes a direction: open, close, press
  …): the reward's joint target moved to the other limit (``target = upper`` → ``lower``;
  ``abs(1.0 - fraction)`` → ``abs(0.0 - fraction)``) and every comparison on the joint or
  its fraction flipped, i.e. a coherent subtask for the opposite task;
- ``missing-success``: primitive — the ``success = …`` statements removed; reward — the
  success output dropped from ``return reward, success``;
- ``disallowed-api``: one statement outside the allowlist inserted (``import os``,
  ``eval``, a hallucinated ``set_joint_state``, raw ``p.resetJointState``, ``self.robot``,
  ``np.random``, ``time.time``, ``open``), chosen by the seed;
- ``hard-coded-target`` (reward code): the joint target replaced by a number in joint units
  (π, 1.57, the joint's actual limit or 2× it, chosen by the seed): ``target = 3.1416`` or
  ``abs(1.0 - fraction)`` → ``abs(3.1416 - joint)``.

Clean negatives are the normalised clean code and a consistent renaming of its local
variables. A judge *flags* a case when its score is below 1 (VERGSA's scale: 0.5 is not
"no errors"); precision and recall are also reported at score 0 (``error``).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..base import Judge
from ..context import JudgeContext
from ..rule_facts import CodeFacts, distance_to_target, fraction_target
from ..rule_links import moved_links

__all__ = [
    "ERROR_TYPES",
    "PlanCase",
    "PlanResult",
    "build_plan_cases",
    "inject_error",
    "normalize_code",
    "rename_locals",
    "score_plan_cases",
    "summarize_plan_results",
]

ERROR_TYPES: tuple[str, ...] = (
    "wrong-link", "wrong-direction", "missing-success", "disallowed-api", "hard-coded-target",
)
"""Injected error types (see the module docstring)."""

_DISALLOWED = (
    ("import", "import os"),
    ("eval", "check = eval('1 + 1')"),
    ("hallucinated-api", "set_joint_state(self, {obj!r}, {joint!r}, 0.0)"),
    ("raw-pybullet", "p.resetJointState(0, 0, 0.0)"),
    ("self-attribute", "robot = self.robot"),
    ("np.random", "jitter = np.random.uniform(-0.01, 0.01)"),
    ("time", "started = time.time()"),
    ("file", "log = open('/tmp/reward.log', 'a')"),
)
_KEEP_NAMES = frozenset({"self", "success", "rgbs", "final_state"})
_FLIP = {ast.Gt: ast.Lt, ast.Lt: ast.Gt, ast.GtE: ast.LtE, ast.LtE: ast.GtE}


@dataclass(frozen=True)
class PlanCase:
    """One subtask to judge.

    Attributes:
        task: Task the subtask belongs to.
        subtask: Subtask name.
        kind: ``primitive`` or ``reward``.
        code: The code (normalised).
        context: The judge context (names, trees, verb of the subtask).
        label: ``clean`` or one of :data:`ERROR_TYPES`.
        variant: What exactly was changed ("" for unchanged clean code).
    """

    task: str
    subtask: str
    kind: str
    code: str
    context: JudgeContext
    label: str = "clean"
    variant: str = ""

    @property
    def erroneous(self) -> bool:
        """Whether an error was injected."""
        return self.label != "clean"


def normalize_code(code: str) -> str:
    """``ast.unparse(ast.parse(code))`` (unparseable code is returned unchanged)."""
    try:
        return ast.unparse(ast.parse(code))
    except SyntaxError:
        return code


def _literal_links(facts: CodeFacts) -> list[tuple[str, ast.Constant]]:
    sites = []
    for call in facts.calls:
        node = facts.argument(call, "link")
        obj = facts.string(facts.argument(call, "object"))
        if obj and isinstance(node, ast.Constant) and isinstance(node.value, str):
            sites.append((obj, node))
    return sites


def _driven(facts: CodeFacts) -> list[tuple[str, str]]:
    found = []
    for call in facts.calls:
        if isinstance(call.func, ast.Name) and call.func.id == "get_joint_state":
            obj = facts.string(facts.argument(call, "object"))
            joint = facts.string(facts.argument(call, "joint"))
            if obj and joint:
                found.append((obj, joint))
    return found


def _wrong_link(tree: ast.Module, kind: str, ctx: JudgeContext, rng: np.random.Generator):
    facts = CodeFacts.parse(tree)
    sites = _literal_links(facts)
    if not sites:
        return None
    obj, old = sites[0][0], str(sites[0][1].value)  # a str: see _literal_links
    links = ctx.link_names(obj) or ()
    new, why = None, "not in the tree"
    if kind == "reward" and rng.random() < 0.5:
        moving = set().union(*(moved_links(ctx.trees.get(o, {}), j) for o, j in _driven(facts)
                               if o == obj), set())
        static = sorted(link for link in links if moving and link not in moving)
        if static:
            new, why = str(rng.choice(static)), "a link the driven joint does not move"
    if new is None:
        fakes = [f"link_{len(links)}", f"{old}_handle", "handle", *(ctx.joint_names(obj) or ())]
        new = str(rng.choice([f for f in fakes if f not in links]))
    for site_obj, node in sites:
        if site_obj == obj and node.value == old:
            node.value = new
    return f"{old} -> {new} ({why})"


def _limit_names(facts: CodeFacts) -> dict[tuple[str, Any, Any], str]:
    return {(side, o, j): name for name, (side, o, j) in facts.limits.items() if side != "both"}


def _joint_targets(facts: CodeFacts) -> list[tuple[tuple, ast.AST]]:
    found = []
    for _, reward, _ in facts.reward_outputs():
        for node in ast.walk(reward) if reward is not None else ():
            for expr in facts.expand(node):
                for sub in ast.walk(expr):
                    hit = distance_to_target(facts, sub)
                    if hit is not None:
                        found.append(hit)
    return found


def _target_assignment(tree: ast.Module, target: ast.AST) -> ast.Assign | None:
    """The assignment ``name = <limit>`` a target name is bound to (the node to edit)."""
    if not isinstance(target, ast.Name):
        return None
    found = [n for n in ast.walk(tree) if isinstance(n, ast.Assign) and len(n.targets) == 1
             and isinstance(n.targets[0], ast.Name) and n.targets[0].id == target.id]
    return found[0] if len(found) == 1 else None


def _fraction_terms(facts: CodeFacts, tree: ast.Module) -> list[tuple[ast.AST, ast.Constant]]:
    """(term, constant node) of reward terms ``abs(c - F)`` on a joint fraction F."""
    found = []
    for node in ast.walk(tree):
        hit = fraction_target(facts, node)
        if hit is None or isinstance(node, ast.Name):
            continue
        for sub in ast.walk(node):
            if isinstance(sub, ast.Constant) and isinstance(sub.value, int | float) \
                    and not isinstance(sub.value, bool) and float(sub.value) == hit[1]:
                found.append((node, sub))
                break
    return found


def _wrong_direction(tree: ast.Module, kind: str, ctx: JudgeContext, rng: np.random.Generator):
    if kind != "reward" or ctx.verb_target is None:
        return None
    facts = CodeFacts.parse(tree)
    names = _limit_names(facts)
    changed = []
    for (obj, joint), target in _joint_targets(facts):
        assign = _target_assignment(tree, target)
        limit = facts.limit_of(assign.value) if assign is not None else None
        other = names.get(("upper" if limit[0] == "lower" else "lower", obj, joint)) \
            if limit is not None else None
        if other is not None and assign is not None and limit is not None:
            assign.value = ast.Name(other, ast.Load())
            changed.append(f"target {limit[0]} limit -> {other}")
    for _, const in _fraction_terms(facts, tree):
        value = const.value
        assert isinstance(value, int | float), "_fraction_terms keeps numeric constants"
        if float(value) != 0.5:
            changed.append(f"fraction target {value:g} -> {1.0 - float(value):g}")
            const.value = 1.0 - float(value)
    if not changed:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _FLIP:
            sides = (node.left, node.comparators[0])
            if any(facts.joint_of(x) or facts.fraction_of(x) for x in sides):
                node.ops = [_FLIP[type(node.ops[0])]()]
                changed.append("joint comparison flipped")
    return "; ".join(dict.fromkeys(changed))


def _missing_success(tree: ast.Module, kind: str, ctx: JudgeContext, rng: np.random.Generator):
    if kind == "primitive":
        before = len(tree.body)
        tree.body = [s for s in tree.body if not (
            isinstance(s, ast.Assign | ast.AnnAssign) and any(
                isinstance(t, ast.Name) and t.id == "success"
                for t in (s.targets if isinstance(s, ast.Assign) else [s.target])))]
        return "success assignment removed" if len(tree.body) < before and tree.body else None
    changed = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple) and \
                len(node.value.elts) >= 2:
            node.value = node.value.elts[0]
            changed = True
    return "success output dropped from the return" if changed else None


def _disallowed(tree: ast.Module, kind: str, ctx: JudgeContext, rng: np.random.Generator):
    name, template = _DISALLOWED[int(rng.integers(len(_DISALLOWED)))]
    obj = next(iter(ctx.object_names), "Object")
    joint = next(iter(ctx.joint_names(obj) or ("joint_0",)))
    stmt = ast.parse(template.format(obj=obj, joint=joint)).body[0]
    functions = [s for s in tree.body if isinstance(s, ast.FunctionDef)]
    if functions and name != "import":
        functions[0].body.insert(0, stmt)
    else:
        tree.body.insert(0, stmt)
    return name


def _hard_coded_value(ctx: JudgeContext, obj: Any, joint: Any,
                      rng: np.random.Generator) -> float:
    limits = ctx.joint_limit(obj, joint) if obj and joint else None
    choices = [round(float(np.pi), 4), 1.57]
    if limits is not None:
        choices += [round(limits[1], 4), round(2 * limits[1], 4)]
    return float(choices[int(rng.integers(len(choices)))])


def _hard_coded(tree: ast.Module, kind: str, ctx: JudgeContext, rng: np.random.Generator):
    if kind != "reward":
        return None
    facts = CodeFacts.parse(tree)
    for (obj, joint), target in _joint_targets(facts):
        assign = _target_assignment(tree, target)
        if assign is None or facts.limit_of(assign.value) is None:
            continue
        value = _hard_coded_value(ctx, obj, joint, rng)
        assign.value = ast.Constant(value)
        return f"target = {value:g}"
    for term, _ in _fraction_terms(facts, tree):  # abs(c - F) -> abs(value - J), raw units
        inner = term.args[0] if isinstance(term, ast.Call) else getattr(term, "left", None)
        fraction = next((x for x in (inner.left, inner.right) if facts.fraction_of(x)), None) \
            if isinstance(inner, ast.BinOp) else None
        definition = facts.assigns.get(fraction.id, [None])[0] \
            if isinstance(fraction, ast.Name) else fraction
        raw = definition.left.left if isinstance(definition, ast.BinOp) \
            and isinstance(definition.left, ast.BinOp) else None
        location = facts.fraction_of(fraction) if fraction is not None else None
        if raw is None or location is None:
            continue
        obj, joint = location
        value = _hard_coded_value(ctx, obj, joint, rng)
        new = ast.BinOp(ast.Constant(value), ast.Sub(), raw)
        if isinstance(term, ast.Call):
            term.args[0] = new
        elif isinstance(term, ast.BinOp):
            term.left = new
        return f"abs(fraction target) -> abs({value:g} - {ast.unparse(raw)})"
    return None


_INJECTORS: dict[str, Callable[..., str | None]] = {
    "wrong-link": _wrong_link,
    "wrong-direction": _wrong_direction,
    "missing-success": _missing_success,
    "disallowed-api": _disallowed,
    "hard-coded-target": _hard_coded,
}


def inject_error(
    error: str, kind: str, code: str, context: JudgeContext, rng: np.random.Generator
) -> tuple[str, str] | None:
    """``(code with the error, what was changed)``, or None when it does not apply.

    Raises:
        ValueError: Unknown error type.
    """
    if error not in _INJECTORS:
        raise ValueError(f"unknown error type {error!r}; use one of {list(ERROR_TYPES)}")
    tree = ast.parse(normalize_code(code))
    variant = _INJECTORS[error](tree, kind, context, rng)
    if variant is None:
        return None
    return ast.unparse(ast.fix_missing_locations(tree)), variant


def rename_locals(code: str) -> str | None:
    """A clean rewrite: local variables renamed consistently (None if nothing to rename)."""
    tree = ast.parse(normalize_code(code))
    stored = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)
              and isinstance(n.ctx, ast.Store)} - _KEEP_NAMES
    if not stored:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in stored:
            node.id = f"{node.id}_now"
    return ast.unparse(tree)


def build_plan_cases(
    clean: Sequence[tuple[str, str, str, str, JudgeContext]], seed: int = 0
) -> list[PlanCase]:
    """Clean cases, their renamed rewrites and every applicable injection.

    Args:
        clean: ``(task, subtask name, kind, code, context)`` of reference subtasks;
            duplicates (same task, kind and normalised code) are dropped.
        seed: Seed of the injection choices.
    """
    rng = np.random.default_rng(seed)
    seen: set[tuple[str, str, str]] = set()
    cases = []
    for task, name, kind, code, context in clean:
        code = normalize_code(code)
        if (task, kind, code) in seen:
            continue
        seen.add((task, kind, code))
        ctx = context.with_subtask(kind, code, name)
        cases.append(PlanCase(task, name, kind, code, ctx))
        renamed = rename_locals(code)
        if renamed is not None and renamed != code:
            cases.append(PlanCase(task, name, kind, renamed, ctx.with_subtask(kind, renamed, name),
                                  variant="renamed locals"))
        for error in ERROR_TYPES:
            found = inject_error(error, kind, code, ctx, rng)
            if found is not None:
                bad, variant = found
                cases.append(PlanCase(task, name, kind, bad, ctx.with_subtask(kind, bad, name),
                                      error, variant))
    return cases


@dataclass(frozen=True)
class PlanResult:
    """A judge's score of one case (None when it failed or gave no score)."""

    case: PlanCase
    score: float | None
    reason: str = ""


def score_plan_cases(judge: Judge, cases: Sequence[PlanCase]) -> list[PlanResult]:
    """``judge.judge_plan`` on every case; an exception is recorded, not raised."""
    results = []
    for case in cases:
        try:
            signal = judge.judge_plan(case.kind, case.code, case.context)
            score = signal.details.get("score", signal.reward) if signal.details else signal.reward
            results.append(PlanResult(case, None if score is None else float(score),
                                      signal.reason))
        except Exception as exc:  # noqa: BLE001 - a judge failure is recorded, not fatal
            results.append(PlanResult(case, None, f"{type(exc).__name__}: {exc}"))
    return results


def _precision_recall(flags: Sequence[bool], truth: Sequence[bool]) -> dict[str, float | None]:
    tp = sum(f and t for f, t in zip(flags, truth, strict=True))
    fp = sum(f and not t for f, t in zip(flags, truth, strict=True))
    fn = sum(t and not f for f, t in zip(flags, truth, strict=True))
    return {"precision": tp / (tp + fp) if tp + fp else None,
            "recall": tp / (tp + fn) if tp + fn else None, "tp": tp, "fp": fp, "fn": fn}


def summarize_plan_results(results: Sequence[PlanResult], examples: int = 5) -> dict[str, Any]:
    """Summarize plan-judge results on injected errors.

    Precision/recall at ``flag`` (score < 1) and ``error`` (score == 0); recall per error
    type; false-positive rate on clean code; a few misses and false alarms.

    A missing score counts as *not flagged* (the judge failed to detect anything).
    """
    truth = [r.case.erroneous for r in results]
    flag = [r.score is not None and r.score < 1.0 for r in results]
    error = [r.score is not None and r.score <= 0.0 for r in results]
    per_type = {}
    for label in ("clean", *ERROR_TYPES):
        chosen = [f for f, r in zip(flag, results, strict=True) if r.case.label == label]
        per_type[label] = {"n": len(chosen),
                           "flagged": float(np.mean(chosen)) if chosen else None}
    misses = [r for r, f in zip(results, flag, strict=True) if r.case.erroneous and not f]
    alarms = [r for r, f in zip(results, flag, strict=True) if not r.case.erroneous and f]

    def show(items: Sequence[PlanResult]) -> list[dict[str, Any]]:
        return [{"task": r.case.task, "kind": r.case.kind, "label": r.case.label,
                 "variant": r.case.variant, "score": r.score, "reason": r.reason[:200]}
                for r in items[:examples]]

    return {
        "n": len(results),
        "positives": sum(truth),
        "flag": _precision_recall(flag, truth),
        "error": _precision_recall(error, truth),
        "per_type": per_type,
        "invalid": sum(r.score is None for r in results),
        "misses": show(misses),
        "false_alarms": show(alarms),
    }
