"""The arena's commands: ``simjudge arena run``, ``arena rank``, ``arena validate``.

Thin like :mod:`simjudge.cli`: a config in (:mod:`simjudge.pipelines.arena.config`), library
calls out (:mod:`simjudge.pipelines.arena`).
"""

from __future__ import annotations

from pathlib import Path

from simjudge.cli_configs import Command
from simjudge.pipelines.arena.config import ArenaRankConfig, ArenaRunConfig, ArenaValidateConfig

__all__ = ["ARENA_COMMANDS", "ARENA_GROUPS"]


def _rank_and_report(out: str, n_boot: int, seed: int, models: tuple[str, ...] | None,
                     report: bool) -> None:
    from simjudge.pipelines.arena import format_rankings, rank_arena

    rankings = rank_arena(out, models=models, n_boot=n_boot, seed=seed)
    print(format_rankings(rankings))
    print(f"wrote {Path(out) / 'rankings.json'}")
    if report:
        from simjudge.pipelines.report.arena_section import write_arena_report

        print(f"wrote {write_arena_report(out)}")


def _arena_run(config: ArenaRunConfig) -> int:
    from simjudge.pipelines.arena import run_arena

    summary = run_arena(config)
    counts = summary["counts"]
    print(f"{counts['done']} matches played, {counts['failed']} failed, {counts['pending']} "
          f"pending ({summary['played']} by this process); database {summary['db']}")
    if config.report and counts["done"]:
        _rank_and_report(config.out, config.bootstrap, config.seed, None, True)
    return 0 if counts["done"] else 1


def _arena_rank(config: ArenaRankConfig) -> int:
    _rank_and_report(config.run, config.bootstrap, config.seed, config.models, config.report)
    return 0


def _arena_validate(config: ArenaValidateConfig) -> int:
    from simjudge.pipelines.arena import validate_arena

    found = validate_arena(config)
    oracle = found["oracle"][config.oracle_metric]
    print(f"oracle ({config.oracle_metric}, {found['oracle']['n_episodes']} task x seed cells): "
          + ", ".join(f"{p} {v:.3f}" for p, v in sorted(oracle.items(), key=lambda kv: -kv[1])))
    for model, a in found["agreement"].items():
        print(f"{model:9s} all {found['n_comparisons']} comparisons: "
              + " ".join(f"{k}={v:.3f}" for k, v in a.items()))
    for row in found["efficiency"]:
        print(f"{row['model']} kendall_tau@{row['budget']}: {row['mean']['kendall_tau']:.3f}")
    for name, models in found["robustness"].items():
        print(f"{name}: " + ", ".join(f"{m} tau={a['kendall_tau']:.3f}" for m, a in models.items()))
    print(f"wrote {Path(config.run) / 'validation.json'}")
    if config.report:
        from simjudge.pipelines.report.arena_section import write_arena_report

        print(f"wrote {write_arena_report(config.run)}")
    return 0


ARENA_GROUPS: dict[tuple[str, ...], str] = {
    ("arena",): "double-blind pairwise A/B matches, rankings and their validation",
}
"""The arena's command group and its help."""

ARENA_COMMANDS: dict[tuple[str, ...], Command] = {
    ("arena", "run"): Command(ArenaRunConfig, _arena_run),
    ("arena", "rank"): Command(ArenaRankConfig, _arena_rank),
    ("arena", "validate"): Command(ArenaValidateConfig, _arena_validate),
}
"""The arena's commands: path, config class and handler."""
