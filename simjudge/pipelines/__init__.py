"""simjudge.pipelines: the acquisition loop, audits, the arena, plan evaluation, RoboGen import, PRM, judge benchmarks and reports.

Names load on first use (module ``__getattr__``), so importing the package costs nothing
beyond what its submodules need:

    >>> from simjudge.pipelines import run_audit
    >>> run_audit.__name__
    'run_audit'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from simjudge.envs.lazy import lazy_attributes

if TYPE_CHECKING:
    from simjudge.pipelines.acquire import acquire
    from simjudge.pipelines.arena import run_arena
    from simjudge.pipelines.audit import AuditConfig, run_audit
    from simjudge.pipelines.goal_report import GoalConfig, goal_command

_LAZY: dict[str, str] = {
    "acquire": "simjudge.pipelines.acquire",
    "AuditConfig": "simjudge.pipelines.audit",
    "run_audit": "simjudge.pipelines.audit",
    "run_arena": "simjudge.pipelines.arena",
    "GoalConfig": "simjudge.pipelines.goal_report",
    "goal_command": "simjudge.pipelines.goal_report",
}
"""Public name -> the module that defines it."""

__all__ = [
    "AuditConfig",
    "GoalConfig",
    "acquire",
    "goal_command",
    "run_arena",
    "run_audit",
]


__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, globals())
