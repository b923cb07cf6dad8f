"""simjudge.tasks: what a task is — the spec, the goal language and its reader, solutions, outcomes, run directories, the task library.

Names load on first use (module ``__getattr__``), so importing the package costs nothing
beyond what its submodules need:

    >>> from simjudge.tasks import load_task
    >>> load_task("OpenDrawer-v0").env_id
    'OpenDrawer-v0'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from simjudge.envs.lazy import lazy_attributes

if TYPE_CHECKING:
    from simjudge.tasks.registration import register_builtin_tasks
    from simjudge.tasks.spec import (
        Outcome,
        RunDir,
        Solution,
        Subtask,
        TaskGoal,
        TaskSpec,
        TaskSpecError,
        builtin_ids,
        derive_goal,
        load_library,
        load_solution,
        load_task,
        make_task_env,
    )

_LAZY: dict[str, str] = {
    "TaskSpec": "simjudge.tasks.spec",
    "TaskSpecError": "simjudge.tasks.spec",
    "TaskGoal": "simjudge.tasks.spec",
    "Solution": "simjudge.tasks.spec",
    "Subtask": "simjudge.tasks.spec",
    "Outcome": "simjudge.tasks.spec",
    "RunDir": "simjudge.tasks.spec",
    "load_task": "simjudge.tasks.spec",
    "load_library": "simjudge.tasks.spec",
    "load_solution": "simjudge.tasks.spec",
    "make_task_env": "simjudge.tasks.spec",
    "derive_goal": "simjudge.tasks.spec",
    "builtin_ids": "simjudge.tasks.spec",
    "register_builtin_tasks": "simjudge.tasks.registration",
}
"""Public name -> the module that defines it."""

__all__ = [
    "Outcome",
    "RunDir",
    "Solution",
    "Subtask",
    "TaskGoal",
    "TaskSpec",
    "TaskSpecError",
    "builtin_ids",
    "derive_goal",
    "load_library",
    "load_solution",
    "load_task",
    "make_task_env",
    "register_builtin_tasks",
]


__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, globals())
