"""Subprocess mode: run compiled generated code in a separate, bounded process.

A :class:`SandboxWorker` starts one child with the ``spawn`` start method (a fresh
interpreter: no inherited simulator, threads or file handles beyond its pipe). The
child recompiles the same source with the same limits, lowers its address-space
limit (``RLIMIT_AS`` = its size after start-up + ``max_memory_mb``) and disables
core dumps, then serves calls over a pipe: the parent sends a *snapshot* of the
state (the caller's view object, which must be picklable), the child runs the
in-process machinery (static checks, guards, tracer) and sends back the result or
the typed error. If the child does not answer within ``time_limit_s +
kill_grace_s`` (e.g. stuck inside one C call), the parent kills it and raises
:class:`CodeTimeoutError`; if it dies (e.g. out of memory), :class:`CodeResourceError`.
The next call starts a new child. This is resource isolation, not an OS sandbox:
the allowlist remains the security boundary.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import pickle
import weakref
from collections.abc import Callable, Mapping
from multiprocessing.connection import Connection
from typing import Any

from .errors import (
    CodeResourceError,
    CodeRuntimeError,
    CodeTimeoutError,
    GeneratedCodeError,
)
from .runtime import ExecutionLimits
from .syntax import Kind

__all__ = ["SandboxWorker"]

_Spec = tuple[Kind, str, dict[str, Callable[..., Any]], ExecutionLimits]


class SandboxWorker:
    """A child process that evaluates one compiled reward or success function.

    Args:
        kind: ``"reward"`` or ``"success"`` (primitive blocks need the live
            environment and always run in-process).
        source: The generated source (already checked by the parent).
        api: State API functions; must be picklable (module-level functions).
        limits: Bounds applied in the child, plus the hard kill timeout.
    """

    def __init__(
        self,
        kind: Kind,
        source: str,
        api: Mapping[str, Callable[..., Any]],
        limits: ExecutionLimits,
    ) -> None:
        if kind not in ("reward", "success"):
            raise ValueError(f"subprocess mode supports 'reward' and 'success', not {kind!r}")
        try:
            pickle.dumps(dict(api))
        except Exception as exc:
            raise TypeError(
                "subprocess mode needs picklable state API functions (module-level "
                f"functions or picklable callables): {exc}"
            ) from exc
        self._spec: _Spec = (kind, source, dict(api), limits)
        self._limits = limits
        self._proc: Any = None
        self._conn: Connection | None = None
        self._finalizer: weakref.finalize | None = None
        self.last_output = ""

    def call(self, view: object) -> Any:
        """Evaluate on a snapshot of ``view``; returns what the compiled code returns."""
        if self._proc is None or not self._proc.is_alive():
            self._start()
        assert self._conn is not None
        try:
            self._conn.send(("call", view))
        except (pickle.PicklingError, TypeError, AttributeError) as exc:
            raise TypeError(f"subprocess mode needs a picklable view snapshot: {exc}") from exc
        timeout = self._limits.time_limit_s + self._limits.kill_grace_s
        if not self._conn.poll(timeout):
            self.close()
            raise CodeTimeoutError(
                f"the code did not finish within {timeout:g} s and its process was killed; "
                "check for infinite loops or very heavy computation"
            )
        try:
            status, payload, output = self._conn.recv()
        except (EOFError, OSError):
            code = self._proc.exitcode if self._proc is not None else None
            self.close()
            raise CodeResourceError(
                f"the sandbox process died (exit code {code}); the code probably exceeded "
                f"the memory limit of {self._limits.max_memory_mb:g} MB"
            ) from None
        self.last_output = output
        if status == "ok":
            return payload
        raise payload

    def _start(self) -> None:
        self.close()
        ctx = mp.get_context("spawn")
        parent, child = ctx.Pipe(duplex=True)
        proc = ctx.Process(
            target=_worker_main, args=(child, self._spec), daemon=True, name="simjudge-codegen"
        )
        proc.start()
        child.close()
        self._proc, self._conn = proc, parent
        self._finalizer = weakref.finalize(self, _shutdown, proc, parent)
        if not parent.poll(self._limits.startup_timeout_s):
            self.close()
            raise CodeTimeoutError(
                f"the sandbox process did not start within {self._limits.startup_timeout_s:g} s"
            )
        try:
            status, payload = parent.recv()
        except (EOFError, OSError):
            code = proc.exitcode
            self.close()
            raise CodeResourceError(
                f"the sandbox process died while starting (exit code {code}); the 'spawn' "
                "start method re-imports __main__, so run from a file, not stdin"
            ) from None
        if status != "ready":
            self.close()
            raise payload

    def close(self) -> None:
        """Stop the child process (it is restarted by the next call)."""
        if self._finalizer is not None:
            self._finalizer()
        self._proc = self._conn = self._finalizer = None

    def __del__(self) -> None:
        finalizer = getattr(self, "_finalizer", None)
        if finalizer is not None:
            finalizer()


def _shutdown(proc: Any, conn: Connection) -> None:
    try:
        conn.close()
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join(timeout=2.0)


def _apply_rlimits(limits: ExecutionLimits) -> None:
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows: only the parent's kill protects
        return
    try:
        with open("/proc/self/statm") as statm:
            pages = int(statm.read().split()[0])
        size = pages * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return  # no /proc (e.g. macOS): only the parent's kill protects
    cap = int(size + limits.max_memory_mb * 2**20)
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    try:
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    except (ValueError, OSError):
        pass


def _worker_main(conn: Connection, spec: _Spec) -> None:
    """Child entry point: compile, apply limits, serve calls until the pipe closes."""
    from .compiler import CompiledReward, CompiledSuccess

    kind, source, api, limits = spec
    cls = CompiledReward if kind == "reward" else CompiledSuccess
    try:
        compiled = cls(source, api, limits=limits, mode="inprocess")
    except GeneratedCodeError as exc:
        conn.send(("error", exc))
        return
    _apply_rlimits(limits)
    conn.send(("ready", None))
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        reply: tuple[str, Any, str]
        try:
            reply = ("ok", compiled(message[1]), compiled.last_output)
        except GeneratedCodeError as exc:
            reply = ("err", exc, compiled.last_output)
        except MemoryError:
            reply = ("err", CodeResourceError("ran out of memory in the sandbox"), "")
        except Exception as exc:
            reply = ("err", CodeRuntimeError(f"{type(exc).__name__}: {exc}"), "")
        try:
            conn.send(reply)
        except Exception as exc:
            conn.send(("err", CodeRuntimeError(f"the result could not be sent back: {exc}"), ""))
