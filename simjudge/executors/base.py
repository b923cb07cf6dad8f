"""The executor contract: jobs, their results, the store they land in, and the retry driver.

A :class:`Job` is a pure function of its arguments (the seed among them): a module-level
function (or a picklable callable object) plus picklable arguments. An :class:`Executor`
runs a list of jobs and returns one :class:`JobResult` per job **in the order given**,
whatever ran first. With a :class:`JobStore`, every finished job's result is written
atomically to ``<root>/<results>/<key>.json`` the moment it is known, jobs whose file is
already there are not run again (a killed run resumes with nothing lost or repeated), and
each job's captured output goes to ``<root>/<logs>/<results>/<key>.log``. Result files are
written through :class:`~simjudge.tasks.spec.RunDir` (checksum first), so a result that is
later found truncated or changed is set aside and its job runs again.

Failures are verdicts: a job that raises is recorded as failed with the exception; a job
whose worker dies (segfault, out-of-memory kill, a killed process, a time-out) is retried
up to ``retries`` times and then recorded as failed with the reason. The run goes on.

This module needs only the standard library (and tqdm for the progress bar).
"""

from __future__ import annotations

import json
import os
import re
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence, Sized
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simjudge.envs.errors import SimjudgeError
from simjudge.tasks.spec.io import atomic_write, json_default
from simjudge.tasks.spec.rundir import RunDir

from ._worker import run_call

__all__ = [
    "Attempt",
    "Executor",
    "ExecutorError",
    "Job",
    "JobResult",
    "JobStore",
    "run_attempt",
    "to_jsonable",
]

_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
FAILED_FLAG = "job_failed"
FAILED_REASON = "job_failure_reason"


class ExecutorError(SimjudgeError, RuntimeError):
    """A job list or an executor setting is unusable; the message says how to fix it."""


@dataclass(frozen=True)
class Job:
    """One independent piece of work: ``fn(*args, **kwargs)``, a pure function of its inputs.

    Attributes:
        key: Unique name within one :meth:`Executor.map` call (letters, digits, ``_.-``);
            names the result file and the log.
        fn: A module-level function or a picklable callable object (``local`` and ``ray``
            send it to another process by reference, so closures and lambdas work only with
            the ``serial`` executor).
        args: Positional arguments (picklable).
        kwargs: Keyword arguments (picklable); put the seed here.
    """

    key: str
    fn: Callable[..., Any]
    args: tuple[Any, ...] = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not _KEY.match(self.key):
            raise ExecutorError(
                f"job key {self.key!r} is not a safe file name; use letters, digits, '_', '.' "
                "and '-' (e.g. 'cand_003')"
            )


@dataclass
class Attempt:
    """What one attempt at a job gave (sent back by a worker).

    Attributes:
        ok: The function returned.
        value: Its return value (None unless ``ok``).
        error: The exception (type, message and traceback) or the crash reason.
        crashed: The worker died or timed out (retried), as opposed to the job raising.
        log: The job's captured stdout and stderr.
        seconds: Wall time of the attempt.
        worker: Which worker ran it (``local-0 pid 123``, ``ray pid 456``, ``serial``).
    """

    ok: bool
    value: Any = None
    error: str = ""
    crashed: bool = False
    log: str = ""
    seconds: float = 0.0
    worker: str = ""


@dataclass
class JobResult:
    """The result of one job, as :meth:`Executor.map` returns it.

    Attributes:
        key: The job's key.
        ok: False for a failed job (raised, or crashed its worker more than ``retries``
            times).
        value: With a store: the recorded JSON value (the same whether it ran now or in an
            earlier run; for a failed job, what ``on_failure`` made, else None). Without a
            store: the function's return value.
        reason: Why it failed ("" when ok).
        attempts: Attempts made in this call (0: the result was already in the store).
        seconds: Wall time of the last attempt.
    """

    key: str
    ok: bool
    value: Any = None
    reason: str = ""
    attempts: int = 0
    seconds: float = 0.0

    @property
    def resumed(self) -> bool:
        """The result was recorded by an earlier run and read back."""
        return self.attempts == 0


def to_jsonable(value: Any) -> Any:
    """A job's return value as JSON data: ``to_dict()`` if it has one, else as it is."""
    to_dict = getattr(value, "to_dict", None)
    return to_dict() if callable(to_dict) else value


@dataclass(frozen=True)
class JobStore:
    """Where jobs' results and logs are written (usually inside a run directory).

    Attributes:
        root: The run directory.
        results: Folder (relative to ``root``) of ``<key>.json`` result files.
        logs: Folder (relative to ``root``) of ``<results>/<key>.log`` per-job logs (they
            carry timings, so they are the part of a run that differs between runs).
        encode: Turns a job's return value into JSON data (default :func:`to_jsonable`).
        on_failure: ``(job, reason) -> value`` recorded for a failed job (e.g. a failed
            :class:`~simjudge.tasks.spec.Outcome`); default ``{"job": key}``. A dict gets
            ``job_failed: true`` and ``job_failure_reason`` added.
        shared: Several processes may resume this run at once: each job is claimed in
            ``<root>/claims.sqlite`` before it runs (:mod:`~simjudge.executors.claims`), so
            it runs once; a job held by another live writer is waited for, not repeated.
    """

    root: Path
    results: str = "results"
    logs: str = "job_logs"
    encode: Callable[[Any], Any] = to_jsonable
    on_failure: Callable[[Job, str], Any] | None = None
    shared: bool = False
    _book: Any = field(default=None, repr=False, compare=False)

    def take(self, key: str) -> bool:
        """Claim job ``key`` for this process (always True unless ``shared``)."""
        if not self.shared:
            return True
        if self._book is None:
            from .claims import ClaimBook

            object.__setattr__(self, "_book", ClaimBook(self.root))
        return bool(self._book.claim(self._name(key)))

    def result_path(self, key: str) -> Path:
        """The result file of job ``key``."""
        return Path(self.root) / self.results / f"{key}.json"

    def log_path(self, key: str) -> Path:
        """The log file of job ``key``."""
        return Path(self.root) / self.logs / self.results / f"{key}.log"

    def _name(self, key: str) -> str:
        return f"{self.results}/{key}.json"

    def load(self, key: str) -> JobResult | None:
        """The recorded result of ``key``, or None if the job must run.

        A result file that fails its checksum or is not JSON is set aside
        (:meth:`~simjudge.tasks.spec.RunDir.load`: ``<key>.json.corrupt``, reported) and
        the job runs again.
        """
        run = RunDir(self.root)
        value = run.load(self._name(key), run.read_json)
        if value is None:
            return None
        failed = isinstance(value, dict) and bool(value.get(FAILED_FLAG))
        reason = str(value.get(FAILED_REASON, "")) if failed else ""
        return JobResult(key, not failed, value, reason)

    def record(self, job: Job, attempt: Attempt, attempts: int) -> JobResult:
        """Write the final result of ``job`` atomically and return it as read back."""
        if attempt.ok:
            value = self.encode(attempt.value)
        else:
            made = self.on_failure(job, attempt.error) if self.on_failure else {"job": job.key}
            value = {**made, FAILED_FLAG: True, FAILED_REASON: attempt.error} if isinstance(
                made, dict) else made
        # JSON round trip: the value returned now equals the one a resumed run reads
        text = json.dumps(value, indent=2, default=json_default) + "\n"
        RunDir(self.root).write_text(self._name(job.key), text)  # checksum, then the file
        if self._book is not None:
            self._book.release(self._name(job.key))
        return JobResult(job.key, attempt.ok, json.loads(text), attempt.error, attempts,
                         attempt.seconds)

    def log(self, job: Job, attempt: Attempt, number: int, executor: str) -> None:
        """Add one attempt to the job's log (rewritten atomically)."""
        path = self.log_path(job.key)
        before = path.read_text() if path.exists() and number > 1 else ""
        status = "ok" if attempt.ok else ("crashed" if attempt.crashed else "failed")
        head = (f"== attempt {number} · {executor} · {attempt.worker} · "
                f"{attempt.seconds:.2f} s · {status}\n")
        tail = "" if attempt.ok else f"-- {attempt.error.rstrip()}\n"
        body = attempt.log if attempt.log.endswith("\n") or not attempt.log else attempt.log + "\n"
        atomic_write(path, before + head + body + tail)


def run_attempt(job: Job, worker: str = "") -> Attempt:
    """Run ``job`` in this process with its output captured; an exception becomes a failure."""
    done = run_call(job.fn, job.args, job.kwargs)
    return Attempt(done["ok"], done["value"], done["error"], False, done["log"], done["seconds"],
                   worker)


class Executor(ABC):
    """Runs independent jobs; results come back in the order of the jobs given.

    Args:
        workers: Parallel workers (None: one per CPU core; ``serial`` always uses 1).
        retries: Further attempts at a job whose worker died (segfault, OOM, kill, time-out).
        job_timeout_s: Kill an attempt after this long (None: no limit; not for ``serial``).

    Subclasses implement :meth:`_submit` and :meth:`_next_finished`.
    """

    name: str = "?"

    def __init__(self, workers: int | None = None, *, retries: int = 2,
                 job_timeout_s: float | None = None) -> None:
        if workers is not None and workers < 1:
            raise ExecutorError(f"workers must be >= 1, got {workers}; omit it for one per core")
        if retries < 0:
            raise ExecutorError(f"retries must be >= 0, got {retries}")
        self.workers = workers or default_workers()
        self.retries = retries
        self.job_timeout_s = job_timeout_s

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(workers={self.workers})"

    def start(self) -> Executor:  # noqa: B027 - optional hook
        """Get ready now (connect to Ray) instead of on the first :meth:`map`; returns self."""
        return self

    def prepare(self, fn: Callable[..., Any], modules: Sequence[str] = ()) -> None:  # noqa: B027
        """Warm the workers for jobs of ``fn`` without waiting for them (optional hook).

        ``local`` and ``ray`` start every worker now and have each load ``fn`` once
        (importing its modules), import ``modules`` and call ``fn.warm_up()`` if it has
        one, while the caller goes on (e.g. proposing the jobs): the jobs that follow find
        warm workers. Results are the same with or without it; ``serial`` does nothing.
        """

    def close(self) -> None:  # noqa: B027 - optional hook: executors with workers stop them
        """Stop the workers (the executor may start new ones on the next :meth:`map`)."""

    @abstractmethod
    def _submit(self, index: int, job: Job) -> None:
        """Start one attempt at ``job`` (``index`` identifies it when it finishes)."""

    @abstractmethod
    def _next_finished(self) -> tuple[int, Attempt]:
        """Block until an attempt finishes; return its index and what it gave."""

    def _capacity(self, pending: int) -> int:
        """Attempts to keep in flight (workers are started lazily, at most one per job)."""
        return self.workers

    def map(self, jobs: Iterable[Job], store: JobStore | None = None, *, desc: str = "jobs",
            progress: bool = True) -> list[JobResult]:
        """Run ``jobs``; return their results in the same order.

        Args:
            jobs: The jobs (unique keys), a sequence or any iterable: an iterator (e.g. a
                generator that proposes them) is read lazily, one job whenever a worker is
                free, so jobs start while later ones are still being made. Given in seed
                order, they start in that order.
            store: Where results and logs are written; jobs already recorded there are not
                run again. None: results are only returned (logs are dropped).
            desc: Progress bar label.
            progress: Show a progress bar (finished jobs over all workers).

        Returns:
            One :class:`JobResult` per job, in the order of ``jobs``.
        """
        if isinstance(jobs, Sequence):
            keys = [job.key for job in jobs]
            if len(set(keys)) != len(keys):
                dup = sorted({k for k in keys if keys.count(k) > 1})
                raise ExecutorError(f"job keys must be unique within one map; repeated: {dup}")
        from tqdm import tqdm

        bar = tqdm(total=len(jobs) if isinstance(jobs, Sized) else None, desc=desc,
                   disable=not progress, unit="job")
        results: dict[int, JobResult] = {}
        try:
            for index, result in self._drive(iter(jobs), store):
                results[index] = result
                bar.update(1)
                if not result.ok:
                    bar.set_postfix(failed=sum(1 for r in results.values() if not r.ok))
        finally:
            bar.close()
        return [results[i] for i in range(len(results))]

    def _drive(self, source: Iterator[Job], store: JobStore | None
               ) -> Iterator[tuple[int, JobResult]]:
        """Feed jobs to the workers as they free up; yield each result (resumed ones too)."""
        jobs: list[Job] = []
        keys: set[str] = set()
        ready: deque[int] = deque()  # to run: retries first, then the next job read
        held: list[int] = []  # claimed by another writer on the same run (store.shared)
        tries: dict[int, int] = {}
        in_flight = 0
        exhausted = False
        while True:
            while ready or not exhausted:
                if not ready:  # read the next job (resumed ones are answered at once)
                    job = next(source, None)
                    if job is None:
                        exhausted = True
                        break
                    if job.key in keys:
                        raise ExecutorError(
                            f"job keys must be unique within one map; repeated: {job.key!r}")
                    keys.add(job.key)
                    jobs.append(job)
                    done = store.load(job.key) if store is not None else None
                    if done is not None:
                        yield len(jobs) - 1, done
                        continue
                    if store is not None and not store.take(job.key):
                        held.append(len(jobs) - 1)
                        continue
                    ready.append(len(jobs) - 1)
                if in_flight >= self._capacity(in_flight + 1):
                    break
                index = ready.popleft()
                tries[index] = tries.get(index, 0) + 1
                self._submit(index, _with_backend(jobs[index]))
                in_flight += 1
            if not in_flight and held and not ready:
                assert store is not None, "jobs are only held elsewhere with a store"
                yield from self._wait_for_others(held, jobs, store, ready)
                continue
            if not in_flight:
                return
            index, attempt = self._next_finished()
            in_flight -= 1
            job = jobs[index]
            if store is not None:
                store.log(job, attempt, tries[index], self.name)
            if attempt.crashed and tries[index] <= self.retries:
                ready.appendleft(index)  # retried before anything later: seed order holds
                continue
            if attempt.crashed:  # the same words whichever executor ran it (details: the log)
                attempt.error = crash_reason(attempt.error, tries[index])
            if store is not None:
                yield index, store.record(job, attempt, tries[index])
            else:
                yield index, JobResult(job.key, attempt.ok, attempt.value, attempt.error,
                                       tries[index], attempt.seconds)


    @staticmethod
    def _wait_for_others(held: list[int], jobs: list[Job], store: JobStore,
                         ready: deque[int]) -> Iterator[tuple[int, JobResult]]:
        """Yield the results other writers record; take over jobs whose claim lapsed."""
        import time

        while held and not ready:
            for index in list(held):
                done = store.load(jobs[index].key)
                if done is not None:
                    held.remove(index)
                    yield index, done
                elif store.take(jobs[index].key):
                    held.remove(index)
                    ready.append(index)
            if held and not ready:
                time.sleep(0.2)


def _with_backend(job: Job) -> Job:
    """``job`` carrying this process's physics backend (see :data:`._worker.BACKEND_KEY`)."""
    backend = os.environ.get("SIMJUDGE_BACKEND", "").strip()
    if not backend:
        return job
    from dataclasses import replace

    from ._worker import BACKEND_KEY

    return replace(job, kwargs={**job.kwargs, BACKEND_KEY: backend})


def crash_reason(detail: str, attempts: int) -> str:
    """The recorded reason of a job that crashed or timed out on every attempt."""
    what = "timed out" if detail.startswith("timed out") else \
        "crashed its worker (segfault, out-of-memory kill or killed process)"
    return f"the job {what} on all {attempts} attempts; each attempt is in its log"


def default_workers() -> int:
    """One worker per CPU core this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)
