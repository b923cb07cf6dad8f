"""Per-kind subtask runners of the executor (:mod:`simjudge.skills.executor`).

:class:`SubtaskRunner` holds one execution's live env and settings and runs a single
subtask of either kind: ``primitive`` blocks over motion-planning primitives bound to
the live env, ``reward`` subtasks with SAC, sampling MPC, or the privileged oracle. The
executor module sequences subtasks, handles resume and writes results; this module does
the per-subtask work.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

import numpy as np

from simjudge.envs.codegen import compile_once
from simjudge.envs.goals import PlaceGoal
from simjudge.envs.sim_env import SimEnv
from simjudge.envs.sim_state import SimState
from simjudge.envs.state_api import STATE_API
from simjudge.tasks.spec import Solution, Subtask, SubtaskVerdict

from .observers import JointTracker, SubtaskObserver
from .subtask_env import SubtaskEnv, SubtaskSpec, rollout_policy

__all__ = [
    "DEFAULT_BUDGET_STEPS",
    "REWARD_CODE_MODE",
    "PrimitiveImpl",
    "SubtaskRunner",
    "default_primitives",
]

REWARD_CODE_MODE: Literal["inprocess", "subprocess"] = "subprocess"
"""Sandbox mode of reward code run by the executor (the one that cannot take it down)."""

DEFAULT_BUDGET_STEPS = 50_000
"""SAC env-step budget per reward subtask when neither the call nor the subtask sets one."""

PrimitiveImpl = Callable[..., Any]
"""``impl(env, *args) -> result`` with ``.success``, ``.reason``, ``.steps``, ``.frames``."""


def default_primitives(record: bool = True, seed: int = 0) -> dict[str, PrimitiveImpl]:
    """The motion-planning primitives of :mod:`simjudge.skills.primitives`.

    Args:
        record: Render frames while executing (for the solution video).
        seed: Seed of the planner (OMPL sampler and IK restarts).
    """
    from functools import partial

    from . import primitives as prim
    from .planning import PlannerConfig

    config = prim.PrimitiveConfig(record=record, planner=PlannerConfig(seed=seed))
    names = (
        "approach_object",
        "approach_object_link",
        "grasp_object",
        "grasp_object_link",
        "release_grasp",
        "move_to_pose",
    )
    return {name: partial(getattr(prim, name), config=config) for name in names}


class SubtaskRunner:
    """One execution: the live env, settings, and the per-kind subtask runners."""

    def __init__(
        self,
        solution: Solution,
        env: SimEnv,
        seed: int,
        primitives: Mapping[str, PrimitiveImpl] | None,
        reward_solver: str,
        budget_steps: int | None,
        sac_config: Any,
        video: bool,
    ) -> None:
        self.solution, self.env, self.seed = solution, env, seed
        self.primitives = primitives
        self.reward_solver = reward_solver
        self.budget_steps = budget_steps
        self.sac_config = sac_config
        self.video = video
        self.scene_dict = solution.scene.model_dump(mode="json", by_alias=True)
        self.observer: SubtaskObserver | None = None
        self.tracker: JointTracker | None = None

    # primitive subtasks ---------------------------------------------------------------
    def primitive(self, subtask: Subtask, start: SimState, verdict: SubtaskVerdict) -> tuple:
        """Run a primitive block from ``start``; fill ``verdict``; return ``(frames, None)``."""
        block = compile_once("primitive", subtask.code, STATE_API)
        impls = self.primitives
        if impls is None:
            impls = default_primitives(self.video, self.seed)
        calls: list[tuple[str, tuple, Any]] = []
        env = self.env

        def bind(name: str, impl: PrimitiveImpl) -> Callable[..., Any]:
            def call(_view: object, *args: Any, **kwargs: Any) -> Any:
                result = impl(env, *args, **kwargs)
                calls.append((name, args, result))
                if hasattr(result, "__iter__"):
                    return result  # PrimitiveResult unpacks to (rgbs, final_state)
                return list(result.frames), getattr(result, "final_state", None)

            return call

        env.set_state(start)
        bound = {name: bind(name, impl) for name, impl in impls.items()}
        try:
            with env.record_commands() as events:
                outputs = block(env.view, bound)
        finally:
            block.close()  # the worker process, if the block ran in one
        frames = [f for _, _, r in calls for f in (r.frames or [])]
        if self.video and not frames:
            frames = [env.render()]
        verdict.success = bool(outputs["success"])
        verdict.steps = sum(int(r.steps) for _, _, r in calls)
        failed = [f"{n}: {r.reason}" for n, _, r in calls if not r.success]
        if not verdict.success:
            verdict.reason = "; ".join(failed) or "the block's `success` condition is False"
        verdict.details = {
            "calls": [
                {
                    "primitive": n,
                    "args": [_plain(a) for a in args],
                    "success": bool(r.success),
                    "reason": r.reason,
                    "steps": int(r.steps),
                    "planning_time_s": float(getattr(r, "planning_time_s", 0.0)),
                }
                for n, args, r in calls
            ],
            "trajectory": events,
            "runs_in": block.runs_in,
            "cost_class": block.cost_class,
            "reason": block.reason,
        }
        return frames, None

    # reward subtasks ------------------------------------------------------------------
    def spec(
        self, subtask: Subtask, start: SimState, action_space: str | None = None
    ) -> SubtaskSpec:
        """The :class:`SubtaskSpec` of a reward subtask started from ``start``."""
        return SubtaskSpec(
            scene=self.scene_dict,
            reward_code=subtask.code,
            start_state=start.to_dict(),
            action_space=action_space or subtask.action_space,
            name=subtask.name,
            task=self.solution.task,
            frameskip=self.env.frameskip,
            scene_seed=self.seed,
            control_suction=action_space is not None,
        )

    def reward(self, subtask: Subtask, start: SimState, verdict: SubtaskVerdict, where: Path):
        """Solve a reward subtask with the configured solver; return ``(frames, rollout)``."""
        compiled = compile_once("reward", subtask.code, STATE_API, mode=REWARD_CODE_MODE)
        if self.reward_solver == "oracle":
            return self._oracle(subtask, start, verdict, compiled)
        if self.reward_solver == "mpc":
            return self._mpc(subtask, start, verdict, compiled)
        from .sac import SACConfig, train_sac

        budget = self.budget_steps or subtask.budget_steps or DEFAULT_BUDGET_STEPS
        config = dataclasses.replace(
            self.sac_config or SACConfig(), total_steps=budget, seed=self.seed
        )
        spec = self.spec(subtask, start)
        result = train_sac(spec, config, out_dir=where)
        verdict.steps = result.env_steps
        verdict.details = {"sac": result.to_dict()}
        verdict.policy = result.model_path
        if result.error_type is not None:
            verdict.success, verdict.reason, verdict.error_type = (
                False,
                result.reason,
                result.error_type,
            )
            return [], None
        run = rollout_policy(
            result.policy, SubtaskEnv(spec, sim=self.env, reward=compiled), render=self.video
        )
        verdict.steps += run.steps
        verdict.success = run.success
        if run.error is not None:
            verdict.error_type = run.error["type"]
            verdict.reason = f"reward code failed ({run.error['type']}): {run.error['message']}"
        elif not run.success:
            verdict.reason = (
                f"the final deterministic rollout did not reach the subtask's success "
                f"({result.reason or 'training reached the threshold'})"
            )
        verdict.details["rollout"] = {
            "steps": run.steps,
            "return": run.total_reward,
            "actions": run.actions.tolist(),
        }
        return run.frames, run

    def _mpc(self, subtask: Subtask, start: SimState, verdict: SubtaskVerdict, compiled):
        """Sampling MPC over the generated reward (skills/mpc.py): fast, not SAC."""
        from .mpc import solve_with_mpc

        budget = min(self.budget_steps or subtask.budget_steps or self.env.horizon, 400)
        result = solve_with_mpc(self.env, compiled, start, budget_steps=budget, seed=self.seed,
                                record=self.video, translation_mode=subtask.action_space)
        verdict.success, verdict.steps = result.success, result.steps
        if not result.success:
            verdict.reason = f"MPC on the generated reward: {result.reason}"
            if "Error" in result.reason.split(":")[0]:
                verdict.error_type = result.reason.split(":")[0]
        verdict.details = {"solver": "mpc (sampling MPC on the generated reward; not SAC)",
                           "sim_steps": result.sim_steps, "wall_time_s": result.wall_time_s}
        return result.frames, None

    def _oracle(self, subtask: Subtask, start: SimState, verdict: SubtaskVerdict, compiled):
        from .scripted import ScriptedPolicy

        spec = self.spec(subtask, start, "delta-translation")
        sub_env = SubtaskEnv(spec, sim=self.env, reward=compiled)
        sub_env.reset()
        policy = ScriptedPolicy(self.env)
        if self.env.scene.robot.attachment is not None:
            # the grasp is established: skip the approach and contact phases
            policy.switch_phase("lift" if isinstance(self.env.goal, PlaceGoal) else "actuate")
        run = rollout_policy(policy, sub_env, render=self.video)
        verdict.success, verdict.steps = run.success, run.steps
        if run.error is not None:
            verdict.error_type = run.error["type"]
            verdict.reason = f"reward code failed ({run.error['type']}): {run.error['message']}"
        elif not run.success:
            verdict.reason = f"the oracle did not reach the subtask's success in {run.steps} steps"
        verdict.details = {"solver": "oracle (privileged ScriptedPolicy; not SAC)"}
        return run.frames, None


def _plain(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, set | frozenset | tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value
