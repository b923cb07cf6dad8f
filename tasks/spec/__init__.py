"""simjudge.tasks.spec: what a task is, what a solution is, and how executing one went.

The spec layer sits between the environments and everything that uses tasks: ``skills``
and ``judges`` import it, the pipelines in ``simjudge.tasks`` build on it, and it imports
nothing of simjudge but ``simjudge.envs``.

* :mod:`~simjudge.tasks.spec.task`: :class:`TaskSpec`, the built-in task library.
* :mod:`~simjudge.tasks.spec.goal`: :class:`TaskGoal`, the independent definition of success
  of any task; :mod:`~simjudge.tasks.spec.goal_parser`: :func:`derive_goal`, the goal from a
  task's name and description against the object's articulation tree.
* :mod:`~simjudge.tasks.spec.solution`: :class:`Solution`, :class:`Subtask`, reference
  solutions.
* :mod:`~simjudge.tasks.spec.outcome`: the one execution-outcome type :class:`Outcome`,
  :class:`SubtaskVerdict`, and the one definition of ATSR / ASSR.
* :mod:`~simjudge.tasks.spec.rundir`: the one run-directory class :class:`RunDir`.
* :mod:`~simjudge.tasks.spec.io`: the one atomic write; :mod:`~simjudge.tasks.spec.provenance`:
  versions recorded with every result.
* :mod:`~simjudge.tasks.spec.registry`: Gymnasium ids ``simjudge/<EnvId>`` of built-in tasks.
"""

from __future__ import annotations

# Task goals
from .goal import AMOUNTS, OPEN_FLOOR, JointTarget, PlaceTarget, Target, TaskGoal, amount_interval
from .goal_eval import ProbeError, evaluate_probe, load_probes
from .goal_parser import GoalDerivation, GoalParseError, derive_goal, goal_for_spec, object_parts
from .goal_parts import StartCondition, UnchangedPart

# I/O and provenance
from .io import atomic_write, json_default, read_json, write_json

# How execution went
from .outcome import (
    Outcome,
    SubtaskVerdict,
    SuccessRates,
    assr,
    atsr,
    avg_subtasks,
    success_rates,
    wilson_interval,
)
from .provenance import versions
from .registry import NAMESPACE, make_task_env, register_builtin_tasks
from .rundir import RunDir, RunDirError

# Solutions
from .solution import (
    ACTION_SPACES,
    COMPOSED_SOLUTIONS_DIR,
    REFERENCE_SOLUTIONS_DIR,
    SUBTASK_KINDS,
    Solution,
    SolutionError,
    Subtask,
    load_solution,
)

# Tasks
from .task import (
    COMPOSED_DIR,
    LIBRARY_DIR,
    TaskSpec,
    TaskSpecError,
    builtin_ids,
    composed_ids,
    library_ids,
    load_composed,
    load_library,
    load_task,
)

__all__ = [
    # Tasks
    "COMPOSED_DIR",
    "LIBRARY_DIR",
    "TaskSpec",
    "TaskSpecError",
    "builtin_ids",
    "composed_ids",
    "library_ids",
    "load_composed",
    "load_library",
    "load_task",
    # Task goals
    "AMOUNTS",
    "OPEN_FLOOR",
    "GoalDerivation",
    "GoalParseError",
    "JointTarget",
    "PlaceTarget",
    "ProbeError",
    "StartCondition",
    "Target",
    "TaskGoal",
    "UnchangedPart",
    "amount_interval",
    "derive_goal",
    "evaluate_probe",
    "load_probes",
    "goal_for_spec",
    "object_parts",
    # Solutions
    "ACTION_SPACES",
    "COMPOSED_SOLUTIONS_DIR",
    "REFERENCE_SOLUTIONS_DIR",
    "SUBTASK_KINDS",
    "Solution",
    "SolutionError",
    "Subtask",
    "load_solution",
    # How execution went
    "Outcome",
    "SubtaskVerdict",
    "SuccessRates",
    "assr",
    "atsr",
    "avg_subtasks",
    "success_rates",
    "wilson_interval",
    # Run directories, I/O and provenance
    "RunDir",
    "RunDirError",
    "atomic_write",
    "json_default",
    "read_json",
    "write_json",
    "versions",
    # Gymnasium registration
    "NAMESPACE",
    "make_task_env",
    "register_builtin_tasks",
]
