"""Execution limits and the tracer that enforces them in-process.

Mechanism: before calling generated code that may run long, :func:`execute` installs a
``sys.settrace`` hook on the current thread (any thread works; no signals needed).
Generated code objects (``co_filename == GENERATED_FILENAME``) that contain a loop (a
backward jump) are traced per opcode: every event counts one step; every 16 steps the
wall-clock deadline and the step budget are checked, every 256 steps the growth of the
process's resident memory. Every call of a generated function (a generated frame) counts
against ``max_calls`` and re-checks the deadline every 16 calls, so calls between
generated functions are timed even when the functions themselves have no loop. Other
Python frames (numpy, the state API, the guards) are not traced line by line, but every
8th call re-checks the deadline. Crossing a bound raises the typed error from inside the
traced frame; generated code cannot contain ``try``, so nothing can swallow it. A previous
trace function (debugger, coverage) is restored afterwards.

Untraced runs: if no generated code object contains a loop and the static bound on
generated-function calls (:func:`~simjudge.envs.codegen.checker.call_fanout`, from the
call graph) is at most :data:`UNTRACED_CALL_FANOUT`, the code runs without the tracer
and without reading the memory: its length times that call bound bounds the number of
operations, the guards bound the work and memory of each operation, and the deadline
is checked when it returns. This keeps a typical RoboGen reward at a few microseconds.

Memory: the guards report the size of every large allocation they let through
(:meth:`RunState.note_alloc`); after every :data:`MEMORY_CHECK_ELEMENTS` elements the
process's current resident memory is compared with the call's start, traced or not.

Limits of running in this process: a single C-level operation cannot be interrupted, so
the runtime guards (:mod:`~simjudge.envs.codegen.guards`) bound the size and work of every
operation before it happens. That is why only code the cost proof bounds
(:mod:`~simjudge.envs.codegen.prove`) runs here in ``"in-process"`` mode; any other code runs
in the worker process (:mod:`~simjudge.envs.codegen.sandbox`), which adds OS limits and a
hard kill, and runs this same tracer inside it.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, fields
from types import CodeType, FrameType, TracebackType
from typing import Any, NoReturn, TypeVar

try:  # POSIX only; elsewhere the memory check is skipped
    import resource
except ImportError:  # pragma: no cover - Windows
    resource = None  # type: ignore[assignment]

from .errors import (
    CodeResourceError,
    CodeRuntimeError,
    CodeTimeoutError,
    GeneratedCodeError,
)

__all__ = [
    "GENERATED_FILENAME",
    "MEMORY_CHECK_ELEMENTS",
    "UNTRACED_CALL_FANOUT",
    "ExecutionLimits",
    "RunState",
    "StateToken",
    "current_run",
    "execute",
    "generated_line",
    "lean_call",
]

GENERATED_FILENAME = "<simjudge-generated>"
"""``co_filename`` of every code object compiled from generated source."""

T = TypeVar("T")
UNTRACED_CALL_FANOUT = 1_000
"""Loop-free code whose static call bound is at most this runs without the tracer."""
MEMORY_CHECK_ELEMENTS = 2_000_000
"""Elements of guarded allocations between two reads of the resident memory."""


@dataclass(frozen=True)
class ExecutionLimits:
    """Bounds applied to every call of compiled generated code.

    Attributes:
        time_limit_s: Wall time per call. For primitive blocks, time spent inside
            primitive implementations (motion planning) is not counted.
        max_steps: Budget of traced bytecode events per call; deterministic across
            machines, unlike the wall time.
        max_alloc_elements: Largest array, list, string or range one operation may
            create (elements or characters).
        max_int_bits: Largest integer one operation may create.
        max_call_depth: Deepest nesting of generated-function calls (recursion is
            already rejected statically; this is a second line of defence).
        max_calls: Calls of generated functions (and comprehensions) per call; also
            the largest static call fan-out the checker accepts.
        max_op_work: Largest work of one uninterruptible operation, in elementary
            steps (e.g. ``n**3`` for ``np.linalg.inv`` of an ``n x n`` matrix, the
            multiply-adds of a matrix product, comparisons times string length for a
            sort); checked before the operation runs.
        max_memory_mb: Growth of the process's peak resident memory allowed during
            one call; in subprocess mode, also the child's address-space headroom.
        max_output_chars: ``print`` output kept per call (the rest is dropped).
        kill_grace_s: Subprocess mode: extra time before the child is killed.
        startup_timeout_s: Subprocess mode: time allowed to start the child.
        check_timeout_s: Subprocess mode: time allowed for the child's own static
            check and compilation of the source.
    """

    time_limit_s: float = 0.5
    max_steps: int = 1_000_000
    max_alloc_elements: int = 1_000_000
    max_int_bits: int = 10_000
    max_call_depth: int = 32
    max_calls: int = 100_000
    max_op_work: int = 50_000_000
    max_memory_mb: float = 512.0
    max_output_chars: int = 10_000
    kill_grace_s: float = 1.0
    startup_timeout_s: float = 60.0
    check_timeout_s: float = 10.0

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
                raise ValueError(
                    f"ExecutionLimits.{f.name} must be a positive number, got {value!r}"
                )


class StateToken:
    """What generated code sees as ``self``: an opaque object without attributes.

    The state API wrappers swap it for the caller's view, so generated code can
    pass ``self`` along but can never reach the view (or the simulator) itself.
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return "<state view>"


class RunState:
    """Execution state and trace functions of one call; reused across calls.

    A compiled object keeps a few of these and calls :meth:`begin` before each call
    (one per concurrent caller), so a call allocates nothing and reads no clock but the
    deadline's.
    """

    def __init__(
        self,
        limits: ExecutionLimits,
        view: object = None,
        primitives: Mapping[str, Callable[..., Any]] | None = None,
        looping: Collection[CodeType] = (),
        token: StateToken | None = None,
        traced: bool | None = None,
    ) -> None:
        self.limits = limits
        self.looping = looping
        self.traced = bool(looping) if traced is None else traced
        self.token = token if token is not None else StateToken()
        self._mem_limit_kb = limits.max_memory_mb * 1024
        self.output: list[str] = []
        self.begin(view, primitives)

    def begin(
        self, view: object, primitives: Mapping[str, Callable[..., Any]] | None = None
    ) -> None:
        """Reset the counters and start the clock for a call on ``view``."""
        self.view = view
        self.primitives: Mapping[str, Callable[..., Any]] = primitives or _NO_PRIMITIVES
        self.deadline = _clock() + self.limits.time_limit_s
        self.steps = self.calls = self.depth = self.primitive_calls = 0
        self.paused = False
        self.return_line: int | None = None
        if self.output:  # a fresh list only after something was printed
            self.output = []
        self._output_chars = 0
        self._noted = 0.0
        self._mem_base_kb: float | None = _rss_kb() if self.traced else None

    # -- limits ---------------------------------------------------------------------

    def check(self) -> None:
        """Raise if the deadline or the step budget has passed."""
        if self.steps > self.limits.max_steps:
            raise CodeTimeoutError(
                f"the code executed more than {self.limits.max_steps} steps; check for "
                "loops that never end or do far more work than a reward needs"
            )
        if time.perf_counter() > self.deadline:
            raise _late(self.limits)

    def check_memory(self) -> None:
        """Raise if resident memory grew more than allowed during this call."""
        now = _rss_kb()
        if self._mem_base_kb is None:
            self._mem_base_kb = now
            return
        if now - self._mem_base_kb > self._mem_limit_kb:
            raise CodeResourceError(
                f"the code used more than {self.limits.max_memory_mb:g} MB of memory; "
                "avoid building large lists or arrays"
            )

    def note_alloc(self, elements: float) -> None:
        """Count a guarded allocation; read the memory every ``MEMORY_CHECK_ELEMENTS``."""
        if self._mem_base_kb is None:
            self._mem_base_kb = _rss_kb()
        self._noted += elements
        if self._noted > MEMORY_CHECK_ELEMENTS:
            self._noted = 0.0
            self.check_memory()
            self.check()

    @contextmanager
    def paused_clock(self) -> Iterator[None]:
        """Stop counting time (for primitive calls, which have their own budgets)."""
        start = time.perf_counter()
        self.paused = True
        try:
            yield
        finally:
            self.paused = False
            self.deadline += time.perf_counter() - start
            if self._mem_base_kb is not None:
                self._mem_base_kb = _rss_kb()

    def write(self, text: str) -> None:
        """Keep ``print`` output up to ``max_output_chars``."""
        room = self.limits.max_output_chars - self._output_chars
        if room > 0:
            self.output.append(text[:room])
            self._output_chars += min(len(text), room)

    @property
    def output_room(self) -> int:
        """Characters of ``print`` output still kept."""
        return max(self.limits.max_output_chars - self._output_chars, 0)

    # -- trace functions -------------------------------------------------------------

    def global_trace(self, frame: FrameType, event: str, arg: object) -> Any:
        """Called on every new Python frame of this thread while the code runs."""
        if frame.f_code.co_filename == GENERATED_FILENAME:
            self.depth += 1
            self.calls += 1
            if self.depth > self.limits.max_call_depth:
                raise CodeResourceError(
                    f"function calls nested deeper than {self.limits.max_call_depth} levels"
                )
            if self.calls > self.limits.max_calls:
                raise CodeTimeoutError(
                    f"the code made more than {self.limits.max_calls} calls of its own "
                    "functions (or comprehensions); call helpers once and reuse results"
                )
            if not self.calls & 15:
                self.check()
            if frame.f_code in self.looping:
                frame.f_trace_opcodes = True
            else:
                frame.f_trace_lines = False  # straight-line code: only count calls
            return self.local_trace
        if not self.paused:
            self.steps += 1
            if not self.steps & 7:
                self.check()
        return None

    def local_trace(self, frame: FrameType, event: str, arg: object) -> Any:
        """Called per opcode/line/return of generated frames."""
        if event == "return":
            self.depth -= 1
            self.return_line = frame.f_lineno
            return None
        self.steps += 1
        if not self.steps & 15:
            self.check()
            if not self.steps & 255:
                self.check_memory()
        return self.local_trace


_tls = threading.local()
_clock = time.perf_counter
_NO_PRIMITIVES: Mapping[str, Callable[..., Any]] = {}


def current_run() -> RunState:
    """The :class:`RunState` of the generated code running on this thread."""
    run = getattr(_tls, "run", None)
    if run is None:
        raise RuntimeError("no generated code is running on this thread")
    return run


def generated_line(tb: TracebackType | None) -> int | None:
    """Line of the innermost generated-code frame in a traceback."""
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == GENERATED_FILENAME:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def execute(run: RunState, body: Callable[[], T]) -> T:
    """Call ``body`` under ``run``'s limits, mapping every failure to a typed error.

    Raises:
        GeneratedCodeError: The matching subclass, with the line number of the
            generated code where it happened.
    """
    previous_run = getattr(_tls, "run", None)
    _tls.run = run
    if not run.traced:  # loop-free code: no tracer, timed as a whole when it returns
        try:
            result = body()
            if _clock() > run.deadline or run.steps > run.limits.max_steps:
                run.check()
            return result
        except Exception as exc:
            _raise_typed(exc)
        finally:
            _tls.run = previous_run
    previous_trace = sys.gettrace()
    sys.settrace(run.global_trace)
    try:
        result = body()
        run.check()
        return result
    except Exception as exc:
        _raise_typed(exc)
    finally:
        sys.settrace(previous_trace)
        _tls.run = previous_run


def _late(limits: ExecutionLimits) -> CodeTimeoutError:
    return CodeTimeoutError(
        f"the code ran longer than the time limit of {limits.time_limit_s:g} s; "
        "check for infinite loops (e.g. a `while` condition that never becomes False)"
    )


def lean_call(
    owner: Any,
    entry: Callable[[], Any],
    runs: list[RunState],
    token: StateToken,
    looping: Collection[CodeType] = (),
    needs_run: bool = True,
) -> Callable[[object], Any]:
    """``call(view) -> result`` of a loaded, loop-free entry: the per-step path of a judge.

    The same steps as :func:`execute` on an untraced run (a :class:`RunState` from the
    ``runs`` pool begun on ``view``, the thread's current run, the deadline checked on
    return, failures typed), in one frame; ``owner.last_output`` gets what was printed.
    With ``needs_run=False`` (an entry that calls nothing but resolved state readings and
    uses no guard, builtin or state-API wrapper, so nothing asks for the current run) only
    the deadline and the typing of failures remain; such code cannot print (``print`` is a
    builtin), so ``owner.last_output`` is left as every call leaves it, empty.
    """
    limits = owner.limits
    max_steps = limits.max_steps
    if not needs_run:
        time_limit = limits.time_limit_s

        def bare(view: object) -> Any:
            deadline = _clock() + time_limit
            try:
                result = entry()
                if _clock() > deadline:
                    raise _late(limits)
            except Exception as exc:
                _raise_typed(exc)
            return result

        owner.last_output = ""
        return bare

    def call(view: object) -> Any:
        run = runs.pop() if runs else RunState(limits, looping=looping, token=token, traced=False)
        run.begin(view, None)
        previous = getattr(_tls, "run", None)
        _tls.run = run
        try:
            result = entry()
            if _clock() > run.deadline or run.steps > max_steps:
                run.check()
        except Exception as exc:
            _raise_typed(exc)
        finally:
            _tls.run = previous
            owner.last_output = "".join(run.output) if run.output else ""
            run.view, run.primitives = None, {}
            runs.append(run)
        return result

    return call


def _raise_typed(exc: Exception) -> NoReturn:
    """Raise what generated code's failure ``exc`` is reported as (:func:`_typed_error`).

    Called from the ``except`` clause of every way generated code is run, so the typing of
    failures is written once; the happy path does not pay for it.
    """
    err = _typed_error(exc)
    if err is exc:
        raise exc
    raise err from exc


def _typed_error(exc: Exception) -> GeneratedCodeError:
    """The typed error reported for ``exc`` raised by generated code (with its line)."""
    if isinstance(exc, GeneratedCodeError):
        return exc.with_line(generated_line(exc.__traceback__))
    if isinstance(exc, MemoryError):
        return CodeResourceError(
            "ran out of memory; avoid building large lists or arrays",
            generated_line(exc.__traceback__),
        )
    if isinstance(exc, RecursionError):
        return CodeResourceError(
            "calls or data structures nested too deeply", generated_line(exc.__traceback__)
        )
    return CodeRuntimeError(
        f"{type(exc).__name__}: {exc} (raised while running the generated code; fix "
        "this line or guard it with an `if`)",
        generated_line(exc.__traceback__),
    )


_statm: list[int] = []  # [pid, fd] of this process's /proc/self/statm
_PAGE_KB = (os.sysconf("SC_PAGE_SIZE") // 1024) if hasattr(os, "sysconf") else 4


def _rss_kb() -> float:
    """Current resident memory (Linux ``/proc``), else the peak from ``getrusage``."""
    pid = os.getpid()
    if not _statm or _statm[0] != pid:
        try:
            _statm[:] = [pid, os.open("/proc/self/statm", os.O_RDONLY)]
        except OSError:
            _statm[:] = [pid, -1]
    if _statm[1] >= 0:
        try:
            return float(int(os.pread(_statm[1], 128, 0).split()[1]) * _PAGE_KB)
        except (OSError, ValueError, IndexError):
            pass
    if resource is None:  # pragma: no cover - Windows
        return 0.0
    usage = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return usage / 1024 if sys.platform == "darwin" else float(usage)
