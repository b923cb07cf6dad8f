"""simjudge.pipelines.plans: plan evaluation with the simulator as the world model (RoboBench).

Plans (:mod:`.schema`), ground-truth plans and milestone DAGs from the task YAML
(:mod:`.groundtruth`), node correctness by bipartite matching (:mod:`.matching`), task
completion in a symbolic tier (:mod:`.symbolic`) and a physical tier (:mod:`.physical`),
next-step (Q2) and state (Q3) questions (:mod:`.questions`), failure analysis
(:mod:`.faults`), planners (:mod:`.planners`) and the ``simjudge plan-eval`` runner
(:mod:`.evaluate`).
"""

from __future__ import annotations

from .groundtruth import TaskPlan, TaskPlanError, task_plan
from .matching import node_correctness, object_score, score_node
from .records import Completion, StepRecord
from .schema import PLAN_JSON_SCHEMA, SKILLS, Plan, PlanError, PlanNode, parse_node, parse_plan
from .symbolic import run_symbolic

__all__ = [
    "PLAN_JSON_SCHEMA", "SKILLS", "Completion", "Plan", "PlanError", "PlanNode", "StepRecord",
    "TaskPlan", "TaskPlanError", "node_correctness", "object_score", "parse_node", "parse_plan",
    "run_symbolic", "score_node", "task_plan",
]
