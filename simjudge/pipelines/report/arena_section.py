"""The arena's ``report.html``: matches, rankings with intervals, validation against the oracle.

Sections (templates ``arena_*.html.j2``): an overview (policies, tasks, evaluator, tie rule,
how preferences were decided and how often they disagreed with progress), one rankings
table per model with a figure of display scores and their bootstrap intervals, the
validation against the exhaustive oracle when ``validation.json`` exists (agreement table,
sample-efficiency curves, robustness table), and the latest matches with their reasons.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from markupsafe import Markup

from simjudge.tasks.spec.provenance import versions

from .page import Section, environment, svg, write_page

__all__ = ["REPORT_FILE", "arena_sections", "write_arena_report"]

REPORT_FILE = "report.html"
MATCH_ROWS = 60
"""Latest matches listed in the report."""


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _rankings_figure(models: dict[str, Any]) -> Markup:
    plt = _plt()
    logit = {m: r for m, r in models.items() if r["scale"] == "logit"}
    if not logit:
        return Markup("")
    fig, axes = plt.subplots(1, len(logit), figsize=(3.2 * len(logit), 3.2), squeeze=False)
    for ax, (name, ranking) in zip(axes[0], logit.items(), strict=True):
        rows = ranking["rows"][::-1]
        y = range(len(rows))
        ax.scatter([r["display"] for r in rows], y, color="tab:blue", zorder=3)
        for k, r in enumerate(rows):
            if "display_ci" in r:
                ax.plot(r["display_ci"], [k, k], color="tab:blue", linewidth=2, alpha=0.6)
        ax.set_yticks(list(y), [r["policy"] for r in rows], fontsize=8)
        ax.axvline(1500, color="#bbb", linewidth=0.8)
        ax.set(title=name, xlabel="200·θ + 1500")
    fig.tight_layout()
    return svg(fig)


def _efficiency_figure(efficiency: list[dict[str, Any]]) -> Markup:
    plt = _plt()
    if not efficiency:
        return Markup("")
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.4))
    for model in dict.fromkeys(row["model"] for row in efficiency):
        rows = [r for r in efficiency if r["model"] == model]
        budgets = [r["budget"] for r in rows]
        for ax, key in ((left, "kendall_tau"), (right, "mmrv")):
            mean = [r["mean"][key] for r in rows]
            std = [r["std"][key] for r in rows]
            ax.errorbar(budgets, mean, yerr=std, marker="o", capsize=3, label=model)
    budgets = sorted({row["budget"] for row in efficiency})
    for ax in (left, right):
        ax.set_xscale("log")
        ax.set_xticks(budgets, [str(b) for b in budgets])
        ax.minorticks_off()
    left.set(xlabel="comparisons", ylabel="Kendall τ vs oracle", ylim=(-0.1, 1.05),
             title="Sample efficiency: Kendall τ (higher is better)")
    right.set(xlabel="comparisons", ylabel="MMRV", title="MMRV (lower is better)")
    left.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return svg(fig)


def _overview(results: list[dict[str, Any]], config: dict[str, Any]) -> dict[str, Any]:
    played = [r for r in results if not r["error"]]
    preferences = Counter(r["preference"] for r in played)
    rules = Counter(r["details"].get("rule", "?") for r in played)
    disagree = contradict = 0
    for r in played:
        pa, pb = r["progress_a"], r["progress_b"]
        by_progress = "A" if pa > pb else "B" if pb > pa else "tie"
        disagree += int(by_progress != r["preference"])
        contradict += int({by_progress, r["preference"]} == {"A", "B"})
    counts: Counter[str] = Counter()
    for r in played:
        counts[r["policy_a"]] += 1
        counts[r["policy_b"]] += 1
    return {"played": len(played), "failed": len(results) - len(played),
            "preferences": dict(preferences), "rules": dict(rules),
            "disagree_share": disagree / len(played) if played else 0.0,
            "contradict_share": contradict / len(played) if played else 0.0,
            "eval_counts": dict(counts), "policies": config.get("policies", {}),
            "tasks": config.get("tasks", []), "evaluator": config.get("evaluator", "oracle"),
            "margin": config.get("margin"), "speed_margin": config.get("speed_margin"),
            "failures": [r for r in results if r["error"]][:20]}


def arena_sections(root: str | Path) -> list[Section]:
    """The arena report's sections for the run in ``root``."""
    from simjudge.pipelines.arena.store import DB_FILE, ArenaStore
    from simjudge.tasks.spec.io import read_json

    root = Path(root)
    config = read_json(root / "config.json") if (root / "config.json").exists() else {}
    with ArenaStore(root / DB_FILE) as store:
        results = store.results()
    env = environment()
    sections = [Section("arena-overview", "Arena overview", env.get_template(
        "arena_overview.html.j2").render(o=_overview(results, config)))]
    if (root / "rankings.json").exists():
        ranked = read_json(root / "rankings.json")
        sections.append(Section("arena-rankings", "Rankings", env.get_template(
            "arena_rankings.html.j2").render(r=ranked, figure=_rankings_figure(ranked["models"]))))
    if (root / "validation.json").exists():
        v = read_json(root / "validation.json")
        sections.append(Section("arena-validation", "Validation against the simulator oracle",
                                env.get_template("arena_validation.html.j2").render(
                                    v=v, figure=_efficiency_figure(v["efficiency"]))))
    sections.append(Section("arena-matches", "Matches", env.get_template(
        "arena_matches.html.j2").render(matches=results[-MATCH_ROWS:][::-1], total=len(results))))
    return sections


def write_arena_report(root: str | Path) -> Path:
    """Write ``<root>/report.html`` for an arena run; return its path."""
    root = Path(root)
    from simjudge.tasks.spec.io import read_json

    config = read_json(root / "config.json") if (root / "config.json").exists() else {}
    recorded = config.get("provenance", {}).get("versions") or versions()
    shown = {k: v for k, v in config.items() if k != "provenance"}
    return write_page(root / REPORT_FILE, "simjudge arena", arena_sections(root), shown, recorded,
                      subtitle=f"{root.name}: double-blind pairwise A/B evaluation")
