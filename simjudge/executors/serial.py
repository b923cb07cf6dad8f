"""The ``serial`` executor: every job in this process, one after another (the old behaviour).

Output is captured per job as with the other executors, and a job that raises becomes a
failed result; a job that crashes the process (segfault) takes the run with it, so use
``local`` when jobs may crash.
"""

from __future__ import annotations

from collections import deque

from .base import Attempt, Executor, Job, run_attempt

__all__ = ["SerialExecutor"]


class SerialExecutor(Executor):
    """Runs jobs in the calling process, in order (``workers`` is always 1)."""

    name = "serial"

    def __init__(self, workers: int | None = None, *, retries: int = 2,
                 job_timeout_s: float | None = None) -> None:
        super().__init__(1, retries=retries, job_timeout_s=job_timeout_s)
        self._queue: deque[tuple[int, Job]] = deque()

    def _submit(self, index: int, job: Job) -> None:
        self._queue.append((index, job))

    def _next_finished(self) -> tuple[int, Attempt]:
        index, job = self._queue.popleft()
        return index, run_attempt(job, "serial")
