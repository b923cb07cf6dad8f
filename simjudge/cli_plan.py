"""The plan-evaluation command: ``simjudge plan-eval`` (RoboBench's planning in simulation).

Thin like :mod:`simjudge.cli`: the config (:class:`~simjudge.pipelines.plans.evaluate.PlanEvalConfig`)
in, one library call out (:func:`~simjudge.pipelines.plans.evaluate.run_plan_eval`).
"""

from __future__ import annotations

from pathlib import Path

from simjudge.cli_configs import Command
from simjudge.pipelines.plans.evaluate import PlanEvalConfig

__all__ = ["PLAN_COMMANDS", "PLAN_GROUPS"]


def _plan_eval(config: PlanEvalConfig) -> int:
    from simjudge.pipelines.plans.evaluate import run_plan_eval

    summary = run_plan_eval(config)
    out = Path(config.out)
    print((out / "plan_eval.md").read_text())
    print(f"wrote {out / 'plan_eval.json'}, {out / 'plan_eval.md'} and {out / 'plan_eval.html'} "
          f"({summary['aggregate']['tasks']} tasks; per-task results in {out / 'tasks'})")
    return 0


PLAN_GROUPS: dict[tuple[str, ...], str] = {}
"""No command groups: ``plan-eval`` is a leaf command."""

PLAN_COMMANDS: dict[tuple[str, ...], Command] = {
    ("plan-eval",): Command(PlanEvalConfig, _plan_eval),
}
"""The plan-evaluation commands: path, config class and handler."""
