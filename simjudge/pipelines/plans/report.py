"""Reports of a plan evaluation: ``plan_eval.md`` and a static ``plan_eval.html``.

The HTML page uses the shared report skeleton of :mod:`simjudge.pipelines.report`; both list
the aggregate scores next to RoboBench's reference numbers, then one row per task.
"""

from __future__ import annotations

from typing import Any

from markupsafe import escape

from simjudge.pipelines.report import Section, fmt, write_page
from simjudge.tasks.spec import RunDir

__all__ = ["ROBOBENCH_REFERENCE", "markdown_report", "write_reports"]

ROBOBENCH_REFERENCE: dict[str, str] = {
    "node_correctness": "best MLLM Q1 planning ≈ 41.8 (humans 54.5), on a 0–100 scale",
    "q3": "Q3 state estimation ≈ 75 % accuracy",
    "failure_planning": "planning-failure diagnosis 74.3 %",
    "failure_execution": "execution-failure diagnosis 16.0 %",
}
"""RoboBench's reported numbers (real data, MLLM judges) for comparison."""

_AGGREGATE_ROWS = (
    ("node_correctness", "Q1 node correctness (0–10)"),
    ("completion_symbolic", "Q1 completion, symbolic tier (0–10)"),
    ("completion_physical", "Q1 completion, physical tier, ever reached (0–10)"),
    ("held_physical", "Q1 completion, physical tier, held at the end (0–10)"),
    ("gap", "symbolic − physical (embodied feasibility gap)"),
    ("reference_physical", "reference plan, physical tier (0–10)"),
    ("q2", "Q2 next step (0–10)"),
    ("q3", "Q3 state estimation (accuracy ×10)"),
    ("failure_planning", "planning-failure diagnosis (accuracy ×10)"),
    ("failure_execution", "execution-failure diagnosis (accuracy ×10)"),
)
_TASK_COLUMNS = ("node_correctness", "completion_symbolic", "completion_physical",
                 "held_physical", "gap", "reference_physical", "q2", "q3")


def markdown_report(summary: dict[str, Any]) -> str:
    """The markdown report text."""
    agg = summary["aggregate"]
    lines = [f"# plan-eval: {summary['planner']}", "",
             f"{agg['tasks']} tasks ({agg['failed_tasks']} failed), {summary['seconds']} s", "",
             "| score | value | RoboBench |", "|---|---|---|"]
    for key, label in _AGGREGATE_ROWS:
        lines.append(f"| {label} | {fmt(agg.get(key), 2)} | {ROBOBENCH_REFERENCE.get(key, '')} |")
    lines += ["", f"Q2 items {agg['q2_items']}, Q3 items {agg['q3_items']}, failure items "
              f"{agg['failure_planning_items']} planning / {agg['failure_execution_items']} execution",
              "", "| task | " + " | ".join(_TASK_COLUMNS) + " | error labels |",
              "|---" * (len(_TASK_COLUMNS) + 2) + "|"]
    for task, row in summary["tasks"].items():
        cells = [fmt(row.get(k), 1) for k in _TASK_COLUMNS]
        labels = ", ".join(row.get("error_labels", [])) or row.get("error", "") or row.get("plan_error", "")
        lines.append(f"| {task} | " + " | ".join(cells) + f" | {labels} |")
    return "\n".join(lines) + "\n"


def _table(header: list[str], rows: list[list[Any]]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def write_reports(run: RunDir, summary: dict[str, Any], results: list[dict[str, Any]]) -> None:
    """Write ``plan_eval.md`` and ``plan_eval.html`` into the run folder."""
    run.write_text("plan_eval.md", markdown_report(summary))
    agg = summary["aggregate"]
    overview = _table(["score", "value", "RoboBench"],
                      [[label, fmt(agg.get(k), 2), ROBOBENCH_REFERENCE.get(k, "")]
                       for k, label in _AGGREGATE_ROWS])
    tasks = _table(["task", *_TASK_COLUMNS, "plan", "error labels"],
                   [[t, *(fmt(r.get(k), 1) for k in _TASK_COLUMNS), "; ".join(r.get("plan", [])),
                     ", ".join(r.get("error_labels", [])) or r.get("error", "")]
                    for t, r in summary["tasks"].items()])
    steps = []
    for result in results:
        for record in result.get("physical", {}).get("steps", []):
            steps.append([result["task"], record["text"], fmt(record["ok"]), record["label"],
                          record["reason"], ", ".join(record["reached"]), record["control_steps"]])
    log = _table(["task", "step", "ok", "label", "reason", "reached", "control steps"], steps)
    sections = [Section("overview", "Scores", overview), Section("tasks", "Tasks", tasks),
                Section("steps", "Physical execution of the planner's plans", log)]
    write_page(run.path("plan_eval.html"), f"plan-eval: {summary['planner']}", sections,
               summary["config"], summary["versions"])
