"""Configs of ``simjudge audit``, ``simjudge audit rescore`` and ``simjudge serve``.

Example:
    >>> config = AuditConfig(policy=("oracle=oracle", "rnd=random"), tasks=("OpenDrawer-v0",),
    ...                      out="runs/audit")
    >>> config.seeds, config.judge, config.executor
    (10, ('privileged',), 'local')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from simjudge.executors import ExecutorOptions
from simjudge.tasks.spec.config import option

__all__ = ["AuditConfig", "AuditRescoreConfig", "ServeConfig"]


@dataclass(frozen=True, kw_only=True)
class AuditConfig(ExecutorOptions):
    """Audit policies on tasks: every policy on every task and seed from identical states.

    Writes ``episode_*.json`` per judge under ``episodes/``, per-episode results under
    ``results/``, ``audit.json`` (OPD tables ×100 with MC@k and bootstrap CIs, success rates
    with Wilson intervals, failure fingerprints, reachability curves, ε, frame rate and
    padding) and ``report.html``.

    ``simjudge audit rescore RUN --judge SPEC`` re-judges a finished audit's stored
    episodes instead (see :class:`AuditRescoreConfig`).

    Attributes:
        action: ``run`` (default) an audit, or ``rescore`` the audit in ``run``.
        run: For ``rescore``: the audit's run directory.
        policy: ``NAME=SPEC`` per policy, repeatable (``--policy oracle=oracle --policy
            rnd=random``); SPEC is any policy spec (``oracle-noisy:noise=0.3``,
            ``sb3:PATH.zip``, ``module:function``, ``remote:ws://HOST:PORT``).
        tasks: Built-in task ids, comma separated (``OpenDrawer-v0,PutCubeInBox-v0``).
        seeds: Seeds per task (0 .. seeds-1); every policy starts from the same snapshot.
        judge: Judge spec, repeatable; the first is the primary judge of the tables and
            curves, every judge writes its own episode files.
        epsilon: Stagnation threshold ε of STR; 0 (default): calibrated per judge from
            zero-action rollouts (√2·σ̂·z, floored at ``epsilon_floor``).
        epsilon_floor: Smallest ε used when calibrating (a noiseless judge has σ̂ = 0).
        horizon: Steps per episode (none: the task's own).
        randomize: Vary the world per seed (each task's ``randomization:``: placement,
            articulation start, robot posture, camera); ``--no-randomize``: the fixed
            start (seeds then differ only for stochastic policies).
        videos: Seeds (from 0) per policy and task recorded as videos.
        bootstrap: Bootstrap resamples for the confidence intervals of means.
        executor: ``serial``, ``local`` (process pool) or ``ray``.
        workers: Parallel workers (none: one per CPU core).
        ray_address: Ray cluster for ``--executor ray``.
        out: Run directory (required for ``run``).
        resume: Continue a run already in ``out`` (same config): nothing lost or repeated.
        report: Write ``report.html``.
        max_frame_mb: Largest frame read from a remote policy server, in MiB (a remote
            spec's own ``?max_frame_mb=`` wins).
    """

    OUT_IS_RUN: ClassVar[bool] = True  # --out must be new, empty or a simjudge run
    action: str = option("run", positional=True)
    run: str | None = option(None, positional=True)
    policy: tuple[str, ...] = option((), repeat=True)
    tasks: tuple[str, ...] = ()
    seeds: int = 10
    judge: tuple[str, ...] = option(("privileged",), repeat=True)
    epsilon: float = 0.0
    epsilon_floor: float = 1e-3
    horizon: int | None = None
    randomize: bool = True
    videos: int = 1
    bootstrap: int = 1000
    out: str | None = None
    resume: bool = False
    report: bool = True
    max_frame_mb: float = 64.0


@dataclass(frozen=True, kw_only=True)
class AuditRescoreConfig(ExecutorOptions):
    """Re-score an audit's episodes with other judges, without re-running the policies.

    Each stored episode is replayed from its snapshot with its recorded actions (physics is
    deterministic, checked against the recorded privileged Φ), the new judges observe it,
    their ``episode_*.json`` files are written beside the others, and ``audit.json`` and
    ``report.html`` are rebuilt with the new judges' tables.

    Attributes:
        run: The audit's run directory.
        judge: Judge spec, repeatable.
        executor: ``serial``, ``local`` (process pool) or ``ray``.
        workers: Parallel workers (none: one per CPU core).
        ray_address: Ray cluster for ``--executor ray``.
    """

    run: str = option(positional=True)
    judge: tuple[str, ...] = option(repeat=True)


@dataclass(frozen=True, kw_only=True)
class ServeConfig:
    """Serve a policy over RoboArena's/openpi's WebSocket protocol until interrupted.

    Attributes:
        policy: The policy spec to serve (``random``, ``sb3:PATH.zip``,
            ``module:function``; privileged oracles cannot be served).
        host: Interface to bind (``0.0.0.0`` to accept other machines: needs ``--api-key``
            or ``--insecure``).
        port: Port to listen on (1..65535).
        api_key: Require the header ``Authorization: Api-Key <api_key>``.
        max_frame_mb: Largest request frame read, in MiB.
        insecure: Serve a non-loopback ``--host`` without ``--api-key``.
        max_connections: Connections served at once; more are answered HTTP 503.
    """

    policy: str = option(positional=True)
    host: str = "127.0.0.1"
    port: int = 8000
    api_key: str | None = None
    max_frame_mb: float = 64.0
    insecure: bool = False
    max_connections: int = 32
