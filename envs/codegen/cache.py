r"""Compile each generated source once: one compiled object per source, kind, api and limits.

The same proposal is checked by the RoboGen converter, judged by the code judges, run by
the executor and trained on in every SAC sub-environment; :func:`compile_once` gives all of
them the one :class:`~.compiler.CompiledCode` of that source (the static check, the cost
proof and the guarded compile run once). A compiled object binds to each state view it is
called on (one scene at a time, rebinding when another view comes), so sharing it across
scenes is correct; ``close()`` by one user only stops the worker process, which the next
call restarts. Sources that fail the check are not cached: each compile raises anew.

Example:
    >>> from simjudge.envs.state_api import STATE_API
    >>> source = "def _compute_reward(self):\n    return 0.0, False\n"
    >>> compile_once("reward", source, STATE_API) is compile_once("reward", source, STATE_API)
    True
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any, Literal

from .compiler import Mode, compile_primitive_block, compile_reward, compile_success
from .runtime import ExecutionLimits

__all__ = ["CACHE_SIZE", "cache_info", "compile_once"]

CACHE_SIZE = 256
"""Compiled sources kept per process (least recently used dropped first)."""

_CACHE: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
_STATS = {"hits": 0, "misses": 0}


def compile_once(kind: Literal["reward", "success", "primitive"], source: str,
                 api: Mapping[str, Callable[..., Any]], *, limits: ExecutionLimits | None = None,
                 mode: Mode = "in-process") -> Any:
    """The compiled ``source`` of ``kind``, compiled on first use and shared after.

    Args:
        kind: ``reward`` (:func:`~.compiler.compile_reward`), ``success`` or ``primitive``.
        source: The generated source.
        api: State API functions (the same functions give the same entry).
        limits: Per-call bounds (part of the key).
        mode: ``in-process`` or ``subprocess`` (part of the key).

    Raises:
        GeneratedCodeError: The code does not pass the static check.
        ValueError: An unknown kind.
    """
    limits = limits or ExecutionLimits()
    mode = "in-process" if mode == "inprocess" else mode
    key = (kind, source, tuple(sorted((n, id(f)) for n, f in api.items())), limits, mode)
    found = _CACHE.get(key)
    if found is not None:  # the entry holds the api's functions: their ids are not reused
        _CACHE.move_to_end(key)
        _STATS["hits"] += 1
        return found[0]
    if kind == "reward":
        compiled: Any = compile_reward(source, api, limits=limits, mode=mode)
    elif kind == "success":
        compiled = compile_success(source, api, limits=limits, mode=mode)
    elif kind == "primitive":
        compiled = compile_primitive_block(source, api, limits=limits, mode=mode)
    else:
        raise ValueError(f"kind must be 'reward', 'success' or 'primitive', got {kind!r}")
    _STATS["misses"] += 1
    _CACHE[key] = (compiled, api_functions(api))
    while len(_CACHE) > CACHE_SIZE:
        _CACHE.popitem(last=False)
    return compiled


def api_functions(api: Mapping[str, Callable[..., Any]]) -> tuple[Callable[..., Any], ...]:
    """The api's functions in name order (kept with an entry so their ids stay theirs)."""
    return tuple(api[n] for n in sorted(api))


def cache_info() -> dict[str, int]:
    """``{"hits", "misses", "size"}`` of this process's cache."""
    return {**_STATS, "size": len(_CACHE)}
