r"""Success conditions made weaker than the task goal, for measuring the goal check.

:func:`weaken` rewrites one subtask's success condition (the last subtask whose condition
constrains the goal joint) in one of four ways that a proposer really gets wrong:

``threshold``  the bound on the goal joint's fraction is moved towards the start (0.6 → 0.15),
``direction``  the comparison is flipped (``>=`` → ``<=``),
``joint``      the condition reads another movable joint of the same object,
``amount``     the condition is replaced by ``check_grasped`` (no amount at all).

Each returns the new solution's subtasks, or None when the solution offers nothing to
weaken that way (no second joint, no comparison).

Example:
    >>> code = "def _compute_reward(self):\n    f = get_joint_state(self, 'A', 'joint_0')\n" \
    ...        "    return -f, f > 0.6\n"
    >>> weaken([("reward", code)], "threshold", "A", "joint_0", ("joint_0", "joint_1"))[0][1]
    "def _compute_reward(self):\n    f = get_joint_state(self, 'A', 'joint_0')\n    return (-f, f > 0.15)"
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

__all__ = ["WEAKENINGS", "weaken"]

WEAKENINGS: tuple[str, ...] = ("threshold", "direction", "joint", "amount")
_FLIP = {ast.Gt: ast.Lt, ast.GtE: ast.LtE, ast.Lt: ast.Gt, ast.LtE: ast.GtE}


def _mentions(code: str, joint: str) -> bool:
    return f"'{joint}'" in code or f'"{joint}"' in code


def _success_nodes(tree: ast.Module) -> list[ast.AST]:
    """The expressions that decide success: ``success = ...`` and returned second items."""
    nodes: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "success" for t in node.targets
        ):
            nodes.append(node.value)
        elif isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple) \
                and len(node.value.elts) == 2:
            nodes.append(node.value.elts[1])
    return nodes


def _compares(nodes: Sequence[ast.AST]) -> list[ast.Compare]:
    return [c for n in nodes for c in ast.walk(n) if isinstance(c, ast.Compare)
            and any(type(op) in _FLIP for op in c.ops)]


def _weaker_constant(compare: ast.Compare) -> bool:
    """Move every numeric constant of the comparison's bound towards the start."""
    changed = False
    for node in ast.walk(compare):
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float) \
                and not isinstance(node.value, bool) and 0.0 < node.value < 1e3:
            op = compare.ops[0]
            rising = isinstance(op, ast.Gt | ast.GtE)
            node.value = round(node.value * 0.25, 4) if rising else round(
                node.value + (1.0 - node.value) * 0.75 if node.value <= 1.0 else node.value * 4, 4)
            changed = True
    return changed


def _rewrite(code: str, how: str, obj: str, joint: str, joints: Sequence[str]) -> str | None:
    tree = ast.parse(code)
    nodes = _success_nodes(tree)
    if how == "amount":
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "success" for t in node.targets
            ):
                node.value = ast.parse(f"check_grasped(self, {obj!r})", mode="eval").body
                return ast.unparse(tree)
            if isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple) \
                    and len(node.value.elts) == 2:
                node.value.elts[1] = ast.parse(f"check_grasped(self, {obj!r})", mode="eval").body
                return ast.unparse(tree)
        return None
    if how == "joint":
        other = next((j for j in joints if j != joint), None)
        if other is None:
            return None
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and node.value == joint:
                node.value = other
        return ast.unparse(tree)
    compares = _compares(nodes)
    if not compares:
        return None
    if how == "direction":
        for compare in compares:
            compare.ops = [_FLIP.get(type(op), type(op))() for op in compare.ops]
        return ast.unparse(tree)
    if how == "threshold":
        changed = [_weaker_constant(c) for c in compares]
        return ast.unparse(tree) if any(changed) else None
    raise ValueError(f"unknown weakening {how!r}; choose one of {list(WEAKENINGS)}")


def weaken(
    subtasks: Sequence[tuple[str, str]], how: str, obj: str, joint: str, joints: Sequence[str]
) -> list[tuple[str, str]] | None:
    """The subtasks with the last success condition on ``obj``'s ``joint`` weakened.

    Args:
        subtasks: ``(kind, code)`` per subtask.
        how: One of :data:`WEAKENINGS`.
        obj: The goal's object.
        joint: The goal's joint.
        joints: The object's movable joints (``joint`` swaps to another of them).

    Returns:
        The weakened subtasks, or None if nothing could be weakened that way.

    Raises:
        ValueError: ``how`` is not one of :data:`WEAKENINGS`.
    """
    if how not in WEAKENINGS:
        raise ValueError(f"unknown weakening {how!r}; choose one of {list(WEAKENINGS)}")
    for index in range(len(subtasks) - 1, -1, -1):
        kind, code = subtasks[index]
        if not _mentions(code, joint):
            continue
        new = _rewrite(code, how, obj, joint, joints)
        if new is None or ast.dump(ast.parse(new)) == ast.dump(ast.parse(code)):
            return None
        out = list(subtasks)
        out[index] = (kind, new)
        return out
    return None
