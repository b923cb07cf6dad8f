"""Where generated code meets the caller: state API wrappers and output conversion.

Generated code sees ``self`` as an opaque :class:`~simjudge.envs.codegen.runtime.StateToken`.
The wrappers here swap it for the caller's view when calling a state API function or
a primitive, copy arrays in what the state API returns (so the code cannot mutate
state through results), and turn failures of those functions into
:class:`CodeRuntimeError` naming the function. The converters turn the returned
reward into a finite float and success into a bool, with actionable messages.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .errors import (
    CodeResourceError,
    CodeRuntimeError,
    DisallowedCodeError,
    GeneratedCodeError,
    InvalidOutputError,
    MissingOutputError,
    NonFiniteRewardError,
)
from .guards import count_elements
from .held import too_many_calls
from .runtime import RunState, current_run

__all__ = [
    "MAX_API_ELEMENTS",
    "MAX_API_TEXT",
    "RemoteView",
    "api_wrapper",
    "check_api_args",
    "detach",
    "primitive_wrapper",
    "swap_token",
    "to_bool",
    "to_float",
]


def detach(value: Any, depth: int = 0) -> Any:
    """Copy arrays (also inside tuples/lists/dicts) so results do not alias state."""
    kind = type(value)
    if kind is float or kind is int or kind is bool or kind is str:
        return value
    if isinstance(value, np.ndarray):
        return value.copy()
    if depth < 4 and isinstance(value, tuple | list):
        items = list(value)
        for i, item in enumerate(items):
            items[i] = detach(item, depth + 1)
        return tuple(items) if isinstance(value, tuple) else items
    if depth < 4 and isinstance(value, dict):
        return {k: detach(v, depth + 1) for k, v in value.items()}
    return value


def swap_token(
    run: RunState, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Replace ``self`` tokens in top-level call arguments by the caller's view."""
    token, view = run.token, run.view
    swapped = list(args)
    for i, arg in enumerate(swapped):
        if arg is token:
            swapped[i] = view
    for key, value in kwargs.items():
        if value is token:
            kwargs[key] = view
    return tuple(swapped), kwargs


MAX_API_TEXT = 256
"""Longest string argument of a state API call (object, link and joint names)."""
MAX_API_ELEMENTS = 10_000
"""Most elements in the list/array arguments of one state API call."""


class RemoteView:
    """Stand-in for a live view in a subprocess worker: answers state API calls.

    ``table`` maps ``(name, args)`` of the calls the code makes with constant arguments
    to their results (prefetched by the parent on the live view); any other call is
    asked of the parent over ``ask`` (``ask(name, args, kwargs) -> result``).
    """

    __slots__ = ("ask", "table")

    def __init__(self, table: dict[Any, Any], ask: Callable[[str, tuple[Any, ...],
                                                               dict[str, Any]], Any]) -> None:
        self.table = table
        self.ask = ask

    def call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """The result of ``name(view, *args, **kwargs)`` on the parent's live view."""
        if not kwargs:
            try:
                found = self.table.get((name, args))
            except TypeError:  # unhashable arguments (lists, arrays)
                found = None
            if found is not None:
                status, value = found
                if status == "ok":
                    return value
                raise CodeRuntimeError(f"{name}() failed: {value}")
        return self.ask(name, args, kwargs)


def check_api_args(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Bound the arguments of a state API call (names and small point lists only)."""
    for value in (*args, *kwargs.values()) if kwargs else args:
        kind = type(value)
        if kind is float or kind is int or kind is bool or value is None:
            continue
        if kind is str and len(value) <= MAX_API_TEXT:
            continue
        if isinstance(value, str) and len(value) > MAX_API_TEXT:
            raise DisallowedCodeError(
                f"{name}() got a string argument of {len(value)} characters; names are at "
                f"most {MAX_API_TEXT}"
            )
        if isinstance(value, list | tuple | dict | np.ndarray):
            size = value.size if isinstance(value, np.ndarray) else count_elements(value)
            if size > MAX_API_ELEMENTS:
                raise CodeResourceError(
                    f"{name}() got an argument of {size} elements; the limit is "
                    f"{MAX_API_ELEMENTS}"
                )


_STATIC_CACHE_SIZE = 64


def api_wrapper(name: str, fn: Callable[..., Any], *, static: bool = False) -> Callable[..., Any]:
    """Wrap a state API function: swap ``self``, bound arguments, detach results, type errors.

    With ``static=True`` (functions of the scene's structure, e.g. joint limits), results
    of calls with hashable arguments are kept per view object: the same view always
    answers the same (a view never changes its scene; a rebuilt scene has a new view).
    """
    cache: list[Any] = [None, {}]  # [view, {args: result}]

    def call(*args: Any, **kwargs: Any) -> Any:
        run = current_run()
        view = run.view
        if args and args[0] is run.token and not kwargs:
            args = (view, *args[1:])
        else:
            args, kwargs = swap_token(run, args, kwargs)
        check_api_args(name, args[1:], kwargs)
        if type(view) is RemoteView and args and args[0] is view:
            return view.call(name, args[1:], kwargs)
        if static and not kwargs:
            if cache[0] is not view:
                cache[:] = [view, {}]
            try:
                return cache[1][args[1:]]
            except (KeyError, TypeError):
                pass
        try:
            result = fn(*args, **kwargs)
        except (GeneratedCodeError, MemoryError):
            raise
        except Exception as exc:
            raise CodeRuntimeError(f"{name}() failed: {type(exc).__name__}: {exc}") from exc
        run.check()
        if static and not kwargs and _immutable(result) and len(cache[1]) < _STATIC_CACHE_SIZE:
            try:
                cache[1][args[1:]] = result
            except TypeError:
                pass
        return detach(result)

    call.__name__ = call.__qualname__ = name
    call.__simjudge_api__ = True  # type: ignore[attr-defined]
    return call


def _immutable(value: Any) -> bool:
    kind = type(value)
    if kind is float or kind is int or kind is bool or kind is str or value is None:
        return True
    return kind is tuple and all(_immutable(v) for v in value)


def primitive_wrapper(name: str) -> Callable[..., Any]:
    """Wrap a primitive bound per call; its time does not count toward the limit."""

    def call(*args: Any, **kwargs: Any) -> Any:
        run = current_run()
        run.primitive_calls += 1
        refused = too_many_calls(run.primitive_calls)
        if refused:
            raise CodeResourceError(refused)
        args, kwargs = swap_token(run, args, kwargs)
        with run.paused_clock():
            try:
                return run.primitives[name](*args, **kwargs)
            except (GeneratedCodeError, MemoryError):
                raise
            except Exception as exc:
                raise CodeRuntimeError(
                    f"primitive {name}() failed: {type(exc).__name__}: {exc}"
                ) from exc

    call.__name__ = call.__qualname__ = name
    return call


def to_float(value: Any, line: int | None) -> float:
    """The reward as a finite float (size-1 arrays and numpy scalars accepted)."""
    if type(value) is float and math.isfinite(value):
        return value
    if isinstance(value, np.ndarray):
        if value.size != 1:
            raise InvalidOutputError(
                f"the reward must be a single number, got an array of shape {value.shape}; "
                "reduce it, e.g. with np.sum(...) or np.linalg.norm(...)",
                line,
            )
        value = value.reshape(()).item()
    try:
        reward = float(value)
    except (TypeError, ValueError, OverflowError):
        raise InvalidOutputError(
            f"the reward must be a number, got {type(value).__name__}", line
        ) from None
    if not math.isfinite(reward):
        raise NonFiniteRewardError(
            f"the reward is {reward} (not a finite number); check for divisions by zero, "
            "log(0) or overflowing values",
            line,
        )
    return reward


def to_bool(value: Any, line: int | None, what: str = "success") -> bool:
    """``success`` as a bool (size-1 arrays and numpy bools accepted)."""
    if value is True or value is False:
        return value
    if value is None:
        raise MissingOutputError(f"{what} is None; it must be True or False", line)
    if isinstance(value, np.ndarray):
        if value.size != 1:
            raise InvalidOutputError(
                f"{what} must be a single bool, got an array of shape {value.shape}; "
                "combine it with np.all(...) or np.any(...)",
                line,
            )
        value = value.reshape(()).item()
    if not isinstance(value, bool | int | float | np.bool_ | np.number):
        raise InvalidOutputError(f"{what} must be a bool, got {type(value).__name__}", line)
    return bool(value)
