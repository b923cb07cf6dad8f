"""Compile generated reward, success and primitive code into guarded callables.

Pipeline: :func:`~simjudge.envs.codegen.checker.analyze` (static allowlist check,
every issue reported) -> :func:`~simjudge.envs.codegen.transform.compile_guarded`
(operators, indexing and methods routed through size guards) -> a ``Compiled*``
object. Each call builds a fresh namespace (guarded builtins, ``np``, ``math``, the
state API wrappers and ``self``, an opaque token standing for the caller's view),
runs the code under the tracer of :mod:`~simjudge.envs.codegen.runtime` and converts
the output (reward to a finite float, success to a bool).

The state API functions are called as ``f(view, *args)``: the token is swapped for
the view the caller passed, and returned arrays are copied, so generated code can
neither reach the view nor mutate state through results. State API functions must
return plain data (numbers, arrays, tuples, lists, dicts, strings).
"""

from __future__ import annotations

import ast
import copy
import math
from collections.abc import Callable, Iterable, Mapping
from types import CodeType
from typing import Any, Literal

import numpy as np

from . import policy
from .checker import Analysis, analyze
from .errors import (
    CodeRuntimeError,
    GeneratedCodeError,
    InvalidOutputError,
    Issue,
    MissingOutputError,
    NonFiniteRewardError,
)
from .namespace import SAFE_BUILTINS, SAFE_MATH, SAFE_NUMPY, guard_helpers
from .rules import Kind
from .runtime import ExecutionLimits, RunState, StateToken, current_run, execute
from .transform import compile_guarded, looping_code_objects

__all__ = [
    "CompiledBlock",
    "CompiledCode",
    "CompiledReward",
    "CompiledSuccess",
    "Mode",
    "compile_primitive_block",
    "compile_reward",
    "compile_success",
]

Mode = Literal["inprocess", "subprocess"]
ApiMapping = Mapping[str, Callable[..., Any]]


def _detach(value: Any, depth: int = 0) -> Any:
    """Copy arrays (also inside tuples/lists/dicts) so results do not alias state."""
    kind = type(value)
    if kind is float or kind is int or kind is bool or kind is str:
        return value
    if isinstance(value, np.ndarray):
        return value.copy()
    if depth < 4 and isinstance(value, tuple | list):
        items = list(value)
        for i, item in enumerate(items):
            items[i] = _detach(item, depth + 1)
        return tuple(items) if isinstance(value, tuple) else items
    if depth < 4 and isinstance(value, dict):
        return {k: _detach(v, depth + 1) for k, v in value.items()}
    return value


def _swap_token(
    run: RunState, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    token, view = run.token, run.view
    swapped = list(args)
    for i, arg in enumerate(swapped):
        if arg is token:
            swapped[i] = view
    for key, value in kwargs.items():
        if value is token:
            kwargs[key] = view
    return tuple(swapped), kwargs


def _api_wrapper(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        args, kwargs = _swap_token(current_run(), args, kwargs)
        try:
            result = fn(*args, **kwargs)
        except (GeneratedCodeError, MemoryError):
            raise
        except Exception as exc:
            raise CodeRuntimeError(f"{name}() failed: {type(exc).__name__}: {exc}") from exc
        return _detach(result)

    call.__name__ = call.__qualname__ = name
    return call


def _primitive_wrapper(name: str) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        run = current_run()
        args, kwargs = _swap_token(run, args, kwargs)
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


class CompiledCode:
    """Shared machinery of the compiled kinds; use the subclasses.

    Attributes:
        source: The submitted source.
        kind: ``"reward"``, ``"success"`` or ``"primitive"``.
        entry: The function called (function mode) or None (block mode).
        limits: The :class:`ExecutionLimits` of each call.
        warnings: Non-blocking issues of the static check.
        api_used: State API names the code calls.
        primitives_used: Primitive names the code calls.
        last_output: Text printed by the last in-process call.
    """

    kind: Kind = "reward"

    def __init__(
        self,
        source: str,
        api: ApiMapping,
        *,
        limits: ExecutionLimits,
        primitive_names: Iterable[str] | None = None,
    ) -> None:
        if not isinstance(limits, ExecutionLimits):
            raise TypeError(f"limits must be ExecutionLimits, got {type(limits).__name__}")
        bad = [n for n, fn in api.items() if not callable(fn)]
        if bad:
            raise TypeError(f"api values must be callables; not callable: {', '.join(bad)}")
        self.source = source
        self.limits = limits
        self._api = dict(api)
        if primitive_names is None:
            primitive_names = policy.PRIMITIVE_NAMES
        analysis = analyze(
            source,
            self.kind,
            api_names=self._api,
            allow_primitives=self.kind == "primitive",
            primitive_names=primitive_names,
            max_alloc_elements=limits.max_alloc_elements,
            max_int_bits=limits.max_int_bits,
        )
        analysis.raise_first()
        self._analysis: Analysis = analysis
        self.entry = analysis.entry
        self.warnings: tuple[Issue, ...] = tuple(analysis.issues)
        self.api_used = analysis.api_used
        self.primitives_used = analysis.primitives_used
        self.last_output = ""
        self._code: CodeType = compile_guarded(copy.deepcopy(analysis.tree))
        self._looping = looping_code_objects(self._code)
        returns = [
            node.lineno
            for node in ast.walk(analysis.functions[self.entry])
            if isinstance(node, ast.Return)
        ] if self.entry else []
        self._return_line = returns[0] if len(returns) == 1 else None
        self._entry_takes_self = bool(
            self.entry
            and (analysis.functions[self.entry].args.posonlyargs + analysis.functions[self.entry].args.args)
        )
        base: dict[str, Any] = {"__builtins__": SAFE_BUILTINS, "np": SAFE_NUMPY, "math": SAFE_MATH}
        base.update(guard_helpers())
        base.update({name: _api_wrapper(name, fn) for name, fn in self._api.items()})
        base.update({name: _primitive_wrapper(name) for name in analysis.primitives_used})
        self._base = base

    def _execute(
        self, view: object, primitives: Mapping[str, Callable[..., Any]] | None = None
    ) -> tuple[Any, dict[str, Any], RunState]:
        """Run the code once; return the entry's result, the namespace and the run."""
        run = RunState(self.limits, view=view, primitives=primitives, looping=self._looping)
        namespace = dict(self._base)
        namespace["self"] = run.token

        def body() -> Any:
            exec(self._code, namespace)  # noqa: S102 - checked, guarded and traced code
            if self.entry is None:
                return None
            function = namespace[self.entry]
            return function(run.token) if self._entry_takes_self else function()

        try:
            result = execute(run, body)
        finally:
            self.last_output = "".join(run.output)
        if run.return_line is None:
            run.return_line = self._return_line
        return result, namespace, run

    def __repr__(self) -> str:
        where = f"entry={self.entry!r}" if self.entry else "block"
        return f"<{type(self).__name__} {where}>"


def _to_float(value: Any, line: int | None) -> float:
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


def _to_bool(value: Any, line: int | None, what: str = "success") -> bool:
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


class CompiledReward(CompiledCode):
    """A reward function: ``reward(view) -> (reward: float, success: bool)``.

    Created by :func:`compile_reward`. In subprocess mode, call :meth:`close` (or use
    it as a context manager) to stop the worker process.
    """

    kind: Kind = "reward"

    def __init__(self, source: str, api: ApiMapping, *, limits: ExecutionLimits, mode: Mode):
        super().__init__(source, api, limits=limits)
        self.mode = mode
        self._worker = _make_worker(self.kind, source, api, limits, mode)

    def __call__(self, view: object) -> tuple[float, bool]:
        """Evaluate the reward on ``view``; raises a :class:`GeneratedCodeError` on failure."""
        if self._worker is not None:
            return self._worker.call(view)
        result, _, run = self._execute(view)
        if result is None:
            raise MissingOutputError(
                f"'{self.entry}' returned None; end it with `return reward, success`",
                run.return_line,
            )
        if not isinstance(result, tuple | list) or len(result) != 2:
            got = f"{len(result)} values" if isinstance(result, tuple | list) else type(result).__name__
            raise InvalidOutputError(
                f"'{self.entry}' must return two values `return reward, success`, got {got}",
                run.return_line,
            )
        return _to_float(result[0], run.return_line), _to_bool(result[1], run.return_line)

    def close(self) -> None:
        """Stop the subprocess worker, if any."""
        if self._worker is not None:
            self._worker.close()

    def __enter__(self) -> CompiledReward:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class CompiledSuccess(CompiledCode):
    """A success condition: ``success(view) -> bool`` (function or block form)."""

    kind: Kind = "success"

    def __init__(self, source: str, api: ApiMapping, *, limits: ExecutionLimits, mode: Mode):
        super().__init__(source, api, limits=limits)
        self.mode = mode
        self._worker = _make_worker(self.kind, source, api, limits, mode)

    def __call__(self, view: object) -> bool:
        """Evaluate the condition on ``view``; raises a :class:`GeneratedCodeError` on failure."""
        if self._worker is not None:
            return self._worker.call(view)
        result, namespace, run = self._execute(view)
        if self.entry is None:
            if "success" not in namespace:
                raise MissingOutputError("the code never assigned `success`")
            return _to_bool(namespace["success"], None)
        if result is None:
            raise MissingOutputError(
                f"'{self.entry}' returned None; end it with `return success`", run.return_line
            )
        return _to_bool(result, run.return_line)

    def close(self) -> None:
        """Stop the subprocess worker, if any."""
        if self._worker is not None:
            self._worker.close()

    def __enter__(self) -> CompiledSuccess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class CompiledBlock(CompiledCode):
    """A primitive block: ``block(view, primitives) -> {variable: value}``.

    The result holds every variable assigned by top-level statements (e.g. ``rgbs``,
    ``final_state``, ``success``), with ``success`` converted to a bool.
    """

    kind: Kind = "primitive"

    def __call__(
        self, view: object, primitives: Mapping[str, Callable[..., Any]] | None = None
    ) -> dict[str, Any]:
        """Run the block.

        Args:
            view: Passed to state API functions and primitives where the code says ``self``.
            primitives: Implementations bound by the executor, name -> callable; each
                is called with the arguments written in the code, ``self`` replaced by
                ``view``. Time spent inside them does not count toward the time limit.

        Raises:
            ValueError: A primitive the code calls has no implementation.
            GeneratedCodeError: The code failed.
        """
        primitives = dict(primitives or {})
        missing = sorted(self.primitives_used - primitives.keys())
        if missing:
            raise ValueError(
                f"no implementation bound for primitive(s) {', '.join(missing)}; pass them in "
                "`primitives` (name -> callable)"
            )
        _, namespace, _ = self._execute(view, primitives)
        outputs = {
            name: namespace[name]
            for name in self._analysis.outputs
            if name in namespace and not isinstance(namespace[name], StateToken)
        }
        if "success" not in outputs:
            raise MissingOutputError("the block never assigned `success`")
        outputs["success"] = _to_bool(outputs["success"], None)
        return outputs


def _make_worker(kind: Kind, source: str, api: ApiMapping, limits: ExecutionLimits, mode: Mode):
    if mode == "inprocess":
        return None
    if mode != "subprocess":
        raise ValueError(f"mode must be 'inprocess' or 'subprocess', got {mode!r}")
    from .sandbox import SandboxWorker

    return SandboxWorker(kind, source, dict(api), limits)


def compile_reward(
    source: str,
    api: ApiMapping,
    *,
    limits: ExecutionLimits | None = None,
    mode: Mode = "inprocess",
) -> CompiledReward:
    """Compile a RoboGen-style reward function.

    Args:
        source: Code defining ``def _compute_reward(self): ... return reward, success``
            (or ``compute_reward``, or a single top-level function that no other calls).
        api: State API functions (name -> callable) the code may call.
        limits: Per-call bounds; defaults to :class:`ExecutionLimits`.
        mode: ``"inprocess"`` (fast; tracer and guards) or ``"subprocess"`` (also an
            address-space limit and a hard kill; ``api`` and views must be picklable).

    Returns:
        A callable ``reward(view) -> (float, bool)``.

    Raises:
        GeneratedCodeError: The code does not pass the static check; ``issues`` lists
            every problem found.

    Example:
        >>> r = compile_reward("def _compute_reward(self):\\n    return -1.0, False", {})
        >>> r(None)
        (-1.0, False)
    """
    return CompiledReward(source, api, limits=limits or ExecutionLimits(), mode=mode)


def compile_success(
    source: str,
    api: ApiMapping,
    *,
    limits: ExecutionLimits | None = None,
    mode: Mode = "inprocess",
) -> CompiledSuccess:
    """Compile a success condition: a function returning a bool, or ``success = ...``.

    Example:
        >>> s = compile_success("success = abs(-2) > 1", {})
        >>> s(None)
        True
    """
    return CompiledSuccess(source, api, limits=limits or ExecutionLimits(), mode=mode)


def compile_primitive_block(
    source: str,
    api: ApiMapping,
    primitives: Iterable[str] = policy.PRIMITIVE_NAMES,
    *,
    limits: ExecutionLimits | None = None,
) -> CompiledBlock:
    """Compile a primitive block (primitive calls, then ``success = ...``).

    Args:
        source: Statements such as ``rgbs, final_state = grasp_object_link(self, "Obj",
            "link_0")`` followed by ``success = check_grasped(self, "Obj", "link_0")``.
        api: State API functions the code may call.
        primitives: Names of the primitives the code may call; implementations are
            bound per call (see :meth:`CompiledBlock.__call__`).
        limits: Per-call bounds (time inside primitives is not counted).
    """
    return CompiledBlock(
        source, api, limits=limits or ExecutionLimits(), primitive_names=tuple(primitives)
    )
