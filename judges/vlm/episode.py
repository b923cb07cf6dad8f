"""``image-episode``: EQA-RM's generative episode judge over keyframe *images*.

N (default 5) keyframes spread evenly over the episode (first and last included) are sent
as images with the task and the claimed outcome; the reply
``<critique>...</critique><score>0-10</score>`` (or ``{"critique", "score"}`` JSON in
``json_mode``) is parsed tolerantly (:func:`~simjudge.judges.llm.parse_episode_score`).
Φ = reward = aggregated score / 10; verdict ``success`` (≥ 7), ``failure`` (≤ 3) or
``undecided``; per-sample scores and their spread in the details (test-time scaling).

Frames come with the episode: a :class:`FramedEpisodeRecord` (an
:class:`~simjudge.judges.episode.EpisodeRecord` with ``frames``, one RGB array per step,
as :class:`~.terminal_reward.TerminalReward` collects them live), or directly through
:meth:`ImageEpisodeJudge.judge_frames`. To use it as an RL reward, wrap it in
:class:`~.terminal_reward.TerminalReward` (score on the terminal step, 0 before).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from ..episode import EpisodeRecord
from ..llm.parse import aggregate_scores, parse_episode_score
from ..llm.prompts import EPISODE_SCHEMA, keyframe_indices
from ..signals import FAILURE, SUCCESS, UNDECIDED, JudgeSignal
from .base import VLMJudgeBase
from .images import VLMFrameError
from .prompts import episode_image_messages

__all__ = ["FramedEpisodeRecord", "ImageEpisodeJudge"]


@dataclass
class FramedEpisodeRecord(EpisodeRecord):
    """An episode record with its frames (one ``(H, W, 3)`` uint8 array per recorded step).

    Frames are kept in memory only (``to_dict``/``save`` write the plain record).
    """

    frames: list[np.ndarray] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The plain record's JSON (frames are not serialised)."""
        plain = {f.name: getattr(self, f.name) for f in fields(EpisodeRecord)}
        return EpisodeRecord(**plain).to_dict()


class ImageEpisodeJudge(VLMJudgeBase):
    """EQA-RM critique + 0–10 score of an episode from N keyframe images (module docstring).

    Args:
        client: An LLM client; or name one with ``server``, ``base_url``, ``cache``,
            ``replay``, ``log`` (:mod:`.base`).
        keyframes: N keyframes shown (EQA-RM: 5).
        k: Samples per judgement (EQA-RM: 1 … 32).
        temperature: Sampling temperature (default 0 for k = 1, else 0.8).
        aggregate: ``mean`` or ``vote``.
        max_tokens: Reply budget per sample.
        seed: Seed of the first sample.
        json_mode: Ask for JSON and send the episode schema as ``response_format``.
        size: Long side of the images sent (px).
    """

    name = "image-episode"
    provides_potential = False
    needs_frames = True
    max_reward = 1.0

    def __init__(
        self,
        client: Any = None,
        keyframes: int = 5,
        k: int = 1,
        temperature: float | None = None,
        aggregate: str = "mean",
        max_tokens: int = 256,
        seed: int = 0,
        json_mode: bool = False,
        size: int | None = 224,
        server: str | None = None,
        base_url: str | None = None,
        cache: str | None = None,
        replay: str | None = None,
        log: str | None = None,
    ) -> None:
        super().__init__(client, server=server, base_url=base_url, cache=cache, replay=replay,
                         log=log, k=k, temperature=temperature, aggregate=aggregate,
                         max_tokens=max_tokens, seed=seed, json_mode=json_mode, size=size)
        if int(keyframes) < 1:
            raise ValueError(f"keyframes must be >= 1, got {keyframes}")
        self.keyframes = int(keyframes)

    def judge_frames(
        self, frames: list[Any], task: str, claim: str | None = None
    ) -> JudgeSignal:
        """Judge an episode given as its frames (all steps; keyframes are chosen here)."""
        if not frames:
            raise VLMFrameError(
                f"{self.label} got an episode without frames; record it with render_mode="
                "'rgb_array' (TerminalReward collects frames live) or pass judge_frames(frames)"
            )
        index = keyframe_indices(len(frames), self.keyframes)
        messages = episode_image_messages(task, [frames[i] for i in index], claim, self.size,
                                          self.json_mode)
        parsed, replies = self.ask(messages, parse_episode_score, EPISODE_SCHEMA)
        agg = aggregate_scores([p.score for p in parsed], self.aggregate, 1.0)
        details = {
            "score": agg.score,
            "samples": list(agg.samples),
            "valid": agg.n_valid,
            "invalid": len(parsed) - agg.n_valid,
            "spread": agg.spread,
            "format_ok": [p.format_ok for p in parsed],
            "parsed_by": [p.how for p in parsed],
            "critiques": [p.critique[:600] for p in parsed],
            "clipped": [p.clipped for p in parsed],
            "keyframe_steps": index,
            **self.common_details(replies),
        }
        if agg.score is None:
            reason = f"no parseable 0-10 score in {self.k} repl{'y' if self.k == 1 else 'ies'}"
            return JudgeSignal(0.0, None, UNDECIDED, reason, details)
        phi = agg.score / 10.0
        verdict = SUCCESS if agg.score >= 7.0 else FAILURE if agg.score <= 3.0 else UNDECIDED
        spread = f" ± {agg.spread:.2f}" if self.k > 1 else ""
        reason = (f"VLM episode score {agg.score:.3g}/10{spread} from {len(index)} keyframes "
                  f"({agg.n_valid}/{self.k} valid)")
        return JudgeSignal(phi, phi, verdict, reason, details)

    def _judge_episode(self, record: EpisodeRecord) -> JudgeSignal:
        frames = getattr(record, "frames", None)
        context = record.context or {}
        task = str(context.get("task") or context.get("task_name") or record.task_name)
        claim = (record.outcome or {}).get("claimed")
        return self.judge_frames(list(frames or []), task, claim)
