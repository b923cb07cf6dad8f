"""Sampling-based MPC over a generated reward, with the simulator as the model.

Why: SAC (the default reward solver, as in RoboGen/VERGSA) needs minutes per
reward subtask on two CPU cores, which makes building verifier datasets of
hundreds of executed solutions impractical. Model-predictive control with the
true simulator as its model optimises the *same generated reward* and stops on
the *same generated success*, so a wrong reward (bad link, wrong joint
direction, hard-coded target) still fails — it is a faster optimiser of the
proposal, not an oracle. It is offered as ``reward_solver="mpc"`` and always
named as such in results.

At each replanning, from the current snapshot, ``samples`` actions (Gaussian
around the previous best, cross-entropy style) are each held for ``lookahead``
steps and scored by the summed generated reward (plus a bonus when success is
reached); the best is executed for ``execute`` steps.
The suction bit is kept as it is at the subtask's start (a reward subtask after
a grasp keeps holding; one without a grasp keeps suction off).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from simjudge.envs.codegen import GeneratedCodeError
from simjudge.envs.sim_env import SimEnv
from simjudge.envs.sim_state import SimState

__all__ = ["MPCConfig", "MPCResult", "solve_with_mpc"]

RewardFn = Callable[[object], tuple[float, bool]]


@dataclass(frozen=True)
class MPCConfig:
    """Planner settings.

    Attributes:
        samples: Actions tried per replanning.
        lookahead: Steps each candidate action is held for when scored (the arm
            needs a few steps to accelerate, so short lookaheads score noise).
        execute: Steps the best action is executed before replanning.
        elite: Sequences averaged into the next plan's mean.
        noise: Std of the Gaussian around the plan (actions lie in [-1, 1]).
        success_bonus: Added to a sequence's score when success holds.
    """

    samples: int = 12
    lookahead: int = 6
    execute: int = 2
    elite: int = 3
    noise: float = 0.6
    success_bonus: float = 10.0


@dataclass
class MPCResult:
    """Outcome of one reward subtask solved by MPC.

    Attributes:
        success: The generated success held before the budget ran out.
        reason: Why it stopped.
        steps: Control steps executed.
        sim_steps: Env steps simulated in total (executed + planned).
        wall_time_s: Wall-clock seconds.
        final_state: Snapshot after the last executed step.
        rewards: Generated reward after each executed step.
        frames: Rendered frames (when requested).
    """

    success: bool
    reason: str
    steps: int
    sim_steps: int
    wall_time_s: float
    final_state: SimState | None = None
    rewards: list[float] = field(default_factory=list)
    frames: list[np.ndarray] = field(default_factory=list)


def _score(env: SimEnv, reward_fn: RewardFn, actions: np.ndarray, bonus: float, mode: str) -> float:
    total = 0.0
    for action in actions:
        env.step_in_mode(action, mode)
        reward, success = reward_fn(env.view)
        total += reward
        if success:
            return total + bonus
    return total


def _execute(env, reward_fn, action, steps, result: MPCResult, record: bool, mode: str) -> bool:
    for _ in range(steps):
        env.step_in_mode(action, mode)
        result.steps += 1
        result.sim_steps += 1
        if record:
            result.frames.append(env.render())
        reward, success = reward_fn(env.view)
        result.rewards.append(float(reward))
        if success:
            return True
    return False


def solve_with_mpc(
    env: SimEnv,
    reward_fn: RewardFn,
    start: SimState,
    budget_steps: int = 100,
    config: MPCConfig | None = None,
    seed: int = 0,
    record: bool = False,
    translation_mode: str | None = None,
) -> MPCResult:
    """Drive ``env`` from ``start`` to maximise ``reward_fn`` until its success holds.

    ``translation_mode`` is the subtask's action space (default: the env's own); the env
    is stepped in it without changing its ``translation_mode``.

    Errors raised by generated code (``GeneratedCodeError``) end the subtask with
    the error as the reason; they are not raised.
    """
    config = config or MPCConfig()
    mode = translation_mode or env.translation_mode
    rng = np.random.default_rng(seed)
    began = time.perf_counter()
    env.set_state(start)
    suction = 1.0 if start.suction_on else -1.0
    mean = np.zeros(7)
    result = MPCResult(False, "budget exhausted", 0, 0, 0.0)
    if record:
        result.frames.append(env.render())
    try:
        while result.steps < budget_steps:
            snapshot = env.get_state()
            candidates = np.clip(mean + rng.normal(0.0, config.noise, (config.samples, 7)), -1, 1)
            candidates[0] = mean  # always reconsider the current plan
            candidates[:, 6] = suction
            scores = np.empty(config.samples)
            with env.unobserved():  # imagined futures, rolled back below
                for k, action in enumerate(candidates):
                    env.set_state(snapshot)
                    held = np.repeat(action[None], config.lookahead, axis=0)
                    scores[k] = _score(env, reward_fn, held, config.success_bonus, mode)
                    result.sim_steps += config.lookahead
            order = np.argsort(-scores)
            env.set_state(snapshot)
            if _execute(env, reward_fn, candidates[order[0]], config.execute, result, record,
                        mode):
                result.success, result.reason = True, "success condition holds"
                break
            mean = candidates[order[: config.elite]].mean(axis=0)
    except GeneratedCodeError as exc:
        result.reason = f"{type(exc).__name__}: {exc}"
    result.final_state = env.get_state()
    result.wall_time_s = time.perf_counter() - began
    return result
