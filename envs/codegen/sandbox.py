"""Subprocess mode: run compiled generated code in a separate, bounded process.

A :class:`SandboxWorker` starts one child: a fresh interpreter (``sys.executable``, its
own session, one thread for numpy) that inherits no simulator, threads or file handles
beyond its socket, and does not re-import the caller's ``__main__``. Before it reads the
generated source, the child

- lowers its address-space limit (``RLIMIT_AS`` = its size after start-up +
  ``max_memory_mb``), forbids writing files (``RLIMIT_FSIZE`` = 0) and disables core
  dumps; its standard streams are ``/dev/null`` and its only other descriptor is the pipe;
- leaves the network: ``unshare(CLONE_NEWNET)`` gives it an empty network namespace
  where the kernel allows it (root or user namespaces); where it does not, the reason is
  recorded in :attr:`SandboxWorker.isolation` and the run goes on without it;

- installs a seccomp filter (``execve``, ``fork``, sockets, ``ptrace`` ... fail with
  ``EPERM``) where libseccomp can be loaded (``pyseccomp`` is not needed: ctypes), and
  records it in ``isolation["seccomp"]``, or why not;

then runs the static check and compiles the source itself, under ``check_timeout_s``
(so a source that is slow to check cannot stall the parent), and serves calls over the
pipe. Before each call it sets ``RLIMIT_CPU`` to its CPU time so far plus the call's
budget (the kernel kills it past that). The parent waits at most ``time_limit_s +
kill_grace_s`` for an answer and kills the child otherwise (:class:`CodeTimeoutError`);
a child that dies (out of memory, CPU limit, crash) is a :class:`CodeResourceError` or
:class:`CodeTimeoutError`, never a crash of the parent. The next call starts a new child.

In-process mode uses the same worker for code the cost proof does not bound
(``remote_api=True``): then nothing is pickled but names and results, the state API
functions stay in the parent, and every view is treated as a live view.

Primitive blocks the proof does not bound run here too: each primitive call is a request
that the parent answers by running the executor's primitive on the live view (its time is
not the code's: the parent's deadline moves by it and the child's clock pauses), and the
results stay in the parent behind :class:`~.held.Held` stand-ins (:mod:`~.held`).

Views: a picklable view (a snapshot object) is sent to the child with each call. A live
view (:class:`~simjudge.envs.state_api.StateView`, which holds the simulator) never leaves
the parent: the parent evaluates, on the live view, every state API call the code makes
with constant arguments (known from the static check) and sends the answers along;
any other state API call is answered by the parent on request during the call (the
arguments are bounded: short names, small point lists). The generated code never runs in
the parent. This is resource isolation plus the allowlist, not a full OS sandbox.
"""

from __future__ import annotations

import ctypes
import gc
import os
import pickle
import socket
import subprocess
import sys
import time
import weakref
from collections.abc import Callable, Mapping
from multiprocessing.connection import Connection
from typing import Any

from .bindings import MAX_API_ELEMENTS, MAX_API_TEXT, RemoteView, check_api_args, detach
from .errors import (
    CodeResourceError,
    CodeRuntimeError,
    CodeTimeoutError,
    GeneratedCodeError,
)
from .held import (
    SELF,
    check_primitive_args,
    from_child,
    primitive_stub,
    to_child,
    too_many_calls,
)
from .runtime import ExecutionLimits
from .syntax import Kind

__all__ = ["COLLECT_GROWTH_MB", "MAX_MESSAGE_BYTES", "SandboxWorker", "child_main", "is_live_view"]

_Spec = tuple[Kind, str, dict[str, Callable[..., Any]] | list[str], ExecutionLimits,
              tuple[str, ...]]
MAX_MESSAGE_BYTES = 64 * 2**20
"""Largest message the parent accepts from the child (results, state API requests)."""
_CLONE_NEWNET = 0x40000000
_CLONE_NEWUSER = 0x10000000


def is_live_view(view: object) -> bool:
    """Whether ``view`` is a live state view (it stays in the parent; calls are snapshotted)."""
    from ..state_api import StateView

    return isinstance(view, StateView) or bool(getattr(view, "__simjudge_live_view__", False))


class SandboxWorker:
    """A child process that evaluates one compiled reward, success or primitive block.

    Args:
        kind: ``"reward"``, ``"success"`` or ``"primitive"`` (a block: needs
            ``remote_api``; its primitives are answered by the parent, see the module doc).
        source: The generated source (checked again by the child).
        api: State API functions; must be picklable (module-level functions).
        limits: Bounds applied in the child, plus the hard kill timeout.
        constant_calls: State API calls with constant arguments (``(name, args)`` with
            ``None`` for ``self``), prefetched on live views.
        remote_api: Keep ``api`` and every view in this process: the child gets only the
            names and asks for each state API result (any callables and views work).
        primitive_names: The primitives a block may call (answered by the parent).

    Attributes:
        isolation: What the child could set up: ``{"rlimit_as": ..., "network": ...}``
            (strings; ``"isolated"`` or the reason it is not), filled when it starts.
        last_output: ``print`` output of the last call.
    """

    def __init__(
        self,
        kind: Kind,
        source: str,
        api: Mapping[str, Callable[..., Any]],
        limits: ExecutionLimits,
        constant_calls: tuple[tuple[str, tuple[object, ...]], ...] = (),
        *,
        remote_api: bool = False,
        primitive_names: tuple[str, ...] = (),
    ) -> None:
        if kind not in ("reward", "success", "primitive"):
            raise ValueError(f"the worker runs 'reward', 'success' or 'primitive' code, not {kind!r}")
        if kind == "primitive" and not remote_api:
            raise ValueError("a primitive block's worker needs remote_api=True (the live view "
                             "and the primitives stay in this process)")
        self._remote = remote_api
        self._spec: _Spec = (kind, source, sorted(api) if remote_api else dict(api), limits,
                             tuple(primitive_names))
        self._api = dict(api)
        self._limits = limits
        self._constant_calls = constant_calls
        self._proc: Any = None
        self._conn: Connection | None = None
        self._finalizer: weakref.finalize | None = None
        self.isolation: dict[str, str] = {}
        self.last_output = ""
        if remote_api:
            return
        in_main = [n for n, fn in api.items() if getattr(fn, "__module__", "") == "__main__"]
        if in_main:
            raise TypeError(
                f"subprocess mode imports the state API functions in a fresh interpreter; "
                f"{', '.join(in_main)} are defined in __main__: move them to a module"
            )
        try:
            pickle.dumps(dict(api))
        except Exception as exc:
            raise TypeError(
                "subprocess mode needs picklable state API functions (module-level "
                f"functions or picklable callables): {exc}"
            ) from exc

    # -- calls ------------------------------------------------------------------------

    def call(self, view: object,
             primitives: Mapping[str, Callable[..., Any]] | None = None) -> Any:
        """Evaluate on a snapshot of ``view``; returns what the compiled code returns.

        ``primitives`` (blocks): the implementations the child's primitive calls run,
        here, on ``view``; the outputs come back with the real results in place.
        """
        live = self._remote or is_live_view(view)
        table = self._prefetch(view) if live else None
        if not live:
            try:
                payload = pickle.dumps(("call", view, None))
            except Exception as exc:
                raise TypeError(
                    "subprocess mode needs a picklable view snapshot or a live StateView "
                    f"(env.unwrapped.view): {exc}"
                ) from exc
        else:
            payload = pickle.dumps(("call", None, table))
        if self._proc is None or self._proc.poll() is not None:
            self._start()
        assert self._conn is not None
        self._conn.send_bytes(payload)
        deadline = time.monotonic() + self._limits.time_limit_s + self._limits.kill_grace_s
        held: dict[int, Any] = {}
        calls = [0]
        while True:
            message = self._receive(deadline)
            if message[0] == "api":
                self._answer(view if live else None, message)
                continue
            if message[0] == "prim":
                started = time.monotonic()
                self._answer_primitive(view, message, primitives or {}, held, calls)
                deadline += time.monotonic() - started  # the executor's time, not the code's
                continue
            status, result, output = message
            self.last_output = output
            if status == "ok":
                return from_child(result, held) if held else result
            raise result

    def _prefetch(self, view: object) -> dict[Any, tuple[str, Any]]:
        table: dict[Any, tuple[str, Any]] = {}
        for name, args in self._constant_calls:
            fn = self._api.get(name)
            if fn is None:
                continue
            try:
                table[(name, args[1:])] = ("ok", detach(fn(view, *args[1:])))
            except Exception as exc:  # noqa: BLE001 - reported if and when the code calls it
                table[(name, args[1:])] = ("err", f"{type(exc).__name__}: {exc}")
        return table

    def _answer(self, view: object, message: tuple[Any, ...]) -> None:
        """Serve one state API request of the child on the live view."""
        assert self._conn is not None
        _, name, args, kwargs = message
        try:
            if view is None or name not in self._api:
                raise CodeRuntimeError(f"{name}() is not available on this view")
            check_api_args(name, args, kwargs)
            reply: tuple[str, Any] = ("ok", detach(self._api[name](view, *args, **kwargs)))
        except GeneratedCodeError as exc:
            reply = ("err", exc)
        except Exception as exc:  # noqa: BLE001 - the state API's errors go back to the code
            reply = ("err", CodeRuntimeError(f"{name}() failed: {type(exc).__name__}: {exc}"))
        try:
            data = pickle.dumps(reply)
        except Exception as exc:  # noqa: BLE001 - an unpicklable state API result
            data = pickle.dumps(("err", CodeRuntimeError(
                f"{name}() returned a value that cannot be sent to the worker: {exc}")))
        self._conn.send_bytes(data)

    def _answer_primitive(self, view: object, message: tuple[Any, ...],
                          primitives: Mapping[str, Callable[..., Any]],
                          held: dict[int, Any], calls: list[int]) -> None:
        """Run one primitive call of the child here, on the live ``view``."""
        assert self._conn is not None
        try:
            _, name, args, kwargs = message
            if name not in primitives:
                raise CodeRuntimeError(f"primitive {name}() has no implementation bound")
            calls[0] += 1
            refused = too_many_calls(calls[0])
            if refused:
                raise CodeResourceError(refused)
            try:
                check_primitive_args(name, args, kwargs, MAX_API_ELEMENTS, MAX_API_TEXT)
            except ValueError as exc:
                raise CodeResourceError(str(exc)) from None
            args = tuple(view if a is SELF else from_child(a, held) for a in args)
            kwargs = {k: view if v is SELF else from_child(v, held) for k, v in kwargs.items()}
            reply: tuple[str, Any] = ("ok", to_child(name, primitives[name](*args, **kwargs),
                                                     held))
        except GeneratedCodeError as exc:
            reply = ("err", exc)
        except Exception as exc:  # noqa: BLE001 - the primitive's errors go back to the code
            reply = ("err", CodeRuntimeError(
                f"primitive {message[1]}() failed: {type(exc).__name__}: {exc}"))
        self._conn.send_bytes(pickle.dumps(reply))

    def _receive(self, deadline: float) -> tuple[Any, ...]:
        assert self._conn is not None
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not self._conn.poll(remaining):
            timeout = self._limits.time_limit_s + self._limits.kill_grace_s
            self.close()
            raise CodeTimeoutError(
                f"the code did not finish within {timeout:g} s and its process was killed; "
                "check for infinite loops or very heavy computation"
            )
        try:
            data = self._conn.recv_bytes(MAX_MESSAGE_BYTES)
            message = pickle.loads(data)  # noqa: S301 - our own child's reply, size-bounded
        except (EOFError, OSError) as exc:
            raise self._death(exc) from None
        if not isinstance(message, tuple) or not message:
            self.close()
            raise CodeRuntimeError("the sandbox process sent an invalid reply")
        return message

    def _death(self, exc: BaseException) -> GeneratedCodeError:
        proc = self._proc
        code = None
        if proc is not None:
            try:
                code = proc.wait(timeout=2.0)
            except subprocess.TimeoutExpired:
                code = None
        self.close()
        if isinstance(exc, OSError) and "too long" in str(exc).lower():
            return CodeResourceError(
                f"the result is larger than {MAX_MESSAGE_BYTES // 2**20} MB; return a number"
            )
        if code == -24:  # SIGXCPU: RLIMIT_CPU
            return CodeTimeoutError(
                f"the code used more CPU time than allowed ({self._limits.time_limit_s:g} s) "
                "and its process was stopped"
            )
        return CodeResourceError(
            f"the sandbox process died (exit code {code}); the code probably exceeded "
            f"the memory limit of {self._limits.max_memory_mb:g} MB or crashed the interpreter"
        )

    # -- process ----------------------------------------------------------------------

    def _start(self) -> None:
        self.close()
        ours, theirs = socket.socketpair()
        env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
        command = [
            sys.executable,
            "-c",
            f"from simjudge.envs.codegen.sandbox import child_main; child_main({theirs.fileno()})",
        ]
        try:
            proc = subprocess.Popen(
                command, pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                start_new_session=True, close_fds=True,
            )
        finally:
            theirs.close()
        conn = Connection(ours.detach())
        self._proc, self._conn = proc, conn
        self._finalizer = weakref.finalize(self, _shutdown, proc, conn)
        conn.send_bytes(pickle.dumps(list(sys.path)))
        conn.send_bytes(pickle.dumps(self._spec))
        for stage, timeout in (
            ("started", self._limits.startup_timeout_s),
            ("ready", self._limits.check_timeout_s),
        ):
            if not conn.poll(timeout):
                self.close()
                what = "start" if stage == "started" else "check and compile the code"
                raise CodeTimeoutError(f"the sandbox process did not {what} within {timeout:g} s")
            try:
                status, payload = pickle.loads(conn.recv_bytes(MAX_MESSAGE_BYTES))  # noqa: S301
            except (EOFError, OSError):
                code = proc.poll()
                self.close()
                raise CodeResourceError(
                    f"the sandbox process died while starting (exit code {code})"
                ) from None
            if status == "error":
                self.close()
                raise payload
            if status == "started":
                self.isolation = dict(payload)

    def close(self) -> None:
        """Stop the child process (it is restarted by the next call)."""
        if self._finalizer is not None:
            self._finalizer()
        self._proc = self._conn = self._finalizer = None

    def __del__(self) -> None:
        finalizer = getattr(self, "_finalizer", None)
        if finalizer is not None:
            finalizer()


def _shutdown(proc: subprocess.Popen[bytes], conn: Connection) -> None:
    try:
        conn.close()
    finally:
        if proc.poll() is None:
            proc.kill()
        try:
            proc.wait(timeout=2.0)
        except subprocess.TimeoutExpired:  # pragma: no cover - a kill is not refused
            pass


# -- child side -------------------------------------------------------------------------


def _apply_rlimits(limits: ExecutionLimits) -> str:
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows: only the parent's kill protects
        return "not available (no resource module)"
    try:
        with open("/proc/self/statm") as statm:
            pages = int(statm.read().split()[0])
        size = pages * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return "not available (no /proc); only the parent's kill protects"
    cap = int(size + limits.max_memory_mb * 2**20)
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    try:
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    except (ValueError, OSError) as exc:
        return f"not set: {exc}"
    return f"{cap // 2**20} MB"


def _leave_network() -> str:
    """Move this process into an empty network namespace, or say why it cannot."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        unshare = libc.unshare
    except (OSError, AttributeError) as exc:
        return f"not isolated: unshare is not available ({exc})"
    if unshare(_CLONE_NEWNET) == 0:
        return "isolated"
    first = os.strerror(ctypes.get_errno())
    if unshare(_CLONE_NEWUSER | _CLONE_NEWNET) == 0:
        return "isolated (user namespace)"
    second = os.strerror(ctypes.get_errno())
    return f"not isolated: unshare(CLONE_NEWNET) failed ({first}; with a user namespace: {second})"


def _limit_cpu(limits: ExecutionLimits) -> None:
    """Let the kernel stop this process after the call's CPU budget (``RLIMIT_CPU``)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        return
    usage = resource.getrusage(resource.RUSAGE_SELF)
    used = usage.ru_utime + usage.ru_stime
    soft = int(used + limits.time_limit_s + limits.kill_grace_s) + 2
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    try:
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
    except (ValueError, OSError):
        pass


def child_main(fd: int) -> None:
    """Child entry point: limit itself, check and compile, serve calls until the pipe closes."""
    conn = Connection(fd)
    sys.path[:] = pickle.loads(conn.recv_bytes())  # noqa: S301 - the parent's sys.path
    kind, source, api, limits, primitive_names = pickle.loads(conn.recv_bytes())  # noqa: S301
    from .seccomp import install_filter

    if isinstance(api, list):  # remote_api: every call goes to the parent (RemoteView)
        api = {name: _remote_only(name) for name in api}
    isolation = {"rlimit_as": _apply_rlimits(limits), "network": _leave_network(),
                 "seccomp": install_filter()}
    conn.send_bytes(pickle.dumps(("started", isolation)))
    try:
        compiled = _compile(kind, source, api, limits, primitive_names)
    except GeneratedCodeError as exc:
        conn.send_bytes(pickle.dumps(("error", exc)))
        return
    except (MemoryError, RecursionError) as exc:
        error = CodeResourceError(f"the code cannot be compiled ({type(exc).__name__})")
        conn.send_bytes(pickle.dumps(("error", error)))
        return
    conn.send_bytes(pickle.dumps(("ready", None)))

    def ask(name: str, args: tuple[Any, ...], kwargs: dict[str, Any], what: str = "api") -> Any:
        conn.send_bytes(pickle.dumps((what, name, args, kwargs)))
        status, value = pickle.loads(conn.recv_bytes())  # noqa: S301 - the parent's reply
        if status == "ok":
            return value
        raise value

    def ask_primitive(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return ask(name, args, kwargs, "prim")

    stubs = {name: primitive_stub(name, ask_primitive, _is_remote_view)
             for name in primitive_names}

    collector = _Collector()
    while True:
        try:
            _, view, table = pickle.loads(conn.recv_bytes())  # noqa: S301 - the parent
        except (EOFError, OSError):
            return
        if table is not None:
            view = RemoteView(table, ask)
        _limit_cpu(limits)
        reply = _run_call(compiled, view, stubs if kind == "primitive" else None)
        if reply[0] == "err" and isinstance(reply[1], BaseException):
            _drop_frames(reply[1])
        try:
            data = pickle.dumps(reply)
        except Exception as exc:
            data = pickle.dumps(
                ("err", CodeRuntimeError(f"the result could not be sent back: {exc}"), "")
            )
        del reply, view
        conn.send_bytes(data)
        del data
        collector.after_call()


class _Collector:
    """Runs the cycle collector after a call that left the worker much larger.

    Generated code run in the worker may build reference cycles (``a.append(a)``), which
    reference counting never frees; without this, calls that each leave a cycle of a few
    megabytes would pile up until the address-space limit. Reading the resident size costs
    microseconds; a collection runs only past :data:`COLLECT_GROWTH_MB` of growth.
    """

    def __init__(self) -> None:
        self.base = _rss_mb()

    def after_call(self) -> None:
        if _rss_mb() - self.base > COLLECT_GROWTH_MB:
            gc.collect()
            self.base = _rss_mb()


COLLECT_GROWTH_MB = 32.0
"""Growth of the worker's resident memory after which it runs the cycle collector."""


def _rss_mb() -> float:
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return 0.0


def _drop_frames(exc: BaseException) -> None:
    """Cut an error (and its causes) from its traceback: frames would keep the call's values.

    The traceback also reaches this loop's frame, which holds the error: a cycle that would
    keep every failed call's locals alive until the collector runs.
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        current.__traceback__ = None
        current = current.__cause__ or current.__context__


def _compile(kind: Kind, source: str, api: dict[str, Callable[..., Any]],
             limits: ExecutionLimits, primitive_names: tuple[str, ...]) -> Any:
    """The child's own compile of the code (guarded mode: it runs here, in the child)."""
    from .compiler import CompiledBlock, CompiledReward, CompiledSuccess

    if kind == "primitive":
        return CompiledBlock(source, api, limits=limits, mode="guarded",
                             primitive_names=primitive_names)
    cls = CompiledReward if kind == "reward" else CompiledSuccess
    return cls(source, api, limits=limits, mode="guarded")


def _run_call(compiled: Any, view: object, stubs: dict[str, Callable[..., Any]] | None
              ) -> tuple[str, Any, str]:
    """One call in the child as a reply: ``("ok", result, output)`` or ``("err", error, output)``."""
    try:
        result = compiled(view) if stubs is None else compiled(view, stubs)
        return ("ok", result, compiled.last_output)
    except GeneratedCodeError as exc:
        return ("err", exc, compiled.last_output)
    except MemoryError:
        return ("err", CodeResourceError("ran out of memory in the sandbox"), "")
    except Exception as exc:  # noqa: BLE001 - any failure of the code is its verdict
        return ("err", CodeRuntimeError(f"{type(exc).__name__}: {exc}"), "")


def _is_remote_view(value: object) -> bool:
    return type(value) is RemoteView


def _remote_only(name: str) -> Callable[..., Any]:
    """A stand-in for a state API function that only the parent can call."""

    def call(*args: Any, **kwargs: Any) -> Any:
        raise CodeRuntimeError(f"{name}() can only be answered on the caller's view")

    call.__name__ = name
    return call
