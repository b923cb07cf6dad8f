"""The audit's ``report.html``: overview, per-task tables and figures, judges, videos."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from markupsafe import Markup

from .page import Section, environment, svg, write_page

__all__ = ["audit_sections", "write_audit_report"]

METRICS = ("MC", "MP", "PPL", "CRA", "STR")
MC_COLUMNS = ("MC@25", "MC@50", "MC@75", "MC@100")
REPORT_FILE = "report.html"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9\-]+", "-", text).strip("-").lower() or "x"


def _task_figure(audit: dict[str, Any], task: str) -> Markup:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    policies = audit["policies"]
    rows = audit["tables"][audit["primary_judge"]][task]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.4))
    colours = plt.get_cmap("tab10")
    for i, policy in enumerate(policies):
        curves = audit["reachability"][task][policy]
        colour = colours(i % 10)
        left.plot(curves["1"], color=colour, label=policy)
        left.plot(curves["0.5"], color=colour, linestyle="--", linewidth=0.9)
    left.set(xlabel="step t", ylabel="share of episodes", ylim=(-0.02, 1.02), title=f"{task}: reachability")
    left.legend(fontsize=7, loc="lower right")
    means: list[float] = []
    errs: list[list[float]] = [[], []]
    for policy in policies:
        table = rows[policy]["all"]
        mean = table["MP"] if table else 0.0
        lo, hi = (table["ci"]["MP"] if table else (0.0, 0.0))
        means.append(mean)
        errs[0].append(max(mean - lo, 0.0) if lo == lo else 0.0)
        errs[1].append(max(hi - mean, 0.0) if hi == hi else 0.0)
    right.bar(range(len(policies)), means, yerr=errs, color=[colours(i % 10) for i in range(len(policies))],
              capsize=3)
    right.set_xticks(range(len(policies)), policies, rotation=30, ha="right", fontsize=8)
    right.set(ylabel="MP ×100", ylim=(0, 105), title="Max Progress")
    fig.tight_layout()
    return svg(fig)


def audit_sections(audit: dict[str, Any], root: Path) -> list[Section]:
    """The report's sections for an ``audit.json`` dict."""
    env = environment()
    sections = [Section("overview", "Overview",
                        env.get_template("audit_overview.html.j2").render(audit=audit))]
    primary = audit["primary_judge"]
    task_template = env.get_template("audit_task.html.j2")
    for task in audit["tasks"]:
        html = task_template.render(
            rows=audit["tables"][primary][task],
            fingerprints=audit["fingerprints"][primary].get(task, {}),
            figure=_task_figure(audit, task),
            metrics=METRICS,
            mc_cols=MC_COLUMNS,
            slug=_slug(task),
        )
        sections.append(Section(f"task-{_slug(task)}", f"Task {task}", html))
    sections.append(Section("judges", "All judges", env.get_template("audit_judges.html.j2").render(
        tables=audit["tables"], metrics=METRICS)))
    videos = [v for v in audit.get("videos", []) if (root / v).exists()]
    if videos:
        sections.append(Section("videos", "Videos",
                                env.get_template("audit_videos.html.j2").render(videos=videos)))
    return sections


def write_audit_report(root: str | Path, audit: dict[str, Any]) -> Path:
    """Write ``report.html`` into the audit's run directory."""
    root = Path(root)
    subtitle = (f"{len(audit['policies'])} policies × {len(audit['tasks'])} tasks × "
                f"{audit['seeds']} seeds · primary judge {audit['primary_judge']}")
    worlds = audit.get("worlds", {})
    distinct = [f"{task}: {w['distinct']} distinct world(s) of {w['seeds']} seeds"
                for task, w in worlds.items() if w["distinct"] < w["seeds"]]
    if distinct:  # intervals count distinct worlds; say so where seeds repeat one
        subtitle += " · WARNING: " + "; ".join(distinct) + " (intervals count each world once)"
    return write_page(root / REPORT_FILE, "simjudge audit", audit_sections(audit, root),
                      audit["config"], audit["versions"], subtitle)
