"""Verifier datasets: base solutions, completions from every substep, executed labels.

Following VERGSA (``docs/methods.md`` (vergsa), "Automated labels via MCTS-style
completion"): for each task, ``base`` solutions are proposed; from every substep
``j`` of each base solution a completer regenerates the rest ``completions``
times; every solution is executed, so every subtask of every solution gets an
outcome. The label of the prefix ending at subtask ``k`` is
``success(subtask k) AND success(task)``, and a prefix is positive when *any*
executed solution that starts with it is (a subtask that appears in a successful
solution is positive even if it came from a completion).

Layout of a dataset folder (every step resumable; nothing finished is redone):

- ``solutions/<id>.yaml``: each proposed solution (id = content hash);
- ``outcomes/<id>.json``: its execution outcome (``subtask_success``, ``task_success``,
  ``reason``), written as soon as it is known (executions are jobs of an executor,
  :mod:`simjudge.executors`: ``serial``, ``local`` or ``ray``; a crashed one is a
  ``failed`` outcome); ``job_logs/outcomes/<id>.log``: each execution's output;
- ``prefixes.jsonl``: one record per (solution, k) with the fields of
  :class:`PrefixRecord`;
- ``manifest.json``: tasks, parameters, counts, versions.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from simjudge.executors import Executor, Job, JobStore, resume_identity
from simjudge.executors.serial import SerialExecutor
from simjudge.tasks.spec import Outcome, RunDir, Solution, atomic_write, read_json, write_json

from .proposer import TaskRequest

__all__ = [
    "EXECUTE_MODULES",
    "PrefixRecord",
    "execute_checkpointed",
    "execute_outcomes",
    "failed_outcome",
    "build_dataset",
    "label_prefixes",
    "load_records",
    "solution_id",
    "split_by_solution",
    "split_by_task",
]


ExecuteFn = Callable[[Solution, Path], Outcome]
EXECUTE_MODULES = ("simjudge.skills.executor", "simjudge.judges.live")
"""What executing a solution imports: workers load them while the build proposes."""


@dataclass(frozen=True)
class PrefixRecord:
    """One labelled prefix (a line of ``prefixes.jsonl``).

    Attributes:
        task: Task name.
        description: Task description.
        asset: Main object asset id.
        solution_id: Content hash of the solution.
        base_id: Id of the base solution it derives from (itself for a base).
        origin: ``base`` or ``completion``.
        completed_from: Prefix length a completion kept (0 for a base).
        k: Prefix length (1-based index of the current subtask).
        n_subtasks: Length of the solution.
        subtasks: The prefix's subtasks as ``{name, kind, code}`` dicts.
        subtask_success: Outcome of subtask k in this solution.
        task_success: Outcome of this solution.
        label: The VERGSA label of the prefix (verified task success only).
        scene: The solution's scene config (a PRM feature: the scene is verified too).
    """

    task: str
    description: str
    asset: str
    solution_id: str
    base_id: str
    origin: str
    completed_from: int
    k: int
    n_subtasks: int
    subtasks: tuple[dict[str, str], ...]
    subtask_success: bool
    task_success: bool
    label: bool
    scene: dict[str, Any] = field(default_factory=dict)


def solution_id(solution: Solution) -> str:
    """Content hash of a solution's scene and subtasks (provenance excluded)."""
    data = solution.model_dump(mode="json", include={"task", "scene", "subtasks"})
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


def _prefix_key(solution: Solution, k: int) -> str:
    data = {"scene": solution.scene.model_dump(mode="json"),
            "subtasks": [s.model_dump(mode="json") for s in solution.subtasks[:k]]}
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


@dataclass
class _Entry:
    solution: Solution
    base_id: str
    origin: str
    completed_from: int
    outcome: Outcome | None = None

    @property
    def executed(self) -> Outcome:
        """The outcome, once the solution has run."""
        if self.outcome is None:
            raise ValueError(f"solution {solution_id(self.solution)} has not been executed yet")
        return self.outcome


def _subtask_ok(outcome: Outcome, k: int) -> bool:
    """Subtask ``k`` (1-based) ran and succeeded; subtasks after a stop were not evaluated."""
    return k <= outcome.n_subtasks and outcome.subtask_success[k - 1]


def label_prefixes(task: TaskRequest, entries: Sequence[_Entry]) -> list[PrefixRecord]:
    """VERGSA prefix labels over every executed solution of one task."""
    positive: dict[str, bool] = {}
    for entry in entries:
        outcome = entry.executed
        for k in range(1, len(entry.solution.subtasks) + 1):
            key = _prefix_key(entry.solution, k)
            ok = _subtask_ok(outcome, k) and outcome.task_success
            positive[key] = positive.get(key, False) or ok
    records = []
    for entry in entries:
        sid = solution_id(entry.solution)
        for k in range(1, len(entry.solution.subtasks) + 1):
            records.append(PrefixRecord(
                task=task.name, description=task.description, asset=task.asset,
                solution_id=sid, base_id=entry.base_id, origin=entry.origin,
                completed_from=entry.completed_from, k=k,
                n_subtasks=len(entry.solution.subtasks),
                subtasks=tuple({"name": s.name, "kind": s.kind, "code": s.code}
                               for s in entry.solution.subtasks[:k]),
                subtask_success=_subtask_ok(entry.executed, k),
                task_success=bool(entry.executed.task_success),
                label=positive[_prefix_key(entry.solution, k)],
                scene=entry.solution.scene.model_dump(mode="json", exclude_none=True),
            ))
    return records


def _save_solution(folder: Path, solution: Solution) -> str:
    sid = solution_id(solution)
    path = folder / "solutions" / f"{sid}.yaml"
    if not path.exists():
        atomic_write(path, solution.to_yaml())
    return sid


def execute_checkpointed(
    path: Path, solution: Solution, run_dir: Path, execute: ExecuteFn
) -> Outcome:
    """The outcome stored at ``path``, or execute and store it atomically (resumable runs)."""
    if path.exists():
        return Outcome.from_dict(read_json(path))
    outcome = execute(solution, run_dir)
    write_json(path, outcome.to_dict())
    return outcome


def failed_outcome(job: Job, reason: str) -> dict[str, Any]:
    """The outcome recorded for an execution job that failed (raised, or crashed its worker)."""
    solution = job.args[0] if job.args else None
    task = solution.task if isinstance(solution, Solution) else ""
    return Outcome((), False, verdict="failed", reason=f"execution failed: {reason}",
                   task=task).to_dict()


def execute_outcomes(
    items: Iterable[tuple[str, Solution, Path]],
    execute: ExecuteFn,
    folder: Path,
    executor: Executor | None = None,
    *,
    desc: str = "execute",
    progress: bool = True,
) -> list[Outcome]:
    """Execute ``(key, solution, run_dir)`` items with ``executor`` (default serial).

    ``items`` may be an iterator (read lazily: each execution starts as soon as its item
    is made and a worker is free). Each outcome is written atomically to
    ``folder/outcomes/<key>.json`` as soon as it is known (recorded ones are read back, not
    executed again); a failed execution is recorded as a ``failed`` outcome with the
    reason. Outcomes come back in the order of ``items``.
    """
    jobs = (Job(key, execute, (solution, run_dir)) for key, solution, run_dir in items)
    store = JobStore(Path(folder), results="outcomes", on_failure=failed_outcome)
    if executor is None:
        with SerialExecutor() as serial:
            results = serial.map(jobs, store, desc=desc, progress=progress)
    else:
        results = executor.map(jobs, store, desc=desc, progress=progress)
    return [Outcome.from_dict(r.value) for r in results]


def _task_entries(task, proposer, completer, base: int, completions: int, seed: int) -> list[_Entry]:
    entries = []
    for b, solution in enumerate(proposer.propose(task, n=base, seed=seed)):
        base_id = solution_id(solution)
        entries.append(_Entry(solution, base_id, "base", 0))
        for j in range(1, len(solution.subtasks)):
            for completion in completer.complete(task, solution.prefix(j), n=completions,
                                                 seed=seed * 7919 + b * 101 + j):
                entries.append(_Entry(completion, base_id, "completion", j))
    unique: dict[str, _Entry] = {}
    for entry in entries:
        unique.setdefault(solution_id(entry.solution), entry)
    return list(unique.values())


def build_dataset(
    tasks: Sequence[TaskRequest],
    proposer: Any,
    completer: Any,
    execute: ExecuteFn,
    out: str | Path,
    base: int = 3,
    completions: int = 2,
    seed: int = 0,
    progress: bool = True,
    config: Mapping[str, Any] | None = None,
    executor: Executor | None = None,
) -> list[PrefixRecord]:
    """Propose, complete, execute and label; write the dataset folder (resumable).

    ``config`` is the calling command's full config (e.g. ``simjudge dataset build``'s),
    recorded in ``config.json``; a resumed build must have the same one (the executor
    settings aside). Every solution of every task is one job of ``executor`` (default:
    serial); outcomes are the same whichever executor and number of workers ran them. The
    executor's workers start (and import) while the first task is proposed, and each
    task's solutions start executing as soon as they are proposed.
    """
    from tqdm import tqdm

    folder = Path(out)
    run = RunDir(folder)
    full = {"command": "dataset build", "tasks": [t.name for t in tasks], "base": base,
            "completions": completions, "seed": seed,
            "proposer": getattr(proposer, "name", type(proposer).__name__),
            "completer": getattr(completer, "name", type(completer).__name__),
            **(config or {})}
    run.prepare(full, resume=True, identity=resume_identity(full))
    if executor is not None:  # workers boot and import while the driver proposes
        executor.prepare(execute, EXECUTE_MODULES)
    per_task: list[tuple[TaskRequest, list[_Entry]]] = []
    items: dict[str, tuple[str, Solution, Path]] = {}

    def proposed() -> Iterator[tuple[str, Solution, Path]]:
        """Each task's new solutions, handed to the executor as soon as they are made."""
        for task in tqdm(tasks, desc="propose", disable=not progress):
            entries = _task_entries(task, proposer, completer, base, completions, seed)
            per_task.append((task, entries))
            for entry in entries:
                sid = _save_solution(folder, entry.solution)
                if sid not in items:
                    items[sid] = (sid, entry.solution, folder / "runs" / sid)
                    yield items[sid]

    executed = execute_outcomes(proposed(), execute, folder, executor, desc="execute",
                                progress=progress)
    outcomes = dict(zip(items, executed, strict=True))
    records: list[PrefixRecord] = []
    summary = []
    for task, entries in per_task:
        for entry in entries:
            entry.outcome = outcomes[solution_id(entry.solution)]
        task_records = label_prefixes(task, entries)
        records += task_records
        summary.append({"task": task.name, "solutions": len(entries),
                        "successful": sum(e.executed.task_success for e in entries),
                        "prefixes": len(task_records),
                        "positive": sum(r.label for r in task_records)})
    run.write_text("prefixes.jsonl", "".join(json.dumps(asdict(r)) + "\n" for r in records))
    manifest = {"tasks": summary, "base": base, "completions": completions, "seed": seed,
                "proposer": getattr(proposer, "name", type(proposer).__name__),
                "completer": getattr(completer, "name", type(completer).__name__)}
    run.write_json("manifest.json", manifest)
    return records


def load_records(folder: str | Path) -> list[PrefixRecord]:
    """Read ``prefixes.jsonl`` of a dataset folder."""
    path = Path(folder) / "prefixes.jsonl"
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist; build it with `simjudge dataset build`")
    out = []
    for line in path.read_text().splitlines():
        data = json.loads(line)
        data["subtasks"] = tuple(data["subtasks"])
        out.append(PrefixRecord(**data))
    return out


def split_by_task(
    records: Iterable[PrefixRecord], test_tasks: Sequence[str]
) -> tuple[list[PrefixRecord], list[PrefixRecord]]:
    """Novel-task split: every record of ``test_tasks`` goes to test."""
    records = list(records)
    unknown = set(test_tasks) - {r.task for r in records}
    if unknown:
        raise ValueError(f"test tasks {sorted(unknown)} are not in the dataset")
    test = [r for r in records if r.task in test_tasks]
    return [r for r in records if r.task not in test_tasks], test


def split_by_solution(
    records: Iterable[PrefixRecord], test_fraction: float = 0.3, seed: int = 0
) -> tuple[list[PrefixRecord], list[PrefixRecord]]:
    """Seen-task split: whole base-solution families (base + its completions) per side."""
    records = list(records)
    families = sorted({(r.task, r.base_id) for r in records})
    rng = np.random.default_rng(seed)
    chosen = {families[i] for i in rng.permutation(len(families))[: max(1, round(test_fraction * len(families)))]}
    test = [r for r in records if (r.task, r.base_id) in chosen]
    return [r for r in records if (r.task, r.base_id) not in chosen], test

