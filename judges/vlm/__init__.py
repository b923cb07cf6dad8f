"""Judges over images served by a VLM: ``vlm-step``, ``image-episode``, ``preference``.

* :class:`VLMStepJudge` (``vlm-step``): keyframes every k steps → a 0–100 progress
  estimate with a reason from any OpenAI-compatible server with image input; Φ = estimate
  / 100, held between keyframes; K-sample test-time scaling with the spread in the details.
* :class:`ImageEpisodeJudge` (``image-episode``): EQA-RM critique + 0–10 score over N = 5
  keyframe images of a whole episode.
* :class:`TerminalReward` (``terminal-reward``): any episode judge's score as the reward
  of the terminal step (0 before), so episode judges can wrap RL.
* :class:`PreferenceJudge` (``preference``): A / B / tie between two episodes of one task,
  from Φ traces of any potential judge (documented tie margin) or from a server VLM.

Clients are injected or built from ``server``/``base_url``/``cache`` (:mod:`.base`); every
exchange goes through :mod:`simjudge.llm` (replay cache, JSONL log).
"""

from __future__ import annotations

from .base import VLMServerError, build_client
from .episode import FramedEpisodeRecord, ImageEpisodeJudge
from .images import VLMFrameError, image_part, image_parts_of, png_bytes
from .parse import PREFERENCES, ParsedPreference, parse_preference, parse_progress
from .preference import PREFERENCE_STATISTICS, PreferenceJudge, phi_trace
from .prompts import PREFERENCE_SCHEMA, PROGRESS_SCHEMA, PROMPT_VERSION
from .step import VLMStepJudge
from .terminal_reward import TerminalReward, make_terminal_reward

__all__ = [
    "PREFERENCES",
    "PREFERENCE_SCHEMA",
    "PREFERENCE_STATISTICS",
    "PROGRESS_SCHEMA",
    "PROMPT_VERSION",
    "FramedEpisodeRecord",
    "ImageEpisodeJudge",
    "ParsedPreference",
    "PreferenceJudge",
    "TerminalReward",
    "VLMFrameError",
    "VLMServerError",
    "VLMStepJudge",
    "build_client",
    "image_part",
    "image_parts_of",
    "make_terminal_reward",
    "parse_preference",
    "parse_progress",
    "phi_trace",
    "png_bytes",
]
