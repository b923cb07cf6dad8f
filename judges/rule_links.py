"""The rule judge's link check: a reward that reaches for a part its joint does not move.

VERGSA's example of a subtly wrong candidate differs from a correct one only in the link
it reaches for (``link_1`` vs ``link_0``): the names exist, so the name check passes, yet
the agent is paid to approach a part that the joint it drives does not carry. With the
articulation tree this is mechanical: the links a code *reaches for* — a link position or
box entering a Euclidean distance, or ``check_grasped`` on a link — must lie in the
subtree moved by one of the joints the same code drives (reads with ``get_joint_state``)
on that object. Reading a link for other purposes (a reference frame) is not checked.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from typing import Any

from .context import JudgeContext
from .rule_checks import RuleIssue
from .rule_facts import CodeFacts

__all__ = ["check_link_targets", "moved_links"]

_LINK_READERS = ("get_link_state", "get_bounding_box_link")
_NOT_MOVED = (
    "the code drives {obj}.{joints} but reaches for {link!r}, which {those} not move; reach "
    "for a part {it} moves ({moving})"
)


def _call_name(node: ast.AST) -> str:
    return node.func.id if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) else ""


def moved_links(tree: Mapping[str, Any], joint: str) -> set[str]:
    """Links moved by ``joint`` of a structured tree: its child and everything below it."""
    children: dict[str, list[str]] = {}
    child = None
    for spec in tree.get("joints", ()):
        children.setdefault(spec["parent"], []).append(spec["child"])
        if spec["name"] == joint and spec["type"] != "fixed":
            child = spec["child"]
    if child is None:
        return set()
    found, frontier = {child}, [child]
    while frontier:
        for below in children.get(frontier.pop(), ()):
            found.add(below)
            frontier.append(below)
    return found


def _driven(facts: CodeFacts) -> dict[str, set[str]]:
    driven: dict[str, set[str]] = {}
    for call in facts.calls:
        if _call_name(call) == "get_joint_state":
            obj = facts.string(facts.argument(call, "object"))
            joint = facts.string(facts.argument(call, "joint"))
            if obj and joint:
                driven.setdefault(obj, set()).add(joint)
    return driven


def _reached(facts: CodeFacts) -> Iterator[tuple[ast.Call, str, str]]:
    """(call, object, link) of links that enter a distance or a grasp check."""
    seen: set[int] = set()
    roots = [n for n in ast.walk(facts.tree) if isinstance(n, ast.Call) and facts.is_distance(n)]
    roots += [c for c in facts.calls if _call_name(c) == "check_grasped"]
    for root in roots:
        for expr in facts.expand(root):
            for node in ast.walk(expr):
                name = _call_name(node)
                if not isinstance(node, ast.Call) or id(node) in seen \
                        or name not in (*_LINK_READERS, "check_grasped"):
                    continue
                seen.add(id(node))
                obj = facts.string(facts.argument(node, "object"))
                link = facts.string(facts.argument(node, "link"))
                if obj and link:
                    yield node, obj, link


def check_link_targets(facts: CodeFacts, context: JudgeContext) -> list[RuleIssue]:
    """Links reached for that none of the driven joints of their object moves (errors)."""
    driven = _driven(facts)
    issues, reported = [], set()
    for call, obj, link in _reached(facts):
        tree = context.trees.get(obj)
        joints = sorted(driven.get(obj, ()))
        if not tree or not joints or link not in (context.link_names(obj) or ()):
            continue
        moving = set().union(*(moved_links(tree, j) for j in joints))
        if not moving or link in moving or (obj, link) in reported:
            continue
        reported.add((obj, link))
        plural = len(joints) > 1
        message = _NOT_MOVED.format(
            obj=obj, joints="/".join(joints), link=link, those="they do" if plural else "it does",
            it="they" if plural else "it", moving=", ".join(sorted(moving)),
        )
        issues.append(RuleIssue("link-not-moved", message, "error", call.lineno))
    return issues
