"""The acquisition loop's commands: ``acquire``, ``pool``, ``dataset``, ``prm``.

Thin like :mod:`simjudge.cli`: a config in (:mod:`simjudge.pipelines.configs`,
:mod:`simjudge.configs`), one library call out.
"""

from __future__ import annotations

import json
from pathlib import Path

from simjudge.cli_configs import Command
from simjudge.configs import PoolListConfig, PoolSearchConfig, PoolShowConfig
from simjudge.pipelines.configs import (
    AcquireConfig,
    DatasetBuildConfig,
    PRMEvalConfig,
    PRMTrainConfig,
    ProposeTasksConfig,
)

__all__ = ["LOOP_COMMANDS", "LOOP_GROUPS"]


def _acquire(config: AcquireConfig) -> int:
    from simjudge.pipelines.acquire_run import run_acquire

    done = run_acquire(config, show=print)
    out = Path(config.out)
    if done.rows is not None:  # many tasks
        print((out / "stream_summary.md").read_text())
        ran = [r for r in done.rows if r["status"] == "run"]
        print(f"{sum(bool(r['verified']) for r in ran)} of {len(ran)} tasks VERIFIED "
              f"({len(done.rows) - len(ran)} skipped: no goal could be derived); details in "
              f"{out}/stream_summary.json")
        return 0
    result = done.result
    print((out / "summary.md").read_text())
    verdict = ("VERIFIED: the task goal holds on the final state" if result.task_success else
               "NOT VERIFIED: no executed candidate reached the task goal")
    claimed = sum(bool(o.claimed_success) for o in result.executed.values())
    print(f"{done.task}: {verdict} ({len(result.executed)} executed, {claimed} claimed "
          f"success, {sum(o.task_success for o in result.executed.values())} verified); "
          f"details in {out}/summary.json")
    return 0


def _propose_tasks(config: ProposeTasksConfig) -> int:
    from simjudge.pipelines.components import make_client_for
    from simjudge.pipelines.task_proposals import propose_tasks, save_task_proposals

    client = None
    if config.proposer != "template":
        cache = Path(config.out).parent if config.out else Path(".")
        client = make_client_for(config.proposer, cache, config.model, config.llm_cache)
    proposals = propose_tasks(config.object, config.n or None, client, config.seed)
    for p in proposals:
        if p.goal is not None:
            print(f"{p.name}: {p.description}\n    goal: {p.goal.describe()}")
        else:
            print(f"{p.name}: {p.description}\n    NO GOAL: {'; '.join(p.ambiguities)}")
    derived = sum(p.goal is not None for p in proposals)
    print(f"{derived} of {len(proposals)} tasks have a derived goal")
    if config.out:
        print(f"wrote {save_task_proposals(config.out, proposals)}")
    return 0 if derived else 1


def _pool_list(config: PoolListConfig) -> int:
    from simjudge.pipelines.components import open_pool

    for t in open_pool(config.pool).list():
        print(f"{t.name:32s} {t.asset:22s} solutions={t.n_solutions} successful={t.n_successful}")
    return 0


def _pool_show(config: PoolShowConfig) -> int:
    from simjudge.pipelines.components import open_pool

    entry = open_pool(config.pool).show(config.name)
    solutions = [{**s, "solution": s["solution"].to_yaml()} for s in entry.solutions]
    print(json.dumps({"task": entry.task.__dict__, "solutions": solutions}, indent=2,
                     default=str))
    return 0


def _pool_search(config: PoolSearchConfig) -> int:
    from simjudge.pipelines.components import open_pool

    for ex in open_pool(config.pool).search(config.text, k=config.k):
        print(f"{ex.similarity:.3f}  {ex.task}: {ex.description}")
    return 0


def _dataset(config: DatasetBuildConfig) -> int:
    from simjudge.pipelines.execute_run import run_dataset_build

    out = Path(config.out)
    records = run_dataset_build(config)
    print(f"{len(records)} labelled prefixes ({sum(r.label for r in records)} positive) in {out}")
    return 0


def _prm(config: PRMTrainConfig) -> int:
    from simjudge.pipelines.prm_eval import run_prm

    print(run_prm(config).read_text())
    return 0


LOOP_GROUPS: dict[tuple[str, ...], str] = {
    ("pool",): "the exemplar task pool",
    ("dataset",): "verifier datasets",
    ("prm",): "train and evaluate the process verifier",
}
"""The loop's command groups and their help."""

LOOP_COMMANDS: dict[tuple[str, ...], Command] = {
    ("acquire",): Command(AcquireConfig, _acquire),
    ("propose-tasks",): Command(ProposeTasksConfig, _propose_tasks),
    ("pool", "list"): Command(PoolListConfig, _pool_list),
    ("pool", "show"): Command(PoolShowConfig, _pool_show),
    ("pool", "search"): Command(PoolSearchConfig, _pool_search),
    ("dataset", "build"): Command(DatasetBuildConfig, _dataset),
    ("prm", "train"): Command(PRMTrainConfig, _prm),
    ("prm", "eval"): Command(PRMEvalConfig, _prm),
}
"""The loop's commands: path, config class and handler."""
