"""Statements of the cost proof: environments, branches, loops and helper calls.

The expression half is :class:`~simjudge.envs.codegen.prove._Prover`; this base class walks
statements over an environment (name -> type). Branches join their environments (a name
bound on one side only keeps that side's type: reading it on the other side raises at run
time, which costs nothing); a loop's body is analysed until the environment it starts
with stops changing (at most :data:`MAX_ROUNDS` rounds, else unproven), with its work
multiplied by the loop's iteration bound. A helper function is analysed at each call
with the argument types of that call (recursion is rejected by the checker).
"""

from __future__ import annotations

import ast
from typing import Any

from simjudge.envs.errors import SimjudgeError

from .costtypes import (
    NONE,
    TOKEN,
    Num,
    Seq,
    Str,
    Tup,
    Type,
    Unproven,
    join,
    members,
    numeric_size,
    size,
)

__all__ = ["MAX_ROUNDS", "Flow"]

MAX_ROUNDS = 6
"""Rounds of a loop body's analysis before its types must have settled."""


class _Return(SimjudgeError):  # noqa: N818 - control flow of the analysis
    pass


class Flow:
    """Statement analysis shared by the prover; subclasses provide ``expr`` and friends."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.work = 0
        self.mult = 1
        self.env: dict[str, Type] = {}
        self.module_env: dict[str, Type] = {}
        self.locals: frozenset[str] = frozenset()
        self.returns: list[Type] = []
        self.functions: dict[str, ast.FunctionDef] = {}
        self._memo: dict[tuple[Any, ...], tuple[Type, int]] = {}
        self._in_function = False

    # provided by the expression half
    def expr(self, node: ast.expr) -> Type:  # pragma: no cover - overridden
        """The type of an expression."""
        raise NotImplementedError

    def global_name(self, name: str, line: int | None) -> Type:  # pragma: no cover
        """The type of a non-local name."""
        raise NotImplementedError

    def add_work(self, amount: int, line: int | None) -> None:  # pragma: no cover
        """Count work."""
        raise NotImplementedError

    # -- entry ------------------------------------------------------------------------

    def run(self, entry: str | None, entry_takes_self: bool) -> None:
        """Analyse the module's statements, then one call of ``entry``."""
        self.env = self.module_env
        self.locals = frozenset(_bound_names(self.tree.body))
        for stmt in self.tree.body:
            if isinstance(stmt, ast.FunctionDef):
                self.definition(stmt)
            else:
                self.stmt(stmt)
        if entry is not None:
            self.call_function(entry, (TOKEN,) if entry_takes_self else (), None)

    def name(self, name: str, line: int | None) -> Type:
        """The type of reading ``name`` here."""
        if name in self.env:
            return self.env[name]
        if self._in_function and name in self.locals:
            raise Unproven(f"{name!r} may be read before it is assigned", line)
        return self.global_name(name, line)

    def definition(self, fn: ast.FunctionDef) -> None:
        """What ``def`` runs: defaults and annotations (evaluated when the module runs)."""
        annotations = [a.annotation for a in ast.walk(fn.args) if isinstance(a, ast.arg)]
        annotations.append(fn.returns)
        if fn.decorator_list or any(a is not None and not _plain_annotation(a)
                                    for a in annotations):
            raise Unproven(f"{fn.name}() has decorators or computed annotations", fn.lineno)
        for default in fn.args.defaults:
            self.expr(default)

    def _defaults(self, fn: ast.FunctionDef) -> list[Type]:
        """The types of ``fn``'s defaults, read in the module's scope (as ``def`` does)."""
        saved = self.env, self._in_function
        self.env, self._in_function = self.module_env, False
        try:
            return [self.expr(d) for d in fn.args.defaults]
        finally:
            self.env, self._in_function = saved

    def call_function(self, name: str, args: tuple[Type, ...], line: int | None) -> Type:
        """The return type of the helper ``name`` called with ``args`` (work counted)."""
        fn = self.functions[name]
        spec = fn.args
        if spec.vararg or spec.kwarg or spec.kwonlyargs or spec.posonlyargs:
            raise Unproven(f"{name}() takes *args, **kwargs or keyword-only parameters", line)
        params = [a.arg for a in spec.args]
        defaults = self._defaults(fn)
        if not len(params) - len(defaults) <= len(args) <= len(params):
            raise Unproven(f"{name}() is called with {len(args)} arguments", line)
        full = args + tuple(defaults[len(args) - (len(params) - len(defaults)):])
        key = (name, full, frozenset(self.module_env.items()))  # globals may be rebound
        if key not in self._memo:
            self._memo[key] = self._analyse_function(fn, dict(zip(params, full, strict=True)))
        result, work = self._memo[key]
        self.add_work(work, line)
        return result

    def _analyse_function(self, fn: ast.FunctionDef, bound: dict[str, Type]) -> tuple[Type, int]:
        saved = (self.env, self.locals, self.returns, self.work, self.mult, self._in_function)
        self.env, self.returns, self.work, self.mult = bound, [], 0, 1
        self.locals = frozenset(_bound_names(fn.body)) | frozenset(bound)
        self._in_function = True
        try:
            try:
                self.block(fn.body)
                self.returns.append(NONE)  # fell off the end
            except _Return:
                pass
            return join(*self.returns), self.work
        finally:
            (self.env, self.locals, self.returns, self.work, self.mult,
             self._in_function) = saved

    # -- statements -------------------------------------------------------------------

    def block(self, body: list[ast.stmt]) -> None:
        """Analyse statements in order (raises ``_Return`` after a return)."""
        for stmt in body:
            self.stmt(stmt)

    def stmt(self, node: ast.stmt) -> None:
        """Analyse one statement."""
        line = node.lineno
        self.add_work(16, line)  # NODE_WORK of prove.py
        if isinstance(node, ast.Expr):
            if not (isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
                self.expr(node.value)  # docstrings cost nothing
        elif isinstance(node, ast.Assign):
            value = self.expr(node.value)
            for target in node.targets:
                self.bind(target, value, line)
        elif isinstance(node, ast.AnnAssign) and node.value is not None and node.simple and (
                _plain_annotation(node.annotation)):
            self.bind(node.target, self.expr(node.value), line)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Subscript):
            current = self.expr(node.target)
            self.bind(node.target, self.binop(_augop(node), current, self.expr(node.value),
                                              line), line)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            current = self.name(node.target.id, line)
            if any(isinstance(o, Tup | Seq) for o in members(current)):
                # list += extends the list in place: every alias of it grows too, unseen
                raise Unproven("an augmented assignment to a list or tuple (a list grows in "
                               "place, with every name bound to it)", line)
            self.env[node.target.id] = self.binop(_augop(node), current,
                                                  self.expr(node.value), line)
        elif isinstance(node, ast.Return):
            self.returns.append(NONE if node.value is None else self.expr(node.value))
            raise _Return
        elif isinstance(node, ast.If):
            self.expr(node.test)
            self.branches([node.body, node.orelse])
        elif isinstance(node, ast.For):
            self.loop(node)
        elif isinstance(node, ast.Assert):
            self.expr(node.test)
        elif not isinstance(node, ast.Pass | ast.Break | ast.Continue):
            raise Unproven(f"{type(node).__name__} statements are not in the proven subset", line)

    def binop(self, op: str, left: Type, right: Type, line: int | None) -> Type:
        """Provided by the expression half."""
        raise NotImplementedError  # pragma: no cover

    def bind(self, target: ast.expr, value: Type, line: int | None) -> None:
        """Assign ``value`` to a name or a tuple of names."""
        if isinstance(target, ast.Name):
            self.env[target.id] = value
            return
        if isinstance(target, ast.Tuple | ast.List) and not any(
                isinstance(e, ast.Starred) for e in target.elts):
            count = len(target.elts)
            for i, element in enumerate(target.elts):
                self.bind(element, _unpacked(value, i, count, line), line)
            return
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            self.store_item(target, value, line)
            return
        raise Unproven("assignment to an attribute or nested item is not in the proven subset",
                       line)

    def store_item(self, target: ast.Subscript, value: Type, line: int | None) -> None:
        """``a[key] = value`` into a numpy array ``a``: its size and type do not change."""
        assert isinstance(target.value, ast.Name)
        array = self.name(target.value.id, line)
        key = self.expr(target.slice)
        if not all(isinstance(o, Num) and o.floaty for o in members(array)):
            raise Unproven("item assignment into a value not known to be a numpy array "
                           "(lists can grow)", line)
        if numeric_size(value) is None or numeric_size(key) is None and not (
                _slice_like(key)):
            raise Unproven("item assignment of a value or key not known to be numeric", line)
        self.add_work(size(array) * max(1, size(key)) + size(value), line)

    def branches(self, bodies: list[list[ast.stmt]]) -> None:
        """Analyse alternative bodies from the same environment; join what they leave."""
        start = dict(self.env)
        ends: list[dict[str, Type]] = []
        for body in bodies:
            self.env = dict(start)
            try:
                self.block(body)
                ends.append(self.env)
            except _Return:
                pass
        if not ends:
            self.env = start
            raise _Return
        self.env = _join_envs(ends)

    def loop(self, node: ast.For) -> None:
        """A ``for`` loop: its body's types to a fixpoint, its work times its count."""
        from .costcalls import _iter_item

        item, count = _iter_item(self.expr(node.iter), node.lineno)
        self._loop_bound(count, node.lineno)  # type: ignore[attr-defined]
        before, mult = dict(self.env), self.mult
        self.mult = mult * max(count, 1)
        try:
            for _ in range(MAX_ROUNDS):
                start = dict(self.env)
                self.bind(node.target, item, node.lineno)
                try:
                    self.block(node.body)
                except _Return:
                    self.env = start
                merged = _join_envs([start, self.env])
                if merged == start:
                    break
                self.env = merged
            else:
                raise Unproven("the types of a loop's variables do not settle", node.lineno)
        finally:
            self.mult = mult
        self.env = _join_envs([before, self.env])
        self.block(node.orelse)


def _plain_annotation(node: ast.expr) -> bool:
    """An annotation that costs nothing to evaluate: a name, a dotted name or a constant."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name | ast.Constant)


def _augop(node: ast.AugAssign) -> str:
    from .prove import _BINOPS

    op = _BINOPS.get(type(node.op))
    if op is None:
        raise Unproven("a shift operator", node.lineno)
    return op


def _slice_like(key: Type) -> bool:
    """Whether ``key`` is a slice, ``...``, None or a tuple of those and numbers."""
    from .costtypes import Ref

    parts = key.items if isinstance(key, Tup) else (key,)
    return all(p in (NONE, Ref("slice"), Ref("...")) or numeric_size(p) is not None
               for p in parts)


def _unpacked(value: Type, index: int, count: int, line: int | None) -> Type:
    """The ``index``-th of ``count`` targets unpacked from ``value``."""
    from .costcalls import _iter_item

    options: list[Type] = []
    for option in members(value):
        if isinstance(option, Tup):
            if len(option.items) == count:
                options.append(option.items[index])
            continue  # a ValueError at run time
        if option in (NONE, TOKEN) or (isinstance(option, Str) and option.n is None):
            continue  # a TypeError at run time
        options.append(_iter_item(option, line)[0] if not isinstance(option, Seq)
                       else option.item)
    if not options:
        raise Unproven("an unpacking that cannot succeed", line)
    return join(*options)


def _join_envs(envs: list[dict[str, Type]]) -> dict[str, Type]:
    names: dict[str, list[Type]] = {}
    for env in envs:
        for name, value in env.items():
            names.setdefault(name, []).append(value)
    return {name: join(*values) for name, values in names.items()}


def _bound_names(body: list[Any]) -> set[str]:
    """Names a function body binds (its locals), not looking into nested scopes."""
    found: set[str] = set()
    stack = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.add(node.name)
            continue
        if isinstance(node, ast.Lambda | ast.ListComp | ast.SetComp | ast.DictComp
                      | ast.GeneratorExp):
            continue
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            found.add(node.id)
        stack.extend(ast.iter_child_nodes(node))
    return found
