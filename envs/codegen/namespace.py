"""The names generated code runs with: guarded builtins, ``np`` and ``math``.

``np`` and ``math`` are not the real modules but :class:`SafeModule` namespaces that
hold only the allowlisted members, so even a name that slipped past the static check
could not reach ``np.load`` or ``np.ctypeslib``. Every numpy function is wrapped: its
arguments are checked for non-numeric dtypes and over-large nested lists, functions
that create arrays check the size they will create before calling numpy, and every
array result is size-checked after. Builtins that could run long in C (``range``,
``sum``, ``pow``) or format unbounded text (``str``, ``print``) are replaced by guarded
versions.
"""

from __future__ import annotations

import builtins
import math
import types
from collections.abc import Callable
from typing import Any

import numpy as np

from . import guards
from .errors import CodeResourceError, DisallowedCodeError
from .policy import MATH_NAMES, NUMPY_LINALG_NAMES, NUMPY_NAMES, SAFE_BUILTIN_NAMES
from .runtime import current_run

__all__ = ["SAFE_BUILTINS", "SAFE_MATH", "SAFE_NUMPY", "SafeModule", "guard_helpers"]

_NUMPY_CONSTANTS = frozenset(
    {"pi", "e", "inf", "nan", "newaxis", "ndarray", "float32", "float64", "int32", "int64", "bool_"}
)
# fmt: off
_BROADCASTING = frozenset(
    {"arctan2", "hypot", "minimum", "maximum", "add", "subtract", "multiply", "divide",
     "power", "logical_and", "logical_or", "logical_xor", "isclose", "allclose", "where",
     "clip", "cross"}
)
# fmt: on


class SafeModule(types.SimpleNamespace):
    """A read-only-by-convention namespace standing in for a module."""

    def __init__(self, name: str, members: dict[str, Any]) -> None:
        super().__init__(**members)
        object.__setattr__(self, "_name", name)

    def __repr__(self) -> str:
        return f"<safe module {self._name}>"


def _arg(args: tuple[Any, ...], kwargs: dict[str, Any], index: int, name: str, default: Any) -> Any:
    if len(args) > index:
        return args[index]
    return kwargs.get(name, default)


def _check_shape_arg(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    guards.check_alloc(guards.shape_size(_arg(args, kwargs, 0, "shape", 0)), "this array")


def _check_like(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    shape = kwargs.get("shape")
    if shape is not None:
        guards.check_alloc(guards.shape_size(shape), "this array")


def _check_arange(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    if len(args) == 1 and "stop" not in kwargs:
        start, stop, step = 0, args[0], kwargs.get("step", 1)
    else:
        start = _arg(args, kwargs, 0, "start", 0)
        stop = _arg(args, kwargs, 1, "stop", None)
        step = _arg(args, kwargs, 2, "step", 1)
    try:
        count = math.ceil((float(stop) - float(start)) / float(step))
    except (TypeError, ValueError, ZeroDivisionError, OverflowError):
        return  # numpy reports bad arguments itself
    guards.check_alloc(count, "np.arange")


def _check_linspace(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    guards.check_alloc(int(_arg(args, kwargs, 2, "num", 50)), "np.linspace")


def _check_eye(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    n = int(_arg(args, kwargs, 0, "N", 0))
    m = _arg(args, kwargs, 1, "M", None)
    guards.check_alloc(n * (n if m is None else int(m)), "this identity matrix")


def _check_tile(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    size = np.size(_arg(args, kwargs, 0, "A", 0))
    guards.check_alloc(size * guards.shape_size(_arg(args, kwargs, 1, "reps", 1)), "np.tile")


def _check_repeat(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    size = np.size(_arg(args, kwargs, 0, "a", 0))
    repeats = np.asarray(_arg(args, kwargs, 1, "repeats", 1))
    total = size * int(repeats) if repeats.ndim == 0 else int(repeats.sum())
    guards.check_alloc(total, "np.repeat")


def _check_outer(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    a, b = _arg(args, kwargs, 0, "a", 0), _arg(args, kwargs, 1, "b", 0)
    guards.check_alloc(np.size(a) * np.size(b), "np.outer")


def _product_check(op: str) -> Callable[[tuple[Any, ...], dict[str, Any]], None]:
    def check(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        if len(args) >= 2:
            guards.check_alloc(guards.product_size(args[0], args[1], op), f"np.{op}")
            guards.check_work(_work_of_product(args[0], args[1], op), f"np.{op}")

    return check


def _work_of_product(a: Any, b: Any, op: str) -> float:
    shape = np.shape(a) if not isinstance(a, np.ndarray) else a.shape
    inner = shape[-1] if shape else 1
    return max(guards.product_size(a, b, op), 1) * max(inner, 1)


def _check_diff(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    a = _arg(args, kwargs, 0, "a", 0)
    n = _arg(args, kwargs, 1, "n", 1)
    size = int(np.size(a))
    if not isinstance(n, int | np.integer) or n < 0 or n > max(size, 1):
        raise DisallowedCodeError(
            f"np.diff with n={n!r:.20} is not allowed; n must be an int between 0 and the "
            f"number of elements ({size})"
        )
    guards.check_work(float(n) * max(size, 1), "np.diff")


def _matrix_dims(a: Any) -> tuple[int, int, int]:
    """(batch, rows, cols) of a (stack of) matrices; (1, n, 1) for vectors."""
    shape = a.shape if isinstance(a, np.ndarray) else np.shape(a)
    if len(shape) < 2:
        return 1, (shape[0] if shape else 1), 1
    batch = guards.shape_size(shape[:-2]) if len(shape) > 2 else 1
    return batch, shape[-2], shape[-1]


def _check_cubic(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    batch, rows, cols = _matrix_dims(_arg(args, kwargs, 0, "a", 0))
    guards.check_work(float(batch) * rows * cols * max(min(rows, cols), 1), "this matrix operation")


def _check_norm(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    x = _arg(args, kwargs, 0, "x", 0)
    if type(x) is np.ndarray and x.ndim <= 1:
        return  # a vector norm: one pass over an array that exists
    order = _arg(args, kwargs, 1, "ord", None)
    batch, rows, cols = _matrix_dims(x)
    work = float(batch) * rows * cols
    if order in (2, -2, "nuc") and cols > 1:
        work *= max(min(rows, cols), 1) * 4  # singular values
    guards.check_work(work, "np.linalg.norm")


def _broadcast_check(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    if len(args) >= 2:
        guards.check_alloc(guards.broadcast_size(*args), "this elementwise operation")


_PRECHECKS: dict[str, Callable[[tuple[Any, ...], dict[str, Any]], None]] = {
    "zeros": _check_shape_arg,
    "ones": _check_shape_arg,
    "full": _check_shape_arg,
    "zeros_like": _check_like,
    "ones_like": _check_like,
    "full_like": _check_like,
    "arange": _check_arange,
    "linspace": _check_linspace,
    "eye": _check_eye,
    "identity": _check_eye,
    "tile": _check_tile,
    "repeat": _check_repeat,
    "outer": _check_outer,
    "diff": _check_diff,
    "det": _check_cubic,
    "inv": _check_cubic,
    "solve": _check_cubic,
    "norm": _check_norm,
    "dot": _product_check("dot"),
    "matmul": _product_check("matmul"),
    "inner": _product_check("inner"),
    **dict.fromkeys(_BROADCASTING, _broadcast_check),
}


def _wrap_numpy(label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    precheck = _PRECHECKS.get(label.rsplit(".", 1)[-1])

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        guards.validate_numpy_args(args, kwargs)
        if precheck is not None:
            precheck(args, kwargs)
        result = fn(*args, **kwargs)
        guards.check_result(result, label)
        current_run().check()  # timed per call, also in untraced code
        return result

    wrapper.__name__ = wrapper.__qualname__ = label
    wrapper.__doc__ = f"Guarded {label}."
    return wrapper


class _NdarrayMeta(type):
    """``isinstance(x, np.ndarray)`` works; ``np.ndarray(shape)`` (as a key=) does not."""

    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, np.ndarray)

    def __subclasscheck__(cls, sub: type) -> bool:
        return issubclass(sub, np.ndarray)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        raise DisallowedCodeError("np.ndarray(...) cannot be called; use np.zeros(shape)")


class _Ndarray(metaclass=_NdarrayMeta):
    """What generated code sees as ``np.ndarray`` (type tests only)."""


def _build_numpy() -> SafeModule:
    members: dict[str, Any] = {}
    for name in sorted(NUMPY_NAMES - {"linalg"}):
        value = getattr(np, name)
        members[name] = value if name in _NUMPY_CONSTANTS else _wrap_numpy(f"np.{name}", value)
    members["ndarray"] = _Ndarray
    linalg = {n: _wrap_numpy(f"np.linalg.{n}", getattr(np.linalg, n)) for n in NUMPY_LINALG_NAMES}
    members["linalg"] = SafeModule("np.linalg", linalg)
    return SafeModule("np", members)


# -- builtins -----------------------------------------------------------------------------


_INT64 = 2**63


def _range(*args: int) -> range:
    for arg in args:
        if isinstance(arg, int) and not -_INT64 <= arg < _INT64:
            raise CodeResourceError(
                "range() bounds must fit in 64 bits (each element would be a huge integer)"
            )
    r = range(*args)
    try:
        n: float = len(r)
    except OverflowError:
        n = math.inf
    guards.check_alloc(n, "range(...)")
    return r


def _sum(iterable: Any, /, start: Any = 0) -> Any:
    if not isinstance(start, int | float | complex | np.number | np.ndarray):
        raise DisallowedCodeError(
            "sum() only adds numbers or arrays; to join lists, append in a loop"
        )
    if isinstance(iterable, list | tuple | range) and {type(x) for x in iterable} <= {
        int,
        float,
        bool,
    }:
        return builtins.sum(iterable, start)
    run = current_run()
    total = start
    for i, item in enumerate(iterable):
        total = guards.binop("+", total, item)
        if not i & 1023 or isinstance(item, np.ndarray):
            run.check()
    return total


def _enumerate(iterable: Any, start: int = 0) -> enumerate[Any]:
    if not isinstance(start, int) or not -_INT64 <= start < _INT64:
        raise CodeResourceError("enumerate() start must be an int that fits in 64 bits")
    return builtins.enumerate(iterable, start)


def _ordered(fn: Callable[..., Any], label: str) -> Callable[..., Any]:
    """min/max/sorted with a bounded comparison cost and an allowlisted key."""

    def call(*args: Any, **kwargs: Any) -> Any:
        items = args[0] if len(args) == 1 else args
        if len(args) == 1:
            items = guards.materialize(items, f"{label}()")
            args = (items,)
        guards.check_order_work(items, kwargs.get("key"), f"{label}()")
        return fn(*args, **kwargs)

    call.__name__ = call.__qualname__ = label
    return call


def _set(iterable: Any = ()) -> set[Any]:
    items = guards.materialize(iterable, "set()")
    if tuple in builtins.set(map(type, items)):
        guards.count_elements(items, "set()")
        for item in items:
            guards.check_key(item)
    return builtins.set(items)


def _dict(*args: Any, **kwargs: Any) -> dict[Any, Any]:
    if args and not isinstance(args[0], dict):
        pairs = guards.materialize(args[0], "dict()")
        guards.count_elements(pairs, "dict()")
        for pair in pairs:
            guards.check_key(pair[0] if isinstance(pair, list | tuple) and pair else pair)
        args = (pairs, *args[1:])
    return builtins.dict(*args, **kwargs)


def _sequence(kind: type, label: str) -> Callable[..., Any]:
    def call(iterable: Any = ()) -> Any:
        return kind(guards.materialize(iterable, f"{label}()"))

    call.__name__ = call.__qualname__ = label
    return call


def _pow(base: Any, exp: Any, mod: Any = None) -> Any:
    if mod is None:
        return guards.binop("**", base, exp)
    return builtins.pow(base, exp, mod)


def _str(*args: Any) -> str:
    for arg in args[:1]:
        guards.count_elements(arg)
        guards.check_text(arg, "str()")
    return builtins.str(*args)


def _print(*args: Any, sep: str | None = " ", end: str | None = "\n") -> None:
    sep = " " if sep is None else _str(sep)[:100]
    end = "\n" if end is None else _str(end)[:100]
    run = current_run()
    parts: list[str] = []
    room = run.output_room
    for arg in args:
        if room <= 0:
            break  # the rest would be dropped: do not even format it
        parts.append(_str(arg)[:room])
        room -= len(parts[-1]) + len(sep)
    run.write(sep.join(parts) + end)


def _round(number: Any, ndigits: Any = None) -> Any:
    if ndigits is not None and abs(int(ndigits)) > 1000:
        # round(int, -n) computes 10**n: bound it like any other integer operation
        raise DisallowedCodeError(
            f"round() with ndigits={ndigits} is not allowed; use |ndigits| <= 1000"
        )
    return builtins.round(number, ndigits)


_TYPE_ALIASES: dict[Any, type] = {_str: str, _range: range}  # filled in below


def _isinstance(obj: Any, classinfo: Any) -> bool:
    if isinstance(classinfo, tuple):
        classinfo = tuple([_TYPE_ALIASES.get(c, c) for c in classinfo])
    else:
        classinfo = _TYPE_ALIASES.get(classinfo, classinfo)
    return builtins.isinstance(obj, classinfo)


def _build_builtins() -> dict[str, Any]:
    table = {name: getattr(builtins, name) for name in SAFE_BUILTIN_NAMES}
    table.update(
        range=_range,
        enumerate=_enumerate,
        min=_ordered(builtins.min, "min"),
        max=_ordered(builtins.max, "max"),
        sorted=_ordered(builtins.sorted, "sorted"),
        set=_set,
        dict=_dict,
        list=_sequence(list, "list"),
        tuple=_sequence(tuple, "tuple"),
        sum=_sum,
        pow=_pow,
        str=_str,
        print=_print,
        isinstance=_isinstance,
        round=_round,
    )
    return table


def guard_helpers() -> dict[str, Any]:
    """The ``__sj_*`` names the transformed code refers to."""
    return {
        "__sj_binop": guards.binop,
        "__sj_compare": guards.compare,
        "__sj_chain": guards.chain,
        "__sj_getitem": guards.getitem,
        "__sj_augitem": guards.augitem,
        "__sj_getattr": guards.getattr_,
        "__sj_callmethod": guards.callmethod,
        "__sj_fmt": guards.fmtcheck,
        "__sj_slice": slice,
        "__sj_setitem": guards.setitem,
        "__sj_delitem": guards.delitem,
        "__sj_key": guards.check_key,
    }


SAFE_BUILTINS: dict[str, Any] = _build_builtins()
_TYPE_ALIASES.update({SAFE_BUILTINS[n]: getattr(builtins, n) for n in
                      ("set", "dict", "list", "tuple", "enumerate")})
"""The ``__builtins__`` mapping of generated code (nothing else is reachable)."""
SAFE_NUMPY: SafeModule = _build_numpy()
"""What generated code sees as ``np``."""
SAFE_MATH: SafeModule = SafeModule("math", {n: getattr(math, n) for n in MATH_NAMES})
"""What generated code sees as ``math``."""
