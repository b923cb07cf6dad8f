"""``simjudge import-robogen TASK_DIR --out SOLUTION.yaml``: its config and its handler.

The command line is generated from :class:`ImportRobogenConfig` (see
:mod:`simjudge.tasks.spec.config`); :func:`run_import` converts the folder, prints the
report and writes the solution YAML. :func:`load_for_execute` is what ``simjudge execute``
uses to accept a RoboGen folder wherever a solution is accepted, with the task goal derived
from RoboGen's own words.

Example:
    >>> ImportRobogenConfig(task_dir="example_tasks/Close_Window", out="cw.yaml").strict
    False
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from simjudge.tasks.spec.config import option

from .convert import import_robogen, load_solution_or_robogen, robogen_goal, solution_yaml
from .reader import RobogenImportError

__all__ = ["ImportRobogenConfig", "load_for_execute", "run_import"]


@dataclass(frozen=True, kw_only=True)
class ImportRobogenConfig:
    """Convert a RoboGen task folder into a simjudge solution YAML.

    Attributes:
        task_dir: RoboGen's task folder (``example_tasks/<Task>``), its ``task_<Task>``
            folder, or the task YAML.
        out: Where to write the solution YAML (its header comment is the report).
        strict: Refuse stand-ins: a PartNet-Mobility category the catalogue lacks, or a
            part no instance of the object's own category has.
        distractors: Also place RoboGen's distractor objects (as rigid stand-ins).
    """

    task_dir: str = option(positional=True)
    out: str
    strict: bool = False
    distractors: bool = False


def run_import(config: ImportRobogenConfig, stream: TextIO | None = None) -> int:
    """Convert ``config.task_dir``, print the report, write ``config.out``.

    Returns:
        0 when converted, 2 (with the reason on stderr) when the folder cannot be.
    """
    stream = stream or sys.stdout
    try:
        solution, report = import_robogen(
            config.task_dir, strict=config.strict, distractors=config.distractors
        )
    except RobogenImportError as exc:
        print(f"simjudge: error: cannot import {config.task_dir}: {exc}", file=sys.stderr)
        return 2
    derivation = robogen_goal(solution)
    solution = _start_where_not_done(solution, derivation, stream)
    out = Path(config.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(solution_yaml(solution, report), encoding="utf-8")
    for line in report.lines():
        print(line, file=stream)
    if derivation is not None:
        from simjudge.pipelines.goal_card import card_text, goal_card

        print("  task " + card_text(goal_card(derivation)).replace("\n", "\n  "),
              file=stream)  # the goal card: from RoboGen's name and description
    print(f"wrote {out} ({len(solution.subtasks)} subtasks); run it with `simjudge execute "
          f"{out} --reward-solver mpc --out RUN`", file=stream)  # fmt: skip
    return 0


def _start_where_not_done(solution: Any, derivation: Any, stream: TextIO) -> Any:
    """The solution with the start its task goal implies where RoboGen leaves it to chance.

    RoboGen sets a joint to ``random`` (or leaves it closed) even when the task is to turn or
    close that joint, so the goal may already hold at reset; such joints start where the
    goal does not hold (:func:`~simjudge.pipelines.components.repair_start`), and each repair is
    printed and kept in the solution's provenance.
    """
    if derivation is None or derivation.goal is None:
        return solution
    from simjudge.pipelines.components import repair_start

    repaired = repair_start(solution, derivation.goal)
    for note in repaired.provenance.get("scene_repairs", []) if repaired is not solution else []:
        print(f"  start repaired: {note}", file=stream)
    return repaired


def load_for_execute(source: str | Path, stream: TextIO | None = None) -> tuple[Any, Any]:
    """A solution for ``simjudge execute`` and its task goal.

    ``source`` is a solution YAML, a built-in task id or a RoboGen task folder (converted
    on the fly; its report is printed). For a solution converted from RoboGen (on the fly
    or by ``import-robogen``), the goal is derived from RoboGen's task name and description
    (:func:`~simjudge.pipelines.robogen.robogen_goal`), even when a built-in task has the same
    name (its scene and object names are RoboGen's, not the built-in task's).

    Returns:
        ``(solution, goal)``: the solution (for a RoboGen one, with the start its goal
        implies where RoboGen left the joint to chance); ``goal`` is an env goal to pass to ``execute_solution``, None
        (no goal could be derived: the outcome is unverifiable), or the string
        ``"reference"`` for any other solution (keep the executor's default, a built-in
        task's goal).

    Raises:
        RobogenImportError: A RoboGen folder that cannot be converted.
        FileNotFoundError: Not a file, folder or built-in task.
    """
    stream = stream or sys.stdout
    path = Path(source)
    if path.is_dir():
        solution, report = import_robogen(path)
        for line in report.lines():
            print(line, file=stream)
    else:
        solution = load_solution_or_robogen(source)
    derivation = robogen_goal(solution)
    if derivation is None:
        return solution, "reference"
    solution = _start_where_not_done(solution, derivation, stream)
    if derivation.goal is None:
        print(f"task goal: none derived from {solution.task!r} "
              f"({'; '.join(derivation.ambiguities)})", file=stream)  # fmt: skip
        return solution, None
    print(f"task goal: {derivation.goal.describe()}", file=stream)
    return solution, derivation.goal.env_goal()
