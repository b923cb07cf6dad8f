"""``simjudge plan-eval``: Q1 (both tiers), Q2, Q3 and failure analysis over many tasks.

Per task: the planner's plan is scored for node correctness, executed on the symbolic
tier and in the simulator (completion "ever reached" and "held at the end"); the
reference plan's own physical run provides the Q2 prefixes and Q3 states; faults injected
into the reference plan and its execution provide the failure-analysis items. Each task's
result is one JSON file (``RUN/tasks/<EnvId>.json``), written atomically, so a killed run
resumes where it stopped; ``RUN/plan_eval.json`` aggregates them and
``RUN/plan_eval.md`` / ``.html`` report them. A task that fails (bad plan section, LLM
error) is recorded with its error and counts 0.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from tqdm import tqdm

from simjudge.envs.errors import SimjudgeError
from simjudge.tasks.spec import RunDir, TaskSpec, versions
from simjudge.tasks.spec.config import config_to_dict

from .faults import execution_fault_items, plan_error_labels, planning_fault_items
from .groundtruth import TaskPlan, load_plan_task, plan_task_ids, task_plan
from .matching import node_correctness
from .physical import PhysicalRunner
from .planners import Agent, make_agent
from .questions import add_q2_images, q2_items, q2_score, q3_items, render_frame
from .report import write_reports
from .schema import parse_node
from .symbolic import run_symbolic

__all__ = ["PlanEvalConfig", "aggregate", "evaluate_task", "run_plan_eval", "scene_text"]


@dataclass(frozen=True, kw_only=True)
class PlanEvalConfig:
    """Evaluate a planner with the simulator as the world model (RoboBench's planning).

    Attributes:
        planner: ``oracle`` (reference answers), ``fault:<kind>`` (oracle with a planning
            fault: wrong_object, deleted_step, swapped_order, impossible_action),
            ``llamacpp:qwen2.5-coder-1.5b`` (embedded LLM), ``openai:<model>`` (a server
            at ``SIMJUDGE_LLM_BASE_URL``) or ``replay[:backend:model]`` (recorded exchanges only).
        tasks: Task ids (built-in or composed), task YAML paths, a comma list, or ``all``
            (the built-in library and the composed tasks).
        out: Run folder.
        seed: Reset seed of every execution and the LLM's sampling seed.
        skill_backend: Skills of the physical tier: ``scripted`` (closed-loop oracle) or
            ``primitives`` (OMPL motion planning for grasp/pick_up/move_to/release). The
            physics engine is the global ``--backend``.
        step_budget: Control steps one skill may take.
        llm_cache: Replay cache folder (default ``RUN/llm_cache``).
        max_tokens: LLM token budget per reply.
        q2: Ask the next-step questions.
        q3: Ask the state questions.
        failures: Build and ask the failure-analysis items.
        q3_per_task: Ask at most this many state questions per task (0 = all).
        failures_per_task: Ask at most this many failure-analysis items per task (0 = all).
        images: Render the exterior camera (initial scene for Q1, the real state of every Q2
            prefix and Q3 item) to PNGs; ``openai:<model>`` planners get them as image
            content parts (multimodal models over a server).
        resume: Reuse finished tasks of an earlier run with the same config.
    """

    planner: str = "oracle"
    tasks: tuple[str, ...] = ("all",)
    out: str
    seed: int = 0
    skill_backend: Literal["scripted", "primitives"] = "scripted"
    step_budget: int = 150
    llm_cache: str | None = None
    max_tokens: int = 384
    q2: bool = True
    q3: bool = True
    failures: bool = True
    q3_per_task: int = 0
    failures_per_task: int = 0
    images: bool = False
    resume: bool = True


def scene_text(plan: TaskPlan, runner: PhysicalRunner) -> str:
    """The scene as the planner sees it: object names to use and articulation trees."""
    trees = "\n".join(runner.env.view.tree_text(o.name) for o in plan.spec.scene.objects)
    names = "\n".join(plan.describe_objects())
    return f"Objects you may name:\n{names}\n\nArticulation trees:\n{trees}"


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 3) if values else None


def _q1(plan: TaskPlan, agent: Agent, runner: PhysicalRunner, text: str,
        image: str | None) -> dict[str, Any]:
    answer = agent.plan(plan, text, image)
    steps = answer.plan.plan_step if answer.plan else []
    nodes = answer.plan.nodes() if answer.plan else []
    nc = node_correctness(plan, nodes)
    symbolic = run_symbolic(plan, nodes)
    physical = runner.run(nodes[:40]).completion
    return {
        "plan": steps, "plan_error": answer.error,
        "node_correctness": nc["score"], "node_matching": {k: v for k, v in nc.items() if k != "pairs"},
        "completion_symbolic": symbolic.score, "completion_physical": physical.score,
        "held_symbolic": symbolic.held_score, "held_physical": physical.held_score,
        "gap": symbolic.score - physical.score,
        "error_labels": plan_error_labels(plan, nodes, physical),
        "symbolic": symbolic.to_dict(), "physical": physical.to_dict(),
    }


def evaluate_task(plan: TaskPlan, agent: Agent, config: PlanEvalConfig, out: Path) -> dict[str, Any]:
    """Every score of one task."""
    runner = PhysicalRunner(plan, config.skill_backend, config.step_budget, config.seed)
    try:
        text = scene_text(plan, runner)
        images = out / "images" if config.images else None
        start = render_frame(runner, None, images / f"{plan.env_id}_initial.png") if images else None
        result: dict[str, Any] = {"task": plan.env_id, **_q1(plan, agent, runner, text, start)}
        if start:
            result["image"] = start
        reference_nodes = [parse_node(s) for s in plan.reference_steps()]
        reference = runner.run(reference_nodes, snapshots=config.images)
        result["reference_physical"] = reference.completion.score
        if config.q2:
            items = q2_items(plan, reference)
            if images:
                add_q2_images(items, runner, reference, images)
            for item in items:
                item["proposed"] = agent.next_step(plan, text, item)
                item.update(q2_score(plan, item, item["proposed"]))
            result["q2_items"] = items
        if config.q3:
            items = q3_items(plan, runner, reference, images, config.seed)
            items = _spread(items, config.q3_per_task)
            for item in items:
                item["proposed"] = agent.state(plan, text, item)
                item["correct"] = item["proposed"] is not None and item["proposed"] == item["answer"]
            result["q3_items"] = items
        if config.failures:
            items = planning_fault_items(plan, runner, reference.completion)
            items += execution_fault_items(plan, runner, reference.completion, config.seed)
            items = _spread(items, config.failures_per_task)
            for item in items:
                item["proposed"] = agent.diagnose(plan, text, item)
                item["correct"] = item["proposed"] == item["label"]
            result["failure_items"] = items
        return result
    finally:
        runner.close()


def _spread(items: list[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    """At most ``limit`` items (0 = all), spread evenly over the list."""
    if not limit or len(items) <= limit:
        return items
    stride = len(items) / limit
    return [items[int(i * stride)] for i in range(limit)]


def _score_10(correct: list[bool]) -> float | None:
    return round(10.0 * sum(correct) / len(correct), 3) if correct else None


def aggregate(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Means over tasks; Q2 over items (0–10), Q3 and diagnosis as accuracy ×10."""
    ok = [r for r in results if "error" not in r]
    q2 = [i["score"] for r in ok for i in r.get("q2_items", [])]
    q3 = [bool(i["correct"]) for r in ok for i in r.get("q3_items", [])]
    fa = [i for r in ok for i in r.get("failure_items", [])]
    plan_fa = [bool(i["correct"]) for i in fa if i["kind"] == "planning"]
    exec_fa = [bool(i["correct"]) for i in fa if i["kind"] == "execution"]
    every = [r.get("node_correctness", 0) for r in results]
    return {
        "tasks": len(results), "failed_tasks": len(results) - len(ok),
        "node_correctness": _mean([float(v) for v in every]),
        "completion_symbolic": _mean([float(r.get("completion_symbolic", 0)) for r in results]),
        "completion_physical": _mean([float(r.get("completion_physical", 0)) for r in results]),
        "held_physical": _mean([float(r.get("held_physical", 0)) for r in results]),
        "gap": _mean([float(r.get("gap", 0)) for r in results]),
        "reference_physical": _mean([float(r["reference_physical"]) for r in ok]),
        "q2": _mean(q2), "q2_items": len(q2),
        "q3": _score_10(q3), "q3_items": len(q3),
        "failure_planning": _score_10(plan_fa), "failure_planning_items": len(plan_fa),
        "failure_execution": _score_10(exec_fa), "failure_execution_items": len(exec_fa),
    }


def _task_specs(tasks: tuple[str, ...]) -> list[TaskSpec]:
    names = plan_task_ids() if tuple(tasks) in ((), ("all",)) else list(tasks)
    return [load_plan_task(t) for t in names]


def run_plan_eval(config: PlanEvalConfig) -> dict[str, Any]:
    """Run (or resume) a plan evaluation; returns what ``RUN/plan_eval.json`` holds."""
    out = Path(config.out)
    run = RunDir(out)
    identity = {"command": "plan-eval", **config_to_dict(config)}
    run.prepare(identity, resume=config.resume)
    agent = make_agent(config.planner, out, config.llm_cache, config.max_tokens, config.seed,
                       config.images)
    results = []
    start = time.perf_counter()
    for spec in tqdm(_task_specs(config.tasks), desc=f"plan-eval {config.planner}", unit="task"):
        env_id = spec.env_id
        name = f"tasks/{env_id}.json"
        if config.resume and run.exists(name):
            results.append(run.read_json(name))
            continue
        try:
            result = evaluate_task(task_plan(spec), agent, config, out)
        except (SimjudgeError, ValueError) as exc:  # recorded as the task's verdict
            result = {"task": env_id, "error": f"{type(exc).__name__}: {exc}"}
        run.write_json(name, result)
        results.append(result)
    totals = aggregate(results)
    summary: dict[str, Any] = {
        "planner": config.planner, "agent": agent.describe(), "config": identity,
        "versions": versions(), "seconds": round(time.perf_counter() - start, 1),
        "aggregate": totals, "q2": totals["q2"], "q3": totals["q3"],
        "tasks": {r["task"]: _task_row(r) for r in results},
    }
    run.write_json("plan_eval.json", summary)
    write_reports(run, summary, results)
    return summary


def _task_row(result: dict[str, Any]) -> dict[str, Any]:
    keys = ("node_correctness", "completion_symbolic", "completion_physical", "held_physical",
            "gap", "reference_physical", "error_labels", "plan", "plan_error", "error")
    row = {k: result[k] for k in keys if k in result}
    for key in ("node_correctness", "completion_symbolic", "completion_physical"):
        row.setdefault(key, 0)
    q2 = [i["score"] for i in result.get("q2_items", [])]
    row["q2"] = _mean(q2)
    q3 = [bool(i["correct"]) for i in result.get("q3_items", [])]
    row["q3"] = _score_10(q3)
    return row

