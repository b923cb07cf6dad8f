"""``simjudge acquire`` as a pipeline: the command's config in, the loop's result out.

:func:`run_acquire` takes an :class:`~simjudge.pipelines.configs.AcquireConfig` (the CLI
builds it from its flags, a script builds it by hand), checks it before anything runs,
assembles the parts it names (proposer, executor of candidates, verifier, skill pool,
executor of jobs) and runs :func:`~simjudge.pipelines.acquire.acquire` on one task or
:func:`~simjudge.pipelines.acquire_stream.acquire_stream` on many (``--tasks-from``,
``--propose-tasks``). The config is recorded in the run's ``config.json``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simjudge.tasks.spec.config import config_to_dict

from .configs import AcquireConfig

__all__ = ["AcquireDone", "check_acquire", "run_acquire"]


@dataclass(frozen=True)
class AcquireDone:
    """What :func:`run_acquire` did.

    Attributes:
        task: The task name (one task) or ``""`` (many).
        result: The loop's result for one task (None for many).
        rows: One row per task for many tasks (None for one).
        card: The goal card of the one task (None for many).
    """

    task: str
    result: Any = None
    rows: list[dict[str, Any]] | None = None
    card: dict[str, Any] | None = None


def check_acquire(config: AcquireConfig) -> None:
    """Refuse a config whose task selection is ambiguous or incomplete (before any work).

    Raises:
        ValueError: Not exactly one of task, tasks-from and propose-tasks, or no object.
    """
    if sum([bool(config.task), bool(config.tasks_from), config.propose_tasks > 0]) != 1:
        raise ValueError("give exactly one of --task NAME, --tasks-from FILE or --propose-tasks "
                         "K (with --object ASSET)")
    if config.propose_tasks > 0 and not config.object:
        raise ValueError("--propose-tasks K needs --object ASSET (e.g. --object Microwave-0)")


def run_acquire(config: AcquireConfig, *,
                show: Callable[[str], None] = lambda _text: None) -> AcquireDone:
    """Run the acquisition loop the config describes (resumable with ``resume``).

    Args:
        config: The command's config.
        show: Called with the goal card's text before the loop starts (the CLI prints it).
    """
    check_acquire(config)
    if config.task is None:
        return AcquireDone("", rows=_many(config))
    from simjudge.executors import executor_from

    from .acquire import acquire
    from .components import make_client_for, make_execute_fn, make_proposer, open_pool
    from .goal_card import card_text, goal_card, load_written_goal
    from .proposer import TaskRequest
    from .verifiers import make_verifier

    out = Path(config.out)
    request = TaskRequest.resolve(config.task, config.description or "", config.object)
    written = load_written_goal(config.goal, request.name) if config.goal else None
    card = goal_card(request.goal_derivation, written, config.proposer)
    show(card_text(card))
    goal = written if written is not None else request.goal
    proposer = make_proposer(config.proposer, out, config.model, config.llm_cache,
                             config.temperature, config.max_tokens)
    judge_client = None
    if config.verifier == "llm":
        judge_client = make_client_for(config.judge_proposer or config.proposer
                                       if config.proposer != "template" else "local", out,
                                       config.model, config.llm_cache)
    score = make_verifier(config.verifier, config.prm, config.strategy, judge_client)
    pool = open_pool(config.pool) if config.use_pool else None
    with executor_from(config) as executor:
        result = acquire(
            request, proposer,
            make_execute_fn(config.reward_solver, config.budget_steps, config.seed,
                            goals={request.name: goal}),
            out, candidates=config.candidates, score=score, verifier_name=config.verifier,
            execute_all=config.execute == "all", pool=pool, top_k=config.top_k,
            seed=config.seed, resume=config.resume, config=_record(config),
            repair_rounds=config.repair_rounds, executor=executor, goal_card=card,
        )
    return AcquireDone(request.name, result=result, card=card)


def _record(config: AcquireConfig) -> dict[str, Any]:
    return {"command": "acquire", **config_to_dict(config)}


def _many(config: AcquireConfig) -> list[dict[str, Any]]:
    from simjudge.executors import executor_from

    from .acquire_stream import acquire_stream
    from .components import make_client_for, make_execute_fn, make_proposer, open_pool
    from .task_proposals import load_task_proposals, propose_tasks
    from .verifiers import make_verifier

    out = Path(config.out)
    if config.tasks_from:
        entries = load_task_proposals(config.tasks_from)
    else:
        client = None if config.proposer == "template" else make_client_for(
            config.proposer, out, config.model, config.llm_cache)
        entries = [{"name": p.name, "description": p.description, "object": p.asset}
                   for p in propose_tasks(str(config.object), config.propose_tasks, client,
                                          config.seed)]
    proposer = make_proposer(config.proposer, out, config.model, config.llm_cache,
                             config.temperature, config.max_tokens)
    score = make_verifier(config.verifier, config.prm, config.strategy)
    with executor_from(config) as executor:
        return acquire_stream(
            entries, proposer,
            lambda request: make_execute_fn(config.reward_solver, config.budget_steps,
                                            config.seed, goals={request.name: request.goal}),
            out, resume=config.resume, config=_record(config),
            candidates=config.candidates, score=score, verifier_name=config.verifier,
            execute_all=config.execute == "all",
            pool=open_pool(config.pool) if config.use_pool else None, top_k=config.top_k,
            seed=config.seed, repair_rounds=config.repair_rounds, executor=executor,
        )
