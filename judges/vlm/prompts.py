"""Prompts of the server-VLM judges: a keyframe's progress, an episode's score, a preference.

Every prompt is a system message plus one user message whose content is a list of parts:
text and ``image_url`` PNG data URLs (:mod:`.images`). The wording is part of what a judge
*is* (it changes every score), so it is versioned: :data:`PROMPT_VERSION` is recorded in
every signal's details.

* step (``vlm-step``): the task, optionally the episode's first frame as a reference
  ("the start"), the current frame; answer ``{"progress": 0-100, "reason": "..."}``.
* episode (``image-episode``, EQA-RM): the task, the claimed outcome, N keyframes in
  order; answer ``<critique>...</critique><score>0-10</score>`` (60% outcome, 40% process),
  or ``{"critique", "score"}`` JSON in ``json_mode``.
* preference (``preference``): the task, episode A's keyframe strip, then episode B's,
  both from the same start; answer ``{"preference": "A"|"B"|"tie", "reason": "..."}``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..llm.prompts import DEFAULT_CLAIM
from .images import image_part, text_part

__all__ = [
    "PREFERENCE_SCHEMA",
    "PROGRESS_SCHEMA",
    "PROMPT_VERSION",
    "episode_image_messages",
    "preference_messages",
    "step_messages",
]

PROMPT_VERSION = "simjudge.vlm-judge/1"
"""Changes whenever a prompt text changes (scores are comparable within one version)."""

PROGRESS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["progress", "reason"],
    "properties": {
        "progress": {"type": "integer", "minimum": 0, "maximum": 100},
        "reason": {"type": "string", "maxLength": 200},
    },
}
"""JSON schema of a progress estimate (sent as ``response_format`` in ``json_mode``)."""

PREFERENCE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["preference", "reason"],
    "properties": {
        "preference": {"enum": ["A", "B", "tie"]},
        "reason": {"type": "string", "maxLength": 300},
    },
}
"""JSON schema of a preference (sent as ``response_format`` in ``json_mode``)."""

_STEP_SYSTEM = (
    "You estimate how far a robot has progressed on a manipulation task from camera images "
    "of a simulated scene."
)
_STEP_ASK = (
    "Estimate the task progress shown in the current image as a percentage: 0 = nothing done "
    "yet (as at the start), 100 = the task is fully achieved. Judge only what is visible. "
    'Reply as JSON only: {"progress": N, "reason": "<one short sentence>"} with N an integer '
    "0-100."
)
_EPISODE_SYSTEM = (
    "You judge whether a robot manipulation episode achieved its task. You see the task, the "
    "robot's claim and keyframes of the episode as camera images, in time order."
)
_EPISODE_RUBRIC = (
    "Score the episode from 0 to 10: 60% for the outcome (is the task achieved in the last "
    "keyframe?) and 40% for the process (steady progress towards the target part, no undoing "
    "of progress, consistent with the claim). Write a short critique first."
)
_EPISODE_TAGS = "Reply exactly as: <critique>your critique</critique><score>N</score> with N 0-10."
_EPISODE_JSON = (
    'Reply as JSON only: {"critique": "<your critique>", "score": N} with N an integer 0-10.'
)
_PREF_SYSTEM = (
    "You compare two robot manipulation episodes of the same task, started from the same "
    "state, from keyframes of each episode as camera images in time order."
)
_PREF_ASK = (
    "Which episode made more progress towards the task (prefer the one that achieved it; if "
    "both did, the one that got there more directly; if neither, the one that got and kept "
    'more)? Answer "tie" when you cannot tell them apart. Reply as JSON only: '
    '{"preference": "A" | "B" | "tie", "reason": "<one short sentence>"}.'
)


def _task_line(task: str) -> str:
    task = " ".join(str(task).split())
    return f"Task: {task}" if task else "Task: (not given)"


def step_messages(
    task: str, frame: Any, reference: Any = None, size: int | None = 224
) -> list[dict[str, Any]]:
    """Messages asking for the 0–100 progress of ``frame`` (``reference``: the first frame)."""
    parts: list[dict[str, Any]] = [text_part(_task_line(task))]
    if reference is not None:
        parts += [text_part("Start of the episode:"), image_part(reference, size)]
    parts += [text_part("Current image:"), image_part(frame, size), text_part(_STEP_ASK)]
    return [{"role": "system", "content": _STEP_SYSTEM}, {"role": "user", "content": parts}]


def episode_image_messages(
    task: str,
    frames: Sequence[Any],
    claim: str | None = None,
    size: int | None = 224,
    json_mode: bool = False,
) -> list[dict[str, Any]]:
    """EQA-RM messages: the task, the claim and the keyframes (already chosen) as images."""
    parts: list[dict[str, Any]] = [
        text_part(_task_line(task)),
        text_part(f"Claimed outcome: {claim or DEFAULT_CLAIM}"),
    ]
    for i, frame in enumerate(frames):
        parts += [text_part(f"Keyframe {i + 1} of {len(frames)}:"), image_part(frame, size)]
    parts.append(text_part(_EPISODE_RUBRIC + " " + (_EPISODE_JSON if json_mode else _EPISODE_TAGS)))
    return [{"role": "system", "content": _EPISODE_SYSTEM}, {"role": "user", "content": parts}]


def preference_messages(
    task: str, frames_a: Sequence[Any], frames_b: Sequence[Any], size: int | None = 224
) -> list[dict[str, Any]]:
    """Both keyframe strips (A first) in one request, asking for A / B / tie and a reason."""
    parts: list[dict[str, Any]] = [text_part(_task_line(task))]
    for name, frames in (("A", frames_a), ("B", frames_b)):
        parts.append(text_part(f"Episode {name}, {len(frames)} keyframes in time order:"))
        parts += [image_part(frame, size) for frame in frames]
    parts.append(text_part(_PREF_ASK))
    return [{"role": "system", "content": _PREF_SYSTEM}, {"role": "user", "content": parts}]
