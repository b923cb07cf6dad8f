"""The ``local`` executor: a pool of worker processes on this machine.

Each worker is a fresh interpreter running :mod:`._worker` (standard library only), fed one
job at a time over a pipe, so a worker imports only the modules of the jobs it runs: no
torch unless a job needs it. Workers start lazily (never more than there are jobs), or all
at once with :meth:`LocalExecutor.start` or :meth:`LocalExecutor.prepare` (which also has
each load a job function and its modules while the caller goes on), live until
:meth:`LocalExecutor.close`, and die with the driver. A worker that dies mid-job
(segfault, OOM kill, ``kill -9``) or overruns ``job_timeout_s`` is replaced and the job is
retried; BLAS/OpenMP libraries get one thread per worker unless the environment says
otherwise.
"""

from __future__ import annotations

import os
import pickle
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._worker import read_frame, write_frame
from .base import Attempt, Executor, ExecutorError, Job

__all__ = ["LocalExecutor"]

_WORKER = Path(__file__).with_name("_worker.py")
_THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


@dataclass
class _Worker:
    slot: int
    proc: subprocess.Popen[bytes]
    busy: int | None = None
    started: float = 0.0
    begun: float | None = None
    timed_out: bool = False
    reader: threading.Thread | None = field(default=None, repr=False)

    @property
    def label(self) -> str:
        return f"local-{self.slot} pid {self.proc.pid}"


class LocalExecutor(Executor):
    """A process pool of ``workers`` processes (default: one per core)."""

    name = "local"

    def __init__(self, workers: int | None = None, *, retries: int = 2,
                 job_timeout_s: float | None = None) -> None:
        super().__init__(workers, retries=retries, job_timeout_s=job_timeout_s)
        self._slots: dict[int, _Worker] = {}
        self._events: queue.Queue[tuple[_Worker, Any]] = queue.Queue()

    # -- workers -------------------------------------------------------------------------
    def _start(self, slot: int) -> _Worker:
        env = dict(os.environ)
        for var in _THREAD_VARS:
            env.setdefault(var, "1")
        proc = subprocess.Popen([sys.executable, str(_WORKER)], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, env=env, close_fds=True)
        worker = _Worker(slot, proc)
        assert proc.stdin is not None
        write_frame(proc.stdin, {"sys_path": list(sys.path), "name": worker.label})
        worker.reader = threading.Thread(target=self._read, args=(worker,), daemon=True)
        worker.reader.start()
        self._slots[slot] = worker
        return worker

    def _read(self, worker: _Worker) -> None:
        assert worker.proc.stdout is not None
        while True:
            try:
                frame = read_frame(worker.proc.stdout)
            except (EOFError, OSError, pickle.UnpicklingError):
                self._events.put((worker, None))
                return
            self._events.put((worker, frame))

    def _idle_worker(self) -> _Worker:
        for slot in range(self.workers):
            worker = self._slots.get(slot)
            if worker is not None and worker.busy is not None:
                continue  # in flight; if it died, its reader's crash report retries the job
            if worker is None or worker.proc.poll() is not None:
                return self._start(slot)
            return worker
        raise RuntimeError("no idle worker: more jobs in flight than workers")  # driver bug

    def start(self) -> LocalExecutor:
        """Start every worker now (they boot in the background); returns self."""
        for slot in range(self.workers):
            worker = self._slots.get(slot)
            if worker is None or worker.proc.poll() is not None:
                self._start(slot)
        return self

    def prepare(self, fn: Callable[..., Any], modules: Sequence[str] = ()) -> None:
        """Start every worker and have each load ``fn`` and ``modules`` (no waiting)."""
        payload = _pickled("warm-up", (fn, tuple(modules)))
        self.start()
        for worker in self._slots.values():
            assert worker.proc.stdin is not None
            try:
                write_frame(worker.proc.stdin, ("warm", payload))
            except (BrokenPipeError, OSError):
                pass  # it died: its reader reports it; the next job starts a new one

    def close(self) -> None:
        """Stop every worker (closing its pipe; killed if it does not exit within 5 s)."""
        for worker in self._slots.values():
            if worker.proc.stdin is not None:
                try:
                    worker.proc.stdin.close()
                except OSError:
                    pass
        for worker in self._slots.values():
            try:
                worker.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                worker.proc.kill()
                worker.proc.wait()
            if worker.proc.stdout is not None:
                worker.proc.stdout.close()
        self._slots.clear()

    # -- the Executor hooks --------------------------------------------------------------
    def _submit(self, index: int, job: Job) -> None:
        payload = _pickled(f"job {job.key!r}", (job.fn, job.args, dict(job.kwargs)))
        worker = self._idle_worker()
        worker.busy, worker.started, worker.timed_out = index, time.monotonic(), False
        worker.begun = None
        assert worker.proc.stdin is not None
        try:
            write_frame(worker.proc.stdin, (index, payload))
        except (BrokenPipeError, OSError):
            pass  # the worker died before taking the job: its reader reports the crash

    def _next_finished(self) -> tuple[int, Attempt]:
        while True:
            try:
                worker, frame = self._events.get(timeout=self._wait_s())
            except queue.Empty:
                self._kill_overdue()
                continue
            if self._slots.get(worker.slot) is not worker:
                continue  # a message from a worker already replaced
            if frame is None:
                finished = self._crashed(worker)
                if finished is not None:
                    return finished
                continue
            index, done = frame
            if done is None:  # the worker has begun the job (its start-up is not counted)
                worker.begun = time.monotonic()
                continue
            worker.busy = None
            return index, Attempt(done["ok"], done["value"], done["error"], False, done["log"],
                                  done["seconds"], worker.label)

    def _wait_s(self) -> float | None:
        return None if self.job_timeout_s is None else min(1.0, self.job_timeout_s)

    def _kill_overdue(self) -> None:
        assert self.job_timeout_s is not None
        now = time.monotonic()
        for worker in self._slots.values():
            begun = worker.begun
            if worker.busy is not None and begun is not None and now - begun > self.job_timeout_s:
                worker.timed_out = True
                worker.proc.kill()

    def _crashed(self, worker: _Worker) -> tuple[int, Attempt] | None:
        code = worker.proc.wait()
        del self._slots[worker.slot]
        if worker.busy is None:
            return None
        seconds = time.monotonic() - worker.started
        if worker.timed_out:
            why = f"timed out after {self.job_timeout_s} s (worker killed)"
        elif code < 0:
            why = f"worker died of signal {signal.Signals(-code).name}"
            if code == -signal.SIGKILL:
                why += " (killed, e.g. out of memory)"
        else:
            why = f"worker exited with code {code}"
        return worker.busy, Attempt(False, None, why, True, "", seconds, worker.label)


def _pickled(what: str, obj: Any) -> bytes:
    """``obj`` pickled for a worker, or the error that says how to make it picklable."""
    try:
        return pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:
        raise ExecutorError(
            f"{what} cannot be sent to a worker process ({type(exc).__name__}: "
            f"{exc}); its function and arguments must pickle (a module-level function or "
            "a callable dataclass, not a closure or lambda), or use --executor serial"
        ) from exc
