"""``simjudge execute`` and ``dataset build`` as pipelines: the command's config in, results out.

:func:`run_execute` takes an :class:`~simjudge.pipelines.configs.ExecuteConfig`, loads the
solution (a solution YAML, a built-in task id or a RoboGen task folder, converted), shows its
goal card (written, RoboGen's derived, or the built-in task's), repairs the start for a
written goal, and runs :func:`~simjudge.skills.executor.execute_solution` with live subtask
judges; the config is recorded in ``config.json`` and the card in ``summary.json``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from simjudge.tasks.spec.config import config_to_dict

from .configs import ExecuteConfig

__all__ = ["execute_card", "run_dataset_build", "run_execute"]


def run_execute(config: ExecuteConfig, *,
                show: Callable[[str], None] = lambda _text: None) -> Any:
    """Execute the solution the config names; return its :class:`~simjudge.tasks.spec.Outcome`.

    Args:
        config: The command's config.
        show: Called with the goal card's text before anything runs (the CLI prints it).

    Raises:
        FileNotFoundError: The solution is neither a file, a built-in task nor a folder.
    """
    from simjudge.judges.live import LiveSubtaskJudges
    from simjudge.skills.executor import execute_solution
    from simjudge.skills.library import SkillLibrary

    from .components import task_goal_for
    from .goal_card import card_text, record_card
    from .robogen.command import load_for_execute

    sac_config = None
    if config.n_envs != 1:
        from simjudge.skills.sac import SACConfig

        sac_config = SACConfig(n_envs=config.n_envs, vec_env="subproc")
    solution, goal = load_for_execute(config.solution)
    card = execute_card(config, solution, goal)
    show(card_text(card))
    if config.goal or solution.goal is not None:
        from simjudge.tasks.spec import TaskGoal

        from .components import repair_start

        written = TaskGoal.model_validate(card["goal"])
        solution, goal = repair_start(solution, written), written.env_goal()
    elif isinstance(goal, str):  # not from RoboGen: the task's own (built-in) goal
        goal = task_goal_for(solution)
    summary = execute_solution(
        solution,
        config.out,
        goal=goal,
        observer=LiveSubtaskJudges(goal),
        seed=config.seed,
        budget_steps=config.budget_steps,
        continue_on_failure=config.continue_on_failure,
        reward_solver=config.reward_solver,
        sac_config=sac_config,
        resume=config.resume,
        video=config.video,
        randomize=config.randomize,
        skills=SkillLibrary(config.skills) if config.skills else None,
        run_config={"command": "execute", **config_to_dict(config)},
    )
    record_card(Path(config.out) / "summary.json", card)
    return summary


def execute_card(config: ExecuteConfig, solution: Any, goal: Any) -> dict[str, Any]:
    """The goal card of an ``execute`` run: written, RoboGen's derived, or the built-in's."""
    from simjudge.tasks.spec import GoalDerivation, TaskGoal, TaskSpecError, load_task

    from .goal_card import goal_card, load_written_goal
    from .robogen import robogen_goal

    if config.goal:
        return goal_card(None, load_written_goal(config.goal, solution.task))
    if solution.goal is not None:  # written in the solution file
        return goal_card(None, solution.goal)
    if not isinstance(goal, str):  # converted from RoboGen: its goal was derived
        return goal_card(robogen_goal(solution))
    try:
        spec = load_task(solution.task)
    except TaskSpecError:
        spec = None
    if spec is None or spec.goal is None:
        return goal_card(GoalDerivation(None, [], [
            f"{solution.task!r} is not a built-in task, so it has no goal of its own"]))
    return goal_card(GoalDerivation(TaskGoal.from_reference(spec),
                                    [f"the reference goal of {spec.env_id}"], []))


def run_dataset_build(config: Any) -> list[Any]:
    """``simjudge dataset build`` from its :class:`~.configs.DatasetBuildConfig`.

    Resolves the tasks, makes the proposer (and the completer that continues prefixes), the
    execution function and the executor the config names, and runs
    :func:`~simjudge.pipelines.dataset.build_dataset`; returns its labelled records.
    """
    from simjudge.executors import executor_from

    from .components import make_execute_fn, make_proposer
    from .dataset import build_dataset
    from .proposer import TaskRequest

    out = Path(config.out)
    tasks = [TaskRequest.resolve(t) for t in config.tasks]
    proposer = make_proposer(config.proposer, out, config.model, config.llm_cache)
    if config.proposer == "template":
        completer = proposer
    else:
        from .llm_proposer import Completer

        completer = Completer(proposer.client, temperature=proposer.temperature)
    with executor_from(config) as executor:
        return build_dataset(
            tasks, proposer, completer,
            make_execute_fn(config.reward_solver, config.budget_steps, config.seed, video=False,
                            goals={t.name: t.goal for t in tasks}),
            out, base=config.base, completions=config.completions, seed=config.seed,
            config={"command": "dataset build", **config_to_dict(config)}, executor=executor,
        )
