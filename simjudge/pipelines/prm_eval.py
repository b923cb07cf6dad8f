"""Train and evaluate the PRM verifier on a dataset (VERGSA Table 4 analogue).

Splits: *by task* (novel tasks: the test tasks never appear in training) and *by
solution* (seen tasks: whole base-solution families held out). For each test
task the candidate pool is every executed solution of that task in the test
split; **base** is the expected outcome of picking a candidate at random (the
mean over candidates), **PRM best-of-N** the outcome of the candidate with the
highest aggregated PRM score, per aggregation strategy. ATSR/ASSR/average
number of subtasks are averaged over test tasks.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from simjudge.envs.catalogue import default_catalogue
from simjudge.judges.context import JudgeContext
from simjudge.judges.metrics import format_markdown_table
from simjudge.judges.prm import (
    AGGREGATIONS,
    PRMConfig,
    PRMExample,
    PRMVerifier,
    aggregate,
    scene_text,
)
from simjudge.judges.rule import rule_issues
from simjudge.tasks.spec import Outcome, RunDir, atomic_write, success_rates, write_json

from .dataset import PrefixRecord, split_by_solution, split_by_task

__all__ = ["CandidateSolution", "evaluate_best_of_n", "rule_features", "run_prm", "to_examples",
           "train_eval"]


def _task_text(record: PrefixRecord) -> str:
    return f"{record.task}: {record.description} (object {record.asset})"


def to_examples(records: Sequence[PrefixRecord]) -> list[PRMExample]:
    """PRM training examples from dataset records."""
    return [
        PRMExample(
            task_text=_task_text(r),
            subtasks=tuple((s["name"], s["kind"], s["code"]) for s in r.subtasks),
            n_subtasks=r.n_subtasks,
            label=int(r.label),
            group=r.solution_id,
            context=r.asset,
            scene=scene_text(r.scene),
        )
        for r in records
    ]


@functools.lru_cache(maxsize=256)
def _context(asset: str) -> JudgeContext:
    entry = default_catalogue().get(asset)
    name = entry.category
    tree = entry.tree
    if tree is None:
        return JudgeContext(object_names=(name,))
    return JudgeContext(
        object_names=(name,),
        links={name: tuple(tree.link_names)},
        joints={name: tuple(j.name for j in tree.movable_joints)},
    )


def rule_features(context: str, kind: str, code: str) -> tuple[float, int, int]:
    """The rule judge's (score, errors, warnings) for a subtask of an object's asset."""
    issues = rule_issues(kind, code, _context(context) if context else None)
    errors = sum(i.severity == "error" for i in issues)
    warnings = len(issues) - errors
    score = 0.0 if errors else (0.5 if warnings else 1.0)
    return score, errors, warnings


@dataclass(frozen=True)
class CandidateSolution:
    """A whole executed solution in an evaluation pool."""

    task: str
    solution_id: str
    task_text: str
    context: str
    subtasks: tuple[tuple[str, str, str], ...]
    subtask_success: tuple[bool, ...]
    task_success: bool


def candidates(records: Sequence[PrefixRecord]) -> dict[str, list[CandidateSolution]]:
    """Whole solutions per task, rebuilt from their prefix records."""
    by_solution: dict[tuple[str, str], list[PrefixRecord]] = defaultdict(list)
    for r in records:
        by_solution[(r.task, r.solution_id)].append(r)
    pools: dict[str, list[CandidateSolution]] = defaultdict(list)
    for (task, sid), recs in sorted(by_solution.items()):
        recs.sort(key=lambda r: r.k)
        last = recs[-1]
        if last.k != last.n_subtasks:
            continue  # incomplete in this split
        pools[task].append(CandidateSolution(
            task, sid, _task_text(last), last.asset,
            tuple((s["name"], s["kind"], s["code"]) for s in last.subtasks),
            tuple(r.subtask_success for r in recs), last.task_success,
        ))
    return dict(pools)


def _rates(chosen: Sequence[CandidateSolution]) -> tuple[float, float, float]:
    """ATSR, ASSR and average length by their one definition (``simjudge.tasks.spec``)."""
    rates = success_rates([Outcome(c.subtask_success, c.task_success) for c in chosen])
    return rates.atsr, rates.assr, rates.avg_subtasks


def evaluate_best_of_n(
    verifier: PRMVerifier, pools: dict[str, list[CandidateSolution]],
    strategies: Sequence[str] = AGGREGATIONS,
) -> list[dict[str, float | str]]:
    """Rows: base (random pick, in expectation) and PRM best-of-N per strategy."""
    base = [_rates(pool) for pool in pools.values()]
    rows: list[dict[str, float | str]] = [{"method": "base", **_mean_rates(base)}]
    scored = {
        task: [verifier.score_solution(c.task_text, c.subtasks, "last", c.context)[1] for c in pool]
        for task, pool in pools.items()
    }
    for strategy in strategies:
        picks = []
        for task, pool in pools.items():
            scores = [aggregate(prefix_scores, strategy) for prefix_scores in scored[task]]
            picks.append(_rates([pool[int(np.argmax(scores))]]))
        rows.append({"method": f"PRM ({strategy})", **_mean_rates(picks)})
    return rows


def _mean_rates(rates: Sequence[tuple[float, float, float]]) -> dict[str, float]:
    arr = np.asarray(rates)
    return {"ATSR": float(arr[:, 0].mean()), "ASSR": float(arr[:, 1].mean()),
            "avg_subtasks": float(arr[:, 2].mean()), "tasks": len(rates)}


def train_eval(
    records: Sequence[PrefixRecord],
    embed,
    split: str = "task",
    test_tasks: Sequence[str] = (),
    test_fraction: float = 0.3,
    config: PRMConfig | None = None,
    use_rule: bool = True,
    seed: int = 0,
) -> dict:
    """Train on one side of a split, evaluate best-of-N on the other."""
    if split == "task":
        if not test_tasks:
            tasks = sorted({r.task for r in records})
            rng = np.random.default_rng(seed)
            count = max(1, round(test_fraction * len(tasks)))
            test_tasks = [tasks[i] for i in rng.permutation(len(tasks))[:count]]
        train, test = split_by_task(records, test_tasks)
    elif split == "solution":
        train, test = split_by_solution(records, test_fraction, seed)
    else:
        raise ValueError(f"split must be 'task' or 'solution', got {split!r}")
    verifier = PRMVerifier(embed, rule_features if use_rule else None, config or PRMConfig()).fit(
        to_examples(train)
    )
    test_examples = to_examples(test)
    p = verifier.predict(test_examples)
    labels = np.array([e.label for e in test_examples])
    rows = evaluate_best_of_n(verifier, candidates(test))
    return {
        "split": split,
        "test_tasks": sorted({r.task for r in test}),
        "train_prefixes": len(train),
        "test_prefixes": len(test),
        "prefix_accuracy": float(((p >= verifier.threshold) == labels).mean()),
        "rows": rows,
        "verifier": verifier,
    }


def write_report(
    results: Sequence[dict], out: str | Path, config: Mapping[str, Any] | None = None
) -> Path:
    """``prm_report.json`` and ``prm_report.md`` (one table per split).

    ``config``, the calling command's full config (``simjudge prm train|eval``), is recorded
    in ``config.json``.
    """
    out = Path(out)
    if config is not None:  # a report is remade from scratch: never refused
        RunDir(out).prepare(config, resume=True, identity=())
    clean = [{k: v for k, v in r.items() if k != "verifier"} for r in results]
    write_json(out / "prm_report.json", clean)
    lines = ["# PRM verifier: base vs best-of-N", ""]
    for r in clean:
        lines += [f"## split by {r['split']} (test tasks: {', '.join(r['test_tasks'])})",
                  f"prefix accuracy {r['prefix_accuracy']:.3f}; "
                  f"{r['train_prefixes']} train / {r['test_prefixes']} test prefixes", "",
                  format_markdown_table({row["method"]: {k: v for k, v in row.items()
                                                          if k != "method"} for row in r["rows"]},
                                        digits=3, row_header="method"), ""]
    atomic_write(out / "prm_report.md", "\n".join(lines))
    return out / "prm_report.md"


def run_prm(config: Any) -> Path:
    """``simjudge prm train`` / ``prm eval`` from its config; returns the report's path.

    ``PRMTrainConfig`` trains on its one split and saves the verifier in ``config.out``;
    ``PRMEvalConfig`` trains and evaluates on both splits (by task and by solution).
    """
    from simjudge.judges.prm import PRMConfig
    from simjudge.llm import MiniLMEmbedder
    from simjudge.tasks.spec.config import config_to_dict

    from .configs import PRMEvalConfig
    from .dataset import load_records  # noqa: F811 - the module imports its splits only

    train = not isinstance(config, PRMEvalConfig)
    records = load_records(config.data)
    embed = MiniLMEmbedder().embed
    model = PRMConfig(epochs=config.epochs, seed=config.seed)
    splits = [config.split] if train else ["task", "solution"]
    results = [
        train_eval(records, embed, split, test_tasks=config.test_tasks, config=model,
                   use_rule=config.rule, seed=config.seed)
        for split in splits
    ]
    if train:
        results[0]["verifier"].save(config.out)
    command = "prm train" if train else "prm eval"
    return write_report(results, config.out, config={"command": command,
                                                      **config_to_dict(config)})
