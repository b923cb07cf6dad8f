"""Code judges: a proposal's own success condition and reward function, run live.

The code is compiled with :mod:`simjudge.envs.codegen` (static allowlist check, guards, time
and memory limits) against :data:`~simjudge.envs.state_api.STATE_API`, and called on the
env's read-only view each step. A compile error, a runtime error, a time-out or a NaN reward
is never a crash: it becomes a ``failure`` verdict whose reason is the error message (what
to fix, with the line), and the judge keeps evaluating later steps, so a wrapper configured
not to terminate on failure (``JudgeVerify(..., terminate_on_failure=False)``) runs on.

Where the code comes from: ``code=`` if given, else the context's subtask
(``JudgeContext.subtask_code`` / ``subtask_kind``).
"""

from __future__ import annotations

import ast
from typing import Any

from simjudge.envs.codegen import (
    PRIMITIVE_NAMES,
    ExecutionLimits,
    GeneratedCodeError,
    compile_once,
)
from simjudge.envs.codegen.compiler import Mode as ExecutionMode
from simjudge.envs.state_api import STATE_API

from .base import Judge
from .context import JudgeContext
from .signals import (
    FAILURE,
    FAILURE_CODE,
    SUCCESS,
    SUCCESS_CODE,
    UNDECIDED,
    UNDECIDED_CODE,
    FastSignal,
    JudgeSignal,
    Transition,
)

__all__ = ["CodeRewardJudge", "CodeSuccessJudge", "success_part"]

_NO_CODE = (
    "{judge} has no code: pass code=... or a context with subtask_code "
    "(JudgeContext(...).with_subtask(kind, code))"
)
_NO_VIEW = (
    "{judge} runs generated code on the state view, but the transition has none; wrap a SimEnv"
)
_CODE_KINDS = ("reward", "success", "primitive")
_HOLDS = FastSignal(1.0, 1.0, SUCCESS_CODE, None)
_DOES_NOT_HOLD = FastSignal(0.0, 0.0, UNDECIDED_CODE, None)
"""A success judge's fast results (immutable, so one tuple of each serves every step)."""


def success_part(block: str) -> str:
    """The statements of a primitive block that do not call primitives (its success check).

    Why: ``rgbs, final_state = grasp_object_link(...)`` runs the motion planner; the lines
    after it (``success = check_grasped(...)``) are the subtask's success condition, which
    can be evaluated on any state. Unparseable code is returned unchanged (the compiler
    reports the syntax error).
    """
    try:
        tree = ast.parse(block)
    except SyntaxError:
        return block
    primitives = set(PRIMITIVE_NAMES)

    def calls_primitive(stmt: ast.stmt) -> bool:
        return any(
            isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in primitives
            for n in ast.walk(stmt)
        )

    tree.body = [s for s in tree.body if not calls_primitive(s)]
    return ast.unparse(tree)


class _CodeJudge(Judge):
    """Shared machinery: source resolution, cached compilation, error verdicts."""

    _transient = ("_compiled", "_lean")
    _default_kind = "reward"

    def __init__(
        self,
        code: str | None = None,
        kind: str | None = None,
        limits: ExecutionLimits | None = None,
        mode: ExecutionMode = "inprocess",
        error_reward: float = 0.0,
    ) -> None:
        super().__init__()
        if kind is not None and kind not in _CODE_KINDS:
            raise ValueError(f"kind must be one of {list(_CODE_KINDS)}, got {kind!r}")
        self.code = code
        self.kind = kind
        self.limits = limits
        self.mode = mode
        self.error_reward = float(error_reward)
        self._compiled: Any = None
        self._compiled_key: tuple[str, str] | None = None
        self._compile_error: str = ""
        self._source: tuple[str, str] | None = None
        self._lean: tuple[Any, Any] | None = None
        """(view, the compiled condition's per-step call on it or None), see CodeSuccessJudge."""

    def _resolve(self, context: JudgeContext) -> tuple[str, str]:
        code = self.code if self.code is not None else context.subtask_code
        if not code:
            raise ValueError(_NO_CODE.format(judge=self.label))
        kind = (
            self.kind or (context.subtask_kind if self.code is None else None) or self._default_kind
        )
        if kind not in _CODE_KINDS:
            raise ValueError(
                f"{self.label}: subtask kind must be one of {list(_CODE_KINDS)}, got {kind!r}"
            )
        return kind, code

    def _compile(self, kind: str, code: str) -> Any:
        raise NotImplementedError  # pragma: no cover

    def _reset(self, context: JudgeContext) -> None:
        self._source = self._resolve(context)
        if self._compiled_key == self._source and (self._compiled or self._compile_error):
            return
        self.close()
        self._compiled, self._compile_error, self._lean = None, "", None
        try:
            self._compiled = self._compile(*self._source)
        except GeneratedCodeError as exc:
            self._compile_error = f"{type(exc).__name__}: {exc}"
        self._compiled_key = self._source

    def close(self) -> None:
        """Stop a subprocess worker, if any."""
        closer = getattr(self._compiled, "close", None)
        if closer is not None:
            closer()

    def _run(self, view: Any) -> tuple[Any, str]:
        """Call the compiled code on ``view``; return (result, error message or "")."""
        if self._compiled is None and not self._compile_error:
            assert self.context is not None, "observe() checked that reset(context) came first"
            self._reset(self.context)  # rebuilt after unpickling
        if self._compile_error:
            return None, f"compile error: {self._compile_error}"
        if view is None:
            raise ValueError(_NO_VIEW.format(judge=self.label))
        try:
            return self._compiled(view), ""
        except GeneratedCodeError as exc:
            return None, f"runtime error: {type(exc).__name__}: {exc}"
        except Exception as exc:  # noqa: BLE001 - generated code must never crash a rollout
            return None, f"runtime error: {type(exc).__name__}: {exc}"

    def _error_signal(self, message: str, details: dict[str, Any]) -> JudgeSignal:
        details.update(error=message)
        phi = 0.0 if self.provides_potential else None
        return JudgeSignal(self.error_reward, phi, FAILURE, message, details)

    def _observe(self, transition: Transition) -> JudgeSignal:
        return self._explain(self._fast(transition.step, transition.view, {}, False, None))

    def _fast(
        self, step: int, view: Any, info: Any, done: bool, transition: Transition | None
    ) -> FastSignal:
        # fast path (Judge.observe_fast): the numbers now, reason and details in _explain
        compiled = self._compiled
        if compiled is not None and view is not None:  # the per-step case: _run, inlined
            try:
                result = compiled(view)
            except GeneratedCodeError as exc:
                error = f"runtime error: {type(exc).__name__}: {exc}"
            except Exception as exc:  # noqa: BLE001 - generated code must never crash a rollout
                error = f"runtime error: {type(exc).__name__}: {exc}"
            else:
                return self._numbers(result)
        else:
            result, error = self._run(view)
            if not error:
                return self._numbers(result)
        return FastSignal(self.error_reward, 0.0 if self.provides_potential else None, FAILURE_CODE, error)

    def _numbers(self, result: Any) -> FastSignal:
        raise NotImplementedError  # pragma: no cover


class CodeRewardJudge(_CodeJudge):
    r"""The proposal's reward function ``def _compute_reward(self): ... return reward, success``.

    The reward term is the generated reward (its range is unknown: ``max_reward`` is None
    unless given); the verdict is ``success`` when the function's success output is true.
    No potential (generated rewards are not progress potentials). Details: ``success``
    (bool), ``error`` (str, "" when the code ran).

    Example:
        >>> judge = CodeRewardJudge("def _compute_reward(self):\n    return 1.0 / 0.0, False")
        >>> judge.reset(JudgeContext())
        >>> s = judge.observe(Transition(step=0, view=object()))
        >>> s.verdict, "ZeroDivisionError" in s.reason
        ('failure', True)

    Args:
        code: Reward code; None = the context's subtask code.
        limits: Execution limits per call (:class:`~simjudge.envs.codegen.ExecutionLimits`).
        mode: ``inprocess`` or ``subprocess`` (see ``compile_reward``).
        error_reward: Reward term on a failing step.
        max_reward: Known bound of the generated reward (for normalised rewards).
    """

    name = "code-reward"
    provides_potential = False

    def __init__(
        self,
        code: str | None = None,
        limits: ExecutionLimits | None = None,
        mode: ExecutionMode = "inprocess",
        error_reward: float = 0.0,
        max_reward: float | None = None,
    ) -> None:
        super().__init__(code, "reward", limits, mode, error_reward)
        self.max_reward = max_reward

    def _compile(self, kind: str, code: str) -> Any:
        return compile_once("reward", code, STATE_API, limits=self.limits, mode=self.mode)

    def _numbers(self, result: Any) -> FastSignal:
        reward, success = result
        value = JudgeSignal(reward).reward  # the signal's own check: a finite float
        return FastSignal(value, None, SUCCESS_CODE if success else UNDECIDED_CODE, (reward, success))

    def _explain(self, fast: FastSignal) -> JudgeSignal:
        if fast.code == FAILURE_CODE:
            return self._error_signal(fast.note, {"success": False})
        reward, success = fast.note
        verdict = SUCCESS if success else UNDECIDED
        reason = "the reward code's success holds" if success else f"reward {reward:.4g}"
        return JudgeSignal(reward, None, verdict, reason, {"success": success, "error": ""})


class CodeSuccessJudge(_CodeJudge):
    """The proposal's success condition, as a binary judge (Φ = 1 when it holds, else 0).

    Kinds: ``success`` (a function returning a bool or statements assigning ``success``),
    ``reward`` (the success output of a reward function) or ``primitive`` (the lines of a
    primitive block that do not call primitives, see :func:`success_part`). Details:
    ``success`` (bool), ``error`` (str).

    Example:
        >>> judge = CodeSuccessJudge("success = 2 > 1")
        >>> judge.reset(JudgeContext())
        >>> judge.observe(Transition(step=0, view=object())).verdict
        'success'

    Args:
        code: The code; None = the context's subtask code.
        kind: ``success``, ``reward`` or ``primitive``; None = ``success`` for ``code=``,
            the context's subtask kind otherwise.
        limits: Execution limits per call.
        mode: ``inprocess`` or ``subprocess``.
        error_reward: Reward term on a failing step.
    """

    name = "code-success"
    provides_potential = True
    success_type = True
    max_reward = 1.0
    _default_kind = "success"

    def _compile(self, kind: str, code: str) -> Any:
        if kind == "reward":
            return compile_once("reward", code, STATE_API, limits=self.limits, mode=self.mode)
        source = success_part(code) if kind == "primitive" else code
        return compile_once("success", source, STATE_API, limits=self.limits, mode=self.mode)

    def _fast(
        self, step: int, view: Any, info: Any, done: bool, transition: Transition | None
    ) -> FastSignal:
        # the condition's own per-step call (CompiledSuccess.lean), without its dispatch: a
        # True or False result is final, anything else is converted (or raises) as a call of
        # the compiled condition would
        lean = self._lean
        if lean is None or lean[0] is not view:
            lean = self._lean = (view, self._lean_call(view))
        call = lean[1]
        if call is None:
            return super()._fast(step, view, info, done, transition)
        try:
            result = call(view)
            if result is not True and result is not False:
                result = self._compiled.outcome(result)
        except GeneratedCodeError as exc:
            error = f"runtime error: {type(exc).__name__}: {exc}"
        except Exception as exc:  # noqa: BLE001 - generated code must never crash a rollout
            error = f"runtime error: {type(exc).__name__}: {exc}"
        else:
            return _HOLDS if result else _DOES_NOT_HOLD
        return FastSignal(self.error_reward, 0.0, FAILURE_CODE, error)

    def _lean_call(self, view: Any) -> Any:
        """The compiled condition's per-step call on ``view`` (None: take the general path)."""
        compiled = self._compiled
        lean = getattr(compiled, "lean", None)  # a reward-kind judge compiles a reward
        if lean is None or view is None:
            return None
        try:
            return lean(view)
        except Exception:  # noqa: BLE001 - the general path reports what binding raises
            return None

    def _numbers(self, result: Any) -> FastSignal:
        if result is True:
            return _HOLDS
        if result is False:
            return _DOES_NOT_HOLD
        success = bool(result[1] if isinstance(result, tuple) else result)
        return _HOLDS if success else _DOES_NOT_HOLD

    def _explain(self, fast: FastSignal) -> JudgeSignal:
        if fast.code == FAILURE_CODE:
            return self._error_signal(fast.note, {"success": False})
        success = fast.code == SUCCESS_CODE
        verdict, reason = (
            (SUCCESS, "success condition holds")
            if success
            else (
                UNDECIDED,
                "success condition does not hold",
            )
        )
        return JudgeSignal(
            float(success), float(success), verdict, reason, {"success": success, "error": ""}
        )
