"""Build the acquisition loop's parts by name (what the command line calls).

``make_proposer("template" | "local" | "openai" | "replay", ...)``, ``make_execute_fn``
(the subtask executor behind the :data:`~simjudge.pipelines.dataset.ExecuteFn` signature) and
``open_pool`` keep :mod:`simjudge.cli` a thin argument parser.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simjudge.tasks.spec import Outcome, Solution, TaskGoal

from .configs import RewardSolver
from .dataset import ExecuteFn

__all__ = [
    "DEFAULT_LOCAL_MODEL",
    "DEFAULT_POOL",
    "PROPOSERS",
    "SolutionExecute",
    "make_client_for",
    "make_execute_fn",
    "make_proposer",
    "open_pool",
    "repair_start",
    "task_goal_for",
    "whole_goal_check",
]

PROPOSERS: tuple[str, ...] = ("template", "local", "openai", "replay")
DEFAULT_LOCAL_MODEL = "qwen2.5-coder-1.5b"
DEFAULT_POOL = Path(os.environ.get("SIMJUDGE_POOL", "~/.cache/simjudge/pool.sqlite")).expanduser()
"""Default exemplar pool file (``$SIMJUDGE_POOL`` overrides)."""


def make_client_for(
    proposer: str, out: Path, model: str | None = None, cache_dir: str | Path | None = None
):
    """The LLM client behind an LLM proposer name, cached and logged in ``out``.

    ``local`` and ``openai`` record every exchange in a replay cache (``out/llm_cache``
    unless ``cache_dir`` is given, mode ``auto``: a resumed run answers repeated requests
    from it); ``replay`` answers only from ``cache_dir`` and fails on a miss.
    """
    from simjudge.llm import make_client

    log = out / "llm_log.jsonl"
    if proposer == "local":
        spec = f"llamacpp:{model or DEFAULT_LOCAL_MODEL}"
        return make_client(spec, cache_dir=cache_dir or out / "llm_cache", mode="auto", log=log)
    if proposer == "openai":
        spec = f"openai:{model}" if model else "openai"
        return make_client(spec, cache_dir=cache_dir or out / "llm_cache", mode="auto", log=log)
    if proposer == "replay":
        if cache_dir is None:
            raise ValueError(
                "--proposer replay answers from recorded exchanges only; give their folder "
                "with --llm-cache DIR (a run's llm_cache/ folder)"
            )
        spec = os.environ.get("SIMJUDGE_LLM") or f"llamacpp:{model or DEFAULT_LOCAL_MODEL}"
        return make_client(spec, cache_dir=cache_dir, mode="replay", log=log)
    raise ValueError(f"proposer {proposer!r} has no LLM client; LLM proposers are local, openai, replay")


def make_proposer(
    name: str,
    out: str | Path,
    model: str | None = None,
    cache_dir: str | Path | None = None,
    temperature: float = 0.7,
    max_tokens: int = 1024,
):
    """A proposer by name: ``template`` (deterministic baseline) or an LLM backend."""
    if name not in PROPOSERS:
        raise ValueError(f"unknown proposer {name!r}; use one of {list(PROPOSERS)}")
    if name == "template":
        from .template_proposer import TemplateProposer

        return TemplateProposer()
    from .llm_proposer import LLMProposer

    client = make_client_for(name, Path(out), model, cache_dir)
    return LLMProposer(client, temperature=temperature, max_tokens=max_tokens)


def make_execute_fn(
    reward_solver: RewardSolver = "sac",
    budget_steps: int | None = None,
    seed: int = 0,
    video: bool = True,
    goals: Mapping[str, Any] | None = None,
) -> ExecuteFn:
    """The subtask executor as ``(solution, run_dir) -> Outcome``, verified and judged live.

    Each solution is checked against its task's independent goal, never the solution's own
    success code: ``goals[solution.task]`` when given (a request's
    :class:`~simjudge.tasks.spec.TaskGoal`, or an env goal), else :func:`task_goal_for`. A
    :class:`TaskGoal` also repairs the scene's start (:func:`repair_start`: a "close" task
    starts open). Every subtask runs under the live judges
    (:class:`~simjudge.judges.live.LiveSubtaskJudges`: Φ trace and OPD metrics per subtask).
    The result is a picklable :class:`SolutionExecute`, so executors can send it to worker
    processes (:mod:`simjudge.executors`).
    """
    return SolutionExecute(reward_solver, budget_steps, seed, video,
                           dict(goals) if goals else None)


@dataclass(frozen=True)
class SolutionExecute:
    """The :data:`~simjudge.pipelines.dataset.ExecuteFn` of :func:`make_execute_fn` (picklable).

    Attributes:
        reward_solver: Learner of reward subtasks.
        budget_steps: SAC env steps per reward subtask (None: the executor's default).
        seed: Scene, planner and learner seed.
        video: Render the execution.
        goals: Task name -> goal to verify against (else :func:`task_goal_for`).
    """

    reward_solver: RewardSolver = "sac"
    budget_steps: int | None = None
    seed: int = 0
    video: bool = True
    goals: dict[str, Any] | None = None

    def __call__(self, solution: Solution, run_dir: Path) -> Outcome:
        """Execute ``solution`` in ``run_dir`` (resumable) against its task's goal."""
        from simjudge.judges.live import LiveSubtaskJudges
        from simjudge.skills.executor import execute_solution

        goals = self.goals
        goal = goals[solution.task] if goals and solution.task in goals else \
            task_goal_for(solution)
        task_goal = goal if isinstance(goal, TaskGoal) else None
        if task_goal is not None:
            solution = repair_start(solution, task_goal)
            goal = task_goal.env_goal()
        outcome = execute_solution(
            solution, run_dir, seed=self.seed, budget_steps=self.budget_steps,
            reward_solver=self.reward_solver, video=self.video, resume=True, goal=goal,
            observer=LiveSubtaskJudges(goal),
        )
        return whole_goal_check(outcome, task_goal)


def whole_goal_check(outcome: Outcome, goal: TaskGoal | None) -> Outcome:
    """The outcome, no longer verified when a part the env goal cannot check failed.

    Parts that must stay put, a two-step task's first step, a change from the start and a
    spring press are checked on the run's recorded joints
    (:func:`~simjudge.tasks.spec.goal_eval.outcome_check`); a verified outcome where one of
    them failed becomes ``claimed_not_verified`` (or ``failed``) with the reason.
    """
    from simjudge.tasks.spec.goal_eval import needs_joint_record, outcome_check

    if goal is None or not outcome.verified_success or not needs_joint_record(goal):
        return outcome
    holds, failed = outcome_check(goal, outcome.initial_joints, outcome.final_joints,
                                  outcome.max_joints)
    if holds:
        return outcome
    outcome.verified_success = False
    outcome.task_success = False
    outcome.verdict = "claimed_not_verified" if outcome.claimed_success else "failed"
    outcome.reason = "the task goal does not hold on the recorded joints: " + "; ".join(failed)
    return outcome


def repair_start(solution: Solution, goal: TaskGoal) -> Solution:
    """The solution with its scene starting where the task is not already done.

    A joint the goal is about starts at :meth:`TaskGoal.implied_initial_joints` (a closing
    task starts open, an opening one closed) when the proposed scene leaves it unset (and
    the default, closed, would already satisfy the goal), sets it to ``random``, or sets it
    inside the goal's target interval. A goal with a placement is left alone (the
    placement does not hold at the start, so the goal does not either). A start the task's
    words state (:attr:`TaskGoal.starts`) is where the joint starts. Each repair is recorded in
    ``solution.provenance["scene_repairs"]``; anything the repair cannot fix is caught by
    the executor's start check (verdict ``trivial_start``).
    """
    if len(goal.joint_targets) < len(goal.targets):
        return solution  # a placement does not hold at the start, whatever the joints say
    data = solution.model_dump(mode="json", by_alias=True)
    targets = {(t.object, t.joint): t for t in goal.joint_targets}
    starts = goal.implied_initial_joints()
    stated = {(c.object, c.joint): c for c in goal.starts}
    notes = []
    for obj in data["scene"]["objects"]:
        for (name, joint), start in starts.items():
            if obj["name"] != name:
                continue
            current = (obj.get("joint_init") or {}).get(joint)
            target = targets.get((name, joint))
            value = float(current) if isinstance(current, int | float) else None
            unset_but_done = current is None and target is not None and target.contains(0.0)
            bad = current == "random" or (value is not None and target is not None
                                         and target.contains(value))
            cond = stated.get((name, joint))  # a start the words state: the scene obeys it
            against_words = cond is not None and not cond.holds(
                value if value is not None else 0.0)
            if unset_but_done or bad or against_words:
                obj["joint_init"] = {**(obj.get("joint_init") or {}), joint: start}
                notes.append(f"{name}/{joint} starts at {start:.2f} of its range (proposed: "
                             f"{current if current is not None else 'unset'}, where the goal "
                             "would already hold or is left to chance)")
    if not notes:
        return solution
    data["provenance"] = {**data.get("provenance", {}), "scene_repairs": notes}
    return Solution.model_validate(data)


def task_goal_for(solution: Solution) -> Any:
    """The independent goal a solution is verified against, as an env goal (or None).

    A built-in task's reference goal; otherwise None (no goal can be checked, so the
    outcome is ``unverifiable`` and never counts as a success).
    """
    from simjudge.tasks.spec import TaskSpecError, load_task

    try:
        return load_task(solution.task).goal
    except TaskSpecError:
        return None


def open_pool(path: str | Path | None = None, seed: bool = True) -> Any:
    """The exemplar pool (created and seeded from the shipped exemplars on first use)."""
    from .pool import ExemplarPool
    from .pool_seed import seed_pool

    pool = ExemplarPool(Path(path) if path else DEFAULT_POOL)
    if seed and len(pool) == 0:
        seed_pool(pool)
    return pool
