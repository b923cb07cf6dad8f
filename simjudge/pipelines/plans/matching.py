"""Matching plan nodes: object aliases, parameters, node correctness and next-step scores.

Object score (RoboBench's 0/0.5/1): 1 for the canonical name, an alias or a strict raw
scene id (``StorageFurniture/link_1``, ``link_1``, ``joint_0``: :func:`raw_ids`); 0.5 for the whole of a part, a part of the whole, or an
unlisted name of the same category (``wooden drawer``); 0 otherwise, also for another
listed object of the same category (``top drawer`` for the bottom one is a wrong object). Names are compared after lower-casing,
turning ``_``/``-`` into spaces and dropping articles.

Parameter score: for ``place``, the relation (``in``/``on``) and the target object; for
joint skills, the direction (``open``/``close``); a reference node without parameters
gives 1 to a proposal without any and 0.5 to one with extra parameters.

Node correctness = ⌊10·Y/X⌋ with Y a maximum bipartite matching between proposed and
reference nodes, an edge where skill, object and parameter all align (skill exact, object
and parameter score ≥ 0.5), X the reference node count.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from .groundtruth import PlanObject, TaskPlan
from .schema import JOINT_SKILLS, SKILLS, PlanNode

__all__ = [
    "NodeScore",
    "best_score",
    "maximum_matching",
    "direction_of",
    "node_correctness",
    "normalise_name",
    "object_score",
    "param_score",
    "raw_ids",
    "resolve_object",
    "score_node",
    "split_location",
]

_ARTICLES = re.compile(r"\b(the|a|an|its|this|that)\b")
_IN = {"in", "into", "inside", "within", "in to"}
_ON = {"on", "onto", "on top of", "atop", "on to", "top of"}
_OPEN = {"open", "opened", "out", "up", "on", "upward", "outward", "forward", "unfold"}
_CLOSE = {"close", "closed", "shut", "in", "down", "off", "downward", "inward", "back"}


def normalise_name(name: str) -> str:
    """Lower case, separators as spaces, no articles, single spaces."""
    text = re.sub(r"[_\-./]+", " ", name.strip().lower())
    return " ".join(_ARTICLES.sub(" ", text).split())


def raw_ids(plan: TaskPlan, obj: PlanObject) -> set[str]:
    """The raw scene ids that name ``obj`` strictly.

    ``Object/link`` and ``Object/joint`` always; the bare ``link`` or ``joint``
    (``link_1``, ``joint_0``) only when no plan object of another scene object has a link
    or joint of that name (otherwise the bare name is ambiguous and names nothing).
    """
    ids = {obj.scene_id}
    for part in (obj.link, obj.joint):
        if not part:
            continue
        ids.add(f"{obj.object}/{part}")
        owners = {o.object for o in plan.plan.objects if part in (o.link, o.joint)}
        if owners == {obj.object}:
            ids.add(part)
    return ids


def _exact(plan: TaskPlan, obj: PlanObject, name: str) -> bool:
    if name.strip() in raw_ids(plan, obj):
        return True
    norm = normalise_name(name)
    return norm in {normalise_name(n) for n in (obj.name, *obj.aliases)}


def resolve_object(plan: TaskPlan, name: str) -> tuple[PlanObject | None, float]:
    """The plan object ``name`` means and how sure: 1 exact/alias/id, 0.5 whole or category.

    Strict ids are the raw scene names of :func:`raw_ids` (``StorageFurniture/link_1``,
    ``link_1``, ``joint_0``). A whole named where a part is needed resolves to it with 0.5
    only when the whole has exactly one part in the plan; otherwise ``(None, 0.0)``.
    """
    objects = plan.plan.objects
    for obj in objects:
        if _exact(plan, obj, name):
            return obj, 1.0
    norm = normalise_name(name)
    for obj in objects:  # a scene object named directly
        if obj.link is None and norm == normalise_name(obj.object):
            return obj, 1.0
    same_cat = [o for o in objects if o.category and normalise_name(o.category) == norm]
    if len(same_cat) == 1:
        return same_cat[0], 0.5
    return None, 0.0


def object_score(plan: TaskPlan, proposed: str, reference: str) -> float:
    """RoboBench's object score of a proposed name against a reference plan-object name."""
    ref = plan.object_named(reference)
    if ref is None:
        return 1.0 if normalise_name(proposed) == normalise_name(reference) else 0.0
    if not proposed:
        return 0.0
    if _exact(plan, ref, proposed):
        return 1.0
    got, sure = resolve_object(plan, proposed)
    if got is not None:
        related = got.name == ref.name or ref.part_of == got.name or got.part_of == ref.name
        # another object named exactly is a wrong object even in the same category
        return 0.5 if related or (sure < 1.0 and got.category == ref.category) else 0.0
    words = set(normalise_name(proposed).split())
    if ref.category and normalise_name(ref.category) in words:
        return 0.5  # "red drawer" for a drawer: the category word is there
    return 0.0


def split_location(param: str) -> tuple[str, str]:
    """``in_box`` / ``into the box`` / ``on(can)`` -> ``(relation, target)``; relation may be ""."""
    text = normalise_name(param.replace("(", " ").replace(")", " "))
    for words, rel in ((sorted(_ON, key=len, reverse=True), "on"),
                       (sorted(_IN, key=len, reverse=True), "in")):
        for w in words:
            if text == w:
                return rel, ""
            if text.startswith(w + " "):
                return rel, text[len(w) + 1:]
    return "", text


def direction_of(skill: str, params: tuple[str, ...]) -> str:
    """Direction a joint skill moves its joint (``open``/``close``) from its parameters."""
    for p in params:
        norm = normalise_name(p)
        if norm in _OPEN or norm.split(" ")[0] in _OPEN:
            return "open"
        if norm in _CLOSE or norm.split(" ")[0] in _CLOSE:
            return "close"
    info = SKILLS.get(skill)
    return info.direction if info and info.direction else "open"


def param_score(plan: TaskPlan, proposed: PlanNode, reference: PlanNode) -> float:
    """RoboBench's parameter score (0/0.5/1) of a proposed node against a reference node."""
    if reference.skill == "place":
        if not reference.params:
            return 1.0
        r_rel, r_target = split_location(reference.params[0])
        if not proposed.params:
            return 0.0
        p_rel, p_target = split_location(" ".join(proposed.params))
        target = object_score(plan, p_target, r_target) if p_target else 0.0
        if target == 1.0 and p_rel == r_rel:
            return 1.0
        return 0.5 if target > 0 and (p_rel == r_rel or not p_rel or target == 1.0) else 0.0
    if reference.skill in JOINT_SKILLS and reference.params:
        want = direction_of(reference.skill, reference.params)
        if not proposed.params:
            return 0.5 if direction_of(proposed.skill, ()) == want else 0.0
        return 1.0 if direction_of(proposed.skill, proposed.params) == want else 0.0
    return 1.0 if not proposed.params else 0.5


@dataclass(frozen=True)
class NodeScore:
    """How one proposed node compares with one reference node.

    Attributes:
        skill: 0 or 1.
        object: 0, 0.5 or 1.
        param: 0, 0.5 or 1 (0 when skill or object is 0).
    """

    skill: float
    object: float
    param: float

    @property
    def matched(self) -> bool:
        """Skill exact, object and parameter at least half right."""
        return self.skill == 1.0 and self.object >= 0.5 and self.param >= 0.5

    @property
    def total(self) -> float:
        """Mean of the three (0-1)."""
        return (self.skill + self.object + self.param) / 3.0


def score_node(plan: TaskPlan, proposed: PlanNode, reference: PlanNode) -> NodeScore:
    """Skill, object and parameter scores of ``proposed`` against ``reference``."""
    skill = 1.0 if proposed.skill == reference.skill else 0.0
    obj = object_score(plan, proposed.object, reference.object) if reference.object else (
        1.0 if not proposed.object else 0.5)
    param = param_score(plan, proposed, reference) if skill and obj else 0.0
    return NodeScore(skill, obj, param)


def best_score(plan: TaskPlan, proposed: PlanNode, writings: list[PlanNode]) -> NodeScore:
    """The best score of ``proposed`` against any writing of one reference node."""
    scores = [score_node(plan, proposed, ref) for ref in writings]
    return max(scores, key=lambda s: (s.matched, s.total))


def maximum_matching(edges: list[list[int]], right: int) -> dict[int, int]:
    """Maximum bipartite matching by augmenting paths (Kuhn): left index -> right index.

    Args:
        edges: For each left node, the right nodes it may be matched with.
        right: Number of right nodes.
    """
    owner: list[int | None] = [None] * right

    def augment(i: int, seen: set[int]) -> bool:
        for j in edges[i]:
            if j in seen:
                continue
            seen.add(j)
            current = owner[j]
            if current is None or augment(current, seen):
                owner[j] = i
                return True
        return False

    for i in range(len(edges)):
        augment(i, set())
    return {i: j for j, i in enumerate(owner) if i is not None}


def node_correctness(plan: TaskPlan, proposed: list[PlanNode]) -> dict[str, Any]:
    """RoboBench's node correctness of a proposed plan against the task's reference plan.

    Returns:
        ``score`` (⌊10·Y/X⌋), ``matched`` (Y), ``reference`` (X), ``proposed`` (count),
        ``pairs`` (proposed index -> reference index), ``unmatched_reference`` (steps).
    """
    refs = [s.nodes() for s in plan.plan.steps]
    edges = [[j for j, writings in enumerate(refs) if best_score(plan, node, writings).matched]
             for node in proposed]
    pairs = maximum_matching(edges, len(refs))
    y, x = len(pairs), len(refs)
    return {
        "score": math.floor(10 * y / x + 1e-9),
        "matched": y,
        "reference": x,
        "proposed": len(proposed),
        "pairs": pairs,
        "unmatched_reference": [plan.plan.steps[j].step for j in range(x)
                                if j not in pairs.values()],
    }

