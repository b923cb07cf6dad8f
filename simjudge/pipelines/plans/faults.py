"""Failure analysis: labelled faults injected into real executions and into plans.

*Execution faults* (:data:`~simjudge.pipelines.plans.physical.EXECUTION_FAULTS`) perturb one
step of the reference plan while it runs in the simulator; *planning faults*
(:data:`PLANNING_FAULTS`) edit the reference plan, which then runs. An item is kept only
when the fault really lowered completion, so every item shows a failure; its label is the
injected fault. :func:`privileged_diagnosis` is the rule-based diagnoser (the oracle's
answer): for plans it compares with the reference plan, for executions it reads the
telemetry of the rollout log. :func:`plan_error_labels` gives the automatic error labels
of any proposed plan (missing step, impossible action, redundant step, wrong object,
parameter mismatch, physics violation, spatial error).
"""

from __future__ import annotations

from typing import Any

from .groundtruth import TaskPlan
from .matching import best_score, node_correctness, resolve_object
from .physical import EXECUTION_FAULTS, ExecutionFault, PhysicalRunner
from .records import Completion
from .schema import JOINT_SKILLS, PlanNode, parse_node

__all__ = [
    "PLAN_ERROR_LABELS",
    "PLANNING_FAULTS",
    "execution_fault_items",
    "inject_planning_fault",
    "plan_error_labels",
    "planning_fault_items",
    "privileged_diagnosis",
]

PLANNING_FAULTS: tuple[str, ...] = ("wrong_object", "deleted_step", "swapped_order", "impossible_action")
"""Planning faults injected into reference plans."""

PLAN_ERROR_LABELS: tuple[str, ...] = (
    "missing_step", "impossible_action", "redundant_step", "wrong_object", "parameter_mismatch",
    "physics_violation", "spatial_error",
)
"""Automatic error labels of a proposed plan (from its rollout log)."""

_SUCTION_SKILLS = frozenset({"grasp", "pick_up", "open", "close", "turn", "pull", "push"})


def key_step(plan: TaskPlan, last: bool) -> int:
    achieving = [i for i, s in enumerate(plan.plan.steps) if s.achieves]
    return (achieving[-1] if last else achieving[0]) if achieving else 0


def _other_object(plan: TaskPlan, name: str) -> str | None:
    """Another plan object to confuse ``name`` with: a sibling part, else a different object."""
    obj = plan.object_named(name)
    if obj is None:
        return None
    others = [o for o in plan.plan.objects if o.name != obj.name and o.name != obj.part_of
              and o.part_of != obj.name]
    siblings = [o for o in others if o.category == obj.category or (obj.part_of and o.part_of == obj.part_of)]
    candidates = siblings or others
    return candidates[0].name if candidates else None


def inject_planning_fault(plan: TaskPlan, kind: str) -> list[str] | None:
    """The reference plan with one planning fault, or None when it cannot apply."""
    steps = plan.reference_steps()
    key = key_step(plan, last=True)
    if kind == "deleted_step":
        return steps[:key] + steps[key + 1:] if len(steps) > 1 else None
    if kind == "swapped_order":
        if len(steps) < 2:
            return None
        j = max(key - 1, 0)
        out = list(steps)
        out[j], out[j + 1] = out[j + 1], out[j]
        return out
    node = parse_node(steps[key])
    if kind == "wrong_object":
        other = _other_object(plan, node.object)
        if other is None:
            return None
        out = list(steps)
        out[key] = str(PlanNode(node.skill, other, node.params))
        return out
    if kind == "impossible_action":
        out = list(steps)
        out[key] = str(PlanNode("teleport", node.object, node.params))
        return out
    raise ValueError(f"unknown planning fault {kind!r}; use one of {list(PLANNING_FAULTS)}")


def _log(completion: Completion) -> list[dict[str, Any]]:
    return [{"step": s.text, "ok": s.ok, "error": s.label, "reason": s.reason,
             "reached": s.reached, "control_steps": s.control_steps, "telemetry": s.telemetry}
            for s in completion.steps]


def planning_fault_items(plan: TaskPlan, runner: PhysicalRunner, clean: Completion) -> list[dict[str, Any]]:
    """One item per planning fault that applies and lowers physical completion."""
    items = []
    for kind in PLANNING_FAULTS:
        steps = inject_planning_fault(plan, kind)
        if steps is None:
            continue
        run = runner.run([parse_node(s) for s in steps]).completion
        if run.score >= clean.score and kind not in ("impossible_action", "wrong_object"):
            continue
        items.append({"kind": "planning", "label": kind, "task": plan.env_id, "plan": steps,
                      "log": _log(run), "completion": run.score})
    return items


def execution_fault_items(plan: TaskPlan, runner: PhysicalRunner, clean: Completion,
                          seed: int = 0) -> list[dict[str, Any]]:
    """One item per execution fault that lowers completion of the reference plan."""
    nodes = [parse_node(s) for s in plan.reference_steps()]
    items = []
    for kind in EXECUTION_FAULTS:
        first = kind in ("position_offset", "suction_failure")
        step = key_step(plan, last=not first)
        run = runner.run(nodes, fault=ExecutionFault(kind, step, seed)).completion
        if run.score >= clean.score:
            continue
        items.append({"kind": "execution", "label": kind, "task": plan.env_id,
                      "plan": plan.reference_steps(), "fault_step": step, "log": _log(run),
                      "completion": run.score})
    return items


def _diagnose_execution(item: dict[str, Any]) -> str:
    failed = next((s for s in item["log"] if not s["ok"]), item["log"][-1])
    tele = failed.get("telemetry", {})
    skill = failed["step"].split("(")[0].strip()
    if tele.get("suction_commanded", 1.0) < 0.05 and skill in _SUCTION_SKILLS:
        return "suction_failure"
    if tele.get("attached") and tele.get("joint_change", 1.0) <= 0.005:
        return "wrong_rotation"
    if tele.get("action_jerk", 0.0) > 0.6:
        return "trajectory_noise"
    if 0 < failed.get("control_steps", 0) <= 25:
        return "early_stop"
    return "position_offset"


def _diagnose_plan(plan: TaskPlan, item: dict[str, Any]) -> str:
    steps = item["plan"]
    reference = plan.reference_steps()
    nodes = [parse_node(s) if "(" in s else PlanNode("invalid", text=s) for s in steps]
    if any(not n.known for n in nodes):
        return "impossible_action"
    if len(steps) < len(reference):
        return "deleted_step"
    if sorted(steps) == sorted(reference):
        return "swapped_order"
    return "wrong_object"


def privileged_diagnosis(plan: TaskPlan, item: dict[str, Any]) -> str:
    """The rule-based diagnosis of a failure item (what the oracle answers)."""
    return _diagnose_execution(item) if item["kind"] == "execution" else _diagnose_plan(plan, item)


def plan_error_labels(plan: TaskPlan, nodes: list[PlanNode], completion: Completion) -> list[str]:
    """Automatic error labels of a proposed plan from its rollout log (sorted, unique)."""
    labels = set()
    for record in completion.steps:
        if record.label in ("impossible_action", "wrong_object", "physics_violation", "redundant_step"):
            labels.add(record.label)
    refs = [s.nodes() for s in plan.plan.steps]
    matched = node_correctness(plan, nodes)["pairs"]
    for i, node in enumerate(nodes):
        if i in matched or not node.known:
            continue
        for writings in refs:
            score = best_score(plan, node, writings)
            if score.skill and score.object == 1.0 and score.param == 0.0:
                spatial = node.skill in JOINT_SKILLS | {"place"}
                labels.add("spatial_error" if spatial else "parameter_mismatch")
            elif score.skill and score.object == 0.0 and node.object:
                obj, _ = resolve_object(plan, node.object)
                if obj is not None:
                    labels.add("wrong_object")
    missing = [m.name for m in plan.milestones if m.name not in completion.reached]
    if missing:
        attempted = {m for s in plan.plan.steps for m in s.achieves
                     if any(best_score(plan, n, s.nodes()).matched for n in nodes)}
        if any(m not in attempted for m in missing):
            labels.add("missing_step")
    return sorted(labels)

