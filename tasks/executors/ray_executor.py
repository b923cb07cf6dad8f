"""The ``ray`` executor: jobs as Ray tasks, on a local Ray instance or an existing cluster.

Without an address it starts a private Ray instance for this process with ``workers`` CPUs,
no dashboard, and every Ray service on 127.0.0.1 (loopback only; it stops on
:meth:`RayExecutor.close`, and with the driver if the driver is killed). A cluster on this
machine's loopback (``ray start --head --node-ip-address 127.0.0.1``) is joined the same
way. With
``address="auto"`` or ``"HOST:PORT"`` it joins a running cluster (``ray start --head`` on one
machine, ``ray start --address HOST:PORT`` on the others); every node needs simjudge
installed, and the run directory on storage the driver can write (results are written by
the driver; jobs that write side files, such as executor run folders, need it shared).

Each job is one task with ``num_cpus=1`` and no Ray-side retries: a task whose worker dies
(segfault, OOM kill) or overruns ``job_timeout_s`` is retried by the common driver
(:class:`~simjudge.tasks.executors.base.Executor`), so the bounds and logs are the same as
with ``local``. At most ``workers`` tasks are in flight (default: the cluster's CPUs).
"""

from __future__ import annotations

import importlib
import os
import socket
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ._worker import ray_call
from .base import Attempt, Executor, ExecutorError, Job

__all__ = ["RayExecutor"]

_LOOPBACK_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
"""Ray reads it at import: "0" makes a local instance use 127.0.0.1 for every service."""


class RayExecutor(Executor):
    """Ray tasks (``pip install 'ray>=2'``).

    Args:
        workers: Tasks in flight (None: the local instance gets one per core; a cluster,
            its CPU count).
        address: None (a private local instance on 127.0.0.1), ``auto`` or ``HOST:PORT``.
        retries: Further attempts at a job whose worker died.
        job_timeout_s: Cancel (force-kill) an attempt after this long.
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
        self._ray: Any = None
        self._remote: Any = None
        self._owns_connection = False
        self._flight: dict[Any, tuple[int, float]] = {}
        self._cancelled: set[Any] = set()

    def __repr__(self) -> str:
        return f"RayExecutor(workers={self.workers}, address={self.address!r})"

    def start(self) -> RayExecutor:
        """Connect to (or start) Ray now; returns self."""
        self._connect()
        return self

    def _connect(self) -> Any:
        if self._ray is not None:
            return self._ray
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
        if self.address is not None and not self._fixed_workers:
            self.workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self._remote = ray.remote(num_cpus=1, max_retries=0)(ray_call)
        self._ray = ray
        return ray

    def _init(self, ray: Any) -> None:
        paths = os.pathsep.join(p for p in sys.path if p and os.path.isdir(p))
        common = {"log_to_driver": False, "configure_logging": False}
        if self.address is None:
            kwargs = {"num_cpus": self.workers, "include_dashboard": False,
                      "_node_ip_address": "127.0.0.1",
                      "runtime_env": {"env_vars": {"PYTHONPATH": paths}}, **common}
        else:
            kwargs = {"address": self.address, **common}
        where = "start a local Ray instance" if self.address is None else \
            f"connect to the Ray cluster at {self.address}"
        if self.address not in (None, "auto"):
            _check_reachable(str(self.address), self.init_timeout_s, where)
        # in the calling thread: the processes of a local instance die with the thread that
        # started them (Ray sets PR_SET_PDEATHSIG), so never from a helper thread
        try:
            ray.init(**kwargs)
        except Exception as exc:
            hint = "" if self.address in (None, "auto") else (
                "; a cluster with token authentication (Ray's default) addressed by HOST:PORT "
                "needs RAY_AUTH_MODE=token and its token (RAY_AUTH_TOKEN or ~/.ray/auth_token)")
            raise ExecutorError(
                f"could not {where} ({type(exc).__name__}: {exc}){hint}; check `ray status`, "
                "or use --executor local") from exc

    def close(self) -> None:
        """Stop the local Ray instance this executor started, or leave the cluster it joined."""
        if self._ray is not None and self._owns_connection:
            self._ray.shutdown()  # a local instance stops; from a cluster, this driver leaves
        self._ray, self._remote, self._owns_connection = None, None, False
        self._flight.clear()
        self._cancelled.clear()

    def _capacity(self, pending: int) -> int:
        self._connect()
        return self.workers

    def _submit(self, index: int, job: Job) -> None:
        self._connect()
        try:
            ref = self._remote.remote(job.fn, job.args, dict(job.kwargs))
        except Exception as exc:
            raise ExecutorError(
                f"job {job.key!r} cannot be sent to Ray ({type(exc).__name__}: {exc}); its "
                "function and arguments must serialise, or use --executor serial"
            ) from exc
        self._flight[ref] = (index, time.monotonic())

    def _next_finished(self) -> tuple[int, Attempt]:
        ray = self._connect()
        while True:
            wait_s = None if self.job_timeout_s is None else min(1.0, self.job_timeout_s)
            ready, _ = ray.wait(list(self._flight), num_returns=1, timeout=wait_s)
            if not ready:
                self._cancel_overdue()
                continue
            ref = ready[0]
            index, started = self._flight.pop(ref)
            return index, self._attempt(ref, started)

    def _cancel_overdue(self) -> None:
        now = time.monotonic()
        assert self.job_timeout_s is not None
        for ref, (_, started) in self._flight.items():
            if ref not in self._cancelled and now - started > self.job_timeout_s:
                self._cancelled.add(ref)
                self._ray.cancel(ref, force=True)

    def _attempt(self, ref: Any, started: float) -> Attempt:
        seconds = time.monotonic() - started
        try:
            done = self._ray.get(ref)
        except self._ray.exceptions.RayError as exc:
            if ref in self._cancelled:
                self._cancelled.discard(ref)
                why = f"timed out after {self.job_timeout_s} s (task cancelled)"
            else:
                why = f"Ray worker died: {type(exc).__name__}: {str(exc).splitlines()[0]}"
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
