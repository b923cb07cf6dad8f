"""Evaluate any live judge on recorded states: pulse-pair accuracy and Φ̂ traces.

A state is judged by restoring it in an env of its task (``env.set_state``), reading the
env's ``info`` (as a live wrapper would pass it) and calling the judge's ``observe`` on a
:class:`~simjudge.judges.signals.Transition` built from the env's
:class:`~simjudge.envs.state_api.StateView` (plus a rendered, optionally corrupted frame
for judges with ``needs_frames``). Nothing is stepped, so a judge sees exactly the
recorded state (or its noisy copy, :func:`~simjudge.judges.bench.noise.perturb_state`).

Pair prediction (opd.md): sign(Φ̂(after) − Φ̂(before)); ties, a missing Φ̂ or an error count
as wrong. Neutral pairs are right when |Φ̂(after) − Φ̂(before)| < ``neutral_tol``. The
judge is reset before every pair with the task's context, seeded per pair
(``context.for_episode(seed, index)``), so stochastic judges are reproducible.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..base import Judge
from ..context import JudgeContext
from ..signals import JudgeSignal, Transition
from .episodes import BenchEpisode
from .noise import corrupt_image, perturb_state
from .pairs import GAP_STRATA, HOP_BINS, PulsePair

__all__ = ["FrameSource", "PairResult", "judge_states", "score_pairs", "summarize_pairs",
           "uses_first_frame"]

EnvSource = Mapping[str, Any] | Callable[[str], Any]
"""Task env id -> a built env of that task (a mapping or a function)."""

FrameSource = Callable[[int, Any], Any]
"""(index of the observed state, the restored env) -> the frame the judge sees."""

FrameVariant = Callable[[np.random.Generator], FrameSource]
"""Makes the :data:`FrameSource` of one pair from the pair's random generator."""


def uses_first_frame(judge: Judge) -> bool:
    """Whether ``judge`` reads the episode's first frame as a reference (``image-progress``).

    Such a judge sees the episode's reset state before a pair's two states, as it would
    live (it has watched the episode from its start).
    """
    return bool(judge.needs_frames and getattr(judge, "reference_first_frame", False))

_ZERO_ACTION = np.zeros(7, dtype=np.float32)


@dataclass(frozen=True)
class PairResult:
    """A judge's answer on one pulse pair.

    Attributes:
        pair: The pair.
        phi_before: Φ̂ of the first state (None if the judge gave none).
        phi_after: Φ̂ of the second state.
        correct: Whether the prediction matches the label.
    """

    pair: PulsePair
    phi_before: float | None
    phi_after: float | None
    correct: bool


def _env(envs: EnvSource, task: str) -> Any:
    return envs(task) if callable(envs) else envs[task]


def judge_states(
    judge: Judge,
    env: Any,
    context: JudgeContext,
    states: Sequence[Any],
    *,
    state_sigma: float = 0.0,
    image_alpha: float = 0.0,
    rng: np.random.Generator | None = None,
    frames: FrameSource | None = None,
) -> list[JudgeSignal]:
    """Reset ``judge`` with ``context`` and observe ``states`` (SimStates) in order.

    Args:
        judge: A live judge.
        env: A built env of the states' task (``render_mode="rgb_array"`` for judges that
            need frames).
        context: The judge's context (goal, names, seed).
        states: States to restore, step 0 first.
        state_sigma: State noise σ (:func:`perturb_state`); 0 = clean.
        image_alpha: Image noise α (:func:`corrupt_image`) for judges that need frames.
        rng: Noise source (required when a noise level is > 0).
        frames: Makes each frame instead of ``env.render()`` (occlusion, other cameras);
            image noise is added after it.
    """
    base = getattr(env, "unwrapped", env)
    judge.reset(context)
    signals = []
    for step, state in enumerate(states):
        if state_sigma > 0:
            assert rng is not None, "rng is required when a noise level is > 0"
            state = perturb_state(state, state_sigma, rng)
        base.set_state(state)
        frame = None
        if judge.needs_frames:
            frame = base.render() if frames is None else frames(step, base)
            if frame is not None and image_alpha > 0:
                assert rng is not None, "rng is required when a noise level is > 0"
                frame = corrupt_image(frame, image_alpha, rng)
        transition = Transition(step=step, view=base.view, info=base.get_info(), frame=frame,
                                action=None if step == 0 else _ZERO_ACTION)
        signals.append(judge.observe(transition))
    return signals


def _correct(pair: PulsePair, before: float | None, after: float | None,
             neutral_tol: float) -> bool:
    if before is None or after is None:
        return False
    diff = after - before
    if pair.label == 0:
        return abs(diff) < neutral_tol
    return bool(np.sign(diff) == pair.label)


def score_pairs(
    judge: Judge,
    pairs: Sequence[PulsePair],
    episodes: Sequence[BenchEpisode],
    envs: EnvSource,
    contexts: Mapping[str, JudgeContext],
    *,
    state_sigma: float = 0.0,
    image_alpha: float = 0.0,
    neutral_tol: float = 0.002,
    seed: int = 0,
    variant: FrameVariant | None = None,
) -> list[PairResult]:
    """The judge's prediction on every pair (see the module docstring).

    Args:
        judge: A live judge that gives Φ (``provides_potential``).
        pairs: From :func:`~simjudge.judges.bench.pairs.build_pulse_pairs` on ``episodes``.
        episodes: The episodes the pairs index.
        envs: Task env id -> env.
        contexts: Task env id -> the judge context of that task.
        state_sigma: State noise σ.
        image_alpha: Image noise α (judges with ``needs_frames`` only).
        neutral_tol: |ΔΦ̂| below which a neutral pair counts as recognised.
        seed: Seed of the judge's per-pair context and of the noise.
        variant: Frame variant of judges that need frames (occlusion, viewpoint).

    Raises:
        ValueError: The judge gives no Φ.
    """
    if not judge.provides_potential:
        raise ValueError(f"{judge.label} gives no progress potential Φ; pulse pairs score "
                         "potential judges (provides_potential=True)")
    results = []
    for index, pair in enumerate(pairs):
        episode = episodes[pair.episode]
        rng = np.random.default_rng([seed, index])
        context = contexts[episode.task].for_episode(seed * 100_003 + index, index)
        states = [episode.state(pair.before), episode.state(pair.after)]
        if uses_first_frame(judge):
            states.insert(0, episode.state(0))
        frames = variant(np.random.default_rng([seed, index, 1])) if variant else None
        try:
            signals = judge_states(judge, _env(envs, episode.task), context, states,
                                   state_sigma=state_sigma, image_alpha=image_alpha, rng=rng,
                                   frames=frames)
            before, after = signals[-2].phi, signals[-1].phi
        except Exception:  # noqa: BLE001 - a judge error is a wrong answer, not a crash
            before = after = None
        results.append(PairResult(pair, before, after, _correct(pair, before, after,
                                                                neutral_tol)))
    return results


def _accuracy(results: Sequence[PairResult]) -> float | None:
    return float(np.mean([r.correct for r in results])) if results else None


def summarize_pairs(results: Sequence[PairResult]) -> dict[str, Any]:
    """Accuracy per bin, overall (unweighted mean of the bins), per kind/label/gap stratum.

    ``overall`` is None when a bin is empty. ``invalid`` counts pairs without a Φ̂.
    """
    labelled = [r for r in results if r.pair.label != 0]
    bins = {name: _accuracy([r for r in labelled if r.pair.bin == name])
            for name, _, _ in HOP_BINS}
    counts = {name: sum(r.pair.bin == name for r in labelled) for name, _, _ in HOP_BINS}
    values = [v for v in bins.values() if v is not None]
    return {
        "overall": float(np.mean(values)) if len(values) == len(bins) else None,
        "bins": bins,
        "n": counts,
        "by_kind": {k: _accuracy([r for r in labelled if r.pair.kind == k])
                    for k in ("forward", "reversed", "regression")},
        "by_label": {"+1": _accuracy([r for r in labelled if r.pair.label > 0]),
                     "-1": _accuracy([r for r in labelled if r.pair.label < 0])},
        "by_gap": {s: _accuracy([r for r in labelled if r.pair.stratum == s])
                   for s, _, _ in GAP_STRATA},
        "neutral": _accuracy([r for r in results if r.pair.label == 0]),
        "invalid": sum(r.phi_before is None or r.phi_after is None for r in results),
    }
