"""Guards dropped where the operand types are known: arithmetic on resolved state readings.

After :mod:`~simjudge.envs.codegen.resolve` has turned constant state-API calls into slots,
their result types are known (``get_joint_state`` -> float, ``get_joint_limit`` -> two
floats, ``get_position`` -> a float array of 3 ...). In the entry function of the guarded
tree, a guarded operator ``__sj_binop(op, a, b)`` or comparison ``__sj_compare(op, a, b)``
whose operands are both of such a known small type is put back as the plain operator: the
guard would only have called that very operator (numbers have no size to check, and arrays
of 3 or 4 elements are far below every limit), so the result, and any error, is the same.
Everything else keeps its guard.

Types are inferred flow-insensitively over the function's local names: a name has a type
when every assignment to it (``x = e`` or ``a, b = e``) gives that type; names bound any
other way (parameters, ``global``, augmented or annotated assignment, loops, ``del``,
walrus) stay unknown.
"""

from __future__ import annotations

import ast
from typing import Any

__all__ = ["SLOT_TYPES", "drop_known_guards"]

Type = Any
"""``"float"``, ``("array", n)`` (1-D float64 array of ``n`` elements) or a tuple of types."""
FLOAT = "float"
_ARRAY3, _ARRAY4 = ("array", 3), ("array", 4)
SLOT_TYPES: dict[str, Type] = {
    "get_joint_state": FLOAT,
    "get_joint_limit": (FLOAT, FLOAT),
    "get_position": _ARRAY3,
    "get_orientation": _ARRAY3,
    "get_eef_pos": (_ARRAY3, _ARRAY4),
    "get_bounding_box": (_ARRAY3, _ARRAY3),
    "get_bounding_box_link": (_ARRAY3, _ARRAY3),
    "get_link_state": _ARRAY3,
}
"""What each resolved state-API function returns (functions not listed: unknown)."""

# fmt: off
_ARITH = {"+": ast.Add, "-": ast.Sub, "*": ast.Mult, "/": ast.Div, "//": ast.FloorDiv,
          "%": ast.Mod, "**": ast.Pow}
_ARRAY_ARITH = frozenset({"+", "-", "*", "/"})
_OP_OF = {node: op for op, node in _ARITH.items()}
_ORDER = {"<": ast.Lt, "<=": ast.LtE, ">": ast.Gt, ">=": ast.GtE, "==": ast.Eq, "!=": ast.NotEq}
# fmt: on


def _is_number(t: Type) -> bool:
    return t == FLOAT or t == "int"


def _is_array(t: Type) -> bool:
    return isinstance(t, tuple) and len(t) == 2 and t[0] == "array"


class _Inference:
    """Types of expressions given the types of slots and of local names."""

    def __init__(self, slots: dict[str, Type]) -> None:
        self.slots = slots
        self.names: dict[str, Type] = {}

    def of(self, node: ast.expr) -> Type:
        if isinstance(node, ast.Constant):
            kind = type(node.value)
            return FLOAT if kind is float else "int" if kind is int else None
        if isinstance(node, ast.Name):
            return self.names.get(node.id)
        if isinstance(node, ast.Tuple) and isinstance(node.ctx, ast.Load):
            items = tuple(self.of(e) for e in node.elts)
            return items if all(t is not None for t in items) else None
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            inner = self.of(node.operand)
            return inner if inner == FLOAT or _is_array(inner) else None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.args:
            return self.slots.get(node.func.id)
        if isinstance(node, ast.BinOp):  # a guard already dropped below this node
            return _arith_type(_OP_OF.get(type(node.op), ""), self.of(node.left),
                               self.of(node.right))
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            return _item_type(self.of(node.value), node.slice)
        guarded = _guarded(node)
        if guarded is None:
            return None
        helper, op, a, b = guarded
        if helper == "__sj_binop":
            return _arith_type(op, self.of(a), self.of(b))
        if helper == "__sj_getitem":
            return _item_type(self.of(a), b)
        return None


def _item_type(value: Type, key: ast.expr) -> Type:
    """The type of ``value[key]`` for a tuple of known types and a constant int key."""
    if not (isinstance(key, ast.Constant) and type(key.value) is int):
        return None
    if isinstance(value, tuple) and not _is_array(value) and -len(value) <= key.value < len(value):
        return value[key.value]
    return None


def _arith_type(op: str, a: Type, b: Type) -> Type:
    """The result type of ``a op b`` when the operator can run unguarded, else None."""
    if op not in _ARITH or a is None or b is None:
        return None
    if _is_number(a) and _is_number(b):
        if a == "int" and b == "int":
            return None  # int results can grow: keep the guard
        return None if op == "**" else FLOAT  # float ** float may be complex
    if op in _ARRAY_ARITH:
        if _is_array(a) and (a == b or _is_number(b)):
            return a
        if _is_array(b) and _is_number(a):
            return b
    return None


def _guarded(node: ast.AST) -> tuple[str, str, ast.expr, ast.expr] | None:
    """The parts of a guard call: ``(helper, op, a, b)``, or None for anything else.

    ``__sj_binop(op, a, b)`` and ``__sj_compare(op, a, b)`` give their operator and
    operands; ``__sj_getitem(obj, key)`` gives ``("__sj_getitem", "", obj, key)``.
    """
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords):
        return None
    name, args = node.func.id, node.args
    if name == "__sj_getitem" and len(args) == 2:
        return name, "", args[0], args[1]
    if name in ("__sj_binop", "__sj_compare") and len(args) == 3:
        op = args[0]
        if isinstance(op, ast.Constant) and isinstance(op.value, str):
            return name, op.value, args[1], args[2]
    return None


def _scope_nodes(function: ast.FunctionDef) -> list[ast.AST]:
    """The nodes of ``function``'s own scope (not inside nested functions or lambdas)."""
    nodes: list[ast.AST] = []
    stack: list[ast.AST] = [*function.body]
    while stack:
        node = stack.pop()
        nodes.append(node)
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            stack.extend(ast.iter_child_nodes(node))
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            nodes.append(ast.Name(id=node.name, ctx=ast.Store()))  # binds its name here
    return nodes


def _assignments(function: ast.FunctionDef) -> tuple[dict[str, list[Any]], set[str]]:
    """Local name -> its plain assignments ``(value, tuple position)``; names bound otherwise."""
    found: dict[str, list[Any]] = {}
    plain: set[int] = set()
    nodes = _scope_nodes(function)
    for node in nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                found.setdefault(target.id, []).append((node.value, None))
                plain.add(id(target))
            elif isinstance(target, ast.Tuple) and all(
                isinstance(e, ast.Name) for e in target.elts
            ):
                for i, e in enumerate(target.elts):
                    assert isinstance(e, ast.Name)
                    found.setdefault(e.id, []).append((node.value, (i, len(target.elts))))
                    plain.add(id(e))
    other = {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)}
    for node in nodes:
        if isinstance(node, ast.Global | ast.Nonlocal):
            other.update(node.names)
        elif isinstance(node, ast.MatchAs | ast.MatchStar | ast.ExceptHandler) and node.name:
            other.add(node.name)  # bindings that are not Name nodes (defence in depth)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            other.add(node.rest)
        elif isinstance(node, ast.alias):
            other.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            if id(node) not in plain:
                other.add(node.id)  # loops, walrus, del, starred or nested targets
    return found, other


def _infer(function: ast.FunctionDef, slots: dict[str, Type]) -> _Inference:
    """The least fixpoint: a name gets a type once all its assignments have that type."""
    inference = _Inference(slots)
    found, other = _assignments(function)
    changed = True
    while changed:
        changed = False
        for name, values in found.items():
            if name in other or name in inference.names:
                continue
            types = set()
            for value, position in values:
                t = inference.of(value)
                if position is not None:
                    index, count = position
                    t = t[index] if isinstance(t, tuple) and not _is_array(t) and len(
                        t) == count else None
                types.add(t)
            if len(types) == 1 and None not in types:
                inference.names[name] = types.pop()
                changed = True
    return inference


class _Unguard(ast.NodeTransformer):
    """Puts back plain operators where both operand types are known."""

    def __init__(self, inference: _Inference) -> None:
        self.inference = inference

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        return node  # nested scopes keep every guard

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        guarded = _guarded(node)
        if guarded is None:
            return node
        helper, op, a, b = guarded
        of = self.inference.of
        if helper == "__sj_binop" and op in _ARITH:
        # plain numbers (ints only next to a float) and small arrays: the guard adds nothing
            ta, tb = of(a), of(b)
            if _arith_type(op, ta, tb) is not None or (op == "**" and FLOAT in (ta, tb) and
                                                       _is_number(ta) and _is_number(tb)):
                return ast.copy_location(ast.BinOp(left=a, op=_ARITH[op](), right=b), node)
        elif helper == "__sj_compare" and op in _ORDER:
            ta, tb = of(a), of(b)
            if _is_number(ta) and _is_number(tb):
                return ast.copy_location(
                    ast.Compare(left=a, ops=[_ORDER[op]()], comparators=[b]), node
                )
        elif helper == "__sj_getitem" and of(node) is not None:
            return ast.copy_location(ast.Subscript(value=a, slice=b, ctx=ast.Load()), node)
        return node


def drop_known_guards(tree: ast.Module, entry: str, slots: dict[str, Type]) -> ast.Module:
    """Unguard the operators of ``entry`` whose operand types are known (in place).

    Args:
        tree: The guarded module (after :class:`~.transform.GuardTransformer`).
        entry: The entry function's name.
        slots: Slot name -> the type its reading returns (see :data:`SLOT_TYPES`).
    """
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name == entry:
            inference = _infer(stmt, slots)
            unguard = _Unguard(inference)
            stmt.body = [unguard.visit(s) for s in stmt.body]
    return ast.fix_missing_locations(tree)
