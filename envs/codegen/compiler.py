"""Compile generated reward, success and primitive code into guarded callables.

Pipeline: :func:`~simjudge.envs.codegen.checker.analyze` (size budget, static
allowlist check, every issue reported, call fan-out bound) ->
:func:`~simjudge.envs.codegen.transform.compile_guarded` (operators, indexing, stores and
methods routed through size guards) -> a ``Compiled*`` object.

Compiled once: when the module's top level only defines functions and immutable
constants (the usual reward), it is executed once at compile time and each call is a
plain call of the entry function, with a reused :class:`~.runtime.RunState`; the tracer
is installed only for code with loops or a large call fan-out (see
:mod:`~simjudge.envs.codegen.runtime`). Otherwise (blocks, mutable module state) the
module runs afresh on every call, so no state survives between calls. The namespace
holds guarded builtins, ``np``, ``math``, the state API wrappers and ``self``, an
opaque token standing for the caller's view; outputs are converted (reward to a finite
float, success to a bool).

The state API functions are called as ``f(view, *args)``: the token is swapped for
the view the caller passed, and returned arrays are copied, so generated code can
neither reach the view nor mutate state through results. State API functions must
return plain data (numbers, arrays, tuples, lists, dicts, strings).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Mapping
from types import CodeType
from typing import Any, Literal, Self

from . import policy
from .bindings import api_wrapper, primitive_wrapper, to_bool, to_float
from .checker import Analysis, analyze
from .errors import (
    GeneratedCodeError,
    InvalidOutputError,
    Issue,
    MissingOutputError,
)
from .namespace import SAFE_BUILTINS, SAFE_MATH, SAFE_NUMPY, guard_helpers
from .policy import SAFE_BUILTIN_NAMES
from .runtime import UNTRACED_CALL_FANOUT, ExecutionLimits, RunState, StateToken, execute
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
            max_calls=limits.max_calls,
        )
        analysis.raise_first()
        assert analysis.tree is not None, "raise_first raised if the code did not parse"
        self._analysis: Analysis = analysis
        self.entry = analysis.entry
        self.warnings: tuple[Issue, ...] = tuple(analysis.issues)
        self.api_used = analysis.api_used
        self.primitives_used = analysis.primitives_used
        self.last_output = ""
        tree = ast.parse(source, filename="<generated>")
        self._block_function = self.kind == "success" and self.entry is None and _wrappable_block(
            tree, set(SAFE_BUILTIN_NAMES) | set(self._api) | {"np", "math", "self"}
        )
        if self._block_function:
            tree = _block_as_function(tree)
        self._code: CodeType = compile_guarded(tree)
        self._looping = looping_code_objects(self._code)
        self.traced = bool(self._looping) or analysis.fanout > UNTRACED_CALL_FANOUT
        self._token = StateToken()
        self._runs: list[RunState] = []
        self._return_line: int | None = None
        self._entry_takes_self = False
        self._entry_name = self.entry
        if self.entry is not None:
            fn = analysis.functions[self.entry]
            returns = [n.lineno for n in ast.walk(fn) if isinstance(n, ast.Return)]
            self._return_line = returns[0] if len(returns) == 1 else None
            self._entry_takes_self = bool(fn.args.posonlyargs + fn.args.args)
        base: dict[str, Any] = {"__builtins__": SAFE_BUILTINS, "np": SAFE_NUMPY, "math": SAFE_MATH}
        base.update(guard_helpers())
        static = _static_api_functions()
        base.update(
            {name: api_wrapper(name, fn, static=fn in static) for name, fn in self._api.items()}
        )
        base.update({name: primitive_wrapper(name) for name in analysis.primitives_used})
        base["self"] = self._token
        self._base = base
        base["__sj_missing"] = _MISSING
        self._entry_call: Callable[[], Any] | None = None
        if self._block_function:
            self._entry_name, self._entry_takes_self = _BLOCK_FUNCTION, True
            self._entry_call = self._load_once()
        elif self.entry is not None and _pure_module(analysis.tree):
            self._entry_call = self._load_once()

    def _load_once(self) -> Callable[[], Any] | None:
        """Run a pure module once; return a call of its entry (None if it failed)."""
        namespace = dict(self._base)
        run = RunState(self.limits, looping=self._looping, token=self._token,
                       traced=self.traced)

        def load() -> None:
            exec(self._code, namespace)  # noqa: S102 - checked, guarded and traced code

        try:
            execute(run, load)
        except GeneratedCodeError:
            return None  # reported on every call, as for impure modules
        assert self._entry_name is not None
        function = namespace[self._entry_name]
        token = self._token
        if self._entry_takes_self:
            return lambda: function(token)
        return function

    def _execute(
        self, view: object, primitives: Mapping[str, Callable[..., Any]] | None = None
    ) -> tuple[Any, dict[str, Any] | None, RunState]:
        """Run the code once; return the entry's result, the namespace and the run.

        The namespace is None when the module was loaded once (function mode).
        """
        runs = self._runs
        run = runs.pop() if runs else RunState(
            self.limits, looping=self._looping, token=self._token, traced=self.traced
        )
        run.begin(view, primitives)
        namespace: dict[str, Any] | None = None
        body = self._entry_call
        if body is None:
            namespace = scope = dict(self._base)

            def body() -> Any:
                exec(self._code, scope)  # noqa: S102 - checked, guarded and traced code
                if self.entry is None:
                    return None
                function = scope[self.entry]
                return function(self._token) if self._entry_takes_self else function()

        try:
            result = execute(run, body)
        finally:
            self.last_output = "".join(run.output) if run.output else ""
            run.view, run.primitives = None, {}
            runs.append(run)
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
            self._worker = SandboxWorker(
                self.kind, source, dict(api), limits, self._analysis.constant_calls
            )

    @property
    def isolation(self) -> dict[str, str]:
        """Subprocess mode: what the worker could set up (empty before its first start)."""
        return dict(self._worker.isolation) if self._worker is not None else {}

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
        if self._block_function and namespace is None:
            if result is _MISSING:
                raise MissingOutputError("the code never assigned `success`")
            return to_bool(result, None)
        if self.entry is None:
            assert namespace is not None, "blocks run afresh on every call"
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
        assert namespace is not None, "blocks run afresh on every call"
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


_IMMUTABLE_EXPR = (
    ast.Constant, ast.Tuple, ast.Name, ast.Attribute, ast.BinOp, ast.UnaryOp, ast.BoolOp,
    ast.Compare, ast.IfExp, ast.Subscript, ast.Slice, ast.JoinedStr, ast.FormattedValue,
    ast.expr_context, ast.operator, ast.unaryop, ast.boolop, ast.cmpop,
)


def _pure_module(tree: ast.Module) -> bool:
    """Whether the top level only defines functions and immutable constants.

    Such a module can run once at compile time: its values (numbers, strings, tuples of
    them, results of guarded operators on them) cannot be changed by later calls, so
    no state survives from one call to the next. Any call, list, dict or set display at
    the top level makes it impure (it then runs afresh on every call).
    """
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef):
            if any(not isinstance(n, _IMMUTABLE_EXPR) for d in stmt.args.defaults
                   for n in ast.walk(d)):
                return False
            continue
        if isinstance(stmt, ast.Assign | ast.AnnAssign | ast.Expr):
            value = stmt.value
            if value is None or not all(isinstance(n, _IMMUTABLE_EXPR) for n in ast.walk(value)):
                return False
            targets = stmt.targets if isinstance(stmt, ast.Assign) else (
                [stmt.target] if isinstance(stmt, ast.AnnAssign) else [])
            if not all(isinstance(n, ast.Name | ast.Tuple | ast.expr_context)
                       for t in targets for n in ast.walk(t)):
                return False
            continue
        return False
    return True


def _static_api_functions() -> tuple[Callable[..., Any], ...]:
    """State API functions whose answer depends only on the scene (cached per view)."""
    from ..state_api import get_joint_limit

    return (get_joint_limit,)


_MISSING = object()
"""Value of ``success`` in a block compiled as a function until the block assigns it."""
_BLOCK_FUNCTION = "__sj_block"


def _wrappable_block(tree: ast.Module, namespace: set[str]) -> bool:
    """Whether a success block can run as the body of a function.

    It must be plain statements (no function definitions) that bind no name the
    namespace already provides (a local would shadow it from the block's first line).
    """
    if any(isinstance(stmt, ast.FunctionDef) for stmt in tree.body):
        return False
    bound = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and not
             isinstance(n.ctx, ast.Load)}
    return not bound & namespace


def _block_as_function(tree: ast.Module) -> ast.Module:
    """``<block>`` -> ``def __sj_block(self): success = __sj_missing; <block>; return success``.

    The block then runs with fast locals and is compiled once; a path that never assigns
    ``success`` returns the marker, reported as a missing output.
    """
    line = tree.body[0].lineno if tree.body else 1
    start = ast.parse("success = __sj_missing").body
    end = ast.parse("return success").body
    for stmt in (*start, *end):
        for node in ast.walk(stmt):
            if hasattr(node, "lineno"):
                node.lineno = node.end_lineno = line  # type: ignore[attr-defined]
                node.col_offset = node.end_col_offset = 0  # type: ignore[attr-defined]
    args = ast.arguments(posonlyargs=[], args=[ast.arg(arg="self")], kwonlyargs=[],
                         kw_defaults=[], defaults=[])
    function = ast.FunctionDef(name=_BLOCK_FUNCTION, args=args, body=[*start, *tree.body, *end],
                               decorator_list=[], returns=None, type_comment=None)
    ast.copy_location(function, tree.body[0] if tree.body else start[0])
    module = ast.Module(body=[function], type_ignores=[])
    return ast.fix_missing_locations(module)
