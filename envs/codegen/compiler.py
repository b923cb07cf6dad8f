"""Compile generated reward, success and primitive code into guarded callables.

Pipeline: :func:`~simjudge.envs.codegen.checker.analyze` (size budget, static
allowlist check, every issue reported, call fan-out bound) ->
:func:`~simjudge.envs.codegen.prove.prove` (the cost proof: ``cost_class``, ``runs_in``,
``reason``; reward and success code it does not bound go to a
:class:`~.sandbox.SandboxWorker` and nothing of them runs here, not even the module) ->
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

Constant state-API calls (``get_joint_state(self, "Drawer", "joint_0")``) in the entry of
loop-free code are resolved once per view (:mod:`~simjudge.envs.codegen.resolve`): into reads
of the env's batched per-step reading, or constants (joint limits); the operators on their
results run unguarded where the operand types are known (:mod:`~simjudge.envs.codegen.typed`),
and an entry that then names nothing but resolved readings runs without a
:class:`~.runtime.RunState` (only the deadline is checked, see :func:`~.runtime.lean_call`).
Each call of a loaded, loop-free entry takes that lean path; results and errors are those of
the unresolved code (``tests/envs/codegen_fast``).

The state API functions are called as ``f(view, *args)``: the token is swapped for
the view the caller passed, and returned arrays are copied, so generated code can
neither reach the view nor mutate state through results. State API functions must
return plain data (numbers, arrays, tuples, lists, dicts, strings).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from types import CodeType
from typing import Any, Literal, Self

from ..state_api import StateView
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
from .prove import Proof, prove
from .resolve import ConstantCall, bind_calls, rewrite_constant_calls
from .runtime import (
    UNTRACED_CALL_FANOUT,
    ExecutionLimits,
    RunState,
    StateToken,
    execute,
    lean_call,
)
from .sandbox import SandboxWorker
from .shapes import BLOCK_FUNCTION, block_as_function, pure_module, reads_only, wrappable_block
from .syntax import Kind
from .transform import compile_guarded, looping_code_objects
from .typed import SLOT_TYPES, drop_known_guards

__all__ = [
    "CompiledBlock",
    "CompiledCode",
    "CompiledReward",
    "CompiledSuccess",
    "Mode",
    "RunsIn",
    "compile_primitive_block",
    "compile_reward",
    "compile_success",
]

Mode = Literal["in-process", "inprocess", "subprocess", "guarded"]
RunsIn = Literal["in-process", "worker"]
_MODES = ("in-process", "inprocess", "subprocess", "guarded")
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
        takes_self = self.entry is not None and bool(
            analysis.functions[self.entry].args.posonlyargs
            + analysis.functions[self.entry].args.args)
        proof = prove(analysis.tree, self._api, self.entry, takes_self,
                      frozenset(primitive_names) if self.kind == "primitive" else frozenset())
        self.cost_class: str = proof.cost_class
        """``"bounded"`` (the cost proof holds, see :mod:`~.prove`) or ``"unproven"``."""
        self.runs_in: RunsIn = "in-process"
        """Where each call runs: ``"in-process"`` or ``"worker"`` (an OS-bounded process)."""
        self.reason: str = proof.reason
        """Why it runs there: the proof's bound, or the first construct it could not bound."""
        if not self._runs_here(proof):
            self.runs_in = "worker"
            self.reason = self._worker_reason(proof)
            self._bound: tuple[object, Callable[[], Any] | None, Any] | None = None
            self._runs: list[RunState] = []
            self.traced = False
            self.constant_calls: tuple[ConstantCall, ...] = ()
            self._block_function = False
            self._entry_call: Callable[[], Any] | None = None
            return  # nothing of the code runs in this process, not even its module
        tree = ast.parse(source, filename="<generated>")
        self._block_function = self.kind == "success" and self.entry is None and wrappable_block(
            tree, set(SAFE_BUILTIN_NAMES) | set(self._api) | {"np", "math", "self"}
        )
        if self._block_function:
            tree = block_as_function(tree)
        loads_once = self._block_function or (
            self.entry is not None and pure_module(analysis.tree)
        )
        entry_name = BLOCK_FUNCTION if self._block_function else self.entry
        resolved_tree, calls = (
            rewrite_constant_calls(tree, entry_name, self._api)
            if loads_once and entry_name is not None else (tree, ())
        )
        self._code: CodeType = compile_guarded(tree)
        self._looping = looping_code_objects(self._code)
        self.traced = bool(self._looping) or analysis.fanout > UNTRACED_CALL_FANOUT
        self.constant_calls = () if self.traced else calls
        """Constant state-API calls answered from the view's per-step reading (see resolve)."""
        self._resolved_code: CodeType | None = None
        """Constant calls resolved, guards of known types dropped (see _bind)."""
        if self.constant_calls:
            assert entry_name is not None, "calls are only resolved in an entry function"
            types = {c.slot: SLOT_TYPES[c.name] for c in calls if c.name in SLOT_TYPES}
            self._resolved_code = compile_guarded(
                resolved_tree, partial(drop_known_guards, entry=entry_name, slots=types)
            )
        self._reads_only = self._resolved_code is not None and reads_only(
            self._resolved_code, entry_name, {c.slot for c in calls}
        )
        self._bound = None
        self._token = StateToken()
        self._runs = []
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
        self._entry_call = None
        if self._block_function:
            self._entry_name, self._entry_takes_self = BLOCK_FUNCTION, True
        if loads_once:
            self._entry_call = self._load_once(self._code, dict(self._base))
        self._unresolved = {
            call.slot: partial(base[call.name], self._token, *call.args)
            for call in self.constant_calls
        }

    def _runs_here(self, proof: Proof) -> bool:
        """Whether calls run in this process (the subclasses decide)."""
        return True

    def _worker_reason(self, proof: Proof) -> str:
        return proof.reason

    def _load_once(self, code: CodeType, namespace: dict[str, Any]) -> Callable[[], Any] | None:
        """Run a pure module once; return a call of its entry (None if it failed)."""
        run = RunState(self.limits, looping=self._looping, token=self._token,
                       traced=self.traced)

        def load() -> None:
            exec(code, namespace)  # noqa: S102 - checked, guarded and traced code

        try:
            execute(run, load)
        except GeneratedCodeError:
            return None  # reported on every call, as for impure modules
        assert self._entry_name is not None
        function = namespace[self._entry_name]
        if self._entry_takes_self:
            return partial(function, self._token)
        return function

    def _bind(self, view: object) -> tuple[object, Callable[[], Any] | None, Any]:
        """``(view, entry, lean call)``, kept until another view comes (see the module doc).

        With constant calls and a live state view, the module runs once more in a namespace
        whose slots read the view's per-step reading (:func:`~.resolve.bind_calls`).
        """
        entry, needs_run = self._entry_call, True
        if self._resolved_code is not None and type(view) is StateView:
            namespace = dict(self._base)
            readers = bind_calls(view, self.constant_calls, self._unresolved)
            namespace.update(readers)
            resolved = self._load_once(self._resolved_code, namespace)
            if resolved is not None:
                entry = resolved
                needs_run = not self._reads_only or any(
                    readers[slot] is fallback for slot, fallback in self._unresolved.items()
                )
        lean = None
        if entry is not None and not self.traced:
            lean = lean_call(self, entry, self._runs, self._token, self._looping, needs_run)
        bound = self._bound = (view, entry, lean)
        return bound

    def _execute(
        self, view: object, primitives: Mapping[str, Callable[..., Any]] | None = None
    ) -> tuple[Any, dict[str, Any] | None, int | None]:
        """Run the code once; return the entry's result, the namespace and the return line.

        The namespace is None when the module was loaded once (function mode), else the
        values of the module's top-level outputs; the line is the one of the entry's return
        statement, when known. A module run afresh gets a fresh namespace that is cleared
        when the call ends (its functions refer to it as their globals: a reference cycle
        that would otherwise keep every call's values until the cycle collector runs).
        """
        bound = self._bound
        if bound is None or bound[0] is not view:
            bound = self._bind(view)
        if bound[2] is not None and primitives is None:
            return bound[2](view), None, self._return_line
        runs = self._runs
        run = runs.pop() if runs else RunState(
            self.limits, looping=self._looping, token=self._token, traced=self.traced
        )
        run.begin(view, primitives)
        namespace: dict[str, Any] | None = None
        body = bound[1]
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
            if namespace is not None:
                kept = {n: namespace[n] for n in self._analysis.outputs if n in namespace}
                namespace.clear()
                namespace = kept
            body = None
        line = run.return_line
        return result, namespace, self._return_line if line is None else line

    def __repr__(self) -> str:
        where = f"entry={self.entry!r}" if self.entry else "block"
        return f"<{type(self).__name__} {where}>"


class _Evaluator(CompiledCode):
    """A compiled kind that runs in this process when proven, else in an OS-bounded worker."""

    def __init__(self, source: str, api: ApiMapping, *, limits: ExecutionLimits, mode: Mode,
                 primitive_names: Iterable[str] | None = None):
        if mode not in _MODES:
            raise ValueError(f"mode must be 'in-process' or 'subprocess', got {mode!r}")
        self.mode: Mode = "in-process" if mode == "inprocess" else mode
        self._worker: SandboxWorker | None = None
        super().__init__(source, api, limits=limits, primitive_names=primitive_names)
        if self.runs_in == "worker":
            self._worker = SandboxWorker(
                self.kind, source, dict(api), limits,
                # a block's primitives change the state: nothing can be read ahead of them
                () if self.kind == "primitive" else self._analysis.constant_calls,
                remote_api=self.mode != "subprocess" or self.kind == "primitive",
                primitive_names=tuple(primitive_names or ()),
            )

    def _call_worker(self, worker: SandboxWorker, view: object) -> Any:
        try:
            return worker.call(view)
        finally:
            self.last_output = worker.last_output

    def _runs_here(self, proof: Proof) -> bool:
        """In-process only for proven code ("guarded": the worker's own compile)."""
        return self.mode == "guarded" or (self.mode == "in-process" and proof.proven)

    def _worker_reason(self, proof: Proof) -> str:
        if self.mode == "subprocess":
            return f"subprocess mode was asked for (cost proof: {proof.cost_class})"
        return f"not proven bounded: {proof.reason}"

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
        bound = self._bound
        if bound is not None and bound[0] is view and bound[2] is not None:
            result, line = bound[2](view), self._return_line  # the lean path
        elif self._worker is not None:
            return self._call_worker(self._worker, view)
        else:
            result, _, line = self._execute(view)
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
        bound = self._bound
        if bound is not None and bound[0] is view and bound[2] is not None:
            result, namespace, line = bound[2](view), None, self._return_line  # the lean path
        elif self._worker is not None:
            return self._call_worker(self._worker, view)
        else:
            result, namespace, line = self._execute(view)
        return self._outcome(result, namespace, line)

    def lean(self, view: object) -> Callable[[object], Any] | None:
        """The per-step call of this condition on ``view``, where there is one (else None).

        ``lean(view)(view)`` gives what ``self(view)`` gives when that is ``True`` or ``False``
        (the deadline checked and failures typed alike); any other result goes through
        :meth:`outcome`, which converts or raises as ``self(view)`` does. None for a
        subprocess worker, a traced run and code that runs afresh on every call. Why: a judge
        that checks the condition every step calls it without this object's dispatch.
        """
        if self._worker is not None:
            return None
        bound = self._bound
        if bound is None or bound[0] is not view:
            bound = self._bind(view)
        return bound[2]

    def outcome(self, result: Any) -> bool:
        """A :meth:`lean` call's result as the condition's value (raises as ``self(view)``)."""
        return self._outcome(result, None, self._return_line)

    def _outcome(self, result: Any, namespace: dict[str, Any] | None, line: int | None) -> bool:
        if self._block_function and namespace is None:
            if result is True or result is False:
                return result
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
                f"'{self.entry}' returned None; end it with `return success`", line
            )
        return to_bool(result, line)


class CompiledBlock(_Evaluator):
    """A primitive block: ``block(view, primitives) -> {variable: value}``.

    The result holds every variable assigned by top-level statements (e.g. ``rgbs``,
    ``final_state``, ``success``), with ``success`` converted to a bool.

    A block the cost proof bounds runs in this process (primitive calls count as calls
    whose results are only held or passed on); any other block runs in the OS-bounded
    worker, whose primitive and state API calls this process answers on the live view:
    the primitives drive the live env here, the worker receives stand-ins for their
    results (:class:`~.sandbox.Held`), and the outputs it returns are mapped back to the
    real results, so both places give the same outputs.
    """

    kind: Kind = "primitive"

    def __init__(self, source: str, api: ApiMapping, *, limits: ExecutionLimits,
                 primitive_names: Iterable[str], mode: Mode = "in-process") -> None:
        super().__init__(source, api, limits=limits, mode=mode,
                         primitive_names=tuple(primitive_names))

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
        if self._worker is not None:
            try:
                return self._worker.call(view, primitives)
            finally:
                self.last_output = self._worker.last_output
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
    mode: Mode = "in-process",
) -> CompiledReward:
    r"""Compile a RoboGen-style reward function.

    Args:
        source: Code defining ``def _compute_reward(self): ... return reward, success``
            (or ``compute_reward``, or a single top-level function that no other calls).
        api: State API functions (name -> callable) the code may call.
        limits: Per-call bounds; defaults to :class:`ExecutionLimits`.
        mode: ``"in-process"`` (``"inprocess"`` is the same): code the cost proof bounds
            (:mod:`~simjudge.envs.codegen.prove`) runs here with its guards; any other code
            runs in an OS-bounded worker process whose state API calls are answered here
            (``runs_in``/``reason`` say which and why). ``"subprocess"``: always the
            worker, with ``api`` and views pickled to it (they must be picklable).

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
    mode: Mode = "in-process",
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
    mode: Mode = "in-process",
) -> CompiledBlock:
    """Compile a primitive block (primitive calls, then ``success = ...``).

    Args:
        source: Statements such as ``rgbs, final_state = grasp_object_link(self, "Obj",
            "link_0")`` followed by ``success = check_grasped(self, "Obj", "link_0")``.
        api: State API functions the code may call.
        primitives: Names of the primitives the code may call; implementations are
            bound per call (see :meth:`CompiledBlock.__call__`).
        limits: Per-call bounds (time inside primitives is not counted).
        mode: ``"in-process"``: a block the cost proof bounds runs here, any other in the
            OS-bounded worker (``runs_in``/``reason`` say which); ``"subprocess"``: always
            the worker. Either way the primitives run here, on the live env.
    """
    return CompiledBlock(
        source, api, limits=limits or ExecutionLimits(), primitive_names=tuple(primitives),
        mode=mode,
    )


def _static_api_functions() -> tuple[Callable[..., Any], ...]:
    """State API functions whose answer depends only on the scene (cached per view)."""
    from ..state_api import get_joint_limit

    return (get_joint_limit,)


_MISSING = object()
"""Value of ``success`` in a block compiled as a function until the block assigns it."""

