"""The shapes of generated modules the compiler can run faster: pure modules and blocks.

A *pure* module only defines functions and immutable constants, so it can be executed once
at compile time; a success *block* (plain statements assigning ``success``) can run as the
body of a function with fast locals. See :mod:`~simjudge.envs.codegen.compiler`.
"""

from __future__ import annotations

import ast
from types import CodeType

__all__ = [
    "BLOCK_FUNCTION",
    "block_as_function",
    "pure_module",
    "reads_only",
    "wrappable_block",
]

_IMMUTABLE_EXPR = (
    ast.Constant, ast.Tuple, ast.Name, ast.Attribute, ast.BinOp, ast.UnaryOp, ast.BoolOp,
    ast.Compare, ast.IfExp, ast.Subscript, ast.Slice, ast.JoinedStr, ast.FormattedValue,
    ast.expr_context, ast.operator, ast.unaryop, ast.boolop, ast.cmpop,
)


def pure_module(tree: ast.Module) -> bool:
    """Whether the top level only defines functions and immutable constants.

    Such a module can run once at compile time: its values (numbers, strings, tuples of
    them, results of guarded operators on them) cannot be changed by later calls, so
    no state survives from one call to the next. Any call, list, dict or set display at
    the top level makes it impure (it then runs afresh on every call).
    """
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef):
            if any(not isinstance(n, _IMMUTABLE_EXPR) for d in stmt.args.defaults
                   for n in ast.walk(d)):
                return False
            continue
        if isinstance(stmt, ast.Assign | ast.AnnAssign | ast.Expr):
            value = stmt.value
            if value is None or not all(isinstance(n, _IMMUTABLE_EXPR) for n in ast.walk(value)):
                return False
            targets = stmt.targets if isinstance(stmt, ast.Assign) else (
                [stmt.target] if isinstance(stmt, ast.AnnAssign) else [])
            if not all(isinstance(n, ast.Name | ast.Tuple | ast.expr_context)
                       for t in targets for n in ast.walk(t)):
                return False
            continue
        return False
    return True


BLOCK_FUNCTION = "__sj_block"


def wrappable_block(tree: ast.Module, namespace: set[str]) -> bool:
    """Whether a success block can run as the body of a function.

    It must be plain statements (no function definitions) that bind no name the
    namespace already provides (a local would shadow it from the block's first line).
    """
    if any(isinstance(stmt, ast.FunctionDef) for stmt in tree.body):
        return False
    bound = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and not
             isinstance(n.ctx, ast.Load)}
    return not bound & namespace


def block_as_function(tree: ast.Module) -> ast.Module:
    """``<block>`` -> ``def __sj_block(self): success = __sj_missing; <block>; return success``.

    The block then runs with fast locals and is compiled once; a path that never assigns
    ``success`` returns the marker, reported as a missing output.
    """
    line = tree.body[0].lineno if tree.body else 1
    start = ast.parse("success = __sj_missing").body
    end = ast.parse("return success").body
    for stmt in (*start, *end):
        for node in ast.walk(stmt):
            if hasattr(node, "lineno"):
                node.lineno = node.end_lineno = line  # type: ignore[attr-defined]
                node.col_offset = node.end_col_offset = 0  # type: ignore[attr-defined]
    args = ast.arguments(posonlyargs=[], args=[ast.arg(arg="self")], kwonlyargs=[],
                         kw_defaults=[], defaults=[])
    function = ast.FunctionDef(name=BLOCK_FUNCTION, args=args, body=[*start, *tree.body, *end],
                               decorator_list=[], returns=None, type_comment=None)
    ast.copy_location(function, tree.body[0] if tree.body else start[0])
    module = ast.Module(body=[function], type_ignores=[])
    return ast.fix_missing_locations(module)


def reads_only(code: CodeType, entry: str | None, slots: set[str]) -> bool:
    """Whether ``entry`` in ``code`` names nothing but slots (no guard, builtin, API, nesting).

    Such an entry only calls resolved state readings and runs plain operators on their
    results, so it needs no current run (see :func:`~.runtime.lean_call`).
    """
    found = [c for c in code.co_consts if isinstance(c, CodeType) and c.co_name == entry]
    if len(found) != 1:
        return False
    function = found[0]
    if any(isinstance(c, CodeType) for c in function.co_consts):
        return False
    return set(function.co_names) <= slots | {"__sj_missing"}
