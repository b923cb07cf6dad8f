"""An arena run: plan matches, play them on an executor, store verdicts, rank, validate.

Files of an arena run directory:

* ``config.json`` — the run's config and provenance (:class:`~simjudge.tasks.spec.RunDir`);
* ``arena.sqlite`` — policies, matches (blind view), the sealed handle key, verdicts
  (:mod:`.store`);
* ``match_results/<match_id>.json`` — each job's raw result (the executor's store; the
  database is filled from these, so a kill between the two loses nothing);
* ``rankings.json`` — every model's ranking with intervals (:func:`rank_arena`);
* ``oracle/`` and ``validation.json`` — the exhaustive oracle and the agreement of every
  model with it (:func:`validate_arena`);
* ``report.html`` — the arena report;
* with ``reason="llm"``: ``llm_cache/`` (the replay cache of the critiques) and
  ``llm_log.jsonl`` (every exchange), see :mod:`.critique`.

Example:
    >>> import tempfile
    >>> config = ArenaRunConfig(policy=("good=oracle", "idle=zero"), tasks=("OpenDrawer-v0",),
    ...                         matches=2, out=tempfile.mkdtemp(), report=False)
    >>> summary = run_arena(config, progress=False)
    >>> summary["counts"]
    {'pending': 0, 'done': 2, 'failed': 0}
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from simjudge.judges.metrics.rankings import Comparison, Ranking, RankingError
from simjudge.policies.wire_limits import redact_secrets
from simjudge.tasks.spec.rundir import RunDir, RunDirCorruptError

from .config import ArenaRunConfig
from .critique import REASON_MODES, ReasonWriter, make_reason_writer
from .match import ArenaEvaluatorError, check_evaluator, check_preference, play_match
from .rank import compute_rankings, rankings_payload
from .sampling import sample_match
from .store import DB_FILE, ArenaStore, MatchResult

__all__ = ["BATCH", "IDENTITY", "load_comparisons", "plan_matches", "play_arena", "rank_arena",
           "run_arena"]

IDENTITY = ("policies", "tasks", "seed", "evaluator", "margin", "speed_margin", "horizon",
            "prefer", "randomize", "reason", "reason_llm")
"""Config keys a resumed arena run must share (``matches`` may grow)."""
BATCH = 8
"""Matches handed to the executor at once; verdicts reach the database after each batch."""


def plan_matches(store: ArenaStore, total: int, tasks: Sequence[str], seed: int) -> int:
    """Plan matches until the database holds ``total``; returns how many were added."""
    planned = store.planned()
    counts = store.eval_counts()
    added = 0
    for idx in range(len(planned), total):
        match = sample_match(idx, counts, tasks, run_seed=seed)
        if store.plan(match):
            added += 1
        counts[match.policy_a] += 1
        counts[match.policy_b] += 1
    return added


def _result(match_id: str, value: Mapping[str, Any], ok: bool, reason: str,
            evaluator: str) -> MatchResult:
    if not ok:
        last = reason.strip().splitlines()[-1] if reason.strip() else "the match failed"
        return MatchResult(match_id, evaluator, error=last)
    return MatchResult(match_id, str(value["evaluator"]), value["progress_a"],
                       value["progress_b"], str(value["preference"]), str(value["reason"]),
                       {**dict(value["details"]), "rule": value["rule"]})


def run_arena(config: ArenaRunConfig, *, executor: Any = None,
              progress: bool = True) -> dict[str, Any]:
    """Plan and play an arena's matches from its config (resumable); return the counts.

    The one entry point of ``simjudge arena run`` (the CLI builds ``config`` from its flags):
    policies (``NAME=SPEC``) and tasks (comma separated, built-in) are parsed and checked
    here, before anything runs; the config is recorded in ``config.json``.

    Args:
        config: The run's :class:`~.config.ArenaRunConfig`.
        executor: An :class:`~simjudge.executors.Executor` to use instead of the one the
            config names (a caller that runs several phases on one executor).
        progress: Show a progress bar.

    Returns:
        ``{"counts": {pending, done, failed}, "db": path, "played": n}`` (see :func:`play_arena`).

    Raises:
        ArenaEvaluatorError: Fewer than two policies, or a bad evaluator/tie setting.
        PolicyError: An unknown task or a bad policy name.
    """
    from simjudge.executors import executor_from
    from simjudge.pipelines.audit.run import parse_policy_args
    from simjudge.tasks.spec.config import config_to_dict

    policies = parse_policy_args(config.policy)
    if len(policies) < 2:
        raise ArenaEvaluatorError("the arena needs at least two policies: --policy NAME=SPEC "
                                  "twice or more")
    tasks = _check_tasks(config.tasks)
    settings: dict[str, Any] = {"matches": config.matches, "seed": config.seed, "evaluator": config.evaluator,
                "margin": config.margin, "speed_margin": config.speed_margin,
                "horizon": config.horizon, "episodes": config.episodes, "resume": config.resume,
                "config": {"command": "arena run", **config_to_dict(config)}, "progress": progress,
                "reason": config.reason, "reason_llm": config.reason_llm,
                "llm_cache": config.llm_cache, "llm_mode": config.llm_mode,
                "prefer": config.prefer, "epsilon": config.epsilon,
                "randomize": config.randomize}
    if executor is not None:
        return play_arena(config.out, policies, tasks, executor=executor, **settings)
    with executor_from(config) as own:
        return play_arena(config.out, policies, tasks, executor=own, **settings)


def _check_tasks(items: tuple[str, ...]) -> list[str]:
    from simjudge.policies import PolicyError
    from simjudge.tasks.spec import library_ids

    known = set(library_ids())
    flat = [t.strip() for item in items for t in item.split(",") if t.strip()]
    unknown = [t for t in flat if t not in known]
    if unknown or not flat:
        raise PolicyError(f"unknown task(s) {unknown or list(items)}; built-in tasks are "
                          f"{sorted(known)}")
    return flat


def play_arena(out: str | Path, policies: Mapping[str, str], tasks: Sequence[str], *,
               matches: int = 100, seed: int = 0, evaluator: str = "oracle",
              margin: float = 10.0, speed_margin: float = 0.2, horizon: int | None = None,
              episodes: bool = False, executor: Any = None, resume: bool = False,
              config: Mapping[str, Any] | None = None, progress: bool = True,
              reason: str = "template", reason_llm: str | None = None,
              llm_cache: str | Path | None = None, llm_mode: str = "auto",
              prefer: str | None = None, epsilon: float = 0.01,
              randomize: bool = True) -> dict[str, Any]:
    """The arena's engine: plan and play matches (resumable); return the match counts.

    :func:`run_arena` calls it with a parsed config; call it directly only to play already
    parsed ``policies`` and ``tasks`` (the tests and benches that build their own zoo).

    Args:
        out: Run directory.
        policies: ``name -> spec``.
        tasks: Task ids.
        matches: Matches the run should hold in total.
        seed: Seed of the pair sampling.
        evaluator: ``oracle``, ``judge:SPEC`` or ``panel:SPEC+SPEC``.
        margin: Tie rule: progress points that count.
        speed_margin: Tie rule: relative step saving that counts.
        horizon: Episode length (default: each task's).
        episodes: Write each side's episode record.
        executor: A :class:`~simjudge.executors.Executor` (default: serial).
        resume: Continue a run in ``out``.
        config: The command's full config, recorded in ``config.json``.
        progress: Show a progress bar.
        reason: ``template`` (the evaluator's sentence) or ``llm`` (an LLM critique of the
            judge signals; the preference stays the evaluator's), see :mod:`.critique`.
        reason_llm: LLM client spec for ``llm`` reasons (``llamacpp:smollm2-135m``,
            ``openai:MODEL``; default ``$SIMJUDGE_LLM`` or the embedded default).
        llm_cache: Replay cache of the critiques (default ``<out>/llm_cache``).
        llm_mode: ``auto``, ``record`` or ``replay`` (recorded critiques only).
        prefer: Preference judge spec deciding each match from the Φ traces instead of the
            tie rule (``preference``); checked before any match is played.
        epsilon: Stagnation threshold ε of the OPD metrics reported per side (recorded).
        randomize: Vary the world per seed (the tasks' ``randomization:``); False: the
            fixed start (``--no-randomize``).

    Returns:
        ``{"counts": {pending, done, failed}, "db": path, "played": n}``: ``played`` is what
        this call played; matches claimed by another writer on the same run (another
        ``arena run --resume`` process) are left to it.
    """
    from tqdm import tqdm

    from simjudge.executors import Job, JobStore, make_executor

    check_evaluator(evaluator)
    check_preference(prefer)
    if not (isinstance(epsilon, int | float) and 0.0 <= epsilon < 1.0):
        raise ArenaEvaluatorError(f"epsilon must be in [0, 1) (the STR threshold), got {epsilon!r}")
    if reason not in REASON_MODES:
        raise ArenaEvaluatorError(f"reason {reason!r} is not one of {list(REASON_MODES)}")
    run = RunDir(out)
    # API keys never reach config.json or the database: recorded as ***; matches use `policies`
    recorded = {name: redact_secrets(spec) for name, spec in sorted(policies.items())}
    config = {**config, "policy": [redact_secrets(p) for p in config["policy"]]} if (
        config and isinstance(config.get("policy"), list | tuple)) else config
    identity = {"policies": recorded, "tasks": list(tasks), "seed": seed,
                "evaluator": evaluator, "margin": margin, "speed_margin": speed_margin,
                "horizon": horizon, "prefer": prefer, "epsilon": epsilon, "randomize": randomize}
    writer = _reason_writer(reason, reason_llm, out, llm_cache, llm_mode, seed)
    identity.update(reason=reason, reason_llm=writer.spec if writer is not None else None)
    run.prepare({**(config or {}), **identity, "matches": matches}, resume=resume,
                identity=_identity_keys(run, reason, randomize))
    with ArenaStore(run.path(DB_FILE)) as store:
        store.register_policies(recorded)
        plan_matches(store, matches, tasks, seed)
        job_store = JobStore(run.root, results="match_results")
        own = executor is None
        executor = executor or make_executor("serial")
        kwargs = {"evaluator": evaluator, "margin": margin, "speed_margin": speed_margin,
                  "horizon": horizon, "prefer": prefer, "epsilon": epsilon,
                  "randomize": randomize}
        counts = store.counts()
        owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        tried: set[str] = set()
        played = 0
        try:
            with tqdm(total=counts["pending"] + counts["done"] + counts["failed"],
                      initial=counts["done"] + counts["failed"], desc="arena matches",
                      unit="match", disable=not progress) as bar:
                while True:
                    # claim the next pending matches through the database: several writers
                    # on one run (arena run --resume in several processes) share the work,
                    # and each match is played once
                    free = [m for m in store.planned("pending") if m.match_id not in tried]
                    held = set(store.claim([m.match_id for m in free][:BATCH], owner))
                    batch = [m for m in free if m.match_id in held]
                    if not batch:
                        break
                    tried.update(held)
                    jobs = [Job(m.match_id, play_match,
                                args=(m.task, m.seed, policies[m.policy_a], policies[m.policy_b]),
                                kwargs={**kwargs, "handle_a": m.handle_a, "handle_b": m.handle_b,
                                        "episodes_dir": str(run.path("episodes", m.match_id))
                                        if episodes else None})
                            for m in batch]
                    task_of = {m.match_id: m.task for m in batch}
                    for r in executor.map(jobs, job_store, progress=False):
                        value = r.value or {}
                        if writer is not None and r.ok:  # the text only; the verdict stays
                            value = writer.apply(value, task=task_of[r.key])
                        store.record(_result(r.key, value, r.ok, r.reason, evaluator))
                        played += 1
                        bar.update(1)
        finally:
            store.release(owner)
            if own:
                executor.close()
            if writer is not None:
                writer.close()
        return {"counts": store.counts(), "db": str(store.path), "played": played}


def _identity_keys(run: RunDir, reason: str, randomize: bool = True) -> tuple[str, ...]:
    """:data:`IDENTITY`, less the keys a run recorded before them cannot hold.

    A run recorded before reasons were configurable resumes as template, one recorded
    before worlds were randomized resumes randomized.
    """
    try:
        previous = run.config
    except RunDirCorruptError:  # prepare sets the corrupt file aside and records anew
        previous = None
    keys: tuple[str, ...] = IDENTITY
    if randomize and previous is not None and "randomize" not in previous:
        keys = tuple(k for k in keys if k != "randomize")
    if reason == "template" and previous is not None and "reason" not in previous:
        return keys[:-2]
    return keys


def _reason_writer(reason: str, spec: str | None, out: str | Path,
                   cache: str | Path | None, mode: str, seed: int) -> ReasonWriter | None:
    """The LLM reason writer of an arena run (None for templated reasons)."""
    if reason != "llm":
        return None
    return make_reason_writer(spec, out, cache_dir=cache, mode=mode, seed=seed)


def load_comparisons(out: str | Path) -> tuple[list[Comparison], list[str]]:
    """The played comparisons of an arena run and its policy names.

    Raises:
        RankingError: No arena database in ``out``.
    """
    path = Path(out) / DB_FILE
    if not path.exists():
        raise RankingError(f"no arena database at {path}; run `simjudge arena run --out {out}` "
                           "first")
    with ArenaStore(path) as store:
        return store.comparisons(), sorted(store.policies())


def rank_arena(out: str | Path, *, models: Sequence[str] | None = None, n_boot: int = 200,
               seed: int = 0) -> dict[str, Ranking]:
    """Rank an arena run's policies by every model; write ``rankings.json``."""
    from .rank import MODELS

    comparisons, policies = load_comparisons(out)
    rankings = compute_rankings(comparisons, policies, models=tuple(models or MODELS),
                                n_boot=n_boot, seed=seed)
    RunDir(out).write_json("rankings.json", {"n_comparisons": len(comparisons),
                                             "n_boot": n_boot, "seed": seed,
                                             "models": rankings_payload(rankings)})
    return rankings
