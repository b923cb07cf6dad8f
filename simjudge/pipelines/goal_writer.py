"""An LLM goal writer: a task's goal as schema-checked JSON, never as code.

The second, optional path to a :class:`~simjudge.tasks.spec.goal.TaskGoal` besides the
deterministic parser (:func:`~simjudge.tasks.spec.goal_parser.derive_goal`). The model is
shown the task's name, description and articulation tree and answers with JSON whose
schema is built from that tree: every target names one of the object's movable joints, a
direction and an amount word from the vocabulary
(:data:`~simjudge.tasks.spec.goal.AMOUNTS`). The amount becomes an interval exactly as
the parser's does, the grasp link comes from the tree (a handle fixed on the part), and
the goal is recorded with ``source="llm"``. A reply that never validates gives no goal.

Example:
    >>> from simjudge.llm import ScriptedClient
    >>> reply = '{"targets": [{"joint": "joint_1", "direction": "open", "amount": "a quarter"}]}'
    >>> d = write_goal(ScriptedClient([reply]), "Turn Dial", "Turn the dial a bit.", "Safe-0")
    >>> t = d.goal.targets[0]
    >>> d.goal.source, t.joint, t.link, (t.low, t.high)
    ('llm', 'joint_1', 'link_1', (0.15, 0.35))
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from simjudge.envs.catalogue import default_catalogue
from simjudge.llm import LLMClient, StructuredOutputError, complete_structured
from simjudge.tasks.spec import (
    AMOUNTS,
    GoalDerivation,
    JointTarget,
    TaskGoal,
    amount_interval,
    object_parts,
)

__all__ = ["GOAL_WRITER_PROMPT", "goal_schema", "write_goal"]

GOAL_WRITER_PROMPT = """\
You define how a robot task is verified. Given a task and the articulation tree of its
object, list the joints that must move and how far, as JSON. A joint's lower limit is its
closed / released / natural state. For each target give the joint (one of the movable
joints named in the schema), the direction ("open" moves it up from its start towards the
upper limit, "close" moves it down) and an amount word:
open/press/turn (clearly open, pressed or turned), close (closed), fully (at the limit),
halfway, a quarter, three quarters, slightly (a small but clear move), partly.
Name only the joints the task is about; name several only if the task asks for several."""


def goal_schema(joints: list[str]) -> type[BaseModel]:
    """The JSON model of an answer for an object whose movable joints are ``joints``."""
    # Field types built at run time: checked by pydantic, opaque to a static checker.
    target_fields: dict[str, Any] = {
        "joint": (Literal[tuple(joints)], ...),
        "direction": (Literal["open", "close"], ...),
        "amount": (Literal[tuple(AMOUNTS)], ...),
    }
    target = create_model("GoalTargetOut", __config__=ConfigDict(extra="forbid"), **target_fields)
    goal_fields: dict[str, Any] = {
        "targets": (list[target], Field(min_length=1)),
        "explanation": (str, ""),
    }
    return create_model("GoalOut", __config__=ConfigDict(extra="forbid"), **goal_fields)


def write_goal(
    client: LLMClient,
    name: str,
    description: str,
    asset: str,
    object_name: str | None = None,
    *,
    retries: int = 2,
    max_tokens: int = 256,
    seed: int = 0,
) -> GoalDerivation:
    """Ask an LLM for a task's goal as JSON checked against the object's tree.

    Args:
        client: Any LLM client (local, OpenAI-compatible, or behind the replay cache).
        name: Task name.
        description: Task description.
        asset: Catalogue id (or category) of the main object.
        object_name: Its scene name (default: the category).
        retries: Re-prompts with the validation error.
        max_tokens: Token budget per attempt.
        seed: Sampling seed (temperature 0).

    Returns:
        The goal (``source="llm"``) with the model's explanation, or None with the reason.
    """
    catalogue = default_catalogue()
    tree = (catalogue.get(asset) if asset in catalogue else catalogue.by_category(asset)[0]).tree
    if tree is None or not tree.movable_joints:
        return GoalDerivation(None, [], [f"{asset} has no movable joint for an LLM goal"])
    parts = {p.joint: p for p in object_parts(asset)}
    schema = goal_schema(list(parts))
    user = (f"Task name: {name}\nDescription: {description or name}\n\n{tree.to_text()}\n"
            "Which joints must end where?")
    messages = [{"role": "system", "content": GOAL_WRITER_PROMPT},
                {"role": "user", "content": user}]
    try:
        output, attempts = complete_structured(client, messages, schema, retries=retries,
                                               max_tokens=max_tokens, seed=seed)
    except StructuredOutputError as exc:
        return GoalDerivation(None, [], [f"the LLM gave no valid goal: {exc}"])
    obj = object_name or tree.category
    targets = [_target(obj, parts[t.joint], t) for t in output.targets]
    reasons = [f"LLM ({len(attempts)} attempt(s)): {output.explanation}".rstrip(": ")]
    reasons += [f"{t.joint}: {t.direction}, amount '{t.amount}' -> [{t.low:.2f}, {t.high:.2f}]"
                for t in targets]
    goal = TaskGoal(task=name, targets=tuple(targets), source="llm",
                    explanation="; ".join(reasons))
    return GoalDerivation(goal, reasons, [])


def _target(obj: str, part: Any, out: Any) -> JointTarget:
    low, high = amount_interval(out.amount, out.direction, part.semantic)
    return JointTarget(object=obj, joint=part.joint, part=part.link, link=part.grip,
                       semantic=f"{part.kind} {part.semantic}", low=low, high=high,
                       direction=out.direction, amount=out.amount,
                       requires_grasp=out.amount != "press" and not part.spring,
                       spring=part.spring)
