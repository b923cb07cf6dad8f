"""Runtime guards that the compiled code calls instead of raw operators.

The compiler rewrites generated code so that binary operators, comparisons,
indexing, attribute reads and method calls go through the functions here (see
:mod:`~simjudge.envs.codegen.transform`). Each guard checks, *before* doing the
work, that the result stays within :class:`ExecutionLimits` (sequence repetition,
array broadcasting, fancy indexing, integer size) and that the receiver's actual
type allows the method or attribute. This is what stops ``[0] * 10**10``,
``'a' * 10**9`` or ``a[:, None] - a[None, :]`` on a large array from exhausting
memory inside a single uninterruptible C call.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from .errors import CodeResourceError, DisallowedCodeError
from .policy import ATTRIBUTES_BY_KIND, METHODS_BY_KIND
from .runtime import current_run

__all__ = [
    "augitem",
    "binop",
    "broadcast_size",
    "callmethod",
    "chain",
    "check_alloc",
    "check_result",
    "compare",
    "count_elements",
    "fmtcheck",
    "getattr_",
    "getitem",
    "kind_of",
    "product_size",
    "shape_size",
    "validate_args",
]

# fmt: off
_BINOPS: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
    "//": operator.floordiv, "%": operator.mod, "**": operator.pow, "<<": operator.lshift,
    ">>": operator.rshift, "&": operator.and_, "|": operator.or_, "^": operator.xor,
    "@": operator.matmul,
}
# fmt: on
# fmt: off
_COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
    "==": operator.eq, "!=": operator.ne,
}
# fmt: on
_PLAIN_NUMBERS = frozenset({int, float, bool})
_SEQUENCES = (str, bytes, list, tuple)
_ALLOWED_DTYPE_KINDS = frozenset("biufc")
_CONTAINERS = (list, tuple, set, frozenset)
_NESTED = (list, tuple, set, frozenset, dict, np.ndarray)


def check_alloc(n: float, what: str) -> None:
    """Raise :class:`CodeResourceError` if ``n`` elements exceed the allocation limit."""
    limit = current_run().limits.max_alloc_elements
    if n > limit:
        raise CodeResourceError(
            f"{what} would create {n:.3g} elements; the limit is {limit}; "
            "work with smaller arrays or lists"
        )


def _check_int_bits(bits: float, what: str) -> None:
    limit = current_run().limits.max_int_bits
    if bits > limit:
        raise CodeResourceError(
            f"{what} would create an integer of about {bits:.3g} bits; the limit is {limit} bits"
        )


def _check_int_op(op: str, a: int, b: int) -> None:
    if op == "*":
        _check_int_bits(a.bit_length() + b.bit_length(), "this multiplication")
    elif op == "**" and b > 0 and abs(a) > 1:
        _check_int_bits(b * math.log2(abs(a)), f"{a} ** {b}")
    elif op == "<<" and b > 0:
        _check_int_bits(a.bit_length() + b, f"{a} << {b}")


def binop(op: str, a: Any, b: Any) -> Any:
    """``a <op> b`` after checking the size of the result."""
    if type(a) in _PLAIN_NUMBERS and type(b) in _PLAIN_NUMBERS:
        if type(a) is not float and type(b) is not float and op in ("*", "**", "<<"):
            _check_int_op(op, a, b)
        return _BINOPS[op](a, b)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if op == "@":
            check_alloc(product_size(a, b, "matmul"), "this matrix product")
        else:
            check_alloc(broadcast_size(a, b), f"this '{op}' between arrays")
    elif isinstance(a, _SEQUENCES) or isinstance(b, _SEQUENCES):
        _check_sequence_op(op, a, b)
    elif op in ("*", "**", "<<") and isinstance(a, int | np.integer) and isinstance(b, int):
        _check_int_op(op, int(a), int(b))
    return _BINOPS[op](a, b)


def _check_sequence_op(op: str, a: Any, b: Any) -> None:
    if op == "%" and isinstance(a, str | bytes):
        raise DisallowedCodeError("%-formatting is not allowed; use an f-string")
    if op == "*":
        seq, count = (a, b) if isinstance(a, _SEQUENCES) else (b, a)
        if isinstance(count, int | np.integer):
            check_alloc(len(seq) * max(int(count), 0), "this repetition")
    elif op == "+" and isinstance(a, _SEQUENCES) and isinstance(b, _SEQUENCES):
        check_alloc(len(a) + len(b), "this concatenation")


def compare(op: str, a: Any, b: Any) -> Any:
    """``a <op> b`` for the six ordering/equality operators, size-checked for arrays."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        check_alloc(broadcast_size(a, b), "this comparison between arrays")
    return _COMPARE[op](a, b)


def chain(ops: tuple[str, ...], *values: Any) -> Any:
    """A chained comparison ``v0 op0 v1 op1 v2 ...`` (operands are evaluated eagerly)."""
    result: Any = True
    for i, op in enumerate(ops):
        result = compare(op, values[i], values[i + 1])
        if not result:
            return result
    return result


def getitem(obj: Any, key: Any) -> Any:
    """``obj[key]``; fancy indexing of arrays is size-checked first."""
    if isinstance(obj, np.ndarray) and not isinstance(key, int | slice):
        bound = _fancy_index_bound(obj, key)
        if bound is not None:
            check_alloc(bound, "this indexing")
    return obj[key]


def augitem(obj: Any, key: Any, op: str, value: Any) -> None:
    """``obj[key] <op>= value``, evaluated as ``obj[key] = obj[key] <op> value``."""
    obj[key] = binop(op, getitem(obj, key), value)


def kind_of(obj: Any) -> str | None:
    """The policy kind of a receiver (``"array"``, ``"list"``, ...) or None."""
    if isinstance(obj, np.ndarray):
        return "array"
    if isinstance(obj, np.generic):
        return "scalar"
    if isinstance(obj, bool | int | float | complex):
        return "number"
    for kind, cls in (("str", str), ("list", list), ("tuple", tuple), ("dict", dict)):
        if isinstance(obj, cls):
            return kind
    return None


def _type_label(obj: Any) -> str:
    kind = kind_of(obj)
    return {"array": "a numpy array", "scalar": "a numpy scalar", "number": "a number"}.get(
        kind or "", f"a {type(obj).__name__} value" if kind else "this object"
    )


def getattr_(obj: Any, name: str) -> Any:
    """Read a data attribute (``shape``, ``T``, ...) allowed for ``obj``'s kind."""
    if name in ATTRIBUTES_BY_KIND.get(kind_of(obj) or "", ()):
        return getattr(obj, name)
    raise DisallowedCodeError(f"attribute '.{name}' is not allowed on {_type_label(obj)}")


def callmethod(obj: Any, name: str, *args: Any, **kwargs: Any) -> Any:
    """Call a method allowed for ``obj``'s kind, with size checks where needed."""
    kind = kind_of(obj)
    allowed = METHODS_BY_KIND.get(kind or "", frozenset())
    if name not in allowed:
        listed = f"; allowed: {', '.join(sorted(allowed))}" if allowed else ""
        raise DisallowedCodeError(
            f"method '.{name}()' is not allowed on {_type_label(obj)}{listed}"
        )
    validate_args(args, kwargs)
    if kind == "array" and name == "dot" and args:
        check_alloc(product_size(obj, args[0], "dot"), "this dot product")
    elif kind == "array" and name == "clip":
        check_alloc(broadcast_size(obj, *args, *kwargs.values()), "this clip")
    elif kind == "list" and name == "extend" and args and hasattr(args[0], "__len__"):
        check_alloc(len(obj) + len(args[0]), "this extend")
    result = getattr(obj, name)(*args, **kwargs)
    check_result(result, f".{name}()")
    return result


def fmtcheck(value: Any) -> Any:
    """Bound the size of a value before it is turned into text."""
    count_elements(value)
    return value


# -- sizes ------------------------------------------------------------------------------


def count_elements(obj: Any, what: str = "this value") -> int:
    """Count elements of nested containers, raising once the limit is crossed."""
    limit = current_run().limits.max_alloc_elements
    total = 0
    stack = [obj]
    while stack:
        item = stack.pop()
        if isinstance(item, np.ndarray):
            total += item.size
        elif isinstance(item, _CONTAINERS):
            total += len(item)
            if _may_nest(set(map(type, item))):  # C-speed scan of the element types
                for sub in item:
                    if isinstance(sub, _NESTED):
                        stack.append(sub)
        elif isinstance(item, dict):
            total += len(item)
            stack.extend(item.values())
        else:
            total += 1
        if total > limit:
            raise CodeResourceError(f"{what} has more than {limit} elements; use smaller data")
    return total


def _may_nest(types: set[type]) -> bool:
    # No generator expressions in guards: the tracer may raise inside them, and a
    # generator finalized by an exception prints "Exception ignored" noise.
    for kind in types:
        if issubclass(kind, _NESTED):
            return True
    return False


def validate_args(args: Iterable[Any], kwargs: dict[str, Any]) -> None:
    """Reject non-numeric dtypes and over-large nested containers in call arguments."""
    for value in (*args, *kwargs.values()):
        if isinstance(value, str | type | np.dtype):
            _check_dtype(value)
        elif isinstance(value, list | tuple | dict):
            count_elements(value, "an argument")


def _check_dtype(value: Any) -> None:
    try:
        dtype = np.dtype(value)
    except (TypeError, ValueError):
        return  # not a dtype (e.g. ord="fro"); numpy validates it
    if dtype.kind not in _ALLOWED_DTYPE_KINDS or dtype.itemsize > 16:
        raise DisallowedCodeError(
            f"dtype {dtype} is not allowed; use numeric dtypes such as float or int"
        )


def check_result(result: Any, what: str) -> None:
    """Reject array results over the limit (for outputs whose size is hard to predict)."""
    if isinstance(result, np.ndarray):
        check_alloc(result.size, what)
        if result.dtype.kind not in _ALLOWED_DTYPE_KINDS:
            raise DisallowedCodeError(f"{what} produced a non-numeric array ({result.dtype})")


def shape_size(shape: Any) -> int:
    """Number of elements of an array of ``shape`` (an int or a sequence of ints)."""
    if isinstance(shape, int | np.integer):
        return int(shape)
    total = 1
    for dim in shape:
        total *= operator.index(dim)
    return total


def _shape(x: Any) -> tuple[int, ...]:
    if isinstance(x, np.ndarray | np.generic):
        return x.shape
    if isinstance(x, list | tuple):
        count_elements(x, "an operand")
    return np.shape(x)


def broadcast_size(*operands: Any) -> int:
    """Elements of the broadcast of ``operands`` (0 if they do not broadcast)."""
    shapes = [_shape(x) for x in operands]
    try:
        return shape_size(np.broadcast_shapes(*shapes))
    except ValueError:
        return 0  # incompatible shapes: numpy raises its own error


def product_size(a: Any, b: Any, op: str) -> int:
    """Upper bound on the elements of ``np.dot``/``np.matmul``/``np.inner`` results."""
    sa, sb = _shape(a), _shape(b)
    if not sa or not sb:
        return max(shape_size(sa), shape_size(sb))
    if op == "inner":
        return shape_size(sa[:-1]) * shape_size(sb[:-1])
    if op == "dot":
        return shape_size(sa[:-1]) * (shape_size(sb[:-2]) * sb[-1] if len(sb) > 1 else 1)
    try:
        batch = shape_size(np.broadcast_shapes(sa[:-2], sb[:-2]))
    except ValueError:
        batch = 0
    rows = sa[-2] if len(sa) > 1 else 1
    cols = sb[-1] if len(sb) > 1 else 1
    return batch * rows * cols


def _fancy_index_bound(arr: np.ndarray, key: Any) -> int | None:
    """Upper bound on the size of ``arr[key]`` if ``key`` uses advanced indexing."""
    parts = key if isinstance(key, tuple) else (key,)
    fancy_shapes: list[tuple[int, ...]] = []
    kept, pos, ellipsis = 1, 0, False
    for part in parts:
        if part is None:
            continue
        if part is Ellipsis:
            ellipsis = True
        elif isinstance(part, list | tuple | np.ndarray):
            count_elements(part, "an index")
            index = np.asarray(part)
            if index.dtype == bool:
                fancy_shapes.append((int(np.count_nonzero(index)),))
                pos += max(index.ndim, 1)
            else:
                fancy_shapes.append(index.shape)
                pos += 1
        else:
            if isinstance(part, slice) and pos < arr.ndim:
                kept *= arr.shape[pos]
            pos += 1
    if not fancy_shapes:
        return None
    try:
        selected = shape_size(np.broadcast_shapes(*fancy_shapes))
    except ValueError:
        return None
    if ellipsis:
        return selected * arr.size
    return selected * kept * shape_size(arr.shape[pos:])
