"""The abstract values of the cost proof (:mod:`~simjudge.envs.codegen.prove`).

Each value generated code can hold in proven code has a type here, and every type has a
*logical size* (:func:`size`): elements of an array, characters of a string, items of a
sequence counted with their own sizes (so a list of 10**6 references to one string is as
large as 10**6 copies: what a comparison of it would cost). The proof only admits code in
which every value's size is bounded by a constant, and every operation's work is a known
function of its operands' sizes.

The types:

- :class:`Num`: a Python float, bool or int, a numpy scalar or a numeric numpy array, with
  at most ``n`` elements. ``imax`` bounds the magnitude of the value if it is a Python int
  (0: it never is); ``floaty`` says it may be something other than a Python int/bool (a
  float or numpy value, whose magnitude is not tracked and which never grows in size).
- :class:`Str`: a string of at most ``n`` characters (``n=None``: a name the state API
  returned, bounded by the scene's files but not by a constant; only compared).
- :class:`Tup`: a tuple or list of fixed length (literals, state API pairs).
- :class:`Seq`: a tuple or list of at most ``n`` items of one type (comprehensions).
- :data:`NONE`, :data:`TOKEN` (``self``), :class:`Ref` (a function or module name).
- :class:`Union`: one of several types (branches, ``and``/``or``).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

from simjudge.envs.errors import SimjudgeError

__all__ = [
    "INT_CAP",
    "MAX_ELEMENTS",
    "MAX_STR",
    "NONE",
    "OPAQUE",
    "TOKEN",
    "Num",
    "Ref",
    "Seq",
    "Str",
    "Tup",
    "Type",
    "Unproven",
    "Union",
    "join",
    "members",
    "numeric_size",
    "size",
]

MAX_ELEMENTS = 4096
"""Largest logical size of one value in proven code."""
MAX_STR = 256
"""Longest string (literal or built) in proven code."""
INT_CAP = 2**2100
"""Largest magnitude of a Python int in proven code (``int(1e308)`` has 1024 bits)."""
_MAX_UNION = 8


class Unproven(SimjudgeError):  # noqa: N818 - a verdict, not an error of the caller
    """The code is outside the provable subset; ``reason`` says where and why."""

    def __init__(self, reason: str, line: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = line


@dataclass(frozen=True)
class Num:
    """A number or numeric array (see the module docstring)."""

    n: int = 1
    imax: int = 0
    floaty: bool = True


@dataclass(frozen=True)
class Str:
    """A string of at most ``n`` characters (None: a state API name)."""

    n: int | None


@dataclass(frozen=True)
class Tup:
    """A tuple or list of fixed length."""

    items: tuple[Type, ...]


@dataclass(frozen=True)
class Seq:
    """A tuple or list of at most ``n`` items of type ``item``."""

    item: Type
    n: int


@dataclass(frozen=True)
class Ref:
    """A name that can only be called or have attributes read (``np``, ``np.sum``, ``f``)."""

    name: str


@dataclass(frozen=True)
class Union:
    """One of ``options`` (at most a few, none a Union)."""

    options: frozenset[Type]


@dataclass(frozen=True)
class _Atom:
    name: str


Type = Num | Str | Tup | Seq | Ref | Union | _Atom
NONE = _Atom("None")
TOKEN = _Atom("self")
OPAQUE = _Atom("a primitive's result")
"""What a primitive returns (frames, a state): held and passed on, never computed with."""
FLOAT = Num(1, 0, True)
BOOL = Num(1, 1, False)


def members(t: Type) -> tuple[Type, ...]:
    """The options of a union, or ``(t,)``."""
    return tuple(t.options) if isinstance(t, Union) else (t,)


def join(*types: Type) -> Type:
    """The least type covering all of ``types`` (numbers and same-shape values merge)."""
    options: set[Type] = set()
    for t in types:
        options.update(members(t))
    nums = [o for o in options if isinstance(o, Num)]
    if len(nums) > 1:
        options -= set(nums)
        options.add(Num(max(o.n for o in nums), max(o.imax for o in nums),
                        any(o.floaty for o in nums)))
    if len(options) == 1:
        return options.pop()
    if len(options) > _MAX_UNION:
        raise Unproven("a value takes too many different types")
    return Union(frozenset(options))


def size(t: Type) -> int:
    """Logical size of ``t`` (the largest over a union); names of the state API count 1."""
    if isinstance(t, Num):
        return t.n
    if isinstance(t, Str):
        return 1 if t.n is None else max(t.n, 1)
    if isinstance(t, Tup):
        return 1 + sum(size(i) for i in t.items)
    if isinstance(t, Seq):
        return 1 + t.n * size(t.item)
    if isinstance(t, Union):
        return max(size(o) for o in t.options)
    return 1


def has_api_name(t: Type) -> bool:
    """Whether ``t`` may hold a name the state API returned (``Str(None)``), at any depth."""
    for option in members(t):
        if isinstance(option, Str) and option.n is None:
            return True
        if isinstance(option, Tup) and any(has_api_name(i) for i in option.items):
            return True
        if isinstance(option, Seq) and has_api_name(option.item):
            return True
    return False


def numeric_size(t: Type) -> int | None:
    """Elements of ``t`` as numpy would read it (numbers only, no huge ints), else None."""
    best = 0
    for option in members(t):
        if isinstance(option, Num):
            if option.imax > 2**62:
                return None  # numpy would build an object array of Python ints
            found: int | None = option.n
        elif isinstance(option, Tup):
            parts = [numeric_size(i) for i in option.items]
            found = None if None in parts else sum(p for p in parts if p is not None)
        elif isinstance(option, Seq):
            inner = numeric_size(option.item)
            found = None if inner is None else inner * option.n
        else:
            return None
        if found is None:
            return None
        best = max(best, found)
    return best


def bounded(t: Type, where: str, line: int | None) -> Type:
    """``t`` if its size is within :data:`MAX_ELEMENTS`, else :class:`Unproven`."""
    if size(t) > MAX_ELEMENTS:
        raise Unproven(f"{where} may hold more than {MAX_ELEMENTS} elements", line)
    return t


def lift(fn: object, *types: Type) -> Type:
    """Apply ``fn`` to every combination of the options of ``types``; join the results."""
    combos = list(product(*(members(t) for t in types)))
    if len(combos) > 32:
        raise Unproven("a value takes too many different types")
    return join(*(fn(*c) for c in combos))  # type: ignore[operator]


def int_bound(a: int, b: int, op: str) -> int:
    """A bound on ``|x op y|`` for ``|x| <= a``, ``|y| <= b`` (Python ints; exact arithmetic)."""
    if op in ("+", "-"):
        return a + b
    if op == "*":
        return a * b
    if op in ("//", "%"):
        return max(a, b, 1)
    if op in ("&", "|", "^"):
        return 2 ** max(a.bit_length(), b.bit_length())
    if op == "**":
        if b > 10_000 or a.bit_length() * b > INT_CAP.bit_length():
            return INT_CAP + 1
        return a**b
    return INT_CAP + 1


def int_of_float_bound() -> int:
    """Largest ``|int(x)|`` of a finite float (``int(1.7e308)``)."""
    return 2**1024


__all__ += ["BOOL", "FLOAT", "bounded", "has_api_name", "int_bound", "int_of_float_bound",
            "lift"]
