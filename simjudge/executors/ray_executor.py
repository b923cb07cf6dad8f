"""The ``ray`` executor: jobs on long-lived Ray actors, on a local Ray instance or a cluster.

Without an address it starts a private Ray instance for this process with ``workers`` CPUs,
no dashboard, and every Ray service on 127.0.0.1 (loopback only; it stops on
:meth:`RayExecutor.close`, and with the driver if the driver is killed). A cluster on this
machine's loopback (``ray start --head --node-ip-address 127.0.0.1``) is joined the same
way. With
``address="auto"`` or ``"HOST:PORT"`` it joins a running cluster (``ray start --head`` on one
machine, ``ray start --address HOST:PORT`` on the others); every node needs simjudge
installed, and the run directory on storage the driver can write (results are written by
the driver; jobs that write side files, such as executor run folders, need it shared).

Jobs run on ``workers`` long-lived actors (``num_cpus=1`` each, one job at a time): an
actor imports a job's modules once and keeps them (and whatever the job function caches)
for every later job, and :meth:`RayExecutor.prepare` warms them all before the first job.
Ray retries nothing itself: an actor that dies (segfault, OOM kill) or overruns
``job_timeout_s`` (killed) is replaced and the job retried by the common driver
(:class:`~simjudge.executors.base.Executor`), so the bounds and logs are the same as
with ``local``. Default ``workers``: one per core here, a cluster's CPU count there.
"""

from __future__ import annotations

import importlib
import os
import pickle
import socket
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._worker import RayWorker
from .base import Attempt, Executor, ExecutorError, Job

__all__ = ["RayExecutor"]

_LOOPBACK_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
"""Ray reads it at import: "0" makes a local instance use 127.0.0.1 for every service."""


@dataclass
class _Slot:
    """One actor and the job it runs (``busy``: the job's index)."""

    actor: Any = None
    busy: int | None = None
    started: float = 0.0
    timed_out: bool = False


class RayExecutor(Executor):
    """Ray actors, one per worker (``pip install 'ray>=2'``).

    Args:
        workers: Actors, i.e. jobs in flight (None: the local instance gets one per core; a
            cluster, its CPU count, which also caps a given number).
        address: None (a private local instance on 127.0.0.1), ``auto`` or ``HOST:PORT``.
        retries: Further attempts at a job whose worker died.
        job_timeout_s: Kill an attempt's actor after this long (a new one takes its place).
        init_timeout_s: How long to wait for a cluster's address to answer (``HOST:PORT``).
    """

    name = "ray"

    def __init__(self, workers: int | None = None, *, address: str | None = None,
                 retries: int = 2, job_timeout_s: float | None = None,
                 init_timeout_s: float = 120.0) -> None:
        super().__init__(workers, retries=retries, job_timeout_s=job_timeout_s)
        self._fixed_workers = workers is not None
        self.address = address
        self.init_timeout_s = init_timeout_s
        self.init_seconds = 0.0
        """Time :meth:`start` spent starting or joining Ray (not the actors)."""
        self._ray: Any = None
        self._actor_class: Any = None
        self._owns_connection = False
        self._slots: list[_Slot] = []
        self._flight: dict[Any, _Slot] = {}

    def __repr__(self) -> str:
        return f"RayExecutor(workers={self.workers}, address={self.address!r})"

    def start(self) -> RayExecutor:
        """Connect to (or start) Ray and create the actors (they boot in the background)."""
        self._connect()
        for slot in self._slots:
            if slot.actor is None:
                slot.actor = self._actor_class.remote()
        return self

    def prepare(self, fn: Callable[..., Any], modules: Sequence[str] = ()) -> None:
        """Create the actors and have each load ``fn`` and ``modules`` (no waiting)."""
        try:
            payload = pickle.dumps((fn, tuple(modules)), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:
            raise ExecutorError(
                f"the jobs' function cannot be sent to Ray ({type(exc).__name__}: {exc}); it "
                "must pickle (a module-level function or a callable dataclass), or use "
                "--executor serial") from exc
        self.start()
        for slot in self._slots:
            slot.actor.warm.remote(payload)  # runs before any job sent to this actor

    def _connect(self) -> Any:
        if self._ray is not None:
            return self._ray
        tick = time.perf_counter()
        loopback = self.address is None or _is_loopback(self.address)
        if loopback:
            os.environ.setdefault(_LOOPBACK_ENV, "0")  # read by Ray at import (workers too)
        try:
            ray: Any = importlib.import_module("ray")  # untyped: used through Any
        except ImportError as exc:
            raise ExecutorError(
                "--executor ray needs Ray: pip install 'ray>=2' (or pip install "
                "'simjudge[ray]'); or use --executor local"
            ) from exc
        if loopback:
            _loopback_only()
        if not ray.is_initialized():
            self._init(ray)
            self._owns_connection = True
        if self.address is not None:  # an actor per CPU at most: more would never start
            cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
            self.workers = min(self.workers, cpus) if self._fixed_workers else cpus
        self._actor_class = ray.remote(num_cpus=1, max_restarts=0,
                                       max_task_retries=0)(RayWorker)
        self._slots = [_Slot() for _ in range(self.workers)]
        self._ray = ray
        self.init_seconds = time.perf_counter() - tick
        return ray

    def _init(self, ray: Any) -> None:
        common = {"log_to_driver": False, "configure_logging": False}
        if self.address is None:
            kwargs = {"num_cpus": self.workers, "include_dashboard": False,
                      "_node_ip_address": "127.0.0.1", **common}
        else:
            kwargs = {"address": self.address, **common}
        where = "start a local Ray instance" if self.address is None else \
            f"connect to the Ray cluster at {self.address}"
        if self.address not in (None, "auto"):
            _check_reachable(str(self.address), self.init_timeout_s, where)
        # in the calling thread: the processes of a local instance die with the thread that
        # started them (Ray sets PR_SET_PDEATHSIG), so never from a helper thread
        saved = os.environ.get("PYTHONPATH")
        if self.address is None:  # the instance's workers inherit it (no runtime_env: the
            # workers Ray starts ahead of time serve the actors at once)
            os.environ["PYTHONPATH"] = os.pathsep.join(
                p for p in sys.path if p and os.path.isdir(p))
        try:
            ray.init(**kwargs)
        except Exception as exc:
            hint = "" if self.address in (None, "auto") else (
                "; a cluster with token authentication (Ray's default) addressed by HOST:PORT "
                "needs RAY_AUTH_MODE=token and its token (RAY_AUTH_TOKEN or ~/.ray/auth_token)")
            raise ExecutorError(
                f"could not {where} ({type(exc).__name__}: {exc}){hint}; check `ray status`, "
                "or use --executor local") from exc
        finally:
            if saved is None:
                os.environ.pop("PYTHONPATH", None)
            else:
                os.environ["PYTHONPATH"] = saved

    def close(self) -> None:
        """Stop the actors and the local Ray instance this executor started (or leave)."""
        if self._ray is not None:
            for slot in self._slots:
                if slot.actor is not None:
                    self._kill(slot.actor)
            if self._owns_connection:
                self._ray.shutdown()  # a local instance stops; from a cluster, this driver leaves
        self._ray, self._actor_class, self._owns_connection = None, None, False
        self._slots, self._flight = [], {}

    def _kill(self, actor: Any) -> None:
        try:
            self._ray.kill(actor, no_restart=True)
        except Exception:  # noqa: S110 - already dead or Ray gone: nothing to stop
            pass

    def _capacity(self, pending: int) -> int:
        self._connect()
        return self.workers

    def _submit(self, index: int, job: Job) -> None:
        self.start()  # every slot has an actor (a dead one was replaced)
        slot = next(s for s in self._slots if s.busy is None)
        try:
            ref = slot.actor.run.remote(job.fn, job.args, dict(job.kwargs))
        except Exception as exc:
            raise ExecutorError(
                f"job {job.key!r} cannot be sent to Ray ({type(exc).__name__}: {exc}); its "
                "function and arguments must serialise, or use --executor serial"
            ) from exc
        slot.busy, slot.started, slot.timed_out = index, time.monotonic(), False
        self._flight[ref] = slot

    def _next_finished(self) -> tuple[int, Attempt]:
        ray = self._connect()
        while True:
            wait_s = None if self.job_timeout_s is None else min(1.0, self.job_timeout_s)
            ready, _ = ray.wait(list(self._flight), num_returns=1, timeout=wait_s)
            if not ready:
                self._kill_overdue()
                continue
            slot = self._flight.pop(ready[0])
            index, slot.busy = slot.busy, None
            assert index is not None
            return index, self._attempt(ready[0], slot)

    def _kill_overdue(self) -> None:
        now = time.monotonic()
        assert self.job_timeout_s is not None
        for slot in self._flight.values():
            if not slot.timed_out and now - slot.started > self.job_timeout_s:
                slot.timed_out = True
                self._kill(slot.actor)

    def _attempt(self, ref: Any, slot: _Slot) -> Attempt:
        seconds = time.monotonic() - slot.started
        try:
            done = self._ray.get(ref)
        except self._ray.exceptions.RayError as exc:
            if slot.timed_out:
                why = f"timed out after {self.job_timeout_s} s (worker killed)"
            else:
                why = f"Ray worker died: {type(exc).__name__}: {str(exc).splitlines()[0]}"
            self._kill(slot.actor)
            slot.actor = None  # the next job gets a new actor
            return Attempt(False, None, why, True, "", seconds, "ray")
        return Attempt(done["ok"], done["value"], done["error"], False, done["log"],
                       done["seconds"], done["worker"])


def _check_reachable(address: str, timeout_s: float, where: str) -> None:
    """Fail fast, with the fix, when nothing listens at ``HOST:PORT``."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=min(timeout_s, 30.0)):
            return
    except (OSError, ValueError) as exc:
        raise ExecutorError(
            f"could not {where}: nothing answers at {address} ({exc}); start the cluster "
            "(`ray start --head` on its head node), check the address (HOST:PORT of the "
            "head's GCS port, 6379 by default), or use --executor local") from exc


def _is_loopback(address: str) -> bool:
    """Whether a Ray address (``HOST:PORT`` or ``auto``) names this machine's loopback.

    ``auto`` is resolved as Ray does: ``$RAY_ADDRESS``, else the address ``ray start``
    recorded in ``<tmp>/ray/ray_current_cluster``.
    """
    if address == "auto":
        address = os.environ.get("RAY_ADDRESS", "")
        recorded = Path(tempfile.gettempdir()) / "ray" / "ray_current_cluster"
        if not address and recorded.exists():
            address = recorded.read_text().strip()
    host = address.removeprefix("ray://").rpartition(":")[0] or address
    return host in ("localhost", "::1") or host.startswith("127.")


def _loopback_only() -> None:
    """Make this process's Ray use 127.0.0.1 even if Ray was imported before the variable.

    Ray reads ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER`` once, at import, into
    ``ray._private.ray_constants.ENABLE_RAY_CLUSTER``; when it is off, the node address is
    the loopback one, and every Ray service listens there. (Processes Ray starts inherit
    the environment variable.)
    """
    if os.environ.get(_LOOPBACK_ENV) != "0":
        return  # the user asked for a real cluster node
    try:
        from ray._private import ray_constants
    except ImportError:  # pragma: no cover - a Ray without the constant: the variable rules
        return
    ray_constants.ENABLE_RAY_CLUSTER = False
