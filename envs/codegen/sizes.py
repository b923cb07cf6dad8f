"""Sizes and costs that the guards check before an operation runs.

Element counts of nested containers and array shapes (broadcasts, products, fancy
indexing), the work of single uninterruptible calls, and the length of text a value would
format to. Every check reads the limits of the running call
(:func:`~simjudge.envs.codegen.runtime.current_run`) and raises a typed error before any
work is done.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .errors import CodeResourceError, DisallowedCodeError
from .runtime import current_run

__all__ = [
    "MAX_TEXT_CHARS",
    "broadcast_size",
    "check_alloc",
    "check_items",
    "check_text",
    "check_work",
    "count_elements",
    "fancy_index_bound",
    "product_size",
    "product_work",
    "shape_size",
    "text_size",
]

MAX_TEXT_CHARS = 100_000
"""Longest text one ``str()``, f-string field or ``print`` argument may produce."""
PLAIN_NUMBERS = frozenset({int, float, bool})
NUMERIC_SCALARS = (int, float, bool, complex, np.generic)
_CONTAINERS = (list, tuple, set, frozenset)
_NESTED = (list, tuple, set, frozenset, dict, np.ndarray)
_NUMERIC_ELEMENTS = (*NUMERIC_SCALARS, np.ndarray, list, tuple)


def check_alloc(n: float, what: str) -> None:
    """Raise :class:`CodeResourceError` if ``n`` elements exceed the allocation limit.

    Allocations that pass are counted toward the next memory reading
    (:meth:`~simjudge.envs.codegen.runtime.RunState.note_alloc`).
    """
    run = current_run()
    limit = run.limits.max_alloc_elements
    if n > limit:
        raise CodeResourceError(
            f"{what} would create {n:.3g} elements; the limit is {limit}; "
            "work with smaller arrays or lists"
        )
    if n > 4096:
        run.note_alloc(n)


def check_work(work: float, what: str) -> None:
    """Raise :class:`CodeResourceError` if one operation's work exceeds ``max_op_work``."""
    run = current_run()
    limit = run.limits.max_op_work
    if work > limit:
        raise CodeResourceError(
            f"{what} would take about {work:.3g} elementary steps in one uninterruptible "
            f"call; the limit is {limit:.3g}: use smaller inputs"
        )
    run.check()


def check_items(n: int, what: str) -> None:
    """Bound the length of a container a C-level builtin will walk (``max_alloc_elements``)."""
    limit = current_run().limits.max_alloc_elements
    if n > limit:
        raise CodeResourceError(
            f"{what} walks {n} elements in one call; the limit is {limit}: use smaller data"
        )


def count_elements(obj: Any, what: str = "this value", *, numeric: bool = False) -> int:
    """Count elements of nested containers, raising once the limit is crossed.

    With ``numeric=True`` (arguments of numpy functions) only numbers, arrays and nested
    lists/tuples of them are accepted.
    """
    limit = current_run().limits.max_alloc_elements
    total = 0
    stack = [obj]
    while stack:
        item = stack.pop()
        if isinstance(item, np.ndarray):
            total += item.size
        elif isinstance(item, _CONTAINERS):
            total += len(item)
            types = set(map(type, item))  # C-speed scan of the element types
            if numeric:
                _require_numeric(types)
            if _may_nest(types):
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


def _require_numeric(types: set[type]) -> None:
    for kind in types:
        if not issubclass(kind, _NUMERIC_ELEMENTS):
            raise DisallowedCodeError(
                f"a {kind.__name__} inside a list passed to numpy is not allowed; numpy "
                "functions take numbers, arrays and lists of numbers"
            )


def _may_nest(types: set[type]) -> bool:
    # No generator expressions in guards: the tracer may raise inside them, and a
    # generator finalized by an exception prints "Exception ignored" noise.
    for kind in types:
        if issubclass(kind, _NESTED):
            return True
    return False


def product_work(a: Any, b: Any, op: str) -> float:
    """Multiply-adds of ``np.dot``/``matmul``/``inner``: output size times the summed axis."""
    sa = shape_of(a)
    inner = sa[-1] if sa else 1
    return max(product_size(a, b, op), 1) * max(inner, 1)


def text_size(value: Any, limit: int = MAX_TEXT_CHARS) -> int:
    """Upper estimate of ``len(str(value))``, stopping once it passes ``limit``."""
    total = 0
    stack = [value]
    while stack and total <= limit:
        item = stack.pop()
        kind = type(item)
        if kind is str:
            total += len(item) + 2
        elif kind is int or kind is bool:
            total += item.bit_length() // 3 + 2
        elif isinstance(item, float | complex | np.generic) or item is None:
            total += 48
        elif isinstance(item, np.ndarray):
            total += 64 * min(item.size, 1000) + 64  # numpy summarizes large arrays
        elif isinstance(item, list | tuple | set | frozenset):
            total += 2 * len(item) + 2
            types = set(map(type, item))
            if types <= {float}:
                total += 24 * len(item)
            else:
                stack.extend(item)
        elif isinstance(item, dict):
            total += 4 * len(item) + 2
            stack.extend(item.keys())
            stack.extend(item.values())
        else:
            total += 64
    return total


def check_text(value: Any, what: str) -> None:
    """Refuse values whose text form would exceed :data:`MAX_TEXT_CHARS`."""
    if type(value) is str and len(value) <= MAX_TEXT_CHARS:
        return
    size = text_size(value)
    if size > MAX_TEXT_CHARS:
        raise CodeResourceError(
            f"{what} would produce more than {MAX_TEXT_CHARS} characters of text; "
            "format smaller values (e.g. a few numbers)"
        )


def shape_size(shape: Any) -> int:
    """Number of elements of an array of ``shape`` (an int or a sequence of ints)."""
    if isinstance(shape, int | np.integer):
        return int(shape)
    total = 1
    for dim in shape:
        total *= operator.index(dim)
    return total


def shape_of(x: Any) -> tuple[int, ...]:
    if isinstance(x, np.ndarray | np.generic):
        return x.shape
    if isinstance(x, list | tuple):
        count_elements(x, "an operand")
    return np.shape(x)


def broadcast_size(*operands: Any) -> int:
    """Elements of the broadcast of ``operands`` (0 if they do not broadcast)."""
    if len(operands) == 2:  # fast paths: same shapes, or an array and a scalar
        a, b = operands
        if type(a) is np.ndarray:
            if (type(b) is np.ndarray and a.shape == b.shape) or type(b) in PLAIN_NUMBERS:
                return int(a.size)
        elif type(b) is np.ndarray and type(a) in PLAIN_NUMBERS:
            return int(b.size)
    shapes = [shape_of(x) for x in operands]
    try:
        return shape_size(np.broadcast_shapes(*shapes))
    except ValueError:
        return 0  # incompatible shapes: numpy raises its own error


def product_size(a: Any, b: Any, op: str) -> int:
    """Upper bound on the elements of ``np.dot``/``np.matmul``/``np.inner`` results."""
    sa, sb = shape_of(a), shape_of(b)
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


def fancy_index_bound(arr: np.ndarray, key: Any) -> int | None:
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
