"""The cost proof: which checked code may run in-process, and why.

An allowlist proof, run once at compile time over the checked AST: an abstract
interpreter walks the module (then the entry function, helpers analysed at each call with
the argument types of that call) over the types of :mod:`~.costtypes`, and admits the code
only if every value it can hold has a bounded logical size and every operation has a
known bounded work:

- values: numbers, bools, Python ints of at most :data:`~.costtypes.INT_CAP`, numeric numpy
  arrays of at most :data:`~.costtypes.MAX_ELEMENTS` elements, strings of at most
  :data:`~.costtypes.MAX_STR` characters, fixed tuples/lists and bounded sequences of those;
- sources: literals (size-checked: a long hex literal is refused), the functions of
  :data:`simjudge.envs.state_api.STATE_API` (those very objects: another function of the
  same name has no known result) and the call table of :mod:`~.costcalls`, whose rules
  read every positional *and* keyword argument;
- control: ``if``, ``for`` over ``range`` of bounded ints or over bounded sequences (the
  loop's types iterated to a fixpoint), comprehensions of the same, calls of helpers;
- primitive blocks: a call of a primitive the executor binds (``grasp_object_link`` ...) costs
  :data:`CALL_WORK` (the primitive itself is the executor's own code, timed apart) and
  returns a pair of :data:`~.costtypes.OPAQUE` values (``rgbs, final_state``) that the code
  may only hold, return or pass on: any operation on them makes the code unproven.

Anything else (``while``, item stores, mutating methods, ``str``/``int`` of strings,
string repetition, sequence repetition, dicts, sets, ``print``, a keyword the table does not
name, a value whose type is not known) makes the code *unproven*, with the first reason
found; such code runs in the OS-bounded worker process (:mod:`~.sandbox`). The total work
(elements touched plus a cost per expression and per call, times loop counts and calls)
must stay under :data:`MAX_WORK`, which keeps a proven call near 0.1-0.3 s even in a loop.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .costcalls import API_RESULTS, call_rule, method_rule
from .costtypes import (
    BOOL,
    FLOAT,
    INT_CAP,
    MAX_ELEMENTS,
    MAX_STR,
    NONE,
    OPAQUE,
    TOKEN,
    Num,
    Ref,
    Seq,
    Str,
    Tup,
    Type,
    Unproven,
    bounded,
    has_api_name,
    int_bound,
    join,
    lift,
    members,
    numeric_size,
    size,
)
from .policy import MATH_NAMES, NUMPY_LINALG_NAMES, NUMPY_NAMES
from .prove_flow import Flow

__all__ = ["BUILTIN_WORK", "CALL_WORK", "MAX_LOOP", "MAX_PROOF_STEPS", "MAX_WORK", "NODE_WORK",
           "Proof", "prove"]

MAX_WORK = 2_000_000
"""Largest total work of one proven call, in work units (an element of numpy arithmetic is
one; see :data:`NODE_WORK` and :data:`CALL_WORK`): about 0.1-0.3 s on a quiet machine."""
MAX_LOOP = 10_000
"""Largest iteration count of one proven loop or comprehension."""
NODE_WORK = 16
"""Work counted for evaluating one expression or statement: in a traced loop each costs a
few traced opcodes (~1 us each), as much as ~16 elements of numpy arithmetic."""
BUILTIN_WORK = 64
"""Work counted for the call overhead of a guarded builtin (``int``, ``len``, ``sum`` ...)."""
CALL_WORK = 512
"""Work counted for the call overhead of one numpy, math, state API or method call (through
its guard it costs about as much as 512 elements of arithmetic: a 4096-step loop of numpy
calls takes ~0.3 s), so that :data:`MAX_WORK` bounds time and not only elements."""
MAX_PROOF_STEPS = 200_000
"""Most expressions and statements the proof analyses before it gives up (unproven)."""
_BUILTINS = frozenset({"abs", "all", "any", "bool", "divmod", "enumerate", "float", "int",
                       "len", "list", "max", "min", "pow", "print", "range", "reversed", "round",
                       "sorted", "sum", "tuple", "zip"})
_LAZY = frozenset({"range", "enumerate", "zip"})
_CONSTANTS: dict[str, Type] = {"np.pi": FLOAT, "np.e": FLOAT, "np.inf": FLOAT, "np.nan": FLOAT,
              "np.newaxis": NONE, "math.pi": FLOAT, "math.e": FLOAT, "math.tau": FLOAT,
              "math.inf": FLOAT, "math.nan": FLOAT}
_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
           ast.Mod: "%", ast.Pow: "**", ast.MatMult: "@", ast.BitAnd: "&", ast.BitOr: "|",
           ast.BitXor: "^"}


@dataclass(frozen=True)
class Proof:
    """The verdict of :func:`prove`.

    Attributes:
        cost_class: ``"bounded"`` (proven) or ``"unproven"``.
        reason: Why (the bound, or the first construct outside the subset, with its line).
        work: The proven bound on one call's work, in work units (elements touched, plus
            :data:`NODE_WORK` per expression or statement and :data:`CALL_WORK` per call);
            0 when unproven.
    """

    cost_class: str
    reason: str
    work: int = 0

    @property
    def proven(self) -> bool:
        """Whether the code may run in-process."""
        return self.cost_class == "bounded"


def prove(tree: ast.Module, api: Mapping[str, Callable[..., Any]], entry: str | None,
          entry_takes_self: bool, primitives: frozenset[str] = frozenset()) -> Proof:
    """Prove the checked module ``tree`` bounded, or say why not (see the module doc).

    Args:
        tree: The module that passed the static check.
        api: The state API mapping the code is compiled against.
        entry: The entry function (None: the module's statements are the code).
        entry_takes_self: Whether the entry takes ``self``.
        primitives: Primitive names the code may call (primitive blocks only).
    """
    from ..state_api import STATE_API

    trusted = {n for n, fn in api.items() if n in API_RESULTS and STATE_API.get(n) is fn}
    untrusted = sorted(set(api) - trusted)
    prover = _Prover(tree, trusted, frozenset(untrusted), primitives - set(api))
    try:
        prover.run(entry, entry_takes_self)
    except Unproven as exc:
        where = f" (line {exc.line})" if exc.line else ""
        return Proof("unproven", f"{exc.reason}{where}")
    except Exception as exc:  # noqa: BLE001 - any failure of the proof is "unproven"
        return Proof("unproven", f"the proof could not be completed ({type(exc).__name__})")
    return Proof("bounded", f"every value and operation is bounded; at most {prover.work} "
                            "work units per call", prover.work)


class _Prover(Flow):
    """The abstract interpreter (expressions here, statements in :class:`~.prove_flow.Flow`)."""

    def __init__(self, tree: ast.Module, trusted: set[str], untrusted: frozenset[str],
                 primitives: frozenset[str] = frozenset()) -> None:
        super().__init__(tree)
        self.trusted = trusted
        self.untrusted = untrusted
        self.primitives = primitives
        self.functions = {s.name: s for s in tree.body if isinstance(s, ast.FunctionDef)}
        self.steps = 0

    def add_work(self, amount: int, line: int | None) -> None:
        """Count ``amount`` elements touched, times the current loop multiplier.

        Also counts the proof's own steps: past :data:`MAX_PROOF_STEPS` it gives up, so
        nested loops (each analysed up to ``MAX_ROUNDS`` times) cannot make it slow.
        """
        self.steps += 1
        if self.steps > MAX_PROOF_STEPS:
            raise Unproven(f"the code needs more than {MAX_PROOF_STEPS} steps to analyse", line)
        self.work += self.mult * max(amount, 1)
        if self.work > MAX_WORK:
            raise Unproven(f"the work may exceed {MAX_WORK} units per call", line)

    # -- names ------------------------------------------------------------------------

    def global_name(self, name: str, line: int | None) -> Type:
        """The type of a name that is not a local of the current function."""
        if name in self.module_env:
            return self.module_env[name]
        if name in self.functions:
            return Ref(f"fn:{name}")
        if name == "self":
            return TOKEN
        if name in ("np", "math"):
            return Ref(name)
        if name in self.trusted:
            return Ref(f"api:{name}")
        if name in self.primitives:
            return Ref(f"prim:{name}")
        if name in self.untrusted:
            raise Unproven(f"{name}() is not simjudge's state API function: its result is "
                           "not known", line)
        if name in _BUILTINS:
            return Ref(f"b:{name}")
        raise Unproven(f"the name {name!r} is not known to the proof", line)

    # -- expressions ------------------------------------------------------------------

    def expr(self, node: ast.expr) -> Type:
        """The type of ``node`` (work counted)."""
        line = getattr(node, "lineno", None)
        self.add_work(NODE_WORK, line)
        method = getattr(self, f"e_{type(node).__name__}", None)
        if method is None:
            raise Unproven(f"{type(node).__name__} expressions are not in the proven subset",
                           line)
        result = method(node)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and (
                node.func.id in _LAZY and self.name(node.func.id, line) == Ref(
                    f"b:{node.func.id}")):
            return result  # a lazy range/enumerate/zip: its consumers check what they build
        return bounded(result, "a value", line)

    def e_Constant(self, node: ast.Constant) -> Type:  # noqa: N802 - ast visitor names
        value = node.value
        if value is None:
            return NONE
        if isinstance(value, bool):
            return BOOL
        if isinstance(value, int):
            if value.bit_length() > 64:
                raise Unproven("an integer literal of more than 64 bits", node.lineno)
            return Num(1, max(1, abs(value)), False)
        if isinstance(value, float):
            return FLOAT
        if isinstance(value, str):
            if len(value) > MAX_STR:
                raise Unproven(f"a string literal of more than {MAX_STR} characters",
                               node.lineno)
            return Str(len(value))
        if value is Ellipsis:
            return Ref("...")
        raise Unproven(f"a {type(value).__name__} literal", node.lineno)

    def e_Name(self, node: ast.Name) -> Type:  # noqa: N802
        return self.name(node.id, node.lineno)

    def e_Tuple(self, node: ast.Tuple | ast.List) -> Type:  # noqa: N802
        if any(isinstance(e, ast.Starred) for e in node.elts):
            raise Unproven("starred items in a literal", node.lineno)
        return Tup(tuple(self.expr(e) for e in node.elts))

    e_List = e_Tuple

    def e_UnaryOp(self, node: ast.UnaryOp) -> Type:  # noqa: N802
        operand = self.expr(node.operand)
        if isinstance(node.op, ast.Not):
            self.add_work(size(operand), node.lineno)
            return BOOL

        def one(t: Type) -> Type:
            if not isinstance(t, Num):
                raise Unproven("a unary operator on a value that is not a number", node.lineno)
            bump = 1 if isinstance(node.op, ast.Invert) else 0
            return Num(t.n, t.imax + bump if t.imax else 0, t.floaty)

        self.add_work(size(operand), node.lineno)
        return lift(one, operand)

    def e_BinOp(self, node: ast.BinOp) -> Type:  # noqa: N802
        op = _BINOPS.get(type(node.op))
        if op is None:
            raise Unproven("a shift operator", node.lineno)
        right = node.right
        if op == "**" and isinstance(right, ast.Constant) and type(right.value) is int and (
                right.value >= 0):
            op = "**+"  # a non-negative exponent: ints stay ints
        return self.binop(op, self.expr(node.left), self.expr(right), node.lineno)

    def binop(self, op: str, left: Type, right: Type, line: int | None) -> Type:
        """The type of ``left op right`` (work counted)."""
        result = lift(lambda a, b: _binop(op, a, b, line), left, right)
        self.add_work(size(result) + size(left) + size(right), line)
        return result

    def e_BoolOp(self, node: ast.BoolOp) -> Type:  # noqa: N802
        values = [self.expr(v) for v in node.values]
        self.add_work(sum(size(v) for v in values), node.lineno)
        return join(*values)

    def e_IfExp(self, node: ast.IfExp) -> Type:  # noqa: N802
        test = self.expr(node.test)
        self.add_work(size(test), node.lineno)
        return join(self.expr(node.body), self.expr(node.orelse))

    def e_Compare(self, node: ast.Compare) -> Type:  # noqa: N802
        operands = [self.expr(node.left), *(self.expr(c) for c in node.comparators)]
        result: list[Type] = []
        for op, a, b in zip(node.ops, operands, operands[1:], strict=False):
            if isinstance(op, ast.Is | ast.IsNot):
                result.append(BOOL)
                continue
            if has_api_name(a) and has_api_name(b):  # two names of unbounded length
                raise Unproven("a comparison of two names the state API returned (their "
                               "length is not bounded here); compare with a literal", node.lineno)
            if isinstance(op, ast.In | ast.NotIn):
                self.add_work(size(a) * size(b), node.lineno)
                result.append(BOOL)
                continue
            both = [t for t in (a, b) if any(isinstance(o, Num) for o in members(t))]
            # numpy broadcasts (the product); sequences and strings compare item by item
            self.add_work(size(a) * size(b) if both else size(a) + size(b), node.lineno)
            if both:
                n = max(1, numeric_size(a) or 1) * max(1, numeric_size(b) or 1)
                result.append(Num(min(n, MAX_ELEMENTS + 1), 1, True))
            else:
                result.append(BOOL)
        return join(*result)

    def e_Subscript(self, node: ast.Subscript) -> Type:  # noqa: N802
        value = self.expr(node.value)
        key = self.expr(node.slice)
        self.add_work(size(value) * max(1, size(key)), node.lineno)
        return lift(lambda v: _item(v, key, node.slice, node.lineno), value)

    def e_Slice(self, node: ast.Slice) -> Type:  # noqa: N802
        for part in (node.lower, node.upper, node.step):
            if part is not None and numeric_size(self.expr(part)) is None:
                raise Unproven("a slice bound that is not a number", node.lineno)
        return Ref("slice")

    def e_Attribute(self, node: ast.Attribute) -> Type:  # noqa: N802
        value = self.expr(node.value)
        return lift(lambda v: self.attribute(v, node.attr, node.lineno), value)

    def attribute(self, value: Type, attr: str, line: int | None) -> Type:
        """The type of ``value.attr`` read as a value (not called)."""
        if isinstance(value, Ref) and value.name in ("np", "math", "np.linalg"):
            dotted = f"{value.name}.{attr}"
            if dotted in _CONSTANTS:
                return _CONSTANTS[dotted]
            names = {"np": NUMPY_NAMES, "math": MATH_NAMES, "np.linalg": NUMPY_LINALG_NAMES}
            if attr in names[value.name]:
                return Ref(dotted)
        if isinstance(value, Num):
            if attr in ("size", "ndim"):
                return Num(1, max(value.n, 32), False)
            if attr == "shape":
                return Seq(Num(1, value.n, False), 32)
            if attr in ("T", "real", "imag"):
                return Num(value.n, 0, True)
        raise Unproven(f"the attribute .{attr} is not in the proof's table", line)

    def e_Call(self, node: ast.Call) -> Type:  # noqa: N802
        line = node.lineno
        if any(isinstance(a, ast.Starred) for a in node.args) or any(
                k.arg is None for k in node.keywords):
            raise Unproven("a call with *args or **kwargs", line)
        func = node.func
        receiver: Type | None = None
        if isinstance(func, ast.Attribute):
            receiver = self.expr(func.value)
            if not (isinstance(receiver, Ref) and receiver.name in ("np", "math", "np.linalg")):
                args = tuple(self.expr(a) for a in node.args)
                kwargs = {k.arg: self.expr(k.value) for k in node.keywords if k.arg}
                result, work = method_rule(receiver, func.attr, args, kwargs, line)
                self.add_work(work + CALL_WORK, line)
                return result
            callee = self.attribute(receiver, func.attr, line)
        else:
            callee = self.expr(func)
        if not isinstance(callee, Ref):
            raise Unproven("a call of a value that is not a known function", line)
        args = tuple(self.expr(a) for a in node.args)
        kwargs = {k.arg: self.expr(k.value) for k in node.keywords if k.arg}
        return self.call(callee.name, args, kwargs, line)

    def call(self, name: str, args: tuple[Type, ...], kwargs: dict[str, Type],
             line: int | None) -> Type:
        """The type of calling the known function ``name`` (``fn:``/``api:``/``b:`` or dotted)."""
        kind, _, bare = name.partition(":")
        if kind == "fn":
            if kwargs:
                raise Unproven(f"keyword arguments to the helper {bare}()", line)
            return self.call_function(bare, args, line)
        if kind == "prim":
            for value in (*args, *kwargs.values()):
                if value is not TOKEN:
                    bounded(value, f"an argument of {bare}()", line)
            self.add_work(CALL_WORK, line)
            return Tup((OPAQUE, OPAQUE))
        if kind == "b" and bare in ("range", "enumerate", "zip", "divmod", "pow"):
            if kwargs:
                raise Unproven(f"{bare}() with keyword arguments", line)
            return self.iterator(bare, args, line)
        if any(OPAQUE in members(v) for v in (*args, *kwargs.values())):
            raise Unproven(f"{bare}() of a primitive's result (only primitives take them)", line)
        result, work = call_rule(bare if ":" in name else name, args, kwargs, line)
        self.add_work(work + (CALL_WORK if kind != "b" else BUILTIN_WORK), line)
        return result

    def iterator(self, name: str, args: tuple[Type, ...], line: int | None) -> Type:
        """``range``/``enumerate``/``zip`` as bounded sequences; ``divmod``/``pow`` as operators."""
        if name in ("divmod", "pow"):
            if len(args) != 2:
                raise Unproven(f"{name}() with {len(args)} arguments", line)
            if name == "pow":  # pow(a, b) is a ** b; 3-argument pow is not in the subset
                return self.binop("**", *args, line)
            return Tup((self.binop("//", *args, line), self.binop("%", *args, line)))
        if name == "range":
            if not 1 <= len(args) <= 3:
                raise Unproven("range() with more than 3 arguments", line)
            bounds = [_int_bound(a, "a range bound", line) for a in args]
            count = sum(bounds[:2])  # range(b): at most b items; range(a, b, ...): |a| + |b|
            self._loop_bound(count, line)
            return Seq(Num(1, max(bounds[:2]) + 1, False), count)
        items = [_iterate(a, line) for a in args]
        if name == "enumerate":
            if len(args) != 1:
                raise Unproven("enumerate() with a start", line)
            item, count = items[0]
            return Seq(Tup((Num(1, count + 1, False), item)), count)
        if not items:
            raise Unproven("zip() without arguments", line)
        return Seq(Tup(tuple(i for i, _ in items)), min(c for _, c in items))

    def _loop_bound(self, count: int, line: int | None) -> None:
        if count > MAX_LOOP:
            raise Unproven(f"a loop or range of possibly more than {MAX_LOOP} items", line)

    def e_ListComp(self, node: ast.ListComp | ast.GeneratorExp) -> Type:  # noqa: N802
        saved_env, saved_mult = dict(self.env), self.mult
        total = 1
        try:
            for gen in node.generators:
                if gen.is_async:
                    raise Unproven("async comprehensions", node.lineno)
                item, count = _iterate(self.expr(gen.iter), node.lineno)
                self._loop_bound(count, node.lineno)
                total *= max(count, 1)
                self.mult *= max(count, 1)
                self.bind(gen.target, item, node.lineno)
                for cond in gen.ifs:
                    self.expr(cond)
            element = self.expr(node.elt)
        finally:
            self.env, self.mult = saved_env, saved_mult
        return Seq(element, total)

    e_GeneratorExp = e_ListComp


def _int_bound(t: Type, what: str, line: int | None) -> int:
    bound = 0
    for option in members(t):
        if not isinstance(option, Num) or option.floaty or option.n != 1:
            raise Unproven(f"{what} is not known to be a bounded integer", line)
        bound = max(bound, option.imax)
    return bound


def _iterate(t: Type, line: int | None) -> tuple[Type, int]:
    from .costcalls import _iter_item

    return _iter_item(t, line)


def _binop(op: str, a: Type, b: Type, line: int | None) -> Type:
    """``a op b`` on concrete (non-union) types."""
    if op == "*" and isinstance(b, Tup | Seq | Str) and isinstance(a, Num):
        a, b = b, a
    if op == "*" and isinstance(a, Tup | Seq | Str) and isinstance(b, Num):
        return _repeated(a, b, line)
    if isinstance(a, Num | Tup | Seq) and isinstance(b, Num | Tup | Seq) and (
            isinstance(a, Num) or isinstance(b, Num)):
        na = a.n if isinstance(a, Num) else numeric_size(a)
        nb = b.n if isinstance(b, Num) else numeric_size(b)
        exact_power = op == "**+"
        op = "**" if exact_power else op
        if na is None or nb is None:
            raise Unproven(f"the operator {op} on a value not known to be numeric", line)
        n = max(na, nb) if min(na, nb) <= 1 else na * nb
        if op == "@":
            n = na * nb
        if n > MAX_ELEMENTS:
            raise Unproven(f"the operator {op} may make more than {MAX_ELEMENTS} elements", line)
        ia = a.imax if isinstance(a, Num) else 0
        ib = b.imax if isinstance(b, Num) else 0
        imax = int_bound(ia, ib, op) if ia and ib and op not in ("/", "@") else 0
        if imax > INT_CAP:
            raise Unproven(f"the operator {op} may make an integer of more than "
                           f"{INT_CAP.bit_length()} bits", line)
        floaty = (not isinstance(a, Num) or a.floaty or not isinstance(b, Num) or b.floaty
                  or op == "/" or (op == "**" and not exact_power))
        return Num(n, imax, floaty)
    if isinstance(a, Str) and isinstance(b, Str) and op == "+":
        if a.n is None or b.n is None or a.n + b.n > MAX_STR:
            raise Unproven(f"a string concatenation may exceed {MAX_STR} characters", line)
        return Str(a.n + b.n)
    if op == "+" and isinstance(a, Tup) and isinstance(b, Tup):
        return Tup(a.items + b.items)
    if op == "+" and isinstance(a, Tup | Seq) and isinstance(b, Tup | Seq):
        (item_a, ca), (item_b, cb) = _iterate(a, line), _iterate(b, line)
        return Seq(join(item_a, item_b), ca + cb)
    raise Unproven(f"the operator {op} on these values (repetition or formatting) is not "
                   "in the proven subset", line)


def _repeated(value: Type, times: Num, line: int | None) -> Type:
    """``value * times`` for a sequence or string, checked against the size bounds first.

    A numpy integer repeats a sequence as a Python int would (it has ``__index__``), so a
    count that may be a numpy value (magnitude not tracked) is refused.
    """
    if times.floaty or times.n != 1:
        raise Unproven("a sequence or string repeated a number of times not known to be a "
                       "bounded Python int", line)
    if isinstance(value, Str):
        if value.n is None or value.n * times.imax > MAX_STR:
            raise Unproven(f"a repeated string may exceed {MAX_STR} characters", line)
        return Str(value.n * times.imax)
    item, count = _iterate(value, line)
    total = count * times.imax
    if total * size(item) > MAX_ELEMENTS:
        raise Unproven(f"a repeated sequence may hold more than {MAX_ELEMENTS} elements", line)
    return Seq(item, total)


def _item(value: Type, key: Type, key_node: ast.expr, line: int | None) -> Type:
    """``value[key]`` on a concrete value."""
    if isinstance(value, Num):
        parts = key.items if isinstance(key, Tup) else (key,)
        factor = 1
        for part in parts:
            if part in (NONE, Ref("slice"), Ref("...")):
                continue
            n = numeric_size(part)
            if n is None:
                raise Unproven("an index that is not a number, slice or index array", line)
            factor *= max(n, 1)
        return Num(value.n * factor, 0, True)
    if isinstance(value, Tup):
        if isinstance(key_node, ast.Constant) and type(key_node.value) is int:
            if -len(value.items) <= key_node.value < len(value.items):
                return value.items[key_node.value]
            return NONE  # an IndexError at run time
        if key == Ref("slice"):
            return Seq(join(*value.items), len(value.items)) if value.items else Tup(())
        return join(*value.items) if value.items else NONE
    if isinstance(value, Seq):
        return Seq(value.item, value.n) if key == Ref("slice") else value.item
    if isinstance(value, Str) and value.n is not None:
        return Str(value.n)
    raise Unproven("indexing a value that is not an array, tuple, list or string", line)
