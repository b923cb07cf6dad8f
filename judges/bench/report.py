"""The judge benchmark's markdown report, from the result dict of a run.

Why a separate formatter: the JSON is the record (every number, per bin, per kind, per
gap stratum); the markdown is what a person reads, and it must say "n/a" where a section
does not apply to a judge instead of silently leaving rows out (sections that were not run
are left out).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from .pairs import HOP_BINS
from .perturb import PERTURBATIONS

__all__ = ["format_report", "markdown_table"]

NA = "n/a"


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return "–" if math.isnan(value) else f"{value:.{digits}f}"
    return str(value)


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A GitHub markdown table (floats with 3 decimals, None as –)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_fmt(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def _ran(result: Mapping[str, Any], section: str) -> dict[str, Any]:
    """Judges whose entry has ``section`` (a section that was not run is left out)."""
    return {spec: entry for spec, entry in (result.get("judges") or {}).items()
            if section in entry}


def _pairs_part(result: Mapping[str, Any]) -> list[str]:
    if not _ran(result, "pairs"):
        return []
    stats = result.get("pairs") or {}
    bins = stats.get("bins", {})
    lines = ["## Pulse pairs", ""]
    counts = ", ".join(f"{b} {bins.get(b, {}).get('n', 0)}" for b, _, _ in HOP_BINS)
    lines.append(
        f"{stats.get('n', 0)} labelled pairs ({counts}; labels balanced per bin) from "
        f"{stats.get('episodes', 0)} episodes; genuine regressions "
        f"{100 * stats.get('genuine_share', 0.0):.0f}% of the −1 pairs; "
        f"{stats.get('neutral', 0)} neutral pairs. Mean frame gap per bin: "
        + ", ".join(f"{b} {_fmt(bins.get(b, {}).get('gap_mean'), 1)}" for b, _, _ in HOP_BINS)
        + ". Accuracy = share of pairs where sign(Φ̂(after) − Φ̂(before)) matches the label "
        "(ties and invalid count as wrong); overall = unweighted mean of the bins.")
    lines.append("")
    rows: list[list[Any]] = []
    for spec, entry in _ran(result, "pairs").items():
        section = entry.get("pairs")
        if not isinstance(section, Mapping):
            rows.append([spec, "–", NA, NA, NA, NA, NA, NA, NA])
            continue
        for name, row in section.items():
            if not isinstance(row, Mapping):
                rows.append([spec, name, NA, NA, NA, NA, NA, NA, NA])
                continue
            b = row.get("bins", {})
            rows.append([spec, name, b.get("small"), b.get("medium"), b.get("large"),
                         row.get("overall"), row.get("by_kind", {}).get("regression"),
                         row.get("neutral"), row.get("invalid")])
    header = ["judge", "noise", "small", "medium", "large", "overall", "genuine regr.",
              "neutral", "invalid"]
    return lines + [markdown_table(header, rows), ""]


def _scores_part(result: Mapping[str, Any]) -> list[str]:
    if not _ran(result, "scores"):
        return []
    lines = ["## Episode scores", "",
             "Ground truth s_gt = 10·(0.6·success + 0.4·(MP + PPL)/2) from the privileged Φ; "
             "Acc@2 = |s − s_gt| ≤ 2 (invalid = miss), RMSE over valid scores.", ""]
    rows: list[list[Any]] = []
    scaling: list[list[Any]] = []
    for spec, entry in _ran(result, "scores").items():
        s = entry.get("scores")
        if not isinstance(s, Mapping):
            rows.append([spec, NA, NA, NA, NA, NA, NA])
            continue
        rows.append([spec, s.get("mode"), s.get("acc@2"), s.get("rmse"), s.get("soft_acc"),
                     s.get("n"), s.get("invalid")])
        for k, point in (s.get("scaling") or {}).items():
            scaling.append([spec, k, point.get("acc@2"), point.get("rmse"),
                            point.get("spread_mean"), point.get("invalid")])
    lines.append(markdown_table(["judge", "mode", "Acc@2", "RMSE", "soft acc", "n", "invalid"],
                                rows))
    if scaling:
        lines += ["", "Test-time scaling (first K of the same samples, aggregated):", "",
                  markdown_table(["judge", "K", "Acc@2", "RMSE", "mean spread", "invalid"],
                                 scaling)]
    return lines + [""]


def _perturb_part(result: Mapping[str, Any]) -> list[str]:
    if not _ran(result, "perturb"):
        return []
    lines = ["## Perturbation contrasts", "",
             "Episodes with s_gt ≥ 7; contrast = mean(s_orig − s_pert), directional = share of "
             "episodes scored lower when perturbed; ground truth = the privileged score's own "
             "contrast.", ""]
    rows: list[list[Any]] = []
    for spec, entry in _ran(result, "perturb").items():
        section = entry.get("perturb")
        if not isinstance(section, Mapping):
            rows.append([spec, NA, NA, NA, NA, NA])
            continue
        for kind in PERTURBATIONS:
            row = section.get(kind) or {}
            rows.append([spec, kind, row.get("contrast"), row.get("directional"),
                         row.get("ground_truth"), row.get("n")])
    header = ["judge", "perturbation", "contrast", "directional", "ground truth", "n"]
    return lines + [markdown_table(header, rows), ""]


def _rules_part(result: Mapping[str, Any]) -> list[str]:
    rules = result.get("rules")
    if not rules:
        return []
    lines = ["## Rule-verifier accuracy", "",
             f"{rules.get('cases')} cases from {rules.get('sources')}: clean code, renamed "
             "clean code and labelled injections. Flag = score < 1; error = score 0.", ""]
    rows = []
    for name, summary in rules.items():
        if not isinstance(summary, Mapping):
            continue
        flag, err = summary.get("flag", {}), summary.get("error", {})
        per = summary.get("per_type", {})
        rows.append([name, summary.get("n"), flag.get("precision"), flag.get("recall"),
                     err.get("precision"), err.get("recall"),
                     *(per.get(t, {}).get("flagged") for t in per)])
    types = next((list(s.get("per_type", {})) for s in rules.values()
                  if isinstance(s, Mapping)), [])
    header = ["judge", "n", "precision", "recall", "precision@0", "recall@0",
              *(f"flagged: {t}" for t in types)]
    return lines + [markdown_table(header, rows), ""]


def format_report(result: Mapping[str, Any]) -> str:
    """The markdown report of a benchmark result (see :func:`run_judge_bench`)."""
    config = result.get("config") or {}
    rollouts = result.get("rollouts") or {}
    policies = ", ".join(f"{p} {v['episodes']} ({v['success']} successes)"
                         for p, v in (rollouts.get("policies") or {}).items())
    lines = [
        f"# Judge benchmark (seed {config.get('seed')})", "",
        f"Rollouts: {rollouts.get('episodes', 0)} episodes, {rollouts.get('steps', 0)} steps on "
        f"{', '.join(rollouts.get('tasks', []))}; policies: {policies}. "
        f"Run time {_fmt(result.get('seconds'), 1)} s.", "",
    ]
    for part in (_pairs_part, _scores_part, _perturb_part, _rules_part):
        lines += part(result)
    return "\n".join(lines).rstrip() + "\n"
