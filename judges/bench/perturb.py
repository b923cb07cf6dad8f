"""Perturbation contrasts (EQA-RM): a judge should score incoherent episodes lower.

Perturbations of a recorded episode (simulation adds what the paper could not do):

- ``shuffle``: the steps in a random order (never the identity for two or more steps);
- ``truncate``: cut before the last stage — keep the steps before Φ first reaches
  :data:`LAST_STAGE_PHI` = 0.3, where the staged privileged Φ has finished reaching
  (0.2) and grasping (0.1) and the goal stage (joint motion, carrying) begins; half the
  episode when it never gets there;
- ``wrong-target``: the same states judged against another target (:func:`swap_target`:
  another movable joint of the object, else another articulated object, else a link the
  target joint does not move; a place goal swaps object and receptacle);
- ``reverse``: the steps in reverse order.

For a potential judge the perturbed episode is re-observed state by state (in the
perturbed order, with the swapped context for ``wrong-target``) and scored with
:func:`~simjudge.judges.bench.scores.phi_episode_score`; an episode judge gets the
perturbed :class:`~simjudge.judges.episode.EpisodeRecord`. :func:`contrast_summary`
reports the contrast mean(s_orig − s_pert) and the directional check (share of episodes
whose perturbed score is lower).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from simjudge.envs.goals import JointGoal, PlaceGoal

from ..context import JudgeContext
from ..privileged import LinkGoal

__all__ = [
    "LAST_STAGE_PHI",
    "PERTURBATIONS",
    "contrast_summary",
    "perturb_order",
    "swap_target",
    "truncation_point",
]

PERTURBATIONS: tuple[str, ...] = ("shuffle", "truncate", "wrong-target", "reverse")
"""The perturbations of :func:`perturb_order` / :func:`swap_target`."""

LAST_STAGE_PHI = 0.3
"""Privileged Φ at which the staged goal's last stage (joint motion / carrying) begins."""


def truncation_point(phi: Sequence[float], stage_phi: float = LAST_STAGE_PHI) -> int:
    """Number of steps kept by ``truncate``: those before Φ first reaches ``stage_phi``.

    At least 1; half the episode when Φ never gets there.
    """
    for t, value in enumerate(phi):
        if value >= stage_phi:
            return max(t, 1)
    return max(len(phi) // 2, 1)


def perturb_order(
    n: int, kind: str, rng: np.random.Generator, phi: Sequence[float] | None = None
) -> list[int]:
    """The step indices of an ``n``-step episode under perturbation ``kind``.

    ``wrong-target`` keeps the order (it changes the context, see :func:`swap_target`).

    Raises:
        ValueError: Unknown kind, or ``truncate`` without ``phi``.
    """
    if kind not in PERTURBATIONS:
        raise ValueError(f"unknown perturbation {kind!r}; use one of {list(PERTURBATIONS)}")
    order = list(range(n))
    if kind == "reverse":
        return order[::-1]
    if kind == "truncate":
        if phi is None:
            raise ValueError("truncate needs the episode's privileged Φ (phi=...)")
        return order[: truncation_point(phi)]
    if kind == "shuffle" and n > 1:
        shuffled = [int(i) for i in rng.permutation(n)]
        return shuffled if shuffled != order else order[1:] + order[:1]
    return order


def _subtree(tree: Mapping[str, Any], root: str) -> set[str]:
    children: dict[str, list[str]] = {}
    for joint in tree.get("joints", ()):
        children.setdefault(joint["parent"], []).append(joint["child"])
    found, frontier = {root}, [root]
    while frontier:
        for child in children.get(frontier.pop(), ()):
            found.add(child)
            frontier.append(child)
    return found


def _movable(tree: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return sorted((j for j in tree.get("joints", ()) if j["type"] != "fixed"),
                  key=lambda j: j["name"])


def _swapped_goal(goal: Any, context: JudgeContext) -> tuple[Any, dict[str, Any]] | None:
    if isinstance(goal, PlaceGoal):
        place = PlaceGoal(object=goal.target, target=goal.object, relation=goal.relation)
        return place, {"object": place.object, "into": place.target}
    if not isinstance(goal, JointGoal):
        return None
    tree = context.trees.get(goal.object) or {}
    for joint in _movable(tree):
        if joint["name"] != goal.joint:
            new = goal.model_copy(update={"joint": joint["name"], "link": joint["child"]})
            return new, {"object": goal.object, "link": new.link, "joint": new.joint}
    for obj, other in sorted(context.trees.items()):
        joints = _movable(other)
        if obj != goal.object and joints:
            new = goal.model_copy(update={"object": obj, "joint": joints[0]["name"],
                                          "link": joints[0]["child"]})
            return new, {"object": obj, "link": new.link, "joint": new.joint}
    moving = _subtree(tree, next((j["child"] for j in tree.get("joints", ())
                                  if j["name"] == goal.joint), goal.link))
    static = sorted(link["name"] for link in tree.get("links", ()) if link["name"] not in moving)
    if not static:
        return None
    link_goal = LinkGoal(goal.object, static[0], requires_grasp=goal.requires_grasp)
    return link_goal, {"object": goal.object, "link": link_goal.link}


def swap_target(context: JudgeContext) -> JudgeContext | None:
    """The context with its target swapped (goal and ``extra["target"]``).

    Returns:
        The new context, or None when the scene offers no other target.
    """
    found = _swapped_goal(context.goal, context)
    if found is None:
        return None
    goal, target = found
    extra = {**dict(context.extra), "target": target}
    return dataclasses.replace(context, goal=goal, extra=extra)


def contrast_summary(
    original: Sequence[float | None], perturbed: Sequence[float | None]
) -> dict[str, Any]:
    """Contrast mean(s_orig − s_pert) and directional share (s_pert < s_orig).

    Episodes where either score is missing are left out (``n`` counts the rest); the
    directional share counts ties as failures.
    """
    if len(original) != len(perturbed):
        raise ValueError(f"{len(original)} original vs {len(perturbed)} perturbed scores")
    pairs = [(float(o), float(p)) for o, p in zip(original, perturbed, strict=True)
             if o is not None and p is not None]
    if not pairs:
        return {"contrast": None, "directional": None, "n": 0}
    diffs = np.array([o - p for o, p in pairs])
    return {
        "contrast": float(diffs.mean()),
        "directional": float(np.mean(diffs > 1e-9)),
        "mean_original": float(np.mean([o for o, _ in pairs])),
        "mean_perturbed": float(np.mean([p for _, p in pairs])),
        "n": len(pairs),
    }
