"""One way to run many independent jobs: ``serial``, ``local`` (process pool) or ``ray``.

A job is a pure function of its inputs and seed (execute a candidate, a completion, an
audit episode, an arena match, a judge-bench rollout). Every executor returns results in
the order the jobs were given, and with a :class:`JobStore` writes each result atomically
to ``<run>/<results>/<key>.json`` as soon as it is known, so run directories are the same
byte for byte whatever the executor and the number of workers (only the per-job logs under
``<run>/job_logs/``, which carry timings, differ), and a killed run (worker or driver)
resumes with nothing lost or repeated. A job whose worker crashes (segfault, OOM kill,
time-out) is retried ``retries`` times, then recorded as failed with the reason (see
``on_failure``); the run goes on.

- ``serial``: in this process, one job after another.
- ``local``: a pool of worker processes (one per core by default). A worker is a fresh
  ``python`` that imports only the modules of the jobs it is sent (no torch unless a job
  needs it), so it starts in well under a second.
- ``ray``: long-lived Ray actors, one per worker (``pip install 'ray>=2'``); a local Ray
  instance on 127.0.0.1 by default, or an existing cluster with ``ray_address="auto"`` or
  ``"HOST:PORT"``.

``map`` also takes an iterator of jobs and reads it lazily (a job is made when a worker is
free, so the first jobs run while later ones are still being proposed), and
:meth:`Executor.prepare` starts and warms the workers for a job function (its modules
imported, its ``warm_up()`` called, once per worker) without waiting.

Job functions must be importable by reference (module-level functions or picklable
callable objects such as dataclasses with ``__call__``) for ``local`` and ``ray``.

Example:
    >>> import tempfile
    >>> from pathlib import Path
    >>> from simjudge.executors import Job, JobStore, make_executor
    >>> from simjudge.executors.probe import seeded_sum
    >>> jobs = [Job(f"job_{s:03d}", seeded_sum, kwargs={"n": 100, "seed": s}) for s in range(4)]
    >>> run = Path(tempfile.mkdtemp())
    >>> with make_executor("local", workers=2) as executor:
    ...     results = executor.map(jobs, JobStore(run, results="sums"), progress=False)
    >>> [r.key for r in results]  # the order of the jobs, whatever finished first
    ['job_000', 'job_001', 'job_002', 'job_003']
    >>> sorted(p.name for p in (run / "sums").iterdir())
    ['job_000.json', 'job_001.json', 'job_002.json', 'job_003.json']
    >>> again = make_executor("serial").map(jobs, JobStore(run, results="sums"), progress=False)
    >>> [r.value for r in again] == [r.value for r in results], again[0].resumed
    (True, True)

Commands take ``--executor serial|local|ray``, ``--workers N`` and ``--ray-address``
(:class:`ExecutorOptions` documents them; :func:`executor_from` builds the executor).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from simjudge.tasks.spec.rundir import VOLATILE_KEYS

from .base import (
    Attempt,
    Executor,
    ExecutorError,
    Job,
    JobResult,
    JobStore,
    default_workers,
    run_attempt,
    to_jsonable,
)

__all__ = [
    "EXECUTORS",
    "EXECUTOR_KEYS",
    "Attempt",
    "Executor",
    "ExecutorError",
    "ExecutorName",
    "ExecutorOptions",
    "Job",
    "JobResult",
    "JobStore",
    "default_workers",
    "executor_from",
    "make_executor",
    "resume_identity",
    "run_attempt",
    "to_jsonable",
]

ExecutorName = Literal["serial", "local", "ray"]
EXECUTORS: tuple[str, ...] = ("serial", "local", "ray")
EXECUTOR_KEYS: frozenset[str] = frozenset({"executor", "workers", "ray_address"})
"""Config keys that choose how jobs run, never what they compute (a run may resume under
another executor)."""


def resume_identity(config: Mapping[str, Any]) -> list[str]:
    """The keys of a run's config that a resume must match.

    All but how jobs run (and the keys :class:`~simjudge.tasks.spec.RunDir` never
    compares), so a run started with one executor may resume with another.
    """
    return [k for k in config if k not in EXECUTOR_KEYS | VOLATILE_KEYS]


def make_executor(
    name: str = "local",
    workers: int | None = None,
    *,
    ray_address: str | None = None,
    retries: int = 2,
    job_timeout_s: float | None = None,
) -> Executor:
    """An executor by name.

    Args:
        name: ``serial``, ``local`` or ``ray``.
        workers: Parallel workers (None: one per CPU core).
        ray_address: For ``ray``: ``auto`` (the cluster ``ray start`` made on this machine),
            ``HOST:PORT`` of a cluster's head, or None (start a local Ray instance on
            127.0.0.1, stopped on :meth:`Executor.close`).
        retries: Further attempts at a job whose worker died.
        job_timeout_s: Kill an attempt after this long (``local`` and ``ray``).

    Returns:
        The executor (a context manager: ``with make_executor(...) as ex: ...``).

    Raises:
        ExecutorError: An unknown name, or ``ray_address`` given to another executor.
    """
    if name not in EXECUTORS:
        raise ExecutorError(f"unknown executor {name!r}; use one of {list(EXECUTORS)}")
    if ray_address and name != "ray":
        raise ExecutorError(f"--ray-address {ray_address} needs --executor ray (got {name})")
    if name == "serial":
        from .serial import SerialExecutor

        return SerialExecutor(workers, retries=retries, job_timeout_s=job_timeout_s)
    if name == "local":
        from .local import LocalExecutor

        return LocalExecutor(workers, retries=retries, job_timeout_s=job_timeout_s)
    from .ray_executor import RayExecutor

    return RayExecutor(workers, address=ray_address, retries=retries,
                       job_timeout_s=job_timeout_s)


@dataclass(frozen=True, kw_only=True)
class ExecutorOptions:
    """How a command runs its independent jobs (mixed into command configs).

    Attributes:
        executor: ``serial`` (in this process), ``local`` (a process pool on this machine)
            or ``ray`` (Ray actors; see ``ray_address``).
        workers: Parallel workers (none: one per CPU core; with Ray, actors).
        ray_address: Ray cluster to use with ``--executor ray``: ``auto`` (the one ``ray
            start`` made here) or ``HOST:PORT`` of its head (none: a local Ray instance on
            127.0.0.1).
    """

    executor: ExecutorName = "local"
    workers: int | None = None
    ray_address: str | None = None


def executor_from(config: Any) -> Executor:
    """The executor a config asks for (fields ``executor``, ``workers``, ``ray_address``)."""
    return make_executor(getattr(config, "executor", "serial") or "serial",
                         getattr(config, "workers", None),
                         ray_address=getattr(config, "ray_address", None))
