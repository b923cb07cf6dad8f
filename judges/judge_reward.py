"""``JudgeReward``: a judge's reward term plus potential-based shaping, as the env reward."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from .base import Judge
from .signals import FAILURE_CODE, SUCCESS_CODE, FastSignal
from .stepping import BaseJudgeWrapper, ContextSource, put_info

__all__ = ["JudgeReward", "SUPPORTED_COMBINE", "SUPPORTED_REWARD_MODES"]

SUPPORTED_REWARD_MODES: tuple[str, ...] = ("sparse", "dense", "normalized")
"""Reward modes of :class:`JudgeReward` (ManiSkill's names)."""
SUPPORTED_COMBINE: tuple[str, ...] = ("replace", "add")
"""How :class:`JudgeReward` treats the env's own reward."""


class JudgeReward(BaseJudgeWrapper):
    """Replace (or add to) the env reward with a judge's reward term and shaping.

    Per step t (Φ from the judge's signal; Φ_0 is judged at reset):

    - ``dense``: r_t = term_t + w·(γ·Φ_t − Φ_{t−1}), the potential-based shaping of
      Ng, Harada & Russell (1999), which leaves optimal policies unchanged. Its discounted
      sum telescopes: Σ_t γ^{t−1}·w·(γΦ_t − Φ_{t−1}) = w·(γ^T·Φ_T − Φ_0) (= w·(Φ_T − Φ_0)
      with γ = 1). No shaping when the judge gives no Φ.
    - ``sparse``: r_t = 1(verdict = success) − 1(verdict = failure) (ManiSkill), plus shaping
      only if ``shaping_weight`` is set explicitly.
    - ``normalized``: the dense reward divided by its maximum
      **M = judge.max_reward + w** (the term is at most ``judge.max_reward``; the shaping at
      most w·γ ≤ w). For the privileged judge (term = Φ ≤ 1) with w = 1, M = 2. Pass
      ``max_reward=`` for judges whose term has no known bound (generated reward code).

    With ``combine="add"`` the env's reward is added to the result; ``"replace"`` drops it.

    Example:
        >>> from simjudge.judges import JudgeReward, make_judge
        >>> from simjudge.tasks.spec import make_task_env
        >>> env = JudgeReward(make_task_env("OpenDrawer-v0"), make_judge("privileged"))
        >>> obs, info = env.reset(seed=0)
        >>> obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
        >>> sorted(info["judge_reward"])
        ['env', 'judge', 'shaping', 'term']

    **Info keys** (every step, not at reset; the key is configurable with ``key``):

    - ``judge_reward`` (dict): ``term`` (float, the judge's reward term), ``shaping``
      (float, w·(γΦ_t − Φ_{t−1}); 0 without Φ), ``judge`` (float, the reward of the chosen
      mode before ``combine``), ``env`` (float, the env's own reward).

    Change logs:
     * v0.1.0 - Initially added.

    Args:
        env: The env (a SimEnv for state-based judges).
        judge: The judge; one instance per env (``judge.clone()``).
        mode: One of :data:`SUPPORTED_REWARD_MODES`.
        combine: One of :data:`SUPPORTED_COMBINE`.
        shaping_weight: w; None = 1 for ``dense``/``normalized`` and 0 for ``sparse``.
        gamma: γ of the shaping; use the learner's discount (SB3 SAC: 0.99).
        max_reward: Overrides ``judge.max_reward`` in M (``normalized`` mode).
        context: Judge context, a function of the env returning one, or None (derived).
        key: Info key.
        success_every: Check success-type judges only every k steps (and on the episode's
            last step); None keeps the judge's setting (every step by default).
    """

    def __init__(
        self,
        env: gym.Env,
        judge: Judge,
        mode: str = "dense",
        combine: str = "replace",
        shaping_weight: float | None = None,
        gamma: float = 0.99,
        max_reward: float | None = None,
        context: ContextSource = None,
        key: str = "judge_reward",
        success_every: int | None = None,
    ) -> None:
        super().__init__(env, judge, context, success_every)
        if mode not in SUPPORTED_REWARD_MODES:
            raise ValueError(
                f"mode={mode!r} is not supported; use one of {list(SUPPORTED_REWARD_MODES)}"
            )
        if combine not in SUPPORTED_COMBINE:
            raise ValueError(
                f"combine={combine!r} is not supported; use one of {list(SUPPORTED_COMBINE)}"
            )
        if not 0.0 < gamma <= 1.0:
            raise ValueError(f"gamma must be in (0, 1], got {gamma}")
        self.mode = mode
        self.combine = combine
        self.gamma = float(gamma)
        if shaping_weight is None:
            shaping_weight = 0.0 if mode == "sparse" else 1.0
        self.shaping_weight = float(shaping_weight)
        self.key = key
        self.max_reward: float | None = None
        if mode == "normalized":
            bound = judge.max_reward if max_reward is None else max_reward
            if bound is None:
                raise ValueError(
                    f"mode='normalized' needs a bound on {judge.label}'s reward term, which "
                    "has none; pass max_reward=<largest term>, or use mode='dense'"
                )
            self.max_reward = float(bound) + self.shaping_weight
            if self.max_reward <= 0.0:
                raise ValueError(f"the normalising maximum must be > 0, got {self.max_reward}")
        self._prev_phi: float | None = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Reset the env, then the judge (which judges the reset state, Φ_0)."""
        obs, info = self.env.reset(seed=seed, options=options)
        self._prev_phi = self._judge_reset(obs, info, seed)[1]
        return obs, info

    def step(self, action):
        """Step the env and replace/add its reward with the judge's."""
        obs, env_reward, terminated, truncated, info = self.env.step(action)
        fast = self._judge_step(obs, action, env_reward, terminated, truncated, info)
        term, shaping, judged = self._reward(fast)
        env_reward = float(env_reward)
        reward = judged + env_reward if self.combine == "add" else judged
        info = dict(info)
        if self.key in info:
            put_info(info, self.key, None, type(self).__name__)  # raises: names the clash
        info[self.key] = {"term": term, "shaping": shaping, "judge": judged, "env": env_reward}
        return obs, reward, terminated, truncated, info

    def _reward(self, fast: FastSignal) -> tuple[float, float, float]:
        term, phi, code = fast.reward, fast.phi, fast.code
        prev = self._prev_phi
        shaping = 0.0
        if phi is not None and prev is not None and self.shaping_weight:
            shaping = self.shaping_weight * (self.gamma * phi - prev)
        self._prev_phi = phi
        if self.mode == "sparse":
            base = float(code == SUCCESS_CODE) - float(code == FAILURE_CODE)
            return term, shaping, base + shaping
        dense = term + shaping
        if self.mode == "normalized":
            assert self.max_reward is not None, "set in __init__ for mode='normalized'"
            return term, shaping, dense / self.max_reward
        return term, shaping, dense
