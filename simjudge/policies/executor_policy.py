"""``executor[:SOLUTION]``: the subtask executor (planner + skills) as a policy.

On :meth:`ExecutorPolicy.reset` the solution is executed by
:func:`~simjudge.skills.executor.execute_solution` (motion-planning primitives; reward
subtasks by the chosen ``reward_solver``) in the executor's own env, from the task's reset
state for that seed, and every executed control step is recorded as a ``joint_position``
action (:class:`~simjudge.policies.joint_actions.StepRecorder`). :meth:`act` then
plays that plan in chunks on the env being audited, and holds the last action after it.
Run from the same state through SimEnv's ``joint_position`` mode, the plan reproduces the
execution, so the policy succeeds where the executor does: exactly for planned primitives
and the ``oracle`` solver; after sampling MPC (whose look-ahead restores snapshots, which
is not bit-identical physics) to within millimetres.

The policy is privileged (it plans in the simulator): it needs ``task.env`` to check that
the episode starts where the executor started; a different start state is an error
(the plan would not fit it).

Spec: ``executor[:SOLUTION][,reward_solver=mpc|oracle|sac,budget_steps=N,chunk=N]``;
``SOLUTION`` is a solution YAML or a built-in task id (its reference solution); without
it, the reference solution of the task the policy is reset on. ``reward_solver`` defaults
to ``mpc`` (sampling MPC on the reward code, seconds); ``sac`` trains a SAC skill per
reward subtask (the full learned-skill pipeline; minutes per reset).
"""

from __future__ import annotations

import tempfile
from typing import Any

import numpy as np

from simjudge.skills.executor import REWARD_SOLVERS, execute_solution
from simjudge.skills.library import state_distance
from simjudge.tasks.spec import Outcome, TaskSpecError, load_solution, load_task

from .base import Observation, PolicyError, PolicyInfo, PolicyTask
from .joint_actions import JointPlanPlayer, StepRecorder

__all__ = ["ExecutorPolicy", "plan_solution"]

START_TOLERANCE = 1e-6
"""Largest state difference (:func:`state_distance`) between the executor's start and the env's."""


def plan_solution(
    solution: Any, seed: int, reward_solver: str = "mpc", budget_steps: int | None = None,
    randomize: bool = True,
) -> tuple[np.ndarray, StepRecorder, Outcome]:
    """Execute ``solution`` at ``seed`` and return its steps as ``(N, 8)`` joint actions.

    ``randomize``: in the task's world for that seed (as the task env draws it), else the
    fixed start.

    Returns:
        The actions, the recorder (start state, frameskip) and the executor's outcome.
    """
    recorder = StepRecorder()
    with tempfile.TemporaryDirectory(prefix="simjudge-executor-policy-") as out:
        outcome = execute_solution(
            solution,
            out,
            seed=int(seed),
            reward_solver=reward_solver,  # type: ignore[arg-type]
            budget_steps=budget_steps,
            resume=False,
            video=False,
            observer=recorder,
            randomize=randomize,
        )
    actions = np.asarray(recorder.actions, dtype=np.float64).reshape(-1, 8)
    return actions, recorder, outcome


class ExecutorPolicy:
    """The executor's plan for a solution, as joint-position actions (module docstring).

    Args:
        solution: Solution YAML path or built-in task id; None = the reset task's reference.
        reward_solver: ``mpc``, ``oracle`` or ``sac`` (see the module docstring).
        budget_steps: Budget per reward subtask (SAC env steps / MPC steps).
        chunk: Actions per query (1: the plan is local, queries cost nothing).
    """

    def __init__(
        self,
        solution: str | None = None,
        reward_solver: str = "mpc",
        budget_steps: int | None = None,
        chunk: int = 1,
    ) -> None:
        if reward_solver not in REWARD_SOLVERS:
            raise PolicyError(
                f"executor: reward_solver={reward_solver!r}; use one of {list(REWARD_SOLVERS)}"
            )
        self.solution = None if solution is None else str(solution)
        if self.solution is not None:
            self._load(self.solution)  # a wrong path fails now, not in the first episode
        self.reward_solver, self.budget_steps = reward_solver, budget_steps
        self._player = JointPlanPlayer(chunk)
        self._plans: dict[tuple[str, int, bool], tuple[np.ndarray, StepRecorder, Outcome]] = {}
        self.last_outcome: Outcome | None = None
        """The executor's outcome for the last reset's solution and seed."""
        self.last_end_state: Any = None
        """The executor's final state for the last reset (the plan ends there)."""
        self._info = PolicyInfo(
            "executor",
            action_space="joint_position",
            observation_needs=("privileged",),
            metadata={"solution": self.solution or "(the task's reference solution)",
                      "reward_solver": reward_solver, "budget_steps": budget_steps},
        )

    @staticmethod
    def _load(source: str) -> Any:
        try:
            return load_solution(source)
        except (FileNotFoundError, ValueError) as exc:
            raise PolicyError(f"executor:{source}: {exc}") from exc

    @property
    def info(self) -> PolicyInfo:
        """Name, action space (joint_position), needs (privileged)."""
        return self._info

    def reset(self, task: PolicyTask, seed: int) -> None:
        """Execute the solution at ``seed`` (cached per solution and seed) and load its plan.

        Raises:
            PolicyError: No simulator (not privileged), or the episode does not start
                where the executor started (another state, scene or frameskip).
        """
        env: Any = task.env
        if env is None:
            raise PolicyError("executor is a privileged policy (it plans in the simulator): "
                              "run it through simjudge audit/arena or run_episode")
        source = self.solution or _task_id(task.name)
        randomize = getattr(env, "randomization", None) is not None
        key = (source, int(seed), randomize)
        if key not in self._plans:
            actions, recorder, outcome = plan_solution(
                self._load(source), seed, self.reward_solver, self.budget_steps, randomize)
            self._plans[key] = (actions, recorder, outcome)
        actions, recorder, self.last_outcome = self._plans[key]
        _check_start(recorder, env, source, seed)
        self.last_end_state = recorder.end_state
        self._player.load(actions)

    def act(self, obs: Observation) -> np.ndarray:
        """The next chunk of the plan; the last action once it is played out."""
        return self._player.next_chunk()

    def close(self) -> None:
        """Drop the cached plans."""
        self._plans.clear()


def _task_id(name: str) -> str:
    """The env id of a built-in task given by id or name (its reference solution's name)."""
    try:
        return load_task(name).env_id
    except (TaskSpecError, FileNotFoundError, KeyError):
        return name


def _check_start(recorder: StepRecorder, env: Any, source: str, seed: int) -> None:
    if recorder.start_state is None:
        raise PolicyError(f"executor:{source} ran no subtask at seed {seed} (the goal may "
                          "already hold at reset); nothing to play")
    if recorder.frameskip != env.frameskip:
        raise PolicyError(f"executor:{source} plans with frameskip {recorder.frameskip}, the "
                          f"env steps {env.frameskip}; build the env with the default frameskip")
    gap = state_distance(recorder.start_state, env.get_state())
    if gap > START_TOLERANCE:
        raise PolicyError(
            f"executor:{source} planned from the task's reset state at seed {seed}, but the "
            f"episode starts elsewhere (state difference {gap:.3g}); reset the env with the "
            "same seed and no other start state, and check that the solution's scene is the task's"
        )
