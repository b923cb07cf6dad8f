"""TemplateProposer: deterministic solutions from the articulation tree and the verb.

A baseline and a fallback, named as such — never presented as an LLM. It reads
the task's verb (open, close, turn, press, ...), picks the joint the task is about
(the relevant joint, else the one whose part the task names, else the first
movable joint) and the part to hold (a handle, knob or button on that joint's
moving part, else the part itself), then writes RoboGen-style subtasks:

1. ``primitive``: ``grasp_object_link`` on the part (``approach_object_link`` for
   pressing), with ``success = check_grasped(...)``;
2. ``reward``: move the joint towards the limit the verb implies (lower limit =
   closed) while staying near the part; success when it passes a fraction of the
   range.

Candidates differ in controlled ways (reward weights, success fraction, an extra
approach step, the action-space mode), chosen by the seed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from simjudge.envs.articulation import ArticulationTree, JointSpec

from .proposer import Exemplar, TaskRequest
from .spec import Solution

__all__ = ["TemplateProposer", "infer_verb", "choose_joint"]

_VERBS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("press", ("press", "push button", "flush", "pump", "click", "switch on", "turn on the lamp")),
    ("close", ("close", "shut", "fold the", "lower", "push the drawer", "push in")),
    ("rotate", ("turn", "rotate", "twist", "tilt", "adjust", "spin")),
    ("open", ("open", "pull", "lift", "unfold", "raise", "slide")),
)
_GRASP_PARTS = ("handle", "knob", "button", "dial", "pump")
_DEFAULT_FRACTION = {"open": 0.5, "close": 0.1, "rotate": 0.25, "press": 0.6}


def infer_verb(text: str) -> str:
    """The task verb (``open``, ``close``, ``rotate`` or ``press``) from its text."""
    lowered = text.lower()
    for verb, cues in _VERBS:
        if any(re.search(rf"\b{re.escape(cue)}", lowered) for cue in cues):
            return verb
    return "open"


def choose_joint(task: TaskRequest) -> JointSpec:
    """The joint a task is about.

    Raises:
        ValueError: The object has no movable joint.
    """
    tree = task.tree
    if tree is None or not tree.movable_joints:
        raise ValueError(
            f"{task.asset} has no movable joints; the template proposer handles articulated "
            "tasks only — use an LLM proposer or a hand-written solution"
        )
    for name in task.relevant_joints:
        if name in tree.joint_names and tree.joint(name).type != "fixed":
            return tree.joint(name)
    words = set(re.findall(r"[a-z]+", f"{task.name} {task.description}".lower()))
    for joint in tree.movable_joints:
        semantics = {tree.link(link).semantic for link in _subtree(tree, joint.child)}
        if semantics & words:
            return joint
    return tree.movable_joints[0]


def _subtree(tree: ArticulationTree, root: str) -> list[str]:
    links, frontier = [root], [root]
    while frontier:
        parent = frontier.pop()
        children = [j.child for j in tree.joints if j.parent == parent]
        links += children
        frontier += children
    return links


def _grasp_link(tree: ArticulationTree, joint: JointSpec, relevant: Sequence[str]) -> str:
    moving = _subtree(tree, joint.child)
    for link in relevant:
        if link in moving:
            return link
    for link in moving:
        if tree.link(link).semantic in _GRASP_PARTS:
            return link
    return joint.child


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

    :param fraction: Success fraction of the joint range per verb (overrides defaults).
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
        verb = infer_verb(f"{task.name} {task.description}")
        joint = choose_joint(task)
        link = _grasp_link(task.tree, joint, task.relevant_links)
        rng = np.random.default_rng(seed)
        solutions = []
        for index, variant in enumerate(_variants(rng, n)):
            subtasks = self._subtasks(task, verb, joint, link, variant)
            solutions.append(
                Solution.parse(
                    {
                        "task": task.name,
                        "description": task.description,
                        "scene": self._scene(task, verb, joint),
                        "subtasks": subtasks,
                        "provenance": {
                            "proposer": "template",
                            "seed": seed,
                            "candidate": index,
                            "verb": verb,
                            "joint": joint.name,
                            "link": link,
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
        """``n`` completions of ``prefix``: its scene and subtasks, then the rest of a
        template variant (the subtasks of the variant after the prefix's length)."""
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
    def _scene(self, task: TaskRequest, verb: str, joint: JointSpec) -> dict:
        if task.builtin is not None:
            return task.builtin.scene.to_dict()
        init = {joint.name: 0.8} if verb == "close" else {}
        return {
            "objects": [
                {"name": task.object_name, "asset": task.asset, "center": [0.7, 0.5],
                 "fixed": True, "joint_init": init}
            ]
        }

    def _subtasks(self, task, verb, joint, link, variant: _Variant) -> list[dict]:
        obj = task.object_name
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
        fraction = float(np.clip(self.fraction[verb] * variant.fraction_scale, 0.02, 0.95))
        subtasks.append(
            {
                "name": f"{verb} the {obj} by moving {joint.name}",
                "kind": "reward",
                "action_space": variant.action_space,
                "code": _reward_code(obj, link, joint.name, verb, fraction, variant),
            }
        )
        return subtasks


def _reward_code(obj: str, link: str, joint: str, verb: str, fraction: float, v: _Variant) -> str:
    closing = verb == "close"
    target = "joint_low" if closing else "joint_high"
    if closing:
        success = f"joint_angle <= joint_low + {fraction:.3g} * (joint_high - joint_low)"
    else:
        success = f"joint_angle >= joint_low + {fraction:.3g} * (joint_high - joint_low)"
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
