"""The call table of the cost proof: what each admitted call returns and what it costs.

Every rule receives the types of *all* arguments, positional and keyword, and either
returns ``(result type, work)`` or raises :class:`~.costtypes.Unproven`. A keyword a rule
does not name, a ``*args``/``**kwargs`` call, or a function not listed here makes the code
unproven (it then runs in the worker process). Work is in elements touched; sizes are
computed with Python ints, so no size arithmetic can wrap (``np.repeat(x, [2**62] * 4)``
is refused, not summed to 0).
"""

from __future__ import annotations

from collections.abc import Callable

from .costtypes import (
    BOOL,
    FLOAT,
    MAX_ELEMENTS,
    NONE,
    TOKEN,
    Num,
    Ref,
    Seq,
    Str,
    Tup,
    Type,
    Unproven,
    has_api_name,
    int_of_float_bound,
    join,
    members,
    numeric_size,
    size,
)

__all__ = ["API_RESULTS", "Call", "call_rule", "method_rule"]

Call = tuple[tuple[Type, ...], dict[str, Type]]
Rule = Callable[[tuple[Type, ...], dict[str, Type], int | None], tuple[Type, int]]
_ARR3, _ARR4 = Num(3, 0, True), Num(4, 0, True)
_NAME = join(Str(None), NONE)

API_RESULTS: dict[str, Type] = {
    "get_eef_pos": Tup((_ARR3, _ARR4)),
    "get_position": _ARR3,
    "get_orientation": _ARR3,
    "get_link_state": _ARR3,
    "get_joint_state": FLOAT,
    "get_joint_limit": Tup((FLOAT, FLOAT)),
    "get_bounding_box": Tup((_ARR3, _ARR3)),
    "get_bounding_box_link": Tup((_ARR3, _ARR3)),
    "in_bbox": BOOL,
    "check_grasped": BOOL,
    "get_initial_joint_angle": FLOAT,
    "get_initial_pos_orient": Tup((_ARR3, _ARR3)),
    "get_grasped_object_name": _NAME,
    "get_grasped_object_and_link_name": Tup((_NAME, _NAME)),
    "gripper_close_to_object_link": BOOL,
    "gripper_close_to_object": BOOL,
}
"""What the functions of :data:`simjudge.envs.state_api.STATE_API` return (only those
very function objects are trusted with these types)."""


def _num(t: Type, what: str, line: int | None) -> int:
    n = numeric_size(t)
    if n is None:
        raise Unproven(f"{what} is not known to be numeric", line)
    return n


def _count(t: Type, what: str, line: int | None) -> int:
    """The bound of a Python int used as a count or size (floats are refused)."""
    total = 0
    for option in members(t):
        if not isinstance(option, Num) or option.floaty or option.n != 1:
            raise Unproven(f"{what} is not known to be a bounded integer", line)
        total = max(total, option.imax)
    return total


def _shape(t: Type, what: str, line: int | None) -> int:
    """Elements of an array of shape ``t`` (an int or a tuple of ints)."""
    if isinstance(t, Tup):
        total = 1
        for item in t.items:
            total *= _count(item, what, line)
        return total
    return _count(t, what, line)


def _only(kwargs: dict[str, Type], allowed: frozenset[str], what: str, line: int | None) -> None:
    extra = sorted(set(kwargs) - allowed)
    if extra:
        raise Unproven(f"{what}() with keyword {extra[0]}= is not in the proof's table", line)


def _arity(args: tuple[Type, ...], lo: int, hi: int, what: str, line: int | None) -> None:
    if not lo <= len(args) <= hi:
        raise Unproven(f"{what}() with {len(args)} positional arguments", line)


def _sized(n: int, what: str, line: int | None) -> Num:
    if n > MAX_ELEMENTS:
        raise Unproven(f"{what}() may make more than {MAX_ELEMENTS} elements", line)
    return Num(max(n, 1), 0, True)


def _elementwise(arity: tuple[int, int], keywords: frozenset[str] = frozenset()) -> Rule:
    """Broadcasting functions: output at most the product of all argument sizes."""

    def rule(args: tuple[Type, ...], kwargs: dict[str, Type], line: int | None) -> tuple[Type, int]:
        _arity(args, *arity, "numpy function", line)
        _only(kwargs, keywords, "numpy function", line)
        total = 1
        for value in (*args, *kwargs.values()):
            total *= max(1, _num(value, "an argument", line))
        return _sized(total, "a numpy function", line), total

    return rule


def _reduction(keywords: frozenset[str] = frozenset({"axis", "keepdims"})) -> Rule:
    def rule(args: tuple[Type, ...], kwargs: dict[str, Type], line: int | None) -> tuple[Type, int]:
        _arity(args, 1, 1, "numpy reduction", line)
        _only(kwargs, keywords, "numpy reduction", line)
        for key, value in kwargs.items():
            _num(value, key, line)
        n = _num(args[0], "the argument", line)
        return Num(max(n, 1), 0, True), n * 16

    return rule


def _product(args: tuple[Type, ...], kwargs: dict[str, Type], line: int | None) -> tuple[Type, int]:
    _arity(args, 2, 2, "numpy product", line)
    _only(kwargs, frozenset(), "numpy product", line)
    total = _num(args[0], "an argument", line) * _num(args[1], "an argument", line)
    return _sized(total, "a numpy product", line), total


def _creation(args: tuple[Type, ...], kwargs: dict[str, Type], line: int | None) -> tuple[Type, int]:
    _arity(args, 1, 1, "numpy function", line)
    _only(kwargs, frozenset({"dtype"}), "numpy function", line)
    if "dtype" in kwargs and not (isinstance(kwargs["dtype"], Ref) and kwargs["dtype"].name in _DTYPES):
        raise Unproven("numpy function() with a dtype outside float/int/bool", line)
    n = _num(args[0], "the argument", line)
    return _sized(n, "numpy function", line), n


_DTYPES = frozenset({"b:float", "b:int", "b:bool", "np.float64", "np.float32", "np.int64",
                     "np.int32", "np.bool_"})


def _filled(args: tuple[Type, ...], kwargs: dict[str, Type], line: int | None) -> tuple[Type, int]:
    """``np.zeros(shape)``/``np.ones(shape)``, ``np.full(shape, value)`` (no dtype argument)."""
    _arity(args, 1, 2, "numpy function", line)
    _only(kwargs, frozenset(), "numpy function", line)
    n = _shape(args[0], "the shape", line)
    if len(args) == 2:
        _num(args[1], "the fill value", line)
    return _sized(n, "numpy function", line), n


def _like(args: tuple[Type, ...], kwargs: dict[str, Type], line: int | None) -> tuple[Type, int]:
    _arity(args, 1, 2, "numpy function", line)
    _only(kwargs, frozenset(), "numpy function", line)
    n = _num(args[0], "the argument", line)
    if len(args) == 2:
        _num(args[1], "the fill value", line)
    return _sized(n, "numpy function", line), n


def _one_arg(rule: Rule) -> Rule:
    """``rule`` for a function whose second positional argument is a dtype (refused)."""

    def one(args: tuple[Type, ...], kwargs: dict[str, Type], line: int | None) -> tuple[Type, int]:
        _arity(args, 1, 1, "numpy function", line)
        return rule(args, kwargs, line)

    return one


def _two_args(rule: Rule) -> Rule:
    """``rule`` for a function that takes exactly a shape (or array) and a fill value."""

    def two(args: tuple[Type, ...], kwargs: dict[str, Type], line: int | None) -> tuple[Type, int]:
        _arity(args, 2, 2, "numpy function", line)
        return rule(args, kwargs, line)

    return two


def _eye(args: tuple[Type, ...], kwargs: dict[str, Type], line: int | None) -> tuple[Type, int]:
    _arity(args, 1, 1, "np.eye", line)
    _only(kwargs, frozenset(), "np.eye", line)
    k = _count(args[0], "the size", line)
    return _sized(k * k, "np.eye", line), k * k


def _arange(args: tuple[Type, ...], kwargs: dict[str, Type], line: int | None) -> tuple[Type, int]:
    _arity(args, 1, 2, "np.arange", line)
    _only(kwargs, frozenset(), "np.arange", line)
    n = sum(_count(a, "a bound of np.arange", line) for a in args)
    return _sized(n, "np.arange", line), n


def _linspace(args: tuple[Type, ...], kwargs: dict[str, Type], line: int | None) -> tuple[Type, int]:
    _arity(args, 2, 3, "np.linspace", line)
    _only(kwargs, frozenset({"num"}), "np.linspace", line)
    num = args[2] if len(args) == 3 else kwargs.get("num", Num(1, 50, False))
    n = _count(num, "num", line) * _num(args[0], "start", line) * _num(args[1], "stop", line)
    return _sized(n, "np.linspace", line), n


def _repeat(args: tuple[Type, ...], kwargs: dict[str, Type], line: int | None) -> tuple[Type, int]:
    _arity(args, 2, 2, "np.repeat", line)
    _only(kwargs, frozenset(), "np.repeat", line)
    counts = args[1]
    if isinstance(counts, Tup):
        reps = sum(_count(c, "a repeat count", line) for c in counts.items)
    else:
        reps = _count(counts, "the repeat count", line)
    n = _num(args[0], "the array", line) * max(reps, 1)
    return _sized(n, "np.repeat", line), n


def _tile(args: tuple[Type, ...], kwargs: dict[str, Type], line: int | None) -> tuple[Type, int]:
    _arity(args, 2, 2, "np.tile", line)
    _only(kwargs, frozenset(), "np.tile", line)
    n = _num(args[0], "the array", line) * max(_shape(args[1], "the repeats", line), 1)
    return _sized(n, "np.tile", line), n


def _joined(args: tuple[Type, ...], kwargs: dict[str, Type], line: int | None) -> tuple[Type, int]:
    _arity(args, 1, 1, "numpy function", line)
    _only(kwargs, frozenset({"axis"}), "numpy function", line)
    n = _num(args[0], "the arrays", line)
    return _sized(n, "numpy function", line), n


def _same(arity: tuple[int, int], keywords: frozenset[str] = frozenset(),
          repeats: bool = False) -> Rule:
    """Same-size transforms whose extra arguments are small ints (axes, shapes, counts).

    With ``repeats`` (``np.diff``'s ``n``), the work is the size times the count.
    """

    def rule(args: tuple[Type, ...], kwargs: dict[str, Type], line: int | None) -> tuple[Type, int]:
        _arity(args, *arity, "numpy function", line)
        _only(kwargs, keywords, "numpy function", line)
        extra = 1
        for value in (*args[1:], *kwargs.values()):
            if value != NONE:
                extra += _shape(value, "an axis, shape or count", line)
        if extra > MAX_ELEMENTS:
            raise Unproven("a numpy function's axis, shape or count may be large", line)
        n = _num(args[0], "the array", line)
        return Num(max(n, 1), 0, True), n * 16 * (extra if repeats else 1) + extra

    return rule


def _where(args: tuple[Type, ...], kwargs: dict[str, Type], line: int | None) -> tuple[Type, int]:
    _arity(args, 3, 3, "np.where", line)
    return _elementwise((3, 3))(args, kwargs, line)


def _linalg(args: tuple[Type, ...], kwargs: dict[str, Type], line: int | None) -> tuple[Type, int]:
    _arity(args, 1, 2, "np.linalg", line)
    _only(kwargs, frozenset({"ord", "axis"}), "np.linalg.norm", line)
    for extra in (*args[1:], *kwargs.values()):
        if not (extra == NONE or isinstance(extra, Str) or numeric_size(extra) in (1, 2)):
            raise Unproven("np.linalg.norm's ord/axis is not a constant", line)
    n = _num(args[0], "the array", line)
    result = Num(max(n, 1), 0, True) if "axis" in kwargs else FLOAT  # no axis: one number
    return result, n * 64  # at worst an SVD of a k x k matrix, k*k <= n: k**3 <= 64 n


def _solve(arity: int) -> Rule:
    def rule(args: tuple[Type, ...], kwargs: dict[str, Type], line: int | None) -> tuple[Type, int]:
        _arity(args, arity, arity, "np.linalg", line)
        _only(kwargs, frozenset(), "np.linalg", line)
        n = max(_num(a, "a matrix", line) for a in args)
        return Num(max(n, 1), 0, True), n * 64

    return rule


_UNARY = ("abs absolute sqrt square exp log log10 log2 sin cos tan arcsin arccos arctan sinh "
          "cosh tanh deg2rad rad2deg degrees radians sign floor ceil isnan isinf isfinite "
          "logical_not float64 float32 int64 int32 bool_").split()
_BINARY = ("arctan2 hypot minimum maximum add subtract multiply divide power logical_and "
           "logical_or logical_xor").split()
_REDUCE = ("sum mean median std var prod min max amin amax argmin argmax any all "
           "count_nonzero").split()
_NUMPY: dict[str, Rule] = {f"np.{n}": _elementwise((1, 1)) for n in _UNARY}
_NUMPY.update({f"np.{n}": _elementwise((2, 2)) for n in _BINARY})
_NUMPY.update({f"np.{n}": _reduction() for n in _REDUCE})
_NUMPY.update({
    "np.round": _elementwise((1, 2)), "np.clip": _elementwise((1, 3), frozenset(
        {"a_min", "a_max", "min", "max"})),
    "np.isclose": _elementwise((2, 4), frozenset({"rtol", "atol"})),
    "np.allclose": _elementwise((2, 4), frozenset({"rtol", "atol"})),
    "np.array_equal": _elementwise((2, 2)), "np.where": _where,
    "np.interp": _elementwise((3, 3)), "np.nan_to_num": _elementwise((1, 1)),
    "np.dot": _product, "np.vdot": _product, "np.inner": _product, "np.outer": _product,
    "np.matmul": _product, "np.cross": _product,
    "np.array": _creation, "np.asarray": _creation, "np.copy": _same((1, 1)),
    "np.zeros": _one_arg(_filled), "np.ones": _one_arg(_filled), "np.full": _two_args(_filled),
    "np.zeros_like": _one_arg(_like), "np.ones_like": _one_arg(_like),
    "np.full_like": _two_args(_like),
    "np.eye": _eye, "np.identity": _eye, "np.arange": _arange, "np.linspace": _linspace,
    "np.repeat": _repeat, "np.tile": _tile,
    "np.concatenate": _joined, "np.stack": _joined, "np.hstack": _joined, "np.vstack": _joined,
    "np.cumsum": _same((1, 1), frozenset({"axis"})), "np.sort": _same((1, 1)),
    "np.argsort": _same((1, 1)), "np.diff": _same((1, 2), repeats=True), "np.reshape": _same((2, 2)),
    "np.transpose": _same((1, 1)), "np.squeeze": _same((1, 1)), "np.ravel": _same((1, 1)),
    "np.flip": _same((1, 1)), "np.expand_dims": _same((2, 2)),
    "np.linalg.norm": _linalg, "np.linalg.det": _solve(1), "np.linalg.inv": _solve(1),
    "np.linalg.solve": _solve(2),
})


def _math(arity: tuple[int, int], result: Type = FLOAT) -> Rule:
    def rule(args: tuple[Type, ...], kwargs: dict[str, Type], line: int | None) -> tuple[Type, int]:
        _arity(args, *arity, "math function", line)
        _only(kwargs, frozenset(), "math function", line)
        for a in args:
            _num(a, "an argument", line)
        return result, 8

    return rule


_MATH_FLOAT = ("sqrt exp log log10 log2 cos sin tan acos asin atan cosh sinh tanh fabs "
               "radians degrees").split()
_TO_INT = Num(1, int_of_float_bound(), False)
_MATH: dict[str, Rule] = {f"math.{n}": _math((1, 1)) for n in _MATH_FLOAT}
_MATH.update({f"math.{n}": _math((2, 2)) for n in ("atan2", "copysign", "fmod", "pow")})
_MATH.update({f"math.{n}": _math((1, 1), BOOL) for n in ("isfinite", "isnan", "isinf")})
_MATH.update({f"math.{n}": _math((1, 1), _TO_INT) for n in ("floor", "ceil", "trunc")})
_MATH.update({"math.isclose": _math((2, 2), BOOL), "math.hypot": _math((1, 3))})


def _math_dist(args: tuple[Type, ...], kwargs: dict[str, Type], line: int | None) -> tuple[Type, int]:
    _arity(args, 2, 2, "math.dist", line)
    _only(kwargs, frozenset(), "math.dist", line)
    return FLOAT, _num(args[0], "p", line) + _num(args[1], "q", line)


_MATH["math.dist"] = _math_dist


def _iter_item(t: Type, line: int | None) -> tuple[Type, int]:
    """The items of iterating ``t`` and their number (bounded sequences only)."""
    items: list[Type] = []
    count = 0
    for option in members(t):
        if isinstance(option, Tup):
            items.extend(option.items)
            count = max(count, len(option.items))
        elif isinstance(option, Seq):
            items.append(option.item)
            count = max(count, option.n)
        elif isinstance(option, Num) and not (option.n == 1 and not option.floaty):
            items.append(Num(option.n, 0, True))  # rows of an array
            count = max(count, option.n)
        elif isinstance(option, Str) and option.n is not None:
            items.append(Str(1))
            count = max(count, option.n)
        else:
            raise Unproven("iteration over a value that is not a bounded sequence", line)
    if not items:
        raise Unproven("iteration over an empty value", line)
    return join(*items), count


def _scalar(t: Type, name: str, line: int | None) -> int:
    """Elements of a number or numeric array given to a builtin (big Python ints allowed)."""
    if not all(isinstance(o, Num) for o in members(t)):
        raise Unproven(f"the argument of {name}() is not known to be a number or array", line)
    return max(o.n for o in members(t) if isinstance(o, Num))


def _builtin(name: str, args: tuple[Type, ...], kwargs: dict[str, Type],
             line: int | None) -> tuple[Type, int]:
    """Rules of the admitted builtins."""
    _only(kwargs, frozenset(), name, line)
    if name in ("abs", "float", "bool"):
        _arity(args, 1, 1, name, line)
        n = _scalar(args[0], name, line) if name != "bool" else size(args[0])
        if name == "abs":
            return join(*(Num(o.n, o.imax, o.floaty) for o in members(args[0])
                          if isinstance(o, Num))), n
        return (FLOAT if name == "float" else BOOL), n
    if name in ("int", "round"):
        _arity(args, 1, 2 if name == "round" else 1, name, line)
        if len(args) == 2 and (_count(args[1], "ndigits", line) > 400):
            raise Unproven("round() with a large ndigits", line)
        n = _scalar(args[0], name, line)
        imax = max(int_of_float_bound(), *(o.imax for o in members(args[0]) if isinstance(o, Num)))
        if name == "int":
            return Num(1, imax, False), 1  # an int, or a TypeError for arrays of size > 1
        return Num(n, imax, len(args) == 2 or n > 1), n  # round() of an array is an array
    if name == "print":  # guarded: output capped at max_output_chars; no file= or sep=
        if any(has_api_name(a) for a in args):
            raise Unproven("print() of a name the state API returned (not bounded here)", line)
        return NONE, 32 * sum(size(a) for a in args)
    if name == "len":
        _arity(args, 1, 1, name, line)
        if any(isinstance(o, Str) and o.n is None for o in members(args[0])):
            raise Unproven("len() of a name the state API returned (not bounded here)", line)
        return Num(1, size(args[0]), False), 1
    if name in ("min", "max", "sum", "any", "all", "sorted", "list", "tuple", "reversed"):
        return _over_items(name, args, line)
    raise Unproven(f"{name}() is not in the proof's table", line)


def _over_items(name: str, args: tuple[Type, ...], line: int | None) -> tuple[Type, int]:
    """Builtins that walk an iterable (or compare two values: ``min(a, b)``)."""
    _arity(args, 1, 2 if name in ("min", "max") else 1, name, line)
    if name in ("min", "max", "sorted") and any(has_api_name(a) for a in args):
        raise Unproven(f"{name}() compares names the state API returned (not bounded "
                       "here)", line)
    if len(args) == 2:
        return join(*args), size(args[0]) + size(args[1])
    item, count = _iter_item(args[0], line)
    work = count * size(item)
    if name in ("any", "all"):
        return BOOL, work
    if name in ("min", "max"):
        return item, work
    if name == "sum":
        return _sum(item, count, line), work
    return Seq(item, count), work * (12 if name == "sorted" else 1)


def _sum(item: Type, count: int, line: int | None) -> Type:
    if numeric_size(item) is None:
        raise Unproven("sum() of values not known to be numeric", line)
    return join(*(Num(o.n, o.imax * max(count, 1), o.floaty) for o in members(item)
                  if isinstance(o, Num)))


def call_rule(name: str, args: tuple[Type, ...], kwargs: dict[str, Type],
              line: int | None) -> tuple[Type, int]:
    """Result type and work of calling the admitted function ``name`` (dotted for modules)."""
    rule = _NUMPY.get(name) or _MATH.get(name)
    if rule is not None:
        try:
            return rule(args, kwargs, line)
        except Unproven as exc:
            reason = exc.reason
            for generic in ("a numpy function", "numpy function", "numpy reduction",
                            "numpy product", "math function", "np.linalg"):
                reason = reason.replace(generic, name)
            raise Unproven(reason, line) from None
    if name.startswith(("np.", "math.")):
        raise Unproven(f"{name}() is not in the proof's table", line)
    if name in API_RESULTS:
        if not args or args[0] != TOKEN or kwargs:
            raise Unproven(f"{name}() is not called as {name}(self, ...)", line)
        for a in args[1:]:
            if not (isinstance(a, Str) or a == NONE or numeric_size(a) is not None) or size(a) > 64:
                raise Unproven(f"{name}() gets an argument that is not a name or a point", line)
        return API_RESULTS[name], 64
    return _builtin(name, args, kwargs, line)


_ARRAY_METHODS: dict[str, Rule] = {
    **{m: _reduction() for m in ("sum", "mean", "std", "var", "prod", "min", "max", "any",
                                 "all", "argmax", "argmin")},
    **{m: _same((1, 1)) for m in ("copy", "flatten", "ravel", "squeeze", "transpose")},
    "cumsum": _same((1, 1), frozenset({"axis"})), "round": _same((1, 2)),
    "reshape": _same((1, 4)), "clip": _elementwise((1, 3)), "dot": _product,
}


def method_rule(receiver: Type, method: str, args: tuple[Type, ...], kwargs: dict[str, Type],
                line: int | None) -> tuple[Type, int]:
    """Result type and work of ``receiver.method(*args, **kwargs)``."""
    results: list[Type] = []
    work = 0
    for option in members(receiver):
        if isinstance(option, Num) and method in _ARRAY_METHODS:
            result, w = _ARRAY_METHODS[method]((option, *args), kwargs, line)
        elif isinstance(option, Num) and method == "item" and not args and not kwargs:
            result, w = Num(1, 2**64, True), 1
        elif isinstance(option, Str) and option.n is not None and method in _STR_METHODS:
            _only(kwargs, frozenset(), f"str.{method}", line)
            if method in ("startswith", "endswith"):
                if len(args) != 1 or not isinstance(args[0], Str) or args[0].n is None:
                    raise Unproven(f"str.{method}() with an argument other than one string", line)
                result, w = BOOL, option.n
            else:
                if args:
                    raise Unproven(f"str.{method}() with arguments", line)
                result, w = Str(option.n), option.n
        else:
            raise Unproven(f".{method}() is not in the proof's table for this value", line)
        results.append(result)
        work = max(work, w)
    return join(*results), work


_STR_METHODS = frozenset({"lower", "upper", "strip", "lstrip", "rstrip", "startswith", "endswith"})
