"""Rewrite checked generated code so that risky operations go through the guards.

The rewrite keeps every node's line number, so errors point at the submitted
source. After it:

- ``a <op> b`` becomes ``__sj_binop("<op>", a, b)`` (sizes checked before the work);
- ``a < b`` (and ``<= > >= == != in not in``, also chained, ``is`` inside chains) becomes
  ``__sj_compare``/``__sj_chain`` (chained operands are evaluated eagerly, which only
  matters for side effects);
- ``x[k]`` (load) becomes ``__sj_getitem(x, k)``, ``x[k] = v`` becomes
  ``__sj_setitem(x, k, v)``, ``del x[k]`` becomes ``__sj_delitem(x, k)`` and slices
  become ``__sj_slice(...)``;
- set members and dict keys (displays and comprehensions) pass through ``__sj_key``,
  which refuses tuples nested too deeply to hash safely;
- ``x <op>= v`` becomes ``x = __sj_binop(...)`` and ``x[k] <op>= v`` becomes
  ``__sj_augitem(x, k, "<op>", v)``: augmented assignment is evaluated out of place;
- ``obj.attr`` and ``obj.m(...)`` become ``__sj_getattr``/``__sj_callmethod`` unless
  ``obj`` is ``np``, ``np.linalg`` or ``math`` (already validated statically);
- f-string fields are size-checked by ``__sj_fmt``; annotations are dropped (never
  evaluated).
"""

from __future__ import annotations

import ast
import dis
from collections.abc import Callable
from types import CodeType
from typing import Any

from .runtime import GENERATED_FILENAME

__all__ = ["GuardTransformer", "compile_guarded", "looping_code_objects"]

# fmt: off
_OPERATORS: dict[type, str] = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
    ast.Mod: "%", ast.Pow: "**", ast.LShift: "<<", ast.RShift: ">>", ast.BitAnd: "&",
    ast.BitOr: "|", ast.BitXor: "^", ast.MatMult: "@",
}
# fmt: on
# fmt: off
_COMPARISONS: dict[type, str] = {
    ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=",
    ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not",
}
# fmt: on


def _helper(name: str, args: list[ast.expr], like: ast.AST) -> ast.Call:
    call = ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=args, keywords=[])
    return ast.copy_location(call, like)


def _const(value: Any, like: ast.AST) -> ast.Constant:
    # Any: a Constant also holds tuples at run time (typeshed lists only scalar constants).
    return ast.copy_location(ast.Constant(value=value), like)


def _is_module_base(node: ast.expr) -> bool:
    if isinstance(node, ast.Name):
        return node.id in ("np", "math")
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "linalg"
        and isinstance(node.value, ast.Name)
        and node.value.id == "np"
    )


class GuardTransformer(ast.NodeTransformer):
    """Rewrites a module that passed the static check (see the module docstring)."""

    def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
        """Route every binary operator through ``__sj_binop``."""
        self.generic_visit(node)
        op = _const(_OPERATORS[type(node.op)], node)
        return _helper("__sj_binop", [op, node.left, node.right], node)

    def visit_Compare(self, node: ast.Compare) -> ast.expr:
        """Route ordering and equality comparisons through the guards."""
        self.generic_visit(node)
        if all(isinstance(op, ast.Is | ast.IsNot) for op in node.ops):
            return node  # identity tests are cheap and stay native
        ops = [_COMPARISONS[type(op)] for op in node.ops]
        if len(ops) == 1:
            return _helper(
                "__sj_compare", [_const(ops[0], node), node.left, *node.comparators], node
            )
        return _helper("__sj_chain", [_const(tuple(ops), node), node.left, *node.comparators], node)

    def visit_Subscript(self, node: ast.Subscript) -> ast.expr:
        """Guard item reads (stores and deletes are rewritten by their statements)."""
        self.generic_visit(node)
        if isinstance(node.ctx, ast.Load):
            return _helper("__sj_getitem", [node.value, node.slice], node)
        return node

    def visit_Assign(self, node: ast.Assign) -> ast.stmt:
        """``x[k] = v`` (the only item store the checker accepts) goes through the guard."""
        self.generic_visit(node)
        target = node.targets[0]
        if len(node.targets) == 1 and isinstance(target, ast.Subscript):
            call = _helper("__sj_setitem", [target.value, target.slice, node.value], node)
            return ast.copy_location(ast.Expr(value=call), node)
        return node

    def visit_Delete(self, node: ast.Delete) -> list[ast.stmt]:
        """``del x[k]`` goes through the guard (one statement per target)."""
        self.generic_visit(node)
        out: list[ast.stmt] = []
        for target in node.targets:
            if isinstance(target, ast.Subscript):
                call = _helper("__sj_delitem", [target.value, target.slice], target)
                out.append(ast.copy_location(ast.Expr(value=call), node))
            else:
                out.append(ast.copy_location(ast.Delete(targets=[target]), node))
        return out

    def visit_Set(self, node: ast.Set) -> ast.expr:
        """Set members are hash-checked."""
        self.generic_visit(node)
        node.elts = [e if isinstance(e, ast.Starred) else _helper("__sj_key", [e], e)
                     for e in node.elts]
        return node

    def visit_SetComp(self, node: ast.SetComp) -> ast.expr:
        """Set members are hash-checked."""
        self.generic_visit(node)
        node.elt = _helper("__sj_key", [node.elt], node.elt)
        return node

    def visit_Dict(self, node: ast.Dict) -> ast.expr:
        """Dict keys are hash-checked."""
        self.generic_visit(node)
        node.keys = [k if k is None else _helper("__sj_key", [k], k) for k in node.keys]
        return node

    def visit_DictComp(self, node: ast.DictComp) -> ast.expr:
        """Dict keys are hash-checked."""
        self.generic_visit(node)
        node.key = _helper("__sj_key", [node.key], node.key)
        return node

    def visit_Slice(self, node: ast.Slice) -> ast.expr:
        """Slices become ``slice(...)`` values so they can be passed to the guards."""
        self.generic_visit(node)
        parts = [
            p if p is not None else _const(None, node) for p in (node.lower, node.upper, node.step)
        ]
        return _helper("__sj_slice", parts, node)

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.stmt:
        """Evaluate ``x <op>= v`` out of place, through ``__sj_binop``."""
        value = self.visit(node.value)
        op = _const(_OPERATORS[type(node.op)], node)
        target = node.target
        if isinstance(target, ast.Subscript):
            container = self.visit(target.value)
            key = self.visit(target.slice)
            call = _helper("__sj_augitem", [container, key, op, value], node)
            return ast.copy_location(ast.Expr(value=call), node)
        assert isinstance(target, ast.Name), "the checker rejects attribute targets"
        load = ast.copy_location(ast.Name(id=target.id, ctx=ast.Load()), target)
        new_value = _helper("__sj_binop", [op, load, value], node)
        return ast.copy_location(ast.Assign(targets=[target], value=new_value), node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.stmt:
        """Drop the annotation (it is never evaluated)."""
        if node.value is None:
            return ast.copy_location(ast.Pass(), node)
        value = self.visit(node.value)
        target = self.visit(node.target)
        return ast.copy_location(ast.Assign(targets=[target], value=value), node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.stmt:
        """Drop annotations of parameters and return values."""
        node.returns = None
        args = node.args
        for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
            if arg is not None:
                arg.annotation = None
        self.generic_visit(node)
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.expr:
        """Guard data-attribute reads except on ``np``/``math``."""
        if _is_module_base(node.value) or not isinstance(node.ctx, ast.Load):
            return node
        base = self.visit(node.value)
        return _helper("__sj_getattr", [base, _const(node.attr, node)], node)

    def visit_Call(self, node: ast.Call) -> ast.expr:
        """Guard method calls except on ``np``/``math``."""
        func = node.func
        if isinstance(func, ast.Attribute) and not _is_module_base(func.value):
            base = self.visit(func.value)
            args = [self.visit(a) for a in node.args]
            keywords = [self.visit(k) for k in node.keywords]
            call = _helper("__sj_callmethod", [base, _const(func.attr, func), *args], node)
            call.keywords = keywords
            return call
        self.generic_visit(node)
        return node

    def visit_FormattedValue(self, node: ast.FormattedValue) -> ast.expr:
        """Size-check values before they are formatted."""
        node.value = _helper("__sj_fmt", [self.visit(node.value)], node.value)
        return node


def compile_guarded(
    tree: ast.Module, refine: Callable[[ast.Module], ast.Module] | None = None
) -> CodeType:
    """Rewrite ``tree`` (modified in place) and compile it for the guarded runtime.

    ``refine`` may rewrite the guarded tree before it is compiled (it drops guards whose
    operand types are known: :func:`~simjudge.envs.codegen.typed.drop_known_guards`).
    """
    guarded = GuardTransformer().visit(tree)
    if refine is not None:
        guarded = refine(guarded)
    ast.fix_missing_locations(guarded)
    return compile(guarded, GENERATED_FILENAME, "exec", dont_inherit=True)


_JUMPS = frozenset(dis.hasjrel) | frozenset(dis.hasjabs)
_BACKWARD = frozenset(code for name, code in dis.opmap.items() if "BACKWARD" in name)
"""Python >= 3.11: every backward jump (JUMP_BACKWARD*, 3.11's POP_JUMP_BACKWARD_IF_*)."""


def _has_backward_jump(code: CodeType) -> bool:
    if _BACKWARD:
        ops = code.co_code[::2]
        return any(op in ops for op in _BACKWARD)
    return any(
        ins.opcode in _JUMPS and isinstance(ins.argval, int) and ins.argval <= ins.offset
        for ins in dis.get_instructions(code)
    )


def looping_code_objects(code: CodeType) -> frozenset[CodeType]:
    """The code objects (``code`` and nested ones) that contain a backward jump.

    Only these need per-opcode tracing: code without a loop finishes in a number of
    steps bounded by its length (calls are traced separately).
    """
    found: set[CodeType] = set()
    stack = [code]
    while stack:
        current = stack.pop()
        stack.extend(c for c in current.co_consts if isinstance(c, CodeType))
        if _has_backward_jump(current):
            found.add(current)
    return frozenset(found)
