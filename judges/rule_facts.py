"""What the rule judge reads off a subtask's code: one AST pass, plain facts.

Why separate from the checks: every check (names, outputs, weighting, direction) asks the
same questions — which string a name holds, which names carry a joint position or a joint
limit, what the reward and success expressions are built from — so they are answered once.
Scoping is deliberately simple (as in the codegen checker): a name assigned anywhere counts
everywhere, which is enough for the short functions proposers write.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TypeGuard, TypeVar

from simjudge.envs.codegen import PRIMITIVE_NAMES, STATE_API_NAMES

__all__ = [
    "ARG_ROLES",
    "CodeFacts",
    "const_value",
    "constant",
    "distance_to_target",
    "dotted",
    "fraction_target",
    "signed_terms",
]

ARG_ROLES: dict[str, tuple[str, ...]] = {
    "get_position": ("object",),
    "get_orientation": ("object",),
    "get_bounding_box": ("object",),
    "get_initial_pos_orient": ("object",),
    "grasp_object": ("object",),
    "approach_object": ("object",),
    "get_link_state": ("object", "link"),
    "get_bounding_box_link": ("object", "link"),
    "check_grasped": ("object", "link"),
    "grasp_object_link": ("object", "link"),
    "approach_object_link": ("object", "link"),
    "get_joint_state": ("object", "joint"),
    "get_joint_limit": ("object", "joint"),
    "get_initial_joint_angle": ("object", "joint"),
}
"""Positional roles of the arguments after ``self`` of the state API and primitives."""
_KEYWORDS = {"object_name": "object", "link_name": "link", "joint_name": "joint"}
_CONSTANTS = {"np.pi": math.pi, "math.pi": math.pi, "math.tau": math.tau, "np.e": math.e}
_DISTANCE_CALLS = {"np.linalg.norm", "math.dist", "np.sqrt", "math.sqrt", "math.hypot", "np.hypot"}
_INITIAL_CALLS = {"get_initial_joint_angle", "get_initial_pos_orient"}
REWARD_ENTRIES = ("_compute_reward", "compute_reward")


def dotted(node: ast.AST) -> str:
    """``np.linalg.norm`` for the attribute chain of a call's function ("" otherwise)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def const_value(node: ast.AST, depth: int = 0) -> float | None:
    """The value of a numeric constant expression (``3.14``, ``-np.pi / 2``), else None."""
    if depth > 6:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return None if isinstance(node.value, bool) else float(node.value)
    if isinstance(node, ast.Attribute):
        return _CONSTANTS.get(dotted(node))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = const_value(node.operand, depth + 1)
        return None if value is None else (-value if isinstance(node.op, ast.USub) else value)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub | ast.Mult | ast.Div):
        a, b = const_value(node.left, depth + 1), const_value(node.right, depth + 1)
        if a is None or b is None or (isinstance(node.op, ast.Div) and b == 0):
            return None
        if isinstance(node.op, ast.Div):
            return a / b
        if isinstance(node.op, ast.Mult):
            return a * b
        return a + b if isinstance(node.op, ast.Add) else a - b
    return None


_Node = TypeVar("_Node", bound=ast.AST)


def _call_name(node: ast.AST) -> str:
    return node.func.id if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) else ""


def _is_call(node: ast.AST, name: str) -> TypeGuard[ast.Call]:
    """Whether ``node`` calls the plain name ``name``."""
    return _call_name(node) == name


@dataclass
class CodeFacts:
    """Facts of one parsed subtask (see the module docstring).

    Attributes:
        tree: The module.
        functions: Top-level functions by name.
        entry: The reward entry function, if any.
        assigns: Name -> every expression assigned to it (augmented: ``x + v`` etc.).
        strings: Names assigned exactly once, to a string constant.
        joints: Names holding a joint position -> (object, joint) literal names.
        limits: Names holding joint limits -> (``lower``/``upper``/``both``, object, joint).
        fractions: Names holding a joint's position as a fraction of its range,
            ``(J - lower) / (upper - lower)`` (0 = lower limit) -> (object, joint).
        calls: Every state API or primitive call.
    """

    tree: ast.Module
    functions: dict[str, ast.FunctionDef] = field(default_factory=dict)
    entry: ast.FunctionDef | None = None
    assigns: dict[str, list[ast.expr]] = field(default_factory=dict)
    strings: dict[str, str] = field(default_factory=dict)
    joints: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)
    limits: dict[str, tuple[str, str | None, str | None]] = field(default_factory=dict)
    fractions: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)
    calls: list[ast.Call] = field(default_factory=list)

    @classmethod
    def parse(cls, tree: ast.Module) -> CodeFacts:
        """Collect the facts of ``tree``."""
        facts = cls(tree)
        facts.functions = {s.name: s for s in tree.body if isinstance(s, ast.FunctionDef)}
        entry = next((facts.functions[n] for n in REWARD_ENTRIES if n in facts.functions), None)
        if entry is None and len(facts.functions) == 1:
            entry = next(iter(facts.functions.values()))
        facts.entry = entry
        known = set(STATE_API_NAMES) | set(PRIMITIVE_NAMES)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _call_name(node) in known:
                facts.calls.append(node)
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    facts._bind(target, node.value)
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                facts._bind(node.target, node.value)
            elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                value = ast.BinOp(
                    left=ast.Name(node.target.id, ast.Load()), op=node.op, right=node.value
                )
                ast.copy_location(value, node)
                facts.assigns.setdefault(node.target.id, []).append(value)
        counts = {n: len(v) for n, v in facts.assigns.items()}
        for name, values in facts.assigns.items():
            if (
                counts[name] == 1
                and isinstance(values[0], ast.Constant)
                and isinstance(values[0].value, str)
            ):
                facts.strings[name] = values[0].value
        for name, values in facts.assigns.items():
            joint = facts._normalized(values[0]) if counts[name] == 1 else None
            if joint is not None:
                facts.fractions[name] = joint
        return facts

    def _bind(self, target: ast.expr, value: ast.expr) -> None:
        if isinstance(target, ast.Name):
            self.assigns.setdefault(target.id, []).append(value)
            if _is_call(value, "get_joint_state"):
                self.joints[target.id] = self._object_and(value, 2)
            elif _is_call(value, "get_joint_limit"):
                self.limits[target.id] = ("both", *self._object_and(value, 2))
            elif isinstance(value, ast.Subscript) and _is_call(value.value, "get_joint_limit"):
                side = self._side(value.slice)
                if side:
                    self.limits[target.id] = (side, *self._object_and(value.value, 2))
        elif isinstance(target, ast.Tuple | ast.List):
            if _is_call(value, "get_joint_limit") and len(target.elts) == 2:
                for side, elt in zip(("lower", "upper"), target.elts, strict=True):
                    if isinstance(elt, ast.Name):
                        self.limits[elt.id] = (side, *self._object_and(value, 2))
            for elt in target.elts:
                if isinstance(elt, ast.Name):
                    self.assigns.setdefault(elt.id, []).append(value)

    # resolution ---------------------------------------------------------------------------
    def string(self, node: ast.AST | None) -> str | None:
        """The string a literal or a once-assigned name holds."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            return self.strings.get(node.id)
        return None

    def argument(self, call: ast.Call, role: str) -> ast.expr | None:
        """The argument node playing ``role`` (object/link/joint) in a call (after ``self``)."""
        for kw in call.keywords:
            if _KEYWORDS.get(kw.arg or "") == role:
                return kw.value
        roles = ARG_ROLES.get(_call_name(call), ())
        if role in roles and len(call.args) > roles.index(role) + 1:
            return call.args[roles.index(role) + 1]
        return None

    def _object_and(self, call: ast.Call, index: int) -> tuple[str | None, str | None]:
        role = ARG_ROLES.get(_call_name(call), ("object", "joint"))[index - 1]
        return self.string(self.argument(call, "object")), self.string(self.argument(call, role))

    @staticmethod
    def _side(index: ast.AST) -> str | None:
        value = const_value(index)
        return {0.0: "lower", 1.0: "upper", -1.0: "upper"}.get(value) if value is not None else None

    def joint_of(self, node: ast.AST) -> tuple[str | None, str | None] | None:
        """(object, joint) if ``node`` is a joint position (call or a name holding one)."""
        if _is_call(node, "get_joint_state"):
            return self._object_and(node, 2)
        if isinstance(node, ast.Name):
            return self.joints.get(node.id)
        return None

    def _normalized(self, node: ast.AST) -> tuple[str | None, str | None] | None:
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)):
            return None
        left = node.left
        if not (isinstance(left, ast.BinOp) and isinstance(left.op, ast.Sub)):
            return None
        joint, limit = self.joint_of(left.left), self.limit_of(left.right)
        return joint if joint is not None and limit is not None and limit[0] == "lower" else None

    def fraction_of(self, node: ast.AST) -> tuple[str | None, str | None] | None:
        """(object, joint) if ``node`` is the joint's position as a fraction of its range.

        That is ``(J - lower) / (upper - lower)``, or a name bound once to it; it grows with J.
        """
        if isinstance(node, ast.Name):
            return self.fractions.get(node.id)
        return self._normalized(node)

    def limit_of(
        self, node: ast.AST, depth: int = 0
    ) -> tuple[str, str | None, str | None] | None:
        """(side, object, joint) if ``node`` is a lower or upper joint limit.

        A name bound once to a limit counts as the limit.
        """
        if isinstance(node, ast.Name):
            found = self.limits.get(node.id)
            values = self.assigns.get(node.id, [])
            if found is None and len(values) == 1 and isinstance(values[0], ast.Name) \
                    and values[0].id != node.id and depth < 3:
                return self.limit_of(values[0], depth + 1)  # an alias: target = upper
            return found if found and found[0] != "both" else None
        if isinstance(node, ast.Subscript):
            side = self._side(node.slice)
            base = node.value
            if side and _is_call(base, "get_joint_limit"):
                return (side, *self._object_and(base, 2))
            if side and isinstance(base, ast.Name) and self.limits.get(base.id, ("",))[0] == "both":
                return (side, *self.limits[base.id][1:])
        return None

    def is_distance(self, node: ast.AST, depth: int = 0) -> bool:
        """Whether ``node`` is a Euclidean distance between current states.

        Calls of norm/dist/sqrt/hypot count, and names holding one; distances from *initial*
        states (progress made) do not.
        """
        if isinstance(node, ast.Call) and dotted(node.func) in _DISTANCE_CALLS:
            return not any(_call_name(n) in _INITIAL_CALLS for n in ast.walk(node))
        if isinstance(node, ast.Name) and depth < 3:
            values = self.assigns.get(node.id, [])
            return len(values) == 1 and self.is_distance(values[0], depth + 1)
        return False

    def expand(self, node: _Node, depth: int = 0) -> Iterator[_Node | ast.expr]:
        """``node``, then the expressions assigned to the names it uses (3 levels)."""
        yield node
        if depth >= 3:
            return
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load):
                for value in self.assigns.get(sub.id, []):
                    if value is not node:
                        yield from self.expand(value, depth + 1)

    def reads_state(self, node: ast.expr) -> bool:
        """Whether ``node`` depends on a state API call (directly, via names or helpers)."""
        helpers = {n for n, f in self.functions.items() if self._calls_api(f)}
        for expr in self.expand(node, 0):
            for sub in ast.walk(expr):
                name = _call_name(sub)
                if name in STATE_API_NAMES or name in helpers:
                    return True
        return False

    @staticmethod
    def _calls_api(fn: ast.FunctionDef) -> bool:
        return any(_call_name(n) in STATE_API_NAMES for n in ast.walk(fn))

    def returns(self) -> list[ast.Return]:
        """Return statements of the reward entry function."""
        if self.entry is None:
            return []
        return [
            n for n in ast.walk(self.entry) if isinstance(n, ast.Return) and n.value is not None
        ]

    def reward_outputs(self) -> list[tuple[ast.Return, ast.expr | None, ast.expr | None]]:
        """(return, reward expression, success expression) per return of the entry.

        ``return reward, success`` and ``return out`` with ``out = (reward, success)`` give
        both; a single value gives (value, None).
        """
        outputs = []
        for ret in self.returns():
            value = ret.value
            if isinstance(value, ast.Name):
                tuples = [v for v in self.assigns.get(value.id, []) if isinstance(v, ast.Tuple)]
                value = tuples[0] if tuples else value
            if isinstance(value, ast.Tuple):
                elts = value.elts
                outputs.append((ret, elts[0] if elts else None, elts[1] if len(elts) > 1 else None))
            else:
                outputs.append((ret, value, None))
        return outputs


def signed_terms(
    facts: CodeFacts, expr: ast.expr, sign: int = 1, seen: frozenset = frozenset()
) -> Iterator[tuple[ast.expr, int]]:
    """Additive terms of ``expr`` with the sign they enter with (names expanded once)."""
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add | ast.Sub):
        yield from signed_terms(facts, expr.left, sign, seen)
        yield from signed_terms(
            facts, expr.right, -sign if isinstance(expr.op, ast.Sub) else sign, seen
        )
    elif isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
        yield from signed_terms(facts, expr.operand, -sign, seen)
    elif isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mult | ast.Div):
        factor = const_value(expr.right) if expr.right else None
        other = expr.left
        if factor is None and isinstance(expr.op, ast.Mult):
            factor, other = const_value(expr.left), expr.right
        if factor:
            yield from signed_terms(facts, other, sign if factor > 0 else -sign, seen)
        else:
            yield expr, sign
    elif isinstance(expr, ast.Call) and dotted(expr.func) in ("np.exp", "math.exp") and expr.args:
        yield from signed_terms(facts, expr.args[0], sign, seen)  # exp is increasing
    elif (
        isinstance(expr, ast.Name)
        and expr.id in facts.assigns
        and expr.id not in seen
        and not facts.is_distance(expr)
    ):
        for value in facts.assigns[expr.id]:
            yield from signed_terms(facts, value, sign, seen | {expr.id})
    else:
        yield expr, sign


def constant(facts: CodeFacts, node: ast.AST) -> float | None:
    """The numeric value of ``node``: a literal, or a name bound once to one; else None."""
    value = const_value(node)
    if value is None and isinstance(node, ast.Name):
        values = facts.assigns.get(node.id, [])
        value = const_value(values[0]) if len(values) == 1 else None
    return value


def _abs_inner(node: ast.AST) -> ast.BinOp | None:
    inner = None
    if (
        isinstance(node, ast.Call)
        and dotted(node.func) in ("abs", "np.abs", "np.absolute", "math.fabs", "np.square")
        and node.args
    ):
        inner = node.args[0]
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        inner = node.left
    return inner if isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.Sub) else None


def distance_to_target(facts: CodeFacts, node: ast.AST) -> tuple[tuple, ast.AST] | None:
    """(joint, target) of ``abs(J - T)``, ``np.abs``, ``np.square`` or ``(J - T) ** 2``."""
    inner = _abs_inner(node)
    if inner is None:
        return None
    for a, b in ((inner.left, inner.right), (inner.right, inner.left)):
        joint = facts.joint_of(a)
        if joint is not None:
            return joint, b
    return None


def fraction_target(facts: CodeFacts, node: ast.AST) -> tuple[tuple, float] | None:
    """(joint, c) of ``abs(c - F)`` (or ``np.abs``, squares), F a joint fraction, c a constant.

    Such a reward term drives the joint to the fraction c of its range.
    """
    inner = _abs_inner(node)
    if inner is None:
        return None
    for a, b in ((inner.left, inner.right), (inner.right, inner.left)):
        joint, value = facts.fraction_of(a), constant(facts, b)
        if joint is not None and value is not None:
            return joint, value
    return None
