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
from .sizes import (
    MAX_TEXT_CHARS,
    NUMERIC_SCALARS,
    PLAIN_NUMBERS,
    broadcast_size,
    check_alloc,
    check_items,
    check_text,
    check_work,
    count_elements,
    fancy_index_bound,
    product_size,
    product_work,
    shape_size,
    text_size,
)

__all__ = [
    "MAX_KEY_DEPTH",
    "MAX_TEXT_CHARS",
    "augitem",
    "binop",
    "check_items",
    "check_key",
    "check_order_work",
    "check_work",
    "contains",
    "delitem",
    "materialize",
    "setitem",
    "text_size",
    "validate_numpy_args",
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
_SEQUENCES = (str, bytes, list, tuple)
_ALLOWED_DTYPE_KINDS = frozenset("biufc")


MAX_KEY_DEPTH = 100
"""Deepest nesting of tuples used as dict keys or set members (hashing them recurses in
C without a depth check, so a deeper one could overflow the interpreter's stack)."""
_NUMPY_PLAIN_ARGS = (*NUMERIC_SCALARS, np.ndarray, slice)


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
    if type(a) in PLAIN_NUMBERS and type(b) in PLAIN_NUMBERS:
        if type(a) is not float and type(b) is not float and op in ("*", "**", "<<"):
            _check_int_op(op, a, b)
        return _BINOPS[op](a, b)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if op == "@":
            check_alloc(product_size(a, b, "matmul"), "this matrix product")
            check_work(product_work(a, b, "matmul"), "this matrix product")
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
    """``a <op> b`` (ordering, equality, ``in``, ``is``), size-checked for arrays.

    Comparing lists or tuples compares their elements in C, so containers that hold
    arrays (elementwise, broadcasting comparisons) are refused.
    """
    plain = _COMPARE.get(op)
    if plain is not None and type(a) in PLAIN_NUMBERS and type(b) in PLAIN_NUMBERS:
        return plain(a, b)
    if op in ("in", "not in"):
        found = contains(a, b)
        return found if op == "in" else not found
    if op in ("is", "is not"):
        return (a is b) if op == "is" else (a is not b)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        check_alloc(broadcast_size(a, b), "this comparison between arrays")
    elif isinstance(a, list | tuple) and isinstance(b, list | tuple):
        _refuse_arrays(a, "comparing lists or tuples that hold arrays")
        _refuse_arrays(b, "comparing lists or tuples that hold arrays")
        check_items(min(len(a), len(b)), "this comparison")
    return _COMPARE[op](a, b)


def _refuse_arrays(items: Any, what: str) -> None:
    if np.ndarray in set(map(type, items)):
        raise DisallowedCodeError(
            f"{what} is not allowed (it compares arrays elementwise inside one C call); "
            "compare the arrays themselves, e.g. with np.allclose(a, b)"
        )


def contains(item: Any, container: Any) -> bool:
    """``item in container`` with the same bounds as ``==`` (and hash-safe keys)."""
    if isinstance(container, np.ndarray):
        check_alloc(broadcast_size(item, container), "this `in` test on an array")
    elif isinstance(container, dict | set | frozenset):
        check_key(item)
    elif isinstance(container, str):
        pass
    elif isinstance(container, list | tuple):
        check_items(len(container), "this `in` test")
        if isinstance(item, np.ndarray):
            raise DisallowedCodeError(
                "`array in list` compares the array with every element elementwise; use "
                "np.any([np.allclose(array, x) for x in items])"
            )
        _refuse_arrays(container, "`in` on a list or tuple that holds arrays")
    elif not isinstance(container, range):
        return contains(item, materialize(container, "this `in` test"))
    return item in container


def materialize(iterable: Any, what: str) -> list[Any] | tuple[Any, ...] | str | range:
    """``iterable`` as a sized sequence (a snapshot list of lazy iterators), bounded."""
    if isinstance(iterable, list | tuple | str | range):
        return iterable
    if isinstance(iterable, dict | set | frozenset | np.ndarray):
        check_items(len(iterable), what)
        return list(iterable)
    hint = operator.length_hint(iterable, -1)
    if hint > current_run().limits.max_alloc_elements:
        check_items(hint, what)
    items = list(iterable)  # a finite snapshot: lazy iterators here walk existing data
    check_items(len(items), what)
    return items


def check_key(key: Any) -> Any:
    """Refuse dict keys / set members whose hashing would recurse too deeply; return key."""
    if type(key) is not tuple or tuple not in set(map(type, key)):
        return key
    stack = [(key, 1)]
    seen = 0
    while stack:
        item, depth = stack.pop()
        if depth > MAX_KEY_DEPTH:
            raise CodeResourceError(
                f"this key nests tuples more than {MAX_KEY_DEPTH} levels deep; use flat keys"
            )
        seen += len(item)
        check_items(seen, "hashing this key")
        stack.extend((sub, depth + 1) for sub in item if type(sub) is tuple)
    return key


def setitem(obj: Any, key: Any, value: Any) -> None:
    """``obj[key] = value``; list slices are size-checked, dict keys hash-checked."""
    if type(key) is slice and isinstance(obj, list):
        value = materialize(value, "this slice assignment")
        check_alloc(len(obj) + len(value), "this slice assignment")
    elif isinstance(obj, dict):
        check_key(key)
    elif isinstance(obj, np.ndarray) and not isinstance(key, int | slice):
        bound = fancy_index_bound(obj, key)
        if bound is not None:
            check_alloc(bound, "this indexed assignment")
    obj[key] = value


def delitem(obj: Any, key: Any) -> None:
    """``del obj[key]`` (dict keys hash-checked)."""
    if isinstance(obj, dict):
        check_key(key)
    del obj[key]


def chain(ops: tuple[str, ...], *values: Any) -> Any:
    """A chained comparison ``v0 op0 v1 op1 v2 ...`` (operands are evaluated eagerly)."""
    result: Any = True
    for i, op in enumerate(ops):
        result = compare(op, values[i], values[i + 1])
        if not result:
            return result
    return result


def getitem(obj: Any, key: Any) -> Any:
    """``obj[key]``; fancy indexing of arrays is size-checked first, dict keys hash-checked."""
    if isinstance(obj, np.ndarray) and not isinstance(key, int | slice):
        bound = fancy_index_bound(obj, key)
        if bound is not None:
            check_alloc(bound, "this indexing")
    elif isinstance(obj, dict):
        check_key(key)
    return obj[key]


def augitem(obj: Any, key: Any, op: str, value: Any) -> None:
    """``obj[key] <op>= value``, evaluated as ``obj[key] = obj[key] <op> value``."""
    setitem(obj, key, binop(op, getitem(obj, key), value))


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
    if kind == "array":
        validate_numpy_args(args, kwargs)
        if name == "dot" and args:
            check_alloc(product_size(obj, args[0], "dot"), "this dot product")
            check_work(product_work(obj, args[0], "dot"), "this dot product")
        elif name == "clip":
            check_alloc(broadcast_size(obj, *args, *kwargs.values()), "this clip")
        elif name == "astype" and (args or "dtype" in kwargs):
            check_plain_dtype(args[0] if args else kwargs["dtype"])
    else:
        validate_args(args, kwargs)
        args = _check_container_method(obj, kind, name, args, kwargs)
    result = getattr(obj, name)(*args, **kwargs)
    check_result(result, f".{name}()")
    return result


def _check_container_method(
    obj: Any, kind: str | None, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[Any, ...]:
    """Bounds of list/dict/tuple methods; returns the (possibly materialized) arguments."""
    if kind == "list":
        if name == "extend" and args:
            items = materialize(args[0], "this extend")
            check_alloc(len(obj) + len(items), "this extend")
            return (items, *args[1:])
        if name in ("count", "index", "remove") and args:
            contains(args[0], obj)
        elif name == "sort":
            check_order_work(obj, kwargs.get("key"), "this sort")
        elif name == "copy":
            check_alloc(len(obj), "this copy")
    elif kind == "tuple" and name in ("count", "index") and args:
        contains(args[0], obj)
    elif kind == "dict":
        if name in ("get", "pop", "setdefault") and args:
            check_key(args[0])
        elif name == "update" and args and not isinstance(args[0], dict):
            pairs = materialize(args[0], "this update")
            for pair in pairs:
                check_key(pair[0] if isinstance(pair, list | tuple) and pair else pair)
            return (pairs, *args[1:])
        elif name == "copy":
            check_alloc(len(obj), "this copy")
    return args


def fmtcheck(value: Any) -> Any:
    """Bound the size of a value before it is turned into text (an f-string field)."""
    count_elements(value)
    check_text(value, "this f-string field")
    return value


def validate_args(args: Iterable[Any], kwargs: dict[str, Any]) -> None:
    """Reject non-numeric dtypes and over-large nested containers in call arguments."""
    for value in (*args, *kwargs.values()):
        if isinstance(value, str | type | np.dtype):
            _check_dtype(value)
        elif isinstance(value, list | tuple | dict):
            count_elements(value, "an argument")


_NUMPY_WORDS = frozenset(
    {"fro", "nuc", "C", "F", "A", "K", "ij", "xy", "left", "right", "quicksort", "mergesort",
     "heapsort", "stable", "raise", "wrap", "clip", "same_kind", "safe", "unsafe", "equiv", "no",
     "linear", "lower", "higher", "midpoint", "nearest"}
)


def validate_numpy_args(args: Iterable[Any], kwargs: dict[str, Any]) -> None:
    """Arguments of numpy functions: numbers, arrays and containers of them only.

    Strings are accepted only as a plain numeric dtype or a known option word (``"fro"``,
    ``"nuc"``, ...): a string fill value or element would make numpy build a text array
    whose size the guards cannot predict. ``dtype=`` must be a plain numeric dtype (no
    structured or sub-array dtypes, which can hide a huge shape); containers are counted
    and may only hold numbers, arrays and nested lists/tuples of them; dicts, sets and
    other objects are refused.
    """
    for value in (*args, *kwargs.values()):
        if value is None or isinstance(value, _NUMPY_PLAIN_ARGS):
            continue
        if isinstance(value, str):
            if value not in _NUMPY_WORDS:
                check_plain_dtype(value)
        elif isinstance(value, type | np.dtype):
            check_plain_dtype(value)
        elif isinstance(value, list | tuple):
            count_elements(value, "an argument", numeric=True)
        elif not callable(value):
            raise DisallowedCodeError(
                f"a {type(value).__name__} cannot be passed to numpy functions; pass numbers, "
                "arrays or lists of numbers"
            )
    dtype = kwargs.get("dtype")
    if dtype is not None:
        check_plain_dtype(dtype)


def check_plain_dtype(value: Any) -> None:
    """Accept only plain numeric dtypes (bool, int, float, complex; no fields or shapes)."""
    try:
        dtype = np.dtype(value)
    except (TypeError, ValueError) as exc:
        raise DisallowedCodeError(
            f"{value!r:.40} is not a dtype numpy functions accept here; use float, int or bool"
        ) from exc
    if (
        dtype.kind not in _ALLOWED_DTYPE_KINDS
        or dtype.itemsize > 16
        or dtype.subdtype is not None
        or dtype.names is not None
    ):
        raise DisallowedCodeError(
            f"dtype {dtype} is not allowed; use numeric dtypes such as float or int"
        )


def _check_dtype(value: Any) -> None:
    try:
        dtype = np.dtype(value)
    except (TypeError, ValueError):
        return  # not a dtype (e.g. ord="fro"); numpy validates it
    if dtype.kind not in _ALLOWED_DTYPE_KINDS or dtype.itemsize > 16:
        raise DisallowedCodeError(
            f"dtype {dtype} is not allowed; use numeric dtypes such as float or int"
        )


_KEY_BUILTINS = frozenset({"abs", "len", "float", "int", "bool", "round"})
_KEY_NUMPY = frozenset(
    {"np.linalg.norm", "np.sum", "np.mean", "np.min", "np.max", "np.amin", "np.amax",
     "np.prod", "np.median", "np.std", "np.var", "np.count_nonzero", "np.any", "np.all"}
)


def check_key_function(key: Any) -> None:
    """``key=`` of sorted/min/max/sort: a builtin or numpy reduction returning a scalar."""
    if key is None:
        return
    name = getattr(key, "__name__", "")
    builtin = getattr(key, "__module__", None) == "builtins" or type(key) is type(abs)
    if (builtin and name in _KEY_BUILTINS) or getattr(key, "__qualname__", "") in _KEY_NUMPY:
        return
    if getattr(key, "__simjudge_api__", False):
        return
    raise DisallowedCodeError(
        f"key={name or type(key).__name__} is not allowed; use abs, len, float, int, round, "
        "a numpy reduction such as np.linalg.norm, or a state API function"
    )


def check_order_work(items: Any, key: Any, what: str) -> None:
    """Bound sorting/min/max: length, key function and string comparison cost."""
    check_key_function(key)
    n = len(items)
    check_items(n, what)
    if n < 2 or key is not None:
        return
    types = set(map(type, items))
    if types <= {int, float, bool}:
        return
    if np.ndarray in types:
        _refuse_arrays(items, what)
    compares = n * max(math.log2(n), 1)
    if types == {str}:
        longest = max(map(len, items))
        check_work(compares * (1 + longest / 16), what)
        return
    size = count_elements(items, what)
    check_work(compares * max(size / n, 1) * 4, what)


def check_result(result: Any, what: str) -> None:
    """Reject array results over the limit (for outputs whose size is hard to predict)."""
    if isinstance(result, np.ndarray):
        check_alloc(result.size, what)
        if result.dtype.kind not in _ALLOWED_DTYPE_KINDS:
            raise DisallowedCodeError(f"{what} produced a non-numeric array ({result.dtype})")
    elif isinstance(result, list) and len(result) > 4096:
        current_run().note_alloc(len(result))

