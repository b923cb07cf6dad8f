"""Syntax tables and small AST helpers shared by the static check.

``ALLOWED_NODES`` is the complete list of Python syntax generated code may use;
``NODE_MESSAGES`` says, for the constructs LLMs most often reach for, why they are
rejected and what to write instead.
"""

from __future__ import annotations

import ast
import re
from typing import Literal

__all__ = [
    "ALLOWED_NODES",
    "FORMAT_SPEC_RE",
    "KINDS",
    "NODE_MESSAGES",
    "SELF_MESSAGE",
    "Kind",
    "bound_names",
    "const_int",
    "cycle_from",
    "find_cycles",
    "is_np_linalg",
    "literal_length",
]

Kind = Literal["reward", "success", "primitive"]
KINDS: tuple[str, ...] = ("reward", "success", "primitive")

# fmt: off
ALLOWED_NODES = (
    ast.Module, ast.FunctionDef, ast.Return, ast.Assign, ast.AugAssign, ast.AnnAssign,
    ast.For, ast.While, ast.If, ast.Expr, ast.Pass, ast.Break, ast.Continue, ast.Delete,
    ast.Assert, ast.BoolOp, ast.NamedExpr, ast.BinOp, ast.UnaryOp, ast.IfExp, ast.Dict,
    ast.Set, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Compare,
    ast.Call, ast.FormattedValue, ast.JoinedStr, ast.Constant, ast.Attribute,
    ast.Subscript, ast.Starred, ast.Name, ast.List, ast.Tuple, ast.Slice,
    ast.expr_context, ast.boolop, ast.operator, ast.unaryop, ast.cmpop, ast.comprehension,
    ast.arguments, ast.arg, ast.keyword,
)
# fmt: on

_IMPORT_MSG = (
    "imports are not allowed; numpy is pre-bound as `np`, math as `math`, and the state "
    "API functions are available without importing"
)
NODE_MESSAGES: dict[type, str] = {
    ast.Import: _IMPORT_MSG,
    ast.ImportFrom: _IMPORT_MSG,
    ast.Lambda: "lambda expressions are not allowed; define a helper function at the top level",
    ast.ClassDef: "class definitions are not allowed; write plain top-level functions",
    ast.With: "`with` blocks are not allowed",
    ast.AsyncWith: "`async with` is not allowed",
    ast.Try: "try/except is not allowed: errors must surface so that they can be reported; "
    "check conditions with `if` instead",
    ast.TryStar: "try/except* is not allowed; check conditions with `if` instead",
    ast.Raise: "`raise` is not allowed; return a value (e.g. success = False) instead",
    ast.Global: "`global` is not allowed; pass values as arguments and return results",
    ast.Nonlocal: "`nonlocal` is not allowed; pass values as arguments and return results",
    ast.Yield: "generators (`yield`) are not allowed; build and return a list",
    ast.YieldFrom: "generators (`yield from`) are not allowed; build and return a list",
    ast.Await: "async code (`await`) is not allowed",
    ast.AsyncFunctionDef: "async functions are not allowed; use `def`",
    ast.AsyncFor: "`async for` is not allowed",
    ast.Match: "`match` statements are not allowed; use if/elif",
}
"""Why each commonly attempted construct is rejected, and what to write instead."""
SELF_MESSAGE = (
    "generated code may not access attributes or items of `self` ({what}); use the state "
    "API functions, e.g. get_position(self, name)"
)
FORMAT_SPEC_RE = re.compile(r"^[<>^=+\- #0,_]*\d{0,2}(\.\d{1,2})?[bcdeEfFgGnosxX%]?$")


def bound_names(nodes: list[ast.stmt]) -> set[str]:
    """Names assigned or deleted anywhere in ``nodes`` (a deliberate over-approximation)."""
    out: set[str] = set()
    for stmt in nodes:
        for sub in ast.walk(stmt):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store | ast.Del):
                out.add(sub.id)
    return out


def is_np_linalg(node: ast.expr) -> bool:
    """Whether ``node`` is the expression ``np.linalg``."""
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "linalg"
        and isinstance(node.value, ast.Name)
        and node.value.id == "np"
    )


def const_int(node: ast.expr, depth: int = 0) -> int | None:
    """Value of a small constant integer expression, without evaluating huge ones."""
    if depth > 8:
        return None
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = const_int(node.operand, depth + 1)
        return -value if value is not None else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow | ast.Mult | ast.Add):
        left, right = const_int(node.left, depth + 1), const_int(node.right, depth + 1)
        if left is None or right is None:
            return None
        if isinstance(node.op, ast.Pow):
            if right < 0 or left.bit_length() * right > 256:
                return None
            return left**right
        return left * right if isinstance(node.op, ast.Mult) else left + right
    return None


def literal_length(node: ast.expr) -> int | None:
    """Length of a list/tuple display or string constant, else None."""
    if isinstance(node, ast.List | ast.Tuple):
        return len(node.elts)
    if isinstance(node, ast.Constant) and isinstance(node.value, str | bytes):
        return len(node.value)
    return None


def cycle_from(start: str, edges: dict[str, set[str]]) -> list[str] | None:
    """A call path from ``start`` back to itself, or None."""
    parents: dict[str, str] = {}
    frontier = [start]
    while frontier:
        current = frontier.pop()
        for callee in sorted(edges.get(current, ())):
            if callee == start:
                path = [current]
                while path[-1] != start:
                    path.append(parents[path[-1]])
                return path[::-1]
            if callee not in parents:
                parents[callee] = current
                frontier.append(callee)
    return None


def find_cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """One call path per back edge of the call graph (linear time, no recursion).

    Each path starts at the function that is called again: ``[f, g]`` for ``f -> g -> f``.
    """
    white, grey, black = 0, 1, 2
    colour = dict.fromkeys(edges, white)
    cycles: list[list[str]] = []
    for root in sorted(edges):
        if colour[root] != white:
            continue
        path: list[str] = [root]
        iters = [iter(sorted(edges[root]))]
        colour[root] = grey
        while iters:
            callee = next(iters[-1], None)
            if callee is None:
                colour[path.pop()] = black
                iters.pop()
                continue
            state = colour.get(callee, black)
            if state == grey:
                cycles.append(path[path.index(callee):])
            elif state == white:
                colour[callee] = grey
                path.append(callee)
                iters.append(iter(sorted(edges[callee])))
    return cycles
