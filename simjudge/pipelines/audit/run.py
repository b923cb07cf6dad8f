"""``simjudge audit``: policies × tasks × seeds from identical snapshots, judged and summarised.

Phases, each a list of independent jobs on the configured executor, each result written
atomically the moment it is known (so a killed audit resumes with ``--resume`` and
nothing is lost or run twice):

1. ``snapshots/<task>__s<seed>.json``: the initial state every policy starts from;
2. ``calibration/<task>__<judge>.json``: each judge's Φ on a static scene (zero actions)
   for ε = √2·σ̂·z (unless ``--epsilon`` is given); one ε per judge (the largest over
   tasks, floored), so STR is comparable across tasks;
3. ``results/<policy>__<task>__s<seed>.json``: one episode per policy, task and seed,
   with every judge's ``episode_*.json`` under ``episodes/<policy>/<task>/s<seed>/<judge>/``;
4. ``audit.json`` (:func:`~simjudge.pipelines.audit.summary.summarize_audit`) and
   ``report.html``.

A failed episode (a policy that raised, a remote server that went away) is recorded as a
failed job with its reason and left out of the tables; the report lists it.

Several ``--resume`` processes on one run share it: every job is claimed in the run's
``claims.sqlite`` before it runs (:mod:`simjudge.executors.claims`), so each snapshot,
calibration and episode is played once, and each process ends with the whole summary.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict
from pathlib import Path
from typing import Any

from simjudge.envs.backends import render_problem
from simjudge.executors import Job, JobResult, JobStore, executor_from
from simjudge.executors.base import ExecutorError
from simjudge.policies import PolicyError
from simjudge.policies.registry import check_policy_spec
from simjudge.policies.wire_limits import check_frame_mb, redact_secrets
from simjudge.tasks.spec import RunDir, builtin_ids, read_json, versions, write_json

from .config import AuditConfig, AuditRescoreConfig
from .jobs import calibrate_job, episode_job, judge_slug, rescore_job, snapshot_job
from .summary import summarize_audit

__all__ = ["AUDIT_FILE", "parse_policy_args", "rescore_audit", "run_audit", "summarize_run"]

AUDIT_FILE = "audit.json"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
_VOLATILE = ("executor", "workers", "ray_address", "resume", "out", "report", "provenance")


def parse_policy_args(items: tuple[str, ...] | list[str]) -> dict[str, str]:
    """``NAME=SPEC`` items as ``{name: spec}`` (a bare SPEC is named after its kind).

    Raises:
        PolicyError: No policy, an unsafe or repeated name.
    """
    if not items:
        raise PolicyError("give at least one --policy NAME=SPEC (e.g. --policy oracle=oracle)")
    out: dict[str, str] = {}
    for item in items:
        name, eq, spec = item.partition("=")
        if not eq or "://" in name or ":" in name:
            name, spec = re.sub(r"[^A-Za-z0-9_.\-]+", "-", item.split(":")[0]), item
        name, spec = name.strip(), spec.strip()
        if not _NAME.match(name):
            raise PolicyError(f"policy name {name!r} must use letters, digits, '_', '.', '-'")
        if name in out:
            raise PolicyError(f"policy name {name!r} is given twice; name each --policy NAME=SPEC")
        out[name] = spec
    return out


def _check_tasks(tasks: tuple[str, ...]) -> list[str]:
    known = set(builtin_ids())  # the single-stage library and the composed tasks
    flat = [t.strip() for item in tasks for t in item.split(",") if t.strip()]
    unknown = [t for t in flat if t not in known]
    if unknown or not flat:
        raise PolicyError(f"unknown task(s) {unknown or tasks}; built-in tasks are {sorted(known)}")
    return flat


def _ok(results: list[JobResult], what: str) -> list[Any]:
    failed = [r for r in results if not r.ok]
    if failed:
        raise ExecutorError(f"{len(failed)} {what} job(s) failed, first {failed[0].key}: {failed[0].reason}")
    return [r.value for r in results]


def _epsilons(config: AuditConfig, calibrations: list[dict[str, Any]], judges: list[str]) -> dict[str, float]:
    if config.epsilon > 0:
        return dict.fromkeys(judges, float(config.epsilon))
    out = {}
    for judge in judges:
        values = [c["epsilon"] for c in calibrations if c["judge"] == judge and c["epsilon"] is not None]
        out[judge] = max([config.epsilon_floor, *values])
    return out


def run_audit(config: AuditConfig, *, progress: bool = True) -> dict[str, Any]:
    """Run (or resume) an audit; return the contents of ``audit.json``."""
    if config.action != "run":
        raise PolicyError(f"audit action {config.action!r}: re-score with rescore_audit(), or use "
                          "`simjudge audit --policy ... --out RUN` / `simjudge audit rescore RUN`")
    policies = parse_policy_args(config.policy)
    for spec in policies.values():
        check_policy_spec(spec)
    tasks = _check_tasks(config.tasks)
    judges = list(dict.fromkeys(config.judge))
    if config.seeds < 1:
        raise PolicyError(f"--seeds must be >= 1, got {config.seeds}")
    if not config.out:
        raise PolicyError("give the run directory: --out RUN")
    check_frame_mb(config.max_frame_mb)
    run = RunDir(config.out)
    # API keys never reach config.json, audit.json or report.html: recorded as ***
    record = {"command": "audit", **asdict(config), "tasks": tasks,
              "policy": [redact_secrets(p) for p in config.policy],
              "policies": {n: redact_secrets(s) for n, s in policies.items()}}
    for key in ("action", "run"):
        record.pop(key, None)
    run.prepare(record, resume=config.resume, identity=[k for k in record if k not in _VOLATILE])
    root = str(run.root)
    seeds = range(config.seeds)
    with executor_from(config) as executor:
        snaps = _ok(executor.map(
            [Job(f"{t}__s{s:03d}", snapshot_job, kwargs={"task": t, "seed": s, "horizon": config.horizon,
                                                    "randomize": config.randomize})
             for t in tasks for s in seeds],
            JobStore(run.root, results="snapshots", shared=True), desc="snapshots", progress=progress), "snapshot")
        calibrations: list[dict[str, Any]] = []
        if config.epsilon <= 0:
            calibrations = _ok(executor.map(
                [Job(f"{t}__{judge_slug(j)}", calibrate_job,
                     kwargs={"run_root": root, "task": t, "seed": 0, "judge": j, "snapshot": f"{t}__s000"})
                 for t in tasks for j in judges],
                JobStore(run.root, results="calibration", shared=True), desc="calibrate ε", progress=progress), "calibration")
        epsilon = _epsilons(config, calibrations, judges)
        # a backend that cannot render here (SAPIEN without Vulkan): episodes run, videos skip
        video_skipped = render_problem() if config.videos > 0 else None
        videos = config.videos if video_skipped is None else 0
        jobs = [
            Job(f"{name}__{t}__s{s:03d}", episode_job, kwargs={
                "run_root": root, "name": name, "spec": spec, "task": t, "seed": s, "judges": judges,
                "epsilon": epsilon, "horizon": config.horizon, "video": s < videos,
                "max_frame_mb": config.max_frame_mb})
            for name, spec in policies.items() for t in tasks for s in seeds
        ]
        executor.map(jobs, JobStore(run.root, results="results", shared=True), desc="episodes",
                     progress=progress)
    meta = {"epsilon": epsilon, "calibration": calibrations, "video_skipped": video_skipped,
            "frame_rate_hz": snaps[0]["frame_rate_hz"], "horizons": {s["task"]: s["horizon"] for s in snaps}}
    write_json(run.path("run_meta.json"), meta, indent=1)
    return summarize_run(root, report=config.report)


def _load_results(root: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    done: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    for path in sorted((root / "results").glob("*.json")):
        value = read_json(path)
        (failed if value.get("job_failed") else done).append(value if not value.get("job_failed") else {
            "key": path.stem, "reason": value.get("job_failure_reason", "")})
    return done, failed


def _merge_rescores(root: Path, episodes: list[dict[str, Any]]) -> list[str]:
    extra: list[str] = []
    by_key = {f"{e['policy']}__{e['task']}__s{int(e['seed']):03d}": e for e in episodes}
    for path in sorted((root / "rescore").glob("*/*.json")) if (root / "rescore").exists() else []:
        value = read_json(path)
        if value.get("job_failed") or value.get("key") not in by_key:
            continue
        for judge, data in value["judges"].items():
            by_key[value["key"]]["judges"].setdefault(judge, {**data, "replay_exact": value["replay_exact"]})
            if judge not in extra:
                extra.append(judge)
    return extra


def _worlds(root: Path) -> dict[tuple[str, int], str]:
    """(task, seed) -> a digest of the initial state every policy started from.

    Two seeds with the same digest are one world: their episodes of a deterministic policy
    are replays of one rollout, not independent trials.
    """
    import hashlib
    import json

    found: dict[tuple[str, int], str] = {}
    for path in sorted((root / "snapshots").glob("*.json")):
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and "state" in data and "task" in data:
            digest = hashlib.sha256(json.dumps(data["state"], sort_keys=True).encode()).hexdigest()
            found[(str(data["task"]), int(data["seed"]))] = digest[:16]
    return found


def summarize_run(root: str | Path, *, report: bool = True, resamples: int | None = None) -> dict[str, Any]:
    """(Re)build ``audit.json`` (and ``report.html``) from a run's stored results."""
    run = RunDir(root)
    config = run.config or {}
    meta = read_json(run.path("run_meta.json"))
    episodes, failed = _load_results(run.root)
    judges = list(dict.fromkeys(config.get("judge", [])))
    judges += [j for j in _merge_rescores(run.root, episodes) if j not in judges]
    epsilon = {**meta["epsilon"], **meta.get("rescore_epsilon", {})}
    policies, tasks = list(config["policies"]), list(config["tasks"])
    summary = summarize_audit(episodes, judges, epsilon, policies, tasks, meta["horizons"],
                              resamples=int(resamples or config.get("bootstrap", 1000)),
                              worlds=_worlds(run.root))
    timing = _timing(episodes)
    audit = {
        "format": "simjudge.audit/1",
        "config": config,
        "policies": policies,
        "policy_info": {e["policy"]: e["policy_info"] for e in episodes},
        "tasks": tasks,
        "seeds": config.get("seeds"),
        "judges": judges,
        "epsilon": epsilon,
        "frame_rate_hz": meta["frame_rate_hz"],
        "padding_steps": 0,
        "padding": "none: episodes end when the task goal holds (terminated) or at the horizon",
        "episodes": len(episodes),
        "failed_jobs": failed,
        "videos": sorted(e["video"] for e in episodes if e.get("video")),
        "timing": timing,
        "versions": versions(),
        **summary,
    }
    write_json(run.path(AUDIT_FILE), audit, indent=1)
    if report:
        from simjudge.pipelines.report import write_audit_report

        write_audit_report(run.root, audit)
    return audit


def _timing(episodes: list[dict[str, Any]]) -> dict[str, float]:
    keys = ("policy_seconds", "physics_seconds", "judge_seconds")
    totals = {k: math.fsum(e["timing"].get(k, 0.0) for e in episodes) for k in keys}
    whole = math.fsum(totals.values()) or 1.0
    out = {**totals, **{k.replace("_seconds", "_share"): v / whole for k, v in totals.items()}}
    lat = [e["timing"]["latency_ms_mean"] for e in episodes]
    out["latency_ms_mean"] = math.fsum(lat) / len(lat) if lat else 0.0
    out["steps"] = float(sum(e["steps"] for e in episodes))
    out["reconnects"] = float(sum(e["timing"].get("reconnects", 0) for e in episodes))
    return out


def _rescore_epsilons(run: RunDir, meta: dict[str, Any], judges: list[str], executor: Any,
                      progress: bool) -> dict[str, float]:
    """ε of each judge: the audit's own, the fixed ``--epsilon``, or calibrated like the audit."""
    config = run.config or {}
    fixed, floor = config.get("epsilon") or None, float(config.get("epsilon_floor", 1e-3))
    known = {**meta["epsilon"], **meta.get("rescore_epsilon", {})}
    new = [j for j in judges if j not in known]
    calibrations: list[dict[str, Any]] = []
    if new and fixed is None:
        calibrations = _ok(executor.map(
            [Job(f"{t}__{judge_slug(j)}", calibrate_job,
                 kwargs={"run_root": str(run.root), "task": t, "seed": 0, "judge": j, "snapshot": f"{t}__s000"})
             for t in config["tasks"] for j in new],
            JobStore(run.root, results="calibration"), desc="calibrate ε", progress=progress), "calibration")
    out = {}
    for judge in judges:
        if judge in known:
            out[judge] = float(known[judge])
        elif fixed is not None:
            out[judge] = float(fixed)
        else:
            values = [c["epsilon"] for c in calibrations if c["judge"] == judge and c["epsilon"] is not None]
            out[judge] = max([floor, *values])
    return out


def rescore_audit(config: AuditRescoreConfig, *, progress: bool = True) -> dict[str, Any]:
    """Re-judge every stored episode of a run with ``config.judge`` (no policy re-run)."""
    run = RunDir(config.run)
    if run.config is None or not run.exists("run_meta.json"):
        raise PolicyError(f"{config.run} holds no finished audit; run `simjudge audit ... --out {config.run}` first")
    judges = list(dict.fromkeys(config.judge))
    if not judges:
        raise PolicyError("give at least one --judge SPEC to re-score with")
    meta = read_json(run.path("run_meta.json"))
    episodes, _ = _load_results(run.root)
    with executor_from(config) as executor:
        epsilon = _rescore_epsilons(run, meta, judges, executor, progress)
        for judge in judges:
            executor.map(
                [Job(f"{e['policy']}__{e['task']}__s{int(e['seed']):03d}", rescore_job,
                     kwargs={"run_root": str(run.root), "result": e, "judges": [judge], "epsilon": epsilon})
                 for e in episodes],
                JobStore(run.root, results=f"rescore/{judge_slug(judge)}"), desc=f"rescore {judge}",
                progress=progress)
    meta["rescore_epsilon"] = {**meta.get("rescore_epsilon", {}), **epsilon}
    write_json(run.path("run_meta.json"), meta, indent=1)
    return summarize_run(run.root, report=bool(run.config.get("report", True)))
