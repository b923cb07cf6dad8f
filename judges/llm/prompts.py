"""Prompts of the LLM judges: the VERGSA plan check and the EQA-RM episode judgement.

Why they live next to the judges (and not with the proposer prompts in ``tasks``): a judge
must be usable on any client without importing the task layer, and a prompt is part of
what a judge *is* — changing it changes every score, so it is versioned with the judge
(:data:`PROMPT_VERSION`, recorded in every signal's details).

Plan prompt (``docs/methods.md`` (vergsa)): the task, the scene's objects, each object's
articulation tree, the allowed APIs, the subtask's kind, name and code, the list of error
kinds to check, and "answer with a single number: 1 / 0 / 0.5".

Episode prompt (``docs/methods.md`` (eqarm)): the task, its target part (when the context
names one in ``extra["target"]``), joint ranges, the claimed outcome, the ordered steps
(gripper events: suction on/off, grasps, releases) and N keyframes, each a text summary of
the privileged state the episode recorded (gripper position, suction, held part, joint
values as a fraction of their range). Output ``<critique>…</critique><score>0–10</score>``
with the rubric 60% outcome, 40% process.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..context import JudgeContext

__all__ = [
    "ALLOWED_APIS",
    "DEFAULT_CLAIM",
    "EPISODE_SCHEMA",
    "PLAN_SCHEMA",
    "PROMPT_VERSION",
    "episode_messages",
    "keyframe_indices",
    "plan_messages",
    "state_events",
    "summarize_state",
]

PROMPT_VERSION = "simjudge.llm-judge/1"
"""Changes whenever a prompt text changes (scores are comparable within one version)."""

ALLOWED_APIS = """\
- primitives: grasp_object(self, object_name), grasp_object_link(self, object_name, link_name),
  approach_object_link(self, object_name, link_name), release_grasp(self),
  check_grasped(self, object_name, link_name=None)
- reward/success: get_eef_pos(self), get_position(self, object_name),
  get_orientation(self, object_name), get_link_state(self, object_name, link_name),
  get_joint_state(self, object_name, joint_name), get_joint_limit(self, object_name, joint_name),
  get_bounding_box(self, object_name), get_bounding_box_link(self, object_name, link_name),
  in_bbox(self, position, bbox_low, bbox_high)
- numpy (np), math, and ordinary control flow"""
"""The allowed API list of the VERGSA judge prompt."""

DEFAULT_CLAIM = "The robot reports that it completed the task."
"""Claimed outcome shown when a record carries none (``outcome["claimed"]``)."""

PLAN_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["score"],
    "properties": {"score": {"enum": [0, 0.5, 1]}},
}
"""JSON schema of a plan judgement in ``json_mode`` (constrained decoding where supported)."""

EPISODE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["critique", "score"],
    "properties": {
        "critique": {"type": "string", "maxLength": 400},
        "score": {"enum": list(range(11))},
    },
}
"""JSON schema of an episode judgement in ``json_mode``: small local models follow a grammar
far more reliably than a tag format."""

_PLAN_JSON = 'Answer as JSON only: {"score": 1}, {"score": 0} or {"score": 0.5}.'
_EPISODE_JSON = (
    'Reply as JSON only: {"critique": "<your critique>", "score": N} with N an integer 0-10.'
)

_PLAN_SYSTEM = (
    "You are a meticulous reviewer of code that supervises robot skills in simulation. "
    "You check one subtask of a task's solution for errors and answer with a single number."
)
_PLAN_CHECKS = """\
Check the subtask for these errors:
1. A primitive subtask that does not assign the primitive's result to `rgbs, final_state`,
   or that does not set `success`.
2. A reward subtask that is missing reward components or the success condition, or whose
   reward components are badly weighted (e.g. paying the robot to move away).
3. Object, link or joint names that are not in the scene or the articulation tree above.
4. Calls to APIs outside the allowed list.
5. Grammatical (syntax) or logical errors, e.g. moving a joint the wrong way for the task.

Answer with a single number and nothing else: 1 if the subtask has no errors, 0 if it has
errors, 0.5 only if you are genuinely uncertain."""

_EPISODE_SYSTEM = (
    "You judge whether a robot manipulation episode achieved its task. You see the task, "
    "the robot's claim and text summaries of keyframes of the episode's state."
)
_EPISODE_RUBRIC = """\
Score the episode from 0 to 10: 60% for the outcome (is the task achieved in the final
keyframe?) and 40% for the process (steady progress towards the target part, no undoing
of progress, steps consistent with the claim). Write a short critique first.
Reply exactly as: <critique>your critique</critique><score>N</score> with N an integer 0-10."""


def plan_messages(
    kind: str, code: str, context: JudgeContext, json_mode: bool = False
) -> list[dict[str, str]]:
    """Chat messages asking for the VERGSA 1 / 0 / 0.5 judgement of one subtask.

    With ``json_mode`` the answer is requested as ``{"score": ...}`` (:data:`PLAN_SCHEMA`).
    """
    lines = []
    if context.task_name or context.task:
        lines.append(f"Task: {context.task_name}. {context.task}".strip(". ").strip() + ".")
    if context.object_names:
        lines.append(f"Objects in the scene: {', '.join(context.object_names)}")
    for obj, text in context.articulation.items():
        lines.append(f"Articulation tree of {obj}:\n{text.strip()}")
    for obj, links in context.links.items():
        if obj not in context.articulation:
            lines.append(f"{obj}: links {list(links)}, movable joints "
                         f"{list(context.joints.get(obj, ()))}")
    lines.append(f"Allowed APIs:\n{ALLOWED_APIS}")
    name = f" '{context.subtask_name}'" if context.subtask_name else ""
    lines.append(f"Subtask{name} (kind: {kind}):\n```python\n{code.strip()}\n```")
    lines.append(_PLAN_CHECKS)
    if json_mode:
        lines.append(_PLAN_JSON)
    return [
        {"role": "system", "content": _PLAN_SYSTEM},
        {"role": "user", "content": "\n\n".join(lines)},
    ]


def keyframe_indices(n: int, k: int = 5) -> list[int]:
    """``k`` indices spread evenly over ``n`` steps, first and last included (all if n ≤ k)."""
    if n <= 0:
        return []
    if n <= k or k < 2:
        return list(range(n)) if n <= k else [n - 1]
    return sorted({round(i * (n - 1) / (k - 1)) for i in range(k)})


def _limits(context: Mapping[str, Any]) -> dict[tuple[str, str], tuple[float, float]]:
    out = {}
    for obj, tree in (context.get("trees") or {}).items():
        for joint in tree.get("joints", ()):
            if joint.get("type") != "fixed":
                lo, hi = sorted((float(joint["lower"]), float(joint["upper"])))
                out[(obj, joint["name"])] = (lo, hi)
    return out


def summarize_state(
    state: Mapping[str, Any] | None, limits: Mapping[tuple[str, str], tuple[float, float]]
) -> str:
    """One line from a recorded privileged state summary (``info["state"]``)."""
    if not state:
        return "no state recorded"
    parts = []
    eef = state.get("eef_pos")
    if eef is not None:
        parts.append("gripper at (" + ", ".join(f"{float(v):.3f}" for v in eef) + ")")
    parts.append("suction on" if state.get("suction") else "suction off")
    held = state.get("grasped")
    parts.append(f"holding {held[0]}/{held[1]}" if held else "holding nothing")
    for obj, joints in (state.get("joints") or {}).items():
        values = []
        for joint, value in joints.items():
            lo_hi = limits.get((obj, joint))
            share = ""
            if lo_hi and lo_hi[1] > lo_hi[0]:
                fraction = (float(value) - lo_hi[0]) / (lo_hi[1] - lo_hi[0])
                share = f" ({100 * fraction:.0f}% of range)"
            values.append(f"{joint}={float(value):.3f}{share}")
        if values:
            parts.append(f"{obj}: " + ", ".join(values))
    return "; ".join(parts)


def state_events(states: Sequence[Mapping[str, Any] | None], limit: int = 12) -> list[str]:
    """Gripper events along the episode: suction switched, part grasped or let go."""
    events: list[str] = []
    prev_suction = False
    prev_held: tuple[Any, ...] | None = None
    for t, state in enumerate(states):
        if not state:
            continue
        suction, held = bool(state.get("suction")), state.get("grasped")
        held = tuple(held) if held else None
        if suction != prev_suction:
            events.append(f"t={t}: suction {'on' if suction else 'off'}")
        if held != prev_held:
            if held:
                events.append(f"t={t}: grasped {held[0]}/{held[1]}")
            elif prev_held:
                events.append(f"t={t}: let go of {prev_held[0]}/{prev_held[1]}")
        prev_suction, prev_held = suction, held
    if len(events) > limit:
        events = events[: limit - 1] + [f"... ({len(events) - limit + 1} more events)"]
    return events


def _target_line(context: Mapping[str, Any]) -> str | None:
    target = (context.get("extra") or {}).get("target")
    if not target:
        return None
    if isinstance(target, str):
        return f"Target: {target}"
    parts = [str(target.get("object", ""))]
    if target.get("link"):
        parts.append(f"link {target['link']}")
    if target.get("joint"):
        parts.append(f"moved by {target['joint']}")
    if target.get("into"):
        parts.append(f"into {target['into']}")
    return "Target: " + ", ".join(p for p in parts if p)


def episode_messages(
    steps: Sequence[Mapping[str, Any] | None],
    context: Mapping[str, Any],
    claim: str | None = None,
    keyframes: int = 5,
    json_mode: bool = False,
) -> list[dict[str, str]]:
    """Chat messages asking for the EQA-RM critique and 0–10 score of an episode.

    Args:
        steps: The recorded state summary of every step (``StepRecord.state``), in order.
        context: The record's context dict (:meth:`JudgeContext.to_dict`).
        claim: The claimed outcome (default :data:`DEFAULT_CLAIM`).
        keyframes: Number of keyframes N shown.
        json_mode: Ask for ``{"critique", "score"}`` JSON (:data:`EPISODE_SCHEMA`) instead of
            the tags.
    """
    limits = _limits(context)
    name, task = context.get("task_name") or "", context.get("task") or ""
    lines = [f"Task: {name}. {task}".strip(". ").strip() + "."]
    target = _target_line(context)
    if target:
        lines.append(target)
    if limits:
        ranges = [f"{o}.{j} in [{lo:.3f}, {hi:.3f}]" for (o, j), (lo, hi) in limits.items()]
        lines.append("Joint ranges (lower limit = closed / released): " + "; ".join(ranges[:8]))
    lines.append(f"Claimed outcome: {claim or DEFAULT_CLAIM}")
    events = state_events(steps)
    lines.append(f"Steps ({len(steps)} states): " + ("; ".join(events) if events else
                                                     "no gripper events"))
    frames = [f"Keyframe {i + 1} (t={t}): {summarize_state(steps[t], limits)}"
              for i, t in enumerate(keyframe_indices(len(steps), keyframes))]
    lines.append("\n".join(frames) if frames else "No keyframes were recorded.")
    lines.append(_EPISODE_RUBRIC.rsplit("\n", 1)[0] + "\n" + _EPISODE_JSON if json_mode
                 else _EPISODE_RUBRIC)
    return [
        {"role": "system", "content": _EPISODE_SYSTEM},
        {"role": "user", "content": "\n\n".join(lines)},
    ]
