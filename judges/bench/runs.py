"""The benchmark's sections for one judge, on cached episodes and built envs.

Which sections a judge gets follows what it supports:

- pulse pairs: live judges that give Φ (``observe`` + ``provides_potential``); image-noise
  rows only for judges that read frames (``needs_frames``), "n/a" otherwise, and for those
  judges also occlusion, viewpoint and invariance rows (:mod:`.image_rows`);
- episode scores and perturbation contrasts: judges of whole episodes
  (``judge_episode``, e.g. the LLM episode judge: score = 10·Φ) on
  :func:`~simjudge.judges.bench.episodes.to_record` records, else potential judges
  re-observing every state (score = :func:`~simjudge.judges.bench.scores.phi_episode_score`
  of their Φ̂ trace and last verdict); "n/a" for judges that do neither.

Episode judges may be expensive (an LLM call per sample), so they see a deterministic
subset of ``limit`` episodes, half successes and half failures where possible.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..base import Judge
from ..context import JudgeContext
from ..privileged import PrivilegedProgressJudge
from ..signals import SUCCESS
from .episodes import BenchEpisode, to_record
from .pairs import PulsePair
from .perturb import PERTURBATIONS, contrast_summary, perturb_order, swap_target
from .scores import ground_truth_score, phi_episode_score, scaling_curve, score_summary
from .scoring import EnvSource, _env, judge_states, score_pairs, summarize_pairs

__all__ = ["episode_mode", "episode_score", "episode_section", "pair_section", "perturb_section"]

NA = "n/a"
"""What a section reports for a judge it does not apply to."""


def pair_section(
    judge: Judge,
    pairs: Sequence[PulsePair],
    episodes: Sequence[BenchEpisode],
    envs: EnvSource,
    contexts: Mapping[str, JudgeContext],
    *,
    state_noise: Sequence[float] = (0.01,),
    image_alphas: Sequence[float] = (0.05, 0.10),
    seed: int = 0,
    image_variants: bool = True,
) -> dict[str, Any] | str:
    """Pair accuracy clean, under state noise σ and image noise α (see the module docstring).

    ``image_variants``: add the occlusion, viewpoint and invariance rows for judges that
    read frames.
    """
    if "observe" not in judge.supported() or not judge.provides_potential:
        return NA
    rows: dict[str, Any] = {}

    def run(**noise: Any) -> dict[str, Any]:
        return summarize_pairs(score_pairs(judge, pairs, episodes, envs, contexts, seed=seed,
                                           **noise))

    rows["clean"] = run()
    for sigma in state_noise:
        rows[f"state σ={sigma:g}"] = run(state_sigma=float(sigma))
    for alpha in image_alphas:
        rows[f"image α={alpha:g}"] = run(image_alpha=float(alpha)) if judge.needs_frames else NA
    if image_variants and judge.needs_frames:
        from .image_rows import image_variant_rows

        rows.update(image_variant_rows(judge, pairs, episodes, envs, contexts, seed=seed))
    return rows


def episode_mode(judge: Judge) -> str | None:
    """``episode`` (judge_episode), ``phi`` (a live potential judge) or None."""
    if "judge_episode" in judge.supported():
        return "episode"
    if "observe" in judge.supported() and judge.provides_potential:
        return "phi"
    return None


def episode_score(
    judge: Judge,
    episode: BenchEpisode,
    env: Any,
    context: JudgeContext,
    order: Sequence[int] | None = None,
    index: int = 0,
) -> tuple[float | None, list[float | None] | None]:
    """(0–10 score, per-sample scores or None) of one (reordered) episode."""
    order = list(range(len(episode))) if order is None else list(order)
    if episode_mode(judge) == "episode":
        signal = judge.judge_episode(to_record(episode, context, order))
        samples = signal.details.get("samples") if signal.details else None
        return (None if signal.phi is None else 10.0 * signal.phi), samples
    states = [episode.state(t) for t in order]
    signals = judge_states(judge, env, context.for_episode(episode.seed, index), states)
    return phi_episode_score([s.phi for s in signals], signals[-1].verdict == SUCCESS), None


def _subset(episodes: Sequence[BenchEpisode], candidates: Sequence[int], limit: int | None,
            seed: int) -> list[int]:
    if limit is None or len(candidates) <= limit:
        return list(candidates)
    rng = np.random.default_rng(seed)
    good = [i for i in candidates if episodes[i].succeeded]
    bad = [i for i in candidates if not episodes[i].succeeded]
    take_good = min(len(good), max(limit - len(bad), limit // 2))
    chosen = [good[i] for i in rng.permutation(len(good))[:take_good]]
    chosen += [bad[i] for i in rng.permutation(len(bad))[: limit - take_good]]
    return sorted(chosen)


def episode_section(
    judge: Judge,
    episodes: Sequence[BenchEpisode],
    gt: Sequence[float],
    envs: EnvSource,
    contexts: Mapping[str, JudgeContext],
    *,
    ks: Sequence[int] = (1, 3, 5),
    limit: int | None = 8,
    seed: int = 0,
) -> dict[str, Any] | str:
    """Acc@2, RMSE … of the judge's episode scores; the K curve for sampled judges."""
    mode = episode_mode(judge)
    if mode is None:
        return NA
    chosen = _subset(episodes, range(len(episodes)), limit if mode == "episode" else None, seed)
    preds, samples = [], []
    for i in chosen:
        e = episodes[i]
        score, sample = episode_score(judge, e, _env(envs, e.task), contexts[e.task], index=i)
        preds.append(score)
        samples.append(sample)
    truth = [gt[i] for i in chosen]
    summary = score_summary(preds, truth)
    summary.update(mode=mode, episodes=[episodes[i].id for i in chosen],
                   predictions=preds, ground_truth=truth)
    k = int(getattr(judge, "k", 1))
    usable = [x for x in ks if x <= k]
    complete = [s for s in samples if s is not None]
    if mode == "episode" and k > 1 and usable and len(complete) == len(samples):
        method = str(getattr(judge, "aggregate", "mean"))
        summary["scaling"] = scaling_curve(complete, truth, usable, method)
    return summary


def _ground_truth(episode: BenchEpisode, env: Any, context: JudgeContext,
                  order: Sequence[int], recompute: bool) -> float:
    if not recompute or context.goal is None:
        return ground_truth_score([episode.phi[t] for t in order], episode.success[order[-1]])
    truth = PrivilegedProgressJudge()
    signals = judge_states(truth, env, context, [episode.state(t) for t in order])
    phi = [s.phi for s in signals if s.phi is not None]
    assert len(phi) == len(signals), "the privileged judge gives Φ on every state"
    return ground_truth_score(phi, signals[-1].verdict == SUCCESS)


def perturb_section(
    judge: Judge,
    episodes: Sequence[BenchEpisode],
    gt: Sequence[float],
    envs: EnvSource,
    contexts: Mapping[str, JudgeContext],
    *,
    limit: int | None = 8,
    seed: int = 0,
    min_gt: float = 7.0,
) -> dict[str, Any] | str:
    """Contrast and directional check per perturbation on episodes with s_gt ≥ ``min_gt``.

    Each row also carries ``ground_truth``: the contrast the privileged score itself shows
    under the same perturbation (what a perfect judge would report).
    """
    mode = episode_mode(judge)
    if mode is None:
        return NA
    good = [i for i, g in enumerate(gt) if g >= min_gt]
    chosen = _subset(episodes, good, limit if mode == "episode" else None, seed)
    original = []
    for i in chosen:
        e = episodes[i]
        original.append(episode_score(judge, e, _env(envs, e.task), contexts[e.task], index=i)[0])
    rows: dict[str, Any] = {"episodes": len(chosen)}
    for kind in PERTURBATIONS:
        rng = np.random.default_rng([seed, PERTURBATIONS.index(kind)])
        scores: list[float | None] = []
        truth: list[float | None] = []
        truth_orig: list[float | None] = []
        for i in chosen:
            e = episodes[i]
            env, given = _env(envs, e.task), contexts[e.task]
            order = perturb_order(len(e), kind, rng, e.phi)
            context = swap_target(given) if kind == "wrong-target" else given
            if context is None:
                scores.append(None)
                truth.append(None)
                truth_orig.append(None)
                continue
            scores.append(episode_score(judge, e, env, context, order, index=i)[0])
            truth.append(_ground_truth(e, env, context, order, kind == "wrong-target"))
            truth_orig.append(gt[i])
        row = contrast_summary(original, scores)
        row["ground_truth"] = contrast_summary(truth_orig, truth)["contrast"]
        rows[kind] = row
    return rows
