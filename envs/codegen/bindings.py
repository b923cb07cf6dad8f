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
    CodeRuntimeError,
    GeneratedCodeError,
    InvalidOutputError,
    MissingOutputError,
    NonFiniteRewardError,
)
from .runtime import RunState, current_run

__all__ = ["api_wrapper", "detach", "primitive_wrapper", "swap_token", "to_bool", "to_float"]


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


def api_wrapper(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a state API function: swap ``self``, detach results, type its errors."""

    def call(*args: Any, **kwargs: Any) -> Any:
        args, kwargs = swap_token(current_run(), args, kwargs)
        try:
            result = fn(*args, **kwargs)
        except (GeneratedCodeError, MemoryError):
            raise
        except Exception as exc:
            raise CodeRuntimeError(f"{name}() failed: {type(exc).__name__}: {exc}") from exc
        return detach(result)

    call.__name__ = call.__qualname__ = name
    return call


def primitive_wrapper(name: str) -> Callable[..., Any]:
    """Wrap a primitive bound per call; its time does not count toward the limit."""

    def call(*args: Any, **kwargs: Any) -> Any:
        run = current_run()
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
