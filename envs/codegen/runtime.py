"""Execution limits and the tracer that enforces them in-process.

Mechanism: before calling generated code, :func:`execute` installs a
``sys.settrace`` hook on the current thread (any thread works; no signals needed).
Generated code objects (``co_filename == GENERATED_FILENAME``) that contain a loop
(a backward jump) are traced per opcode: every event counts one step; every 16
steps the wall-clock deadline and the step budget are checked, every 256 steps the
growth of the process's peak resident memory. Crossing a bound raises the typed
error from inside the traced frame; generated code cannot contain ``try``, so
nothing can swallow it. Other Python frames (numpy, the state API, the guards) are
not traced line by line, but every 8th call re-checks the deadline. Call depth is
counted on call/return events of generated frames. A previous trace function
(debugger, coverage) is restored afterwards.

If no generated code object contains a loop, the code runs untraced: its length
bounds the work it can do, recursion is rejected statically (so call depth is
bounded too), and only its total time is checked when it returns. This keeps a
typical RoboGen reward at a few tens of microseconds per call.

Limits of the in-process mode: a single C-level operation cannot be interrupted,
so the runtime guards (:mod:`~simjudge.envs.codegen.guards`) bound the size of
every allocation before it happens; code that must be fully contained runs in the
subprocess mode (:mod:`~simjudge.envs.codegen.sandbox`), which adds an address-space
rlimit and a hard kill.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, fields
from types import CodeType, FrameType, TracebackType
from typing import Any, TypeVar

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
    "ExecutionLimits",
    "RunState",
    "StateToken",
    "current_run",
    "execute",
    "generated_line",
]

GENERATED_FILENAME = "<simjudge-generated>"
"""``co_filename`` of every code object compiled from generated source."""

T = TypeVar("T")


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
        max_memory_mb: Growth of the process's peak resident memory allowed during
            one call; in subprocess mode, also the child's address-space headroom.
        max_output_chars: ``print`` output kept per call (the rest is dropped).
        kill_grace_s: Subprocess mode: extra time before the child is killed.
        startup_timeout_s: Subprocess mode: time allowed to start the child.
    """

    time_limit_s: float = 0.5
    max_steps: int = 1_000_000
    max_alloc_elements: int = 1_000_000
    max_int_bits: int = 10_000
    max_call_depth: int = 32
    max_memory_mb: float = 512.0
    max_output_chars: int = 10_000
    kill_grace_s: float = 1.0
    startup_timeout_s: float = 60.0

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
    """Per-call execution state and the trace functions that enforce the limits."""

    def __init__(
        self,
        limits: ExecutionLimits,
        view: object = None,
        primitives: Mapping[str, Callable[..., Any]] | None = None,
        looping: Collection[CodeType] = (),
    ) -> None:
        self.limits = limits
        self.looping = looping
        self.view = view
        self.token = StateToken()
        self.primitives: Mapping[str, Callable[..., Any]] = primitives or {}
        self.deadline = time.perf_counter() + limits.time_limit_s
        self.steps = 0
        self.depth = 0
        self.paused = False
        self.return_line: int | None = None
        self.output: list[str] = []
        self._output_chars = 0
        self._mem_base_kb = _peak_rss_kb()
        self._mem_limit_kb = limits.max_memory_mb * 1024

    # -- limits ---------------------------------------------------------------------

    def check(self) -> None:
        """Raise if the deadline or the step budget has passed."""
        if self.steps > self.limits.max_steps:
            raise CodeTimeoutError(
                f"the code executed more than {self.limits.max_steps} steps; check for "
                "loops that never end or do far more work than a reward needs"
            )
        if time.perf_counter() > self.deadline:
            raise CodeTimeoutError(
                f"the code ran longer than the time limit of {self.limits.time_limit_s:g} s; "
                "check for infinite loops (e.g. a `while` condition that never becomes False)"
            )

    def check_memory(self) -> None:
        """Raise if peak resident memory grew more than allowed during this call."""
        grown = _peak_rss_kb() - self._mem_base_kb
        if grown > self._mem_limit_kb:
            raise CodeResourceError(
                f"the code used more than {self.limits.max_memory_mb:g} MB of memory; "
                "avoid building large lists or arrays"
            )

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
            self._mem_base_kb = _peak_rss_kb()

    def write(self, text: str) -> None:
        """Keep ``print`` output up to ``max_output_chars``."""
        room = self.limits.max_output_chars - self._output_chars
        if room > 0:
            self.output.append(text[:room])
            self._output_chars += min(len(text), room)

    # -- trace functions -------------------------------------------------------------

    def global_trace(self, frame: FrameType, event: str, arg: object) -> Any:
        """Called on every new Python frame of this thread while the code runs."""
        if frame.f_code.co_filename == GENERATED_FILENAME:
            self.depth += 1
            if self.depth > self.limits.max_call_depth:
                raise CodeResourceError(
                    f"function calls nested deeper than {self.limits.max_call_depth} levels"
                )
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
    previous_trace = sys.gettrace()
    _tls.run = run
    if run.looping:
        sys.settrace(run.global_trace)
    try:
        result = body()
        run.check()  # untraced (loop-free) code is timed as a whole
        return result
    except GeneratedCodeError as exc:
        err = exc.with_line(generated_line(exc.__traceback__))
        if err is exc:
            raise
        raise err from exc
    except MemoryError as exc:
        raise CodeResourceError(
            "ran out of memory; avoid building large lists or arrays",
            generated_line(exc.__traceback__),
        ) from exc
    except RecursionError as exc:
        raise CodeResourceError(
            "calls or data structures nested too deeply", generated_line(exc.__traceback__)
        ) from exc
    except Exception as exc:
        raise CodeRuntimeError(
            f"{type(exc).__name__}: {exc} (raised while running the generated code; fix "
            "this line or guard it with an `if`)",
            generated_line(exc.__traceback__),
        ) from exc
    finally:
        if run.looping:
            sys.settrace(previous_trace)
        _tls.run = previous_run


def _peak_rss_kb() -> float:
    if resource is None:  # pragma: no cover - Windows
        return 0.0
    usage = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return usage / 1024 if sys.platform == "darwin" else float(usage)
