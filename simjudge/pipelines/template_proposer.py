"""TemplateProposer: deterministic solutions from the task goal and the articulation tree.

A baseline and a fallback, named as such — never presented as an LLM. It solves the
task's own goal (:attr:`TaskRequest.goal <simjudge.pipelines.proposer.TaskRequest.goal>`: a
built-in task's reference goal, else the goal parser's reading of the name and
description): for each joint target, the joint, the part to hold (a handle, knob or button
fixed on the part, else the part itself), the direction and the target interval come
from the goal. Without a goal (the parser found the text ambiguous) it falls back to the
task's verb (open, close, turn, press) and the joint whose **own child link** carries the
named part (``knobs`` names a ``knob``; synonyms and plurals as in
:mod:`simjudge.tasks.spec.goal_words`), else the first movable joint. Then it writes
RoboGen-style subtasks per target:

1. ``primitive``: ``grasp_object_link`` on the part (``approach_object_link`` for
   pressing), with ``success = check_grasped(...)``;
2. ``reward``: move the joint towards the goal (the limit for a one-sided target, the
   interval's middle for "halfway") while staying near the part; success when the joint
   is inside the goal's interval, a small margin in from its ends.

A new task's scene starts the joints where the goal implies (a "close" task starts open).
Candidates differ in controlled ways (reward weights, an extra approach step, the
action-space mode; without a goal also the success fraction), chosen by the seed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from simjudge.envs.articulation import ArticulationTree, JointSpec
from simjudge.tasks.spec import JointTarget, Solution, object_parts
from simjudge.tasks.spec.goal_words import part_semantics, words

from .proposer import Exemplar, TaskRequest

__all__ = ["TemplateProposer", "infer_verb", "choose_joint"]

_VERBS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("press", ("press", "push button", "flush", "pump", "click", "switch on", "turn on the lamp")),
    ("close", ("close", "shut", "fold the", "lower", "push the drawer", "push in")),
    ("rotate", ("turn", "rotate", "twist", "tilt", "adjust", "spin")),
    ("open", ("open", "pull", "lift", "unfold", "raise", "slide")),
)
_DEFAULT_FRACTION = {"open": 0.5, "close": 0.1, "rotate": 0.25, "press": 0.6}
_TURNED = ("knob", "handle", "head")


def infer_verb(text: str) -> str:
    """The task verb (``open``, ``close``, ``rotate`` or ``press``) from its text."""
    lowered = text.lower()
    for verb, cues in _VERBS:
        if any(re.search(rf"\b{re.escape(cue)}", lowered) for cue in cues):
            return verb
    return "open"


def _check_articulated(task: TaskRequest) -> ArticulationTree:
    tree = task.tree
    if tree is None or not tree.movable_joints:
        raise ValueError(
            f"{task.asset} has no movable joints; the template proposer handles articulated "
            "tasks only — use an LLM proposer or a hand-written solution"
        )
    return tree


def choose_joint(task: TaskRequest) -> JointSpec:
    """The joint a task is about.

    The goal's (first) joint; else a relevant joint; else the movable joint whose own child
    link carries a part the text names; else the first.

    Raises:
        ValueError: The object has no movable joint.
    """
    tree = _check_articulated(task)
    goal = task.goal
    if goal is not None and goal.joint_targets:
        return tree.joint(goal.joint_targets[0].joint)
    for name in task.relevant_joints:
        if name in tree.joint_names and tree.joint(name).type != "fixed":
            return tree.joint(name)
    for word in words(f"{task.name} {task.description}"):
        for semantic in part_semantics(word):
            own = [j for j in tree.movable_joints if tree.link(j.child).semantic == semantic]
            if own:
                return own[0]
    return tree.movable_joints[0]


@dataclass(frozen=True)
class _Plan:
    """One joint to move: which, how (verb), where to hold it, and the success interval."""

    joint: str
    link: str
    verb: str
    low: float | None = None
    high: float | None = None


def _plan_of(target: JointTarget) -> _Plan:
    kind = target.semantic.split(" ")[-1]
    if not target.requires_grasp:
        verb = "press"
    elif target.direction == "close":
        verb = "close"
    else:
        verb = "rotate" if kind in _TURNED else "open"
    return _Plan(target.joint, target.link, verb, target.low, target.high)


def _plans(task: TaskRequest) -> list[_Plan]:
    """The goal's joint targets in order; without a goal, one plan from the verb."""
    tree = _check_articulated(task)
    goal = task.goal
    if goal is not None and goal.joint_targets:
        return [_plan_of(t) for t in goal.joint_targets]
    joint = choose_joint(task)
    link = _grasp_link(task, tree, joint)
    return [_Plan(joint.name, link, infer_verb(f"{task.name} {task.description}"))]


def _grasp_link(task: TaskRequest, tree: ArticulationTree, joint: JointSpec) -> str:
    """A relevant link the joint moves, else the handle / knob / button fixed on its part."""
    for link in task.relevant_links:
        if link == joint.child or tree.joint_of_link(link) is not None and \
                tree.joint_of_link(link).parent == joint.child:  # type: ignore[union-attr]
            return link
    part = next((p for p in object_parts(task.asset) if p.joint == joint.name), None)
    return part.grip if part is not None else joint.child


@dataclass(frozen=True)
class _Variant:
    distance_weight: float
    joint_weight: float
    fraction_scale: float
    approach_first: bool
    action_space: str


def _variants(rng: np.random.Generator, n: int) -> list[_Variant]:
    base = _Variant(1.0, 5.0, 1.0, False, "delta-translation")
    out = [base]
    while len(out) < n:
        out.append(
            _Variant(
                distance_weight=float(rng.choice([0.5, 1.0, 2.0])),
                joint_weight=float(rng.choice([3.0, 5.0, 10.0])),
                fraction_scale=float(rng.choice([0.8, 1.0, 1.2])),
                approach_first=bool(rng.random() < 0.3),
                action_space=str(rng.choice(["delta-translation", "delta-translation",
                                             "normalized-direct-translation"])),
            )
        )
    return out[:n]


class TemplateProposer:
    """Deterministic template solutions (a baseline, not an LLM).

    Args:
        fraction: Success fraction of the joint range per verb, used only for tasks
            without a goal (a goal's interval decides otherwise).
    """

    name = "template"

    def __init__(self, fraction: dict[str, float] | None = None) -> None:
        self.fraction = {**_DEFAULT_FRACTION, **(fraction or {})}

    def propose(
        self,
        task: TaskRequest,
        exemplars: Sequence[Exemplar] = (),
        n: int = 1,
        seed: int = 0,
        feedback: str = "",
    ) -> list[Solution]:
        """``n`` template solutions; exemplars and feedback are not read (the seed varies)."""
        plans = _plans(task)
        scene = self._scene(task, plans)
        rng = np.random.default_rng(seed)
        solutions = []
        for index, variant in enumerate(_variants(rng, n)):
            subtasks = [s for plan in plans for s in self._subtasks(task, plan, variant)]
            solutions.append(
                Solution.parse(
                    {
                        "task": task.name,
                        "description": task.description,
                        "scene": scene,
                        "subtasks": subtasks,
                        "provenance": {
                            "proposer": "template",
                            "seed": seed,
                            "candidate": index,
                            "verb": plans[0].verb,
                            "joint": plans[0].joint,
                            "link": plans[0].link,
                            "goal": task.goal is not None,
                            "variant": variant.__dict__,
                            "exemplars_offered": [e.task for e in exemplars],
                        },
                    }
                )
            )
        return solutions

    def complete(
        self, task: TaskRequest, prefix: Solution, n: int = 1, seed: int = 0,
        exemplars: Sequence[Exemplar] = (),
    ) -> list[Solution]:
        """``n`` completions of ``prefix``.

        Each has the prefix's scene and subtasks, then the rest of a template variant (the
        subtasks of the variant after the prefix's length).
        """
        out = []
        for candidate in self.propose(task, exemplars, n=n, seed=seed):
            rest = candidate.subtasks[len(prefix.subtasks):] or candidate.subtasks[-1:]
            provenance = {**candidate.provenance, "proposer": "template-completer",
                          "prefix_length": len(prefix.subtasks)}
            out.append(candidate.model_copy(
                update={"scene": prefix.scene, "subtasks": prefix.subtasks + tuple(rest),
                        "provenance": provenance}))
        return out

    # ----------------------------------------------------------------------------
    def _scene(self, task: TaskRequest, plans: list[_Plan]) -> dict:
        if task.builtin is not None:
            return task.builtin.scene.to_dict()
        goal = task.goal
        if goal is not None:
            init = {joint: round(fraction, 4) for (obj, joint), fraction
                    in goal.implied_initial_joints().items()
                    if obj == task.object_name and fraction > 0.0}
        else:
            init = {p.joint: 0.8 for p in plans if p.verb == "close"}
        return {
            "objects": [
                {"name": task.object_name, "asset": task.asset, "center": [0.7, 0.5],
                 "fixed": True, "joint_init": init}
            ]
        }

    def _subtasks(self, task: TaskRequest, plan: _Plan, variant: _Variant) -> list[dict]:
        obj, link, verb = task.object_name, plan.link, plan.verb
        subtasks = []
        if variant.approach_first or verb == "press":
            subtasks.append(
                {
                    "name": f"approach the {link} of the {obj}",
                    "kind": "primitive",
                    "code": (
                        f'rgbs, final_state = approach_object_link(self, "{obj}", "{link}")\n'
                        "success = np.linalg.norm(get_eef_pos(self)[0] - "
                        f'get_link_state(self, "{obj}", "{link}")) < 0.12\n'
                    ),
                }
            )
        if verb != "press":
            subtasks.append(
                {
                    "name": f"grasp the {link} of the {obj}",
                    "kind": "primitive",
                    "code": (
                        f'rgbs, final_state = grasp_object_link(self, "{obj}", "{link}")\n'
                        f'success = check_grasped(self, "{obj}", "{link}")\n'
                    ),
                }
            )
        if plan.low is None or plan.high is None:  # no goal: the verb's default fraction
            fraction = float(np.clip(self.fraction[verb] * variant.fraction_scale, 0.02, 0.95))
            low, high = (0.0, fraction) if verb == "close" else (fraction, 1.0)
        else:
            low, high = plan.low, plan.high
        subtasks.append(
            {
                "name": f"{verb} the {obj} by moving {plan.joint}",
                "kind": "reward",
                "action_space": variant.action_space,
                "code": _reward_code(obj, link, plan.joint, verb == "close", low, high, variant),
            }
        )
        return subtasks


def _success_bounds(low: float, high: float) -> tuple[float | None, float | None]:
    """The success interval, a margin in from the goal's ends (None: that end is a limit).

    The margin (≤ 0.05, a quarter of the interval at most) keeps a joint that settles a
    little after the subtask ends inside the goal.
    """
    margin = min(0.05, (high - low) / 4.0)
    lower = None if low <= 0.0 else round(low + margin, 4)
    upper = None if high >= 1.0 else round(high - margin, 4)
    return lower, upper


def _reward_code(obj: str, link: str, joint: str, closing: bool, low: float, high: float,
                 v: _Variant) -> str:
    """Reward code: stay near ``link`` and bring ``joint`` to the goal.

    The goal is the limit the motion heads for when the interval reaches it, else the
    interval's middle; success is inside the interval.
    """
    lower, upper = _success_bounds(low, high)
    if lower is None and upper is not None and closing:
        target = "joint_low"
    elif upper is None and lower is not None and not closing:
        target = "joint_high"
    else:
        target = f"joint_low + {round((low + high) / 2.0, 4):g} * (joint_high - joint_low)"
    checks = []
    if lower is not None:
        checks.append(f"joint_angle >= joint_low + {lower:g} * (joint_high - joint_low)")
    if upper is not None:
        checks.append(f"joint_angle <= joint_low + {upper:g} * (joint_high - joint_low)")
    success = " and ".join(checks) or "True"
    return (
        "def _compute_reward(self):\n"
        "    eef_pos = get_eef_pos(self)[0]\n"
        f'    link_pos = get_link_state(self, "{obj}", "{link}")\n'
        "    distance = np.linalg.norm(eef_pos - link_pos)\n"
        f'    joint_angle = get_joint_state(self, "{obj}", "{joint}")\n'
        f'    joint_low, joint_high = get_joint_limit(self, "{obj}", "{joint}")\n'
        f"    target = {target}\n"
        "    gap = abs(joint_angle - target) / (joint_high - joint_low)\n"
        f"    reward = -{v.distance_weight:g} * distance - {v.joint_weight:g} * gap\n"
        f"    success = {success}\n"
        "    return reward, success\n"
    )
