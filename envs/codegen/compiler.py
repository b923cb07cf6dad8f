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
from collections.abc import Callable, Iterable, Mapping
from types import CodeType
from typing import Any, Literal, Self

from . import policy
from .bindings import api_wrapper, primitive_wrapper, to_bool, to_float
from .checker import Analysis, analyze
from .errors import (
    InvalidOutputError,
    Issue,
    MissingOutputError,
)
from .namespace import SAFE_BUILTINS, SAFE_MATH, SAFE_NUMPY, guard_helpers
from .runtime import ExecutionLimits, RunState, StateToken, execute
from .sandbox import SandboxWorker
from .syntax import Kind
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
        assert analysis.tree is not None, "raise_first raised if the code did not parse"
        self._analysis: Analysis = analysis
        self.entry = analysis.entry
        self.warnings: tuple[Issue, ...] = tuple(analysis.issues)
        self.api_used = analysis.api_used
        self.primitives_used = analysis.primitives_used
        self.last_output = ""
        self._code: CodeType = compile_guarded(copy.deepcopy(analysis.tree))
        self._looping = looping_code_objects(self._code)
        self._return_line: int | None = None
        self._entry_takes_self = False
        if self.entry is not None:
            fn = analysis.functions[self.entry]
            returns = [n.lineno for n in ast.walk(fn) if isinstance(n, ast.Return)]
            self._return_line = returns[0] if len(returns) == 1 else None
            self._entry_takes_self = bool(fn.args.posonlyargs + fn.args.args)
        base: dict[str, Any] = {"__builtins__": SAFE_BUILTINS, "np": SAFE_NUMPY, "math": SAFE_MATH}
        base.update(guard_helpers())
        base.update({name: api_wrapper(name, fn) for name, fn in self._api.items()})
        base.update({name: primitive_wrapper(name) for name in analysis.primitives_used})
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


class _Evaluator(CompiledCode):
    """A compiled kind that may run in a subprocess (reward and success)."""

    def __init__(self, source: str, api: ApiMapping, *, limits: ExecutionLimits, mode: Mode):
        if mode not in ("inprocess", "subprocess"):
            raise ValueError(f"mode must be 'inprocess' or 'subprocess', got {mode!r}")
        super().__init__(source, api, limits=limits)
        self.mode = mode
        self._worker: SandboxWorker | None = None
        if mode == "subprocess":
            self._worker = SandboxWorker(self.kind, source, dict(api), limits)

    def close(self) -> None:
        """Stop the subprocess worker, if any (a later call restarts it)."""
        if self._worker is not None:
            self._worker.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class CompiledReward(_Evaluator):
    """A reward function: ``reward(view) -> (reward: float, success: bool)``.

    Created by :func:`compile_reward`. In subprocess mode, call :meth:`close` (or use
    it as a context manager) to stop the worker process.
    """

    kind: Kind = "reward"

    def __call__(self, view: object) -> tuple[float, bool]:
        """Evaluate the reward on ``view``; raises a :class:`GeneratedCodeError` on failure."""
        if self._worker is not None:
            return self._worker.call(view)
        result, _, run = self._execute(view)
        line = run.return_line
        if result is None:
            raise MissingOutputError(
                f"'{self.entry}' returned None; end it with `return reward, success`", line
            )
        if not isinstance(result, tuple | list) or len(result) != 2:
            got = type(result).__name__
            if isinstance(result, tuple | list):
                got = f"{len(result)} values"
            raise InvalidOutputError(
                f"'{self.entry}' must return two values `return reward, success`, got {got}", line
            )
        return to_float(result[0], line), to_bool(result[1], line)


class CompiledSuccess(_Evaluator):
    """A success condition: ``success(view) -> bool`` (function or block form).

    Created by :func:`compile_success`; see :class:`CompiledReward` for the modes.
    """

    kind: Kind = "success"

    def __call__(self, view: object) -> bool:
        """Evaluate the condition on ``view``; raises a :class:`GeneratedCodeError` on failure."""
        if self._worker is not None:
            return self._worker.call(view)
        result, namespace, run = self._execute(view)
        if self.entry is None:
            if "success" not in namespace:
                raise MissingOutputError("the code never assigned `success`")
            return to_bool(namespace["success"], None)
        if result is None:
            raise MissingOutputError(
                f"'{self.entry}' returned None; end it with `return success`", run.return_line
            )
        return to_bool(result, run.return_line)


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
        outputs["success"] = to_bool(outputs["success"], None)
        return outputs


def compile_reward(
    source: str,
    api: ApiMapping,
    *,
    limits: ExecutionLimits | None = None,
    mode: Mode = "inprocess",
) -> CompiledReward:
    r"""Compile a RoboGen-style reward function.

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
        >>> r = compile_reward("def _compute_reward(self):\n    return -1.0, False", {})
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
