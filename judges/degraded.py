"""Deliberately degraded judges, for experiments on how judge errors propagate.

They are **not** judges to deploy: each wraps a base judge (the privileged one by default)
and damages its Φ in one controlled way, so that metrics, reward shaping and verification
can be studied against the ground truth:

- :class:`DegradedNoisyJudge`: Φ̂ = clip(Φ + N(0, σ²), 0, 1), seeded per episode;
- :class:`DegradedQuantizedJudge`: Φ̂ = ⌊L·Φ⌋ / L (no micro-resolution between levels);
- :class:`DegradedPairwiseJudge`: scores each *pair* of states on its own (the sign of ΔΦ,
  biased towards "progress") and accumulates the pair scores, which is not additive: the
  total depends on how often it samples (opd.md: only potential judges are macro-consistent).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from .base import Judge
from .context import JudgeContext
from .episode import EpisodeRecord
from .privileged import PrivilegedProgressJudge
from .signals import FastSignal, JudgeSignal, Transition

__all__ = ["DegradedNoisyJudge", "DegradedPairwiseJudge", "DegradedQuantizedJudge"]


class _DegradedJudge(Judge):
    """Wraps a base judge that gives Φ; subclasses damage the base signal."""

    provides_potential = True
    max_reward = 1.0

    def __init__(self, base: Judge | None = None) -> None:
        super().__init__()
        self.base = base if base is not None else PrivilegedProgressJudge()
        if not self.base.provides_potential:
            raise ValueError(f"{type(self).__name__} damages Φ, but {self.base.label} gives none")

    def _reset(self, context: JudgeContext) -> None:
        self.base._owner = self._owner  # the base may read what the env computed
        self.base.reset(context)

    def close(self) -> None:
        """Close the base judge."""
        self.base.close()

    def _observe(self, transition: Transition) -> JudgeSignal:
        signal = self.base.observe(transition)
        phi, extra = self._degrade(self._phi(signal.phi))
        return self._signal(signal, phi, extra)

    def _fast(
        self,
        step: int,
        view: Any,
        info: Mapping[str, Any],
        done: bool,
        transition: Transition | None,
    ) -> FastSignal:
        base = self.base.observe_fast(step, view, info, done, transition)
        phi, extra = self._degrade(self._phi(base[1]))
        return FastSignal(phi, phi, base.code, (base, extra))

    def _explain(self, fast: FastSignal) -> JudgeSignal:
        base, extra = fast.note
        return self._signal(self.base.explain(base), fast.reward, extra)  # reward = Φ = damaged

    def _signal(self, signal: JudgeSignal, phi: float, extra: dict[str, Any]) -> JudgeSignal:
        details = {"base_phi": signal.phi, **extra, **signal.details}
        reason = f"degraded Φ {phi:.3f} (base {signal.phi:.3f}); {signal.reason}"
        return JudgeSignal(
            reward=phi, phi=phi, verdict=signal.verdict, reason=reason, details=details
        )

    def _degrade(self, phi: float) -> tuple[float, dict[str, Any]]:
        """Hook: the damaged Φ and extra details, from the base's Φ."""
        raise NotImplementedError  # pragma: no cover

    def _phi(self, phi: float | None) -> float:
        """The base's Φ (the base provides a potential: checked in ``__init__``)."""
        if phi is None:
            raise ValueError(f"{self.base.label} gave no Φ; {type(self).__name__} damages Φ")
        return phi


class DegradedNoisyJudge(_DegradedJudge):
    """Base Φ plus seeded Gaussian noise, clipped to [0, 1]; the verdict is the base's.

    The noise of an episode is drawn from ``default_rng((seed, context.seed, episode))``, so
    the same seed gives the same noisy trace for the same episode, and episodes differ.

    Args:
        sigma: Noise standard deviation σ ≥ 0.
        seed: Seed of the noise.
        base: The judge to degrade (privileged by default).
    """

    name = "noisy"

    def __init__(self, sigma: float = 0.05, seed: int = 0, base: Judge | None = None) -> None:
        super().__init__(base)
        if not sigma >= 0.0:
            raise ValueError(f"sigma must be >= 0, got {sigma}")
        self.sigma = float(sigma)
        self.seed = int(seed)
        self._rng = np.random.default_rng(self.seed)

    def _reset(self, context: JudgeContext) -> None:
        super()._reset(context)
        episode_seed = -1 if context.seed is None else int(context.seed)
        self._rng = np.random.default_rng([self.seed, episode_seed + 1, context.episode])

    def _degrade(self, phi: float) -> tuple[float, dict[str, Any]]:
        noise = float(self._rng.normal(0.0, self.sigma)) if self.sigma else 0.0
        return float(np.clip(phi + noise, 0.0, 1.0)), {"noise": noise}


class DegradedQuantizedJudge(_DegradedJudge):
    """Base Φ rounded down to one of ``levels`` + 1 values {0, 1/L, ..., 1}.

    Args:
        levels: Number of steps L ≥ 1.
        base: The judge to degrade (privileged by default).
    """

    name = "quantized"

    def __init__(self, levels: int = 4, base: Judge | None = None) -> None:
        super().__init__(base)
        if int(levels) < 1:
            raise ValueError(f"levels must be >= 1, got {levels}")
        self.levels = int(levels)

    def _degrade(self, phi: float) -> tuple[float, dict[str, Any]]:
        return math.floor(phi * self.levels + 1e-9) / self.levels, {}


class DegradedPairwiseJudge(_DegradedJudge):
    """Scores pairs of states independently and sums the scores: drifts with the stride.

    Pair score p(x_i, x_j) = +step if Φ_j − Φ_i ≥ −bias else −step (ties and small
    regressions count as progress: the bias), optionally flipped with probability
    ``flip``. Live, Φ̂_t = clip(Φ̂_{t−1} + p(x_{t−1}, x_t), 0, 1) from Φ̂_0 = Φ_0; the reward
    term is the pair score. ``judge_episode`` scores a recorded episode's privileged Φ at
    a chosen stride: a static scene drifts "up" by ``step`` per sampled pair, so the total
    depends on the sampling rate, unlike Φ_T − Φ_0. The verdict is the base's.

    Args:
        step: Magnitude of one pair score.
        bias: Regressions smaller than this count as progress.
        flip: Probability of flipping a pair's sign (seeded).
        seed: Seed of the flips.
        stride: Pair stride used by ``judge_episode`` (every ``stride``-th state).
        base: The judge to degrade (privileged by default).
    """

    name = "pairwise"

    def __init__(
        self,
        step: float = 0.02,
        bias: float = 0.01,
        flip: float = 0.0,
        seed: int = 0,
        stride: int = 1,
        base: Judge | None = None,
    ) -> None:
        super().__init__(base)
        if step <= 0 or bias < 0 or not 0 <= flip <= 1 or stride < 1:
            raise ValueError(
                f"need step > 0, bias >= 0, 0 <= flip <= 1, stride >= 1; got step={step}, "
                f"bias={bias}, flip={flip}, stride={stride}"
            )
        self.step, self.bias, self.flip = float(step), float(bias), float(flip)
        self.seed, self.stride = int(seed), int(stride)
        self._rng = np.random.default_rng(self.seed)
        self._prev_phi: float | None = None
        self._estimate = 0.0

    def _reset(self, context: JudgeContext) -> None:
        super()._reset(context)
        episode_seed = -1 if context.seed is None else int(context.seed)
        self._rng = np.random.default_rng([self.seed, episode_seed + 1, context.episode])
        self._prev_phi = None

    def pair_score(self, phi_i: float, phi_j: float) -> float:
        """p(x_i, x_j) from the two states' base Φ (seeded flips)."""
        score = self.step if phi_j - phi_i >= -self.bias else -self.step
        if self.flip and self._rng.random() < self.flip:
            score = -score
        return score

    # pairwise scores depend on the judge's own sequence of calls: the default fast path
    # (its _observe, the base judged through observe) keeps one implementation
    _fast = Judge._fast
    _explain = Judge._explain

    def _observe(self, transition: Transition) -> JudgeSignal:
        signal = self.base.observe(transition)
        phi = self._phi(signal.phi)
        if self._prev_phi is None:
            score, self._estimate = 0.0, phi
        else:
            score = self.pair_score(self._prev_phi, phi)
            self._estimate = float(np.clip(self._estimate + score, 0.0, 1.0))
        self._prev_phi = phi
        details = {"base_phi": signal.phi, "pair_score": score, **signal.details}
        reason = f"pairwise Φ̂ {self._estimate:.3f} (base {signal.phi:.3f}); {signal.reason}"
        return JudgeSignal(score, self._estimate, signal.verdict, reason, details)

    def _judge_episode(self, record: EpisodeRecord) -> JudgeSignal:
        phi = [p for p in record.progress if p is not None]
        if len(phi) < 2:
            raise ValueError(
                "the record has fewer than two privileged Φ values (info['progress']); record "
                "a SimEnv episode with JudgeRecord"
            )
        sampled = phi[:: self.stride]
        if (len(phi) - 1) % self.stride:
            sampled.append(phi[-1])
        total = sum(self.pair_score(a, b) for a, b in zip(sampled, sampled[1:], strict=False))
        estimate = float(np.clip(phi[0] + total, 0.0, 1.0))
        pairs, delta = len(sampled) - 1, phi[-1] - phi[0]
        details = {
            "stride": self.stride,
            "pairs": pairs,
            "pairwise_total": total,
            "true_delta": delta,
        }
        reason = f"pairwise total {total:+.3f} over {pairs} pairs vs true ΔΦ {delta:+.3f}"
        return JudgeSignal(total, estimate, record.verdict, reason, details)
