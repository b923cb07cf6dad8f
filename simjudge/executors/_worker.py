"""A ``local`` executor worker, and the in-process job runner every executor shares.

Run as a script (``python _worker.py``) it is one worker of the process pool: it reads
length-prefixed pickled frames on stdin (first ``{"sys_path": [...], "name": ...}``, then
``(index, pickled (fn, args, kwargs))``), runs each job with its output captured and
answers on stdout ``(index, None)`` when it has loaded a job and starts it and
``(index, result dict)`` when it ends. A ``("warm", pickled (fn, modules))`` frame asks it
to get ready for jobs of ``fn`` (:func:`warm_up`) and gets no answer. It needs only the
standard library, so a worker costs a bare interpreter until a job's function is unpickled
(which imports that function's module and nothing else). It dies with its parent
(``PR_SET_PDEATHSIG``) and exits when stdin closes.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import os
import pickle
import signal
import struct
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import IO, Any

_HEADER = struct.Struct("!Q")


def write_frame(stream: IO[bytes], obj: Any) -> None:
    """Write one length-prefixed pickle frame and flush."""
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def read_frame(stream: IO[bytes]) -> Any:
    """Read one frame; raise EOFError when the stream ends."""
    head = _read_exact(stream, _HEADER.size)
    return pickle.loads(_read_exact(stream, _HEADER.unpack(head)[0]))


def _read_exact(stream: IO[bytes], n: int) -> bytes:
    chunks, left = [], n
    while left:
        chunk = stream.read(left)
        if not chunk:
            raise EOFError("stream closed")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


@contextlib.contextmanager
def captured_output() -> Iterator[list[str]]:
    """Send fds 1 and 2 (C code included) to a temporary file; the list receives its text."""
    holder: list[str] = []
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    saved = [os.dup(1), os.dup(2)]
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        try:
            os.dup2(tmp.fileno(), 1)
            os.dup2(tmp.fileno(), 2)
            yield holder
        finally:
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(Exception):
                    stream.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)
            tmp.seek(0)
            holder.append(tmp.read().decode("utf-8", errors="replace"))


BACKEND_KEY = "__simjudge_backend__"
"""A job's keyword that carries the driver's physics backend to wherever the job runs
(popped before the call): a Ray node or a pool worker started before ``--backend`` was
chosen runs the job on the driver's backend, not on its own environment's."""


def run_call(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: Mapping[str, Any]
             ) -> dict[str, Any]:
    """Run ``fn(*args, **kwargs)`` with output captured; an exception becomes ``ok: False``.

    A :data:`BACKEND_KEY` keyword is removed and sets ``$SIMJUDGE_BACKEND`` for the call.
    """
    start = time.perf_counter()
    ok, value, error = False, None, ""
    kwargs = dict(kwargs)
    backend = kwargs.pop(BACKEND_KEY, None)
    saved = os.environ.get("SIMJUDGE_BACKEND")
    if backend:
        os.environ["SIMJUDGE_BACKEND"] = str(backend)
    with captured_output() as log:
        try:
            value = fn(*args, **kwargs)
            ok = True
        except Exception as exc:  # a failed job is a verdict, not the end of the run
            error = f"{type(exc).__name__}: {exc}"
            traceback.print_exc()
        finally:
            if backend:
                if saved is None:
                    os.environ.pop("SIMJUDGE_BACKEND", None)
                else:
                    os.environ["SIMJUDGE_BACKEND"] = saved
    return {"ok": ok, "value": value if ok else None, "error": error,
            "log": log[0] if log else "", "seconds": time.perf_counter() - start}


def ray_call(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: Mapping[str, Any]
             ) -> dict[str, Any]:
    """:func:`run_call` as a Ray task runs it (the result names the worker process)."""
    return {**run_call(fn, args, kwargs), "worker": f"ray pid {os.getpid()}"}


def warm_up(fn: Callable[..., Any], modules: Sequence[str] = ()) -> None:
    """Get this process ready for jobs of ``fn``: import ``modules``, call ``fn.warm_up()``.

    ``fn`` itself is already loaded (unpickling it imported its module). A failure here is
    ignored (printed to stderr): the job that needs the module reports it as its own error.
    """
    try:
        with captured_output():
            for name in modules:
                importlib.import_module(name)
            hook = getattr(fn, "warm_up", None)
            if callable(hook):
                hook()
    except Exception:
        traceback.print_exc()


class RayWorker:
    """What one long-lived Ray actor of the ``ray`` executor does (plain Python here)."""

    def warm(self, payload: bytes) -> int:
        """:func:`warm_up` from a pickled ``(fn, modules)``; returns the pid."""
        fn, modules = pickle.loads(payload)
        warm_up(fn, modules)
        return os.getpid()

    def run(self, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: Mapping[str, Any]
            ) -> dict[str, Any]:
        """Run one job (:func:`ray_call`)."""
        return ray_call(fn, args, kwargs)


def _die_with_parent() -> None:
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def main() -> int:
    """Serve jobs until stdin closes."""
    _die_with_parent()
    inbox = os.fdopen(os.dup(0), "rb")
    outbox = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(2, 1)  # stray prints outside a job go to stderr, never into the protocol
    hello = read_frame(inbox)
    sys.path[:] = list(hello["sys_path"])
    while True:
        try:
            index, payload = read_frame(inbox)
        except EOFError:
            return 0
        if index == "warm":
            with contextlib.suppress(Exception):
                warm_up(*pickle.loads(payload))
            continue
        result = _serve(payload, functools.partial(write_frame, outbox, (index, None)))
        try:
            write_frame(outbox, (index, result))
        except Exception as exc:  # the value does not pickle
            write_frame(outbox, (index, {**result, "ok": False, "value": None,
                                         "error": f"the job's result cannot be sent back: {exc}"}))


def _serve(payload: bytes, begin: Callable[[], None]) -> dict[str, Any]:
    """Load a job (importing its modules), say it has begun, run it."""
    try:
        fn, args, kwargs = pickle.loads(payload)
    except Exception as exc:
        return {"ok": False, "value": None, "log": traceback.format_exc(), "seconds": 0.0,
                "error": f"the worker cannot load the job ({type(exc).__name__}: {exc})"}
    begin()  # a job's time limit runs from here: imports are not counted
    return run_call(fn, args, kwargs)


if __name__ == "__main__":
    sys.exit(main())
