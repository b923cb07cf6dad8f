"""Primitive calls across the worker's pipe: what crosses and what stays in the parent.

A primitive block that runs in the OS-bounded worker (:mod:`~.sandbox`) still drives the
live env, which never leaves the parent: each primitive call is a request to the parent,
which runs the executor's implementation on the live view. Its result (frames, a
simulator state) stays in the parent too; the worker gets a :class:`Held` stand-in for each
item that is not a plain scalar, and the parent maps stand-ins back to the real values
when they come back, as arguments of a later primitive call or as the block's outputs.
Generated code can hold, return and pass on a stand-in; it cannot read what it stands for.

Example:
    >>> held: dict[int, object] = {}
    >>> sent = to_child("grasp_object_link", (["frame"], {"joint": 0.1}), held)
    >>> sent
    (<rgbs held by the executor: grasp_object_link() result 0>, <... result 1>)
    >>> from_child({"rgbs": sent[0], "success": True}, held)
    {'rgbs': ['frame'], 'success': True}
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["MAX_HELD", "MAX_PRIMITIVE_CALLS", "SELF", "Held", "check_primitive_args", "from_child",
           "primitive_stub", "to_child", "too_many_calls"]

MAX_HELD = 4096
"""Most primitive results one call may hold (a block that calls more is refused)."""
MAX_PRIMITIVE_CALLS = 64
"""Most primitive calls of one block call, in this process or the worker: each drives the
env (motion planning can take seconds), and that time is the executor's, not the code's."""


@dataclass(frozen=True)
class Held:
    """A primitive's result item kept in the parent; the worker sees only this.

    Attributes:
        key: The parent's index of the value.
        origin: The primitive that returned it and the item's position, for messages.
    """

    key: int
    origin: str

    def __repr__(self) -> str:
        return f"<{self.origin}>"

    def _unreadable(self, *_: object) -> Any:
        raise TypeError(f"{self.origin} stays with the executor: generated code can hold it, "
                        "return it or pass it to a primitive, not read it")

    __len__ = __iter__ = __getitem__ = __bool__ = __float__ = __int__ = _unreadable
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _unreadable
    __truediv__ = __lt__ = __le__ = __gt__ = __ge__ = __array__ = _unreadable


class _Self:
    """Marks ``self`` (the view) in a primitive call's arguments sent to the parent."""

    def __reduce__(self) -> str:
        return "SELF"

    def __repr__(self) -> str:
        return "self"


SELF = _Self()
"""The view's place in a primitive call's arguments (the parent puts its live view there)."""

_PLAIN = (bool, int, float, str, type(None))


def to_child(name: str, result: Any, held: dict[int, Any]) -> Any:
    """What the worker receives for ``result``: plain scalars as they are, the rest held.

    A tuple or list result (``rgbs, final_state``) is sent as a tuple of items; any other
    result as one item.

    Raises:
        RuntimeError: The call holds more than :data:`MAX_HELD` values.
    """
    items = result if isinstance(result, tuple | list) else None
    if items is None and hasattr(result, "__iter__") and not isinstance(result, str | dict):
        try:  # a PrimitiveResult unpacks to (rgbs, final_state)
            items = tuple(result)
        except TypeError:
            items = None
    if items is None:
        return _one(f"{name}() result", result, held)
    return tuple(_one(f"{name}() result {i}", item, held) for i, item in enumerate(items))


def _one(origin: str, value: Any, held: dict[int, Any]) -> Any:
    if isinstance(value, _PLAIN):
        return value
    if len(held) >= MAX_HELD:
        raise RuntimeError(f"the block holds more than {MAX_HELD} primitive results")
    key = len(held)
    held[key] = value
    what = "rgbs" if isinstance(value, list) else type(value).__name__
    return Held(key, f"{what} held by the executor: {origin}")


def from_child(value: Any, held: dict[int, Any]) -> Any:
    """``value`` with the real results in place of its :class:`Held` stand-ins.

    Stand-ins are replaced at the top level and one level down (in a tuple, list or dict
    value); anything else is unchanged.
    """
    if isinstance(value, Held):
        return held.get(value.key, value)
    if isinstance(value, dict):
        return {k: from_child(v, held) if isinstance(v, Held | tuple | list) else v
                for k, v in value.items()}
    if isinstance(value, tuple | list) and any(isinstance(v, Held) for v in value):
        return type(value)(held.get(v.key, v) if isinstance(v, Held) else v for v in value)
    return value


def primitive_stub(name: str, ask: Callable[[str, tuple[Any, ...], dict[str, Any]], Any],
                   is_view: Callable[[object], bool]) -> Callable[..., Any]:
    """The worker's stand-in for primitive ``name``: asks the parent, ``self`` marked."""

    def call(*args: Any, **kwargs: Any) -> Any:
        args = tuple(SELF if is_view(a) else a for a in args)
        kwargs = {k: SELF if is_view(v) else v for k, v in kwargs.items()}
        return ask(name, args, kwargs)

    call.__name__ = name
    return call


def check_primitive_args(name: str, args: tuple[Any, ...], kwargs: dict[str, Any],
                         max_elements: int, max_text: int) -> None:
    """Bound what the worker asks a primitive to run with (names, poses, held values).

    Raises:
        ValueError: An argument is too large or of a kind a primitive does not take.
    """
    stack: list[Any] = [*args, *kwargs.values()]
    count = 0
    while stack:
        value = stack.pop()
        count += 1
        if count > max_elements:
            raise ValueError(f"{name}() got arguments of more than {max_elements} elements")
        if value is SELF or isinstance(value, Held | bool | int | float | type(None)):
            continue
        if isinstance(value, str):
            if len(value) > max_text:
                raise ValueError(f"{name}() got a string of {len(value)} characters; names "
                                 f"are at most {max_text}")
            continue
        if isinstance(value, list | tuple):
            if len(value) > max_elements:
                raise ValueError(f"{name}() got a sequence of {len(value)} elements")
            stack.extend(value)
            continue
        raise ValueError(f"{name}() got an argument of type {type(value).__name__}; "
                         "primitives take names, numbers, poses and their own results")


def too_many_calls(count: int) -> str | None:
    """The error text when a block's ``count``-th primitive call is over the limit."""
    if count <= MAX_PRIMITIVE_CALLS:
        return None
    return (f"the block calls primitives more than {MAX_PRIMITIVE_CALLS} times in one run; "
            "a skill needs a few calls (approach, grasp, move, release): remove the loop "
            "around them")
