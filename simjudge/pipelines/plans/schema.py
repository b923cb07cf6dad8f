"""The plan schema and the skill vocabulary (RoboBench's planning format).

A plan is JSON ``{"task_summary": str, "plan_step": [str, ...], "reason": str}``; each step
is one node written as a call, ``skill(object[, parameter ...])``: ``pick_up(cube)``,
``place(cube, in_box)``, ``open(drawer)``, ``turn(knob, clockwise)``,
``press(none, red_button)`` (a leading ``none`` means "no held object": the next argument
is the object). Objects are named freely (matched with each task's aliases, part/whole
and category) or by strict scene id, ``StorageFurniture/link_1``.

The vocabulary (:data:`SKILLS`) and what each skill needs and does (the symbolic tier's
precondition/effect table; the physical tier binds the same names to the simulator's
skills, see :mod:`~simjudge.pipelines.plans.physical`):

==========  ===================================  =========================================
skill       needs                                effect
==========  ===================================  =========================================
pick_up(o)  o is a free object; no free object   holding o
            held (a held part is let go first)
place(o,p)  holding o; p = ``in_X``/``on_X``      o in/on X; hand empty
grasp(o)    no free object held                  holding o (a part or an object)
release(o)  something held (else redundant)      hand empty
open(o)     o moves on a joint; no free object   o's joint open (its grasped part held)
close(o)    as open                              o's joint closed
turn(o,d)   as open                              o's joint turned (``d`` = direction)
press(o)    as open (pressed parts: no grasp)    o's joint pushed in
push(o,d)   as open                              joint towards ``d`` (default close)
pull(o,d)   as open                              joint towards ``d`` (default open)
move_to(o)  o exists                             nothing (robot-only motion)
==========  ===================================  =========================================
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from simjudge.envs.errors import SimjudgeError

__all__ = [
    "JOINT_SKILLS",
    "PLAN_JSON_SCHEMA",
    "SKILLS",
    "Plan",
    "PlanError",
    "PlanNode",
    "SkillInfo",
    "normalise_skill",
    "parse_node",
    "parse_plan",
]


class PlanError(SimjudgeError, ValueError):
    """A plan or a plan step is malformed; the message says what is wrong and how to fix it."""


@dataclass(frozen=True)
class SkillInfo:
    """One skill of the vocabulary.

    Attributes:
        name: The skill's name as plans write it.
        signature: How a plan calls it.
        needs: Preconditions, in words (the symbolic tier checks them).
        effect: What it changes, in words.
        direction: For joint skills, the default direction (``open``/``close``); else "".
    """

    name: str
    signature: str
    needs: str
    effect: str
    direction: str = ""


SKILLS: dict[str, SkillInfo] = {
    s.name: s
    for s in (
        SkillInfo("pick_up", "pick_up(object)", "a free object; no free object held",
                  "holding the object"),
        SkillInfo("place", "place(object, in_X | on_X)", "holding the object",
                  "the object in/on X, hand empty"),
        SkillInfo("grasp", "grasp(object or part)", "no free object held",
                  "holding it"),
        SkillInfo("release", "release(object)", "something held", "hand empty"),
        SkillInfo("open", "open(part)", "a part on a joint; no free object held",
                  "the joint open", "open"),
        SkillInfo("close", "close(part)", "a part on a joint; no free object held",
                  "the joint closed", "close"),
        SkillInfo("turn", "turn(part[, direction])", "a part on a joint; no free object held",
                  "the joint turned", "open"),
        SkillInfo("press", "press(part)", "a part on a joint; no free object held",
                  "the joint pushed in", "open"),
        SkillInfo("push", "push(part[, open|close])", "a part on a joint; no free object held",
                  "the joint moved (default: closed)", "close"),
        SkillInfo("pull", "pull(part[, open|close])", "a part on a joint; no free object held",
                  "the joint moved (default: open)", "open"),
        SkillInfo("move_to", "move_to(object)", "the object exists", "nothing (robot motion)"),
    )
}
"""The skill vocabulary, by name."""

JOINT_SKILLS: frozenset[str] = frozenset({"open", "close", "turn", "press", "push", "pull"})
"""Skills that move a part on a joint."""

_CALL = re.compile(r"^\s*([A-Za-z][\w \-]*?)\s*\((.*)\)[\s.;,}\]\"']*$", re.DOTALL)
"""``skill(args)``; stray closing punctuation after the call (``open(drawer)}``) is ignored."""
_NONE = {"none", "null", "nothing", "", "-"}


def normalise_skill(name: str) -> str:
    """Lower case, spaces and hyphens as underscores (``Pick Up`` -> ``pick_up``)."""
    return re.sub(r"[\s\-]+", "_", name.strip().lower())


@dataclass(frozen=True)
class PlanNode:
    """One step of a plan: a skill, its object and its parameters.

    Attributes:
        skill: Normalised skill name (possibly not in :data:`SKILLS`).
        object: The object or part argument ("" when none was given).
        params: Further arguments (``in_box``, ``open``, ``clockwise``).
        text: The step as written.
    """

    skill: str
    object: str = ""
    params: tuple[str, ...] = ()
    text: str = ""

    @property
    def known(self) -> bool:
        """Whether the skill is in the vocabulary."""
        return self.skill in SKILLS

    def __str__(self) -> str:
        """The canonical call form."""
        args = [a for a in (self.object, *self.params) if a]
        return f"{self.skill}({', '.join(args)})"


def parse_node(text: str) -> PlanNode:
    """Parse one step written as ``skill(object, param, ...)``.

    Raises:
        PlanError: The step is not a call (the message shows the expected form).
    """
    if not isinstance(text, str):
        raise PlanError(f"plan step {text!r} is not a string; write steps like 'open(drawer)'")
    match = _CALL.match(text)
    if not match:
        raise PlanError(
            f"plan step {text!r} is not written as a call; write 'skill(object, parameter)', "
            f"e.g. 'place(cube, in_box)', with a skill from {sorted(SKILLS)}"
        )
    skill = normalise_skill(match.group(1))
    args = [a.strip().strip("'\"").strip() for a in match.group(2).split(",")]
    while len(args) > 1 and args[0].lower() in _NONE:
        args = args[1:]  # press(none, red_button): the object is the next argument
    obj = "" if not args or args[0].lower() in _NONE else args[0]
    params = tuple(a for a in args[1:] if a.lower() not in _NONE)
    return PlanNode(skill=skill, object=obj, params=params, text=text.strip())


class Plan(BaseModel):
    """A plan as a planner writes it (RoboBench's JSON).

    Attributes:
        task_summary: The task in the planner's words.
        plan_step: The steps, each ``skill(object[, parameter ...])``.
        reason: Why this plan.
    """

    model_config = ConfigDict(extra="ignore")

    task_summary: str = ""
    plan_step: list[str] = Field(min_length=1, max_length=40)
    reason: str = ""

    def nodes(self) -> list[PlanNode]:
        """The steps parsed; a step that is not a call becomes the skill ``invalid``."""
        out = []
        for text in self.plan_step:
            try:
                out.append(parse_node(text))
            except PlanError:
                out.append(PlanNode(skill="invalid", text=str(text)))
        return out


PLAN_JSON_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "task_summary": {"type": "string"},
        "plan_step": {"type": "array", "items": {"type": "string"}, "minItems": 1,
                      "maxItems": 40},
        "reason": {"type": "string"},
    },
    "required": ["task_summary", "plan_step", "reason"],
}
"""JSON schema of :class:`Plan` (what LLM planners are asked for)."""


def parse_plan(data: str | Mapping[str, Any], source: str = "plan") -> Plan:
    """Validate a plan given as JSON text or a dict.

    Raises:
        PlanError: Not JSON, or a field is missing or of the wrong type (named).
    """
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except json.JSONDecodeError as exc:
            raise PlanError(f"{source}: not JSON ({exc.msg} at line {exc.lineno}); give "
                            '{"task_summary": ..., "plan_step": [...], "reason": ...}') from None
    if not isinstance(data, Mapping):
        raise PlanError(f"{source}: a plan is a JSON object with task_summary, plan_step, reason")
    try:
        return Plan.model_validate(dict(data))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'plan'}: {e['msg']}" for e in exc.errors()
        )
        raise PlanError(f"{source}: {problems}; plan_step is a list of strings like "
                        "'open(drawer)'") from None

