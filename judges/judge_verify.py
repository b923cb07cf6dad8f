"""``JudgeVerify``: end episodes on a judge's verdict and report it in ``info``."""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym

from .base import Judge
from .signals import FAILURE_CODE, SUCCESS, SUCCESS_CODE, JudgeSignal
from .stepping import BaseJudgeWrapper, ContextSource, put_info

__all__ = ["JudgeVerify", "signal_info"]


def signal_info(signal: JudgeSignal, step: int) -> dict[str, Any]:
    """The ``info["judge"]`` dict of a signal; the same keys and types on every step.

    ``phi`` is a float, NaN when the judge gives no potential (so that vector envs can stack
    it into a float array).
    """
    return {
        "verdict": signal.verdict,
        "reason": signal.reason,
        "phi": math.nan if signal.phi is None else signal.phi,
        "reward": signal.reward,
        "step": int(step),
        "details": dict(signal.details),
    }


class JudgeVerify(BaseJudgeWrapper):
    """Terminate on a judge's verdict and put the verdict in ``info`` on every step.

    ``terminated`` becomes true on a ``success`` verdict (``terminate_on_success``) or a
    ``failure`` verdict (``terminate_on_failure``); the env's own ``terminated`` is kept.
    At the end of an episode (terminated or truncated) ``info["is_success"]`` holds whether
    the last verdict is ``success``, which is what SB3 reads for ``rollout/success_rate``.

    Examples:
        >>> from simjudge.judges import JudgeVerify, make_judge
        >>> from simjudge.tasks.spec import make_task_env
        >>> env = JudgeVerify(make_task_env("OpenDrawer-v0"), make_judge("privileged"))
        >>> obs, info = env.reset(seed=0)
        >>> info["judge"]["verdict"]
        'undecided'
        >>> obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
        >>> sorted(info["judge"])
        ['details', 'phi', 'reason', 'reward', 'step', 'verdict']

    **Info keys** (keys configurable with ``key`` and ``success_key``):

    - ``judge`` (dict, every step and at reset, always the same keys): ``verdict`` (str:
      success / failure / undecided), ``reason`` (str), ``phi`` (float Φ ∈ [0, 1]; NaN if
      the judge has no potential), ``reward`` (float, the judge's reward term), ``step``
      (int, 0 at reset), ``details`` (dict, the judge's details; per judge for panels).
    - ``is_success`` (bool, only when the episode ends): the last verdict is success.

    Change logs:
     * v0.1.0 - Initially added.

    Args:
        env: The env.
        judge: The judge; one instance per env (``judge.clone()``).
        terminate_on_success: End the episode on a success verdict.
        terminate_on_failure: End the episode on a failure verdict (False: keep running,
            e.g. to see whether generated code recovers).
        context: Judge context, a function of the env returning one, or None (derived).
        key: Info key of the verdict dict.
        success_key: Info key of the episode-end success flag (SB3 reads ``is_success``).
        success_every: Check success-type judges only every k steps (and on the episode's
            last step); None keeps the judge's setting (every step by default).
    """

    def __init__(
        self,
        env: gym.Env,
        judge: Judge,
        terminate_on_success: bool = True,
        terminate_on_failure: bool = True,
        context: ContextSource = None,
        key: str = "judge",
        success_key: str = "is_success",
        success_every: int | None = None,
    ) -> None:
        super().__init__(env, judge, context, success_every)
        if key == success_key:
            raise ValueError(f"key and success_key must differ, both are {key!r}")
        self.terminate_on_success = bool(terminate_on_success)
        self.terminate_on_failure = bool(terminate_on_failure)
        self.key = key
        self.success_key = success_key

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Reset the env and the judge; ``info[key]`` holds the verdict on the reset state."""
        obs, info = self.env.reset(seed=seed, options=options)
        self._judge_reset(obs, info, seed)
        signal = self.last_signal
        assert signal is not None, "the judge observed the reset state"
        info = dict(info)
        put_info(info, self.key, signal_info(signal, 0), type(self).__name__)
        return obs, info

    def step(self, action):
        """Step the env, judge the new state, terminate on the verdict."""
        obs, reward, terminated, truncated, info = self.env.step(action)
        code = self._judge_step(obs, action, reward, terminated, truncated, info)[2]
        if code == SUCCESS_CODE and self.terminate_on_success:
            terminated = True
        elif code == FAILURE_CODE and self.terminate_on_failure:
            terminated = True
        signal = self.last_signal
        assert signal is not None, "the judge observed this step"
        info = dict(info)
        name = type(self).__name__
        put_info(info, self.key, signal_info(signal, self.step_index), name)
        if terminated or truncated:
            put_info(info, self.success_key, signal.verdict == SUCCESS, name, "success_key")
        return obs, reward, bool(terminated), bool(truncated), info
