"""Task fields of pooled tasks and the verified seed shipped with the task library.

The seed folder ``tasks/exemplars/`` holds one :class:`~simjudge.tasks.spec.Solution`
YAML per file (``task``, ``description``, ``scene``, ``subtasks``; ``provenance`` may
carry ``asset`` and ``tags``). Files are read in name order. Missing description, asset or
tags are filled from the built-in task of the same name when there is one, so a seed file
for a library task needs only the solution itself. Only solutions verified by execution
belong there: :meth:`ExemplarPool.seed_from` records each as a success.

Example:
    >>> from simjudge.llm import HashingEmbedder
    >>> from simjudge.pipelines.pool import ExemplarPool
    >>> pool = ExemplarPool(":memory:", embedder=HashingEmbedder())
    >>> seed_pool(pool) >= 0
    True
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import simjudge.tasks as _tasks_package
from simjudge.envs.errors import SimjudgeError
from simjudge.tasks.spec import Solution, SolutionError
from simjudge.tasks.spec.config_checks import MAX_DESCRIPTION_CHARS, MAX_NAME_CHARS

__all__ = ["EXEMPLAR_DIR", "PoolError", "TaskFields", "load_exemplars", "seed_pool"]

EXEMPLAR_DIR = Path(_tasks_package.__file__).resolve().parent / "exemplars"
"""Default seed folder (YAML files, one verified Solution each)."""


class PoolError(SimjudgeError, ValueError):
    """A pool operation got bad input or the file is not a pool; the message says why."""


@dataclass(frozen=True)
class TaskFields:
    """The task fields the pool stores (a subset of :class:`~simjudge.tasks.spec.TaskSpec`).

    Attributes:
        name: Task name, the pool's key (``Open Drawer``).
        description: One or two sentences.
        asset: Catalogue id of the main object.
        tags: Free labels.
    """

    name: str
    description: str = ""
    asset: str = ""
    tags: tuple[str, ...] = ()

    @classmethod
    def coerce(cls, task: Any) -> TaskFields:
        """Task fields from a TaskFields, TaskSpec, Solution, mapping or any task-like object.

        A task-like object has ``name`` (or ``task``) and ``description`` attributes; a
        string is a task name.
        """
        if isinstance(task, TaskFields):
            return task
        if isinstance(task, str):
            task = {"name": task}
        get = task.get if isinstance(task, Mapping) else (lambda k, d=None: getattr(task, k, d))
        name = get("name") or get("task")
        if not isinstance(name, str) or not name.strip():
            raise PoolError(f"a task needs a non-empty name, got {task!r:.120}")
        description = str(get("description", "") or "")
        if len(name) > MAX_NAME_CHARS or len(description) > MAX_DESCRIPTION_CHARS:
            raise PoolError(f"task {name[:60]!r}: a pooled task's name may have at most "
                            f"{MAX_NAME_CHARS} characters and its description "
                            f"{MAX_DESCRIPTION_CHARS} (got {len(name)} and {len(description)}); "
                            "shorten them")
        return cls(name=name.strip(), description=description,
                   asset=str(get("asset", "") or ""), tags=tuple(get("tags", ()) or ()))

    @property
    def text(self) -> str:
        """What is embedded: ``"name: description"``."""
        return f"{self.name}: {self.description}" if self.description else self.name


def _library_fields(name: str) -> TaskFields | None:
    try:
        from simjudge.tasks.spec import TaskSpecError, load_task
    except ImportError:  # pragma: no cover - library always ships with tasks
        return None
    try:
        spec = load_task(name)
    except TaskSpecError:
        return None
    return TaskFields(spec.name, spec.description, spec.asset, tuple(spec.tags))


def _fields_of(solution: Solution) -> TaskFields:
    prov = solution.provenance
    scene_assets = [o.asset for o in solution.scene.objects if not o.distractor]
    fields = TaskFields(
        name=solution.task,
        description=solution.description,
        asset=str(prov.get("asset") or ""),
        tags=tuple(prov.get("tags") or ()),
    )
    lib = _library_fields(solution.task)
    return TaskFields(
        name=fields.name,
        description=fields.description or (lib.description if lib else ""),
        asset=fields.asset or (lib.asset if lib else "") or (scene_assets[0] if scene_assets
                                                               else ""),
        tags=fields.tags or (lib.tags if lib else ()),
    )


def load_exemplars(folder: str | Path = EXEMPLAR_DIR) -> list[tuple[TaskFields, Solution]]:
    """Read every ``*.yaml`` / ``*.yml`` Solution in ``folder`` (sorted by file name).

    Returns:
        ``(task fields, solution)`` pairs for :meth:`ExemplarPool.seed_from`; an empty
        list when the folder is empty or missing.

    Raises:
        PoolError: A file is not a valid Solution (the message names the file and field).
    """
    folder = Path(folder)
    if not folder.is_dir():
        return []
    items = []
    for path in sorted([*folder.glob("*.yaml"), *folder.glob("*.yml")]):
        try:
            solution = Solution.from_yaml(path)
        except (SolutionError, ValueError) as exc:
            raise PoolError(f"exemplar {path}: {exc}") from None
        items.append((_fields_of(solution), solution))
    return items


class _Seedable(Protocol):
    def seed_from(self, items: Any, *, source: str = ...) -> int: ...


def seed_pool(pool: _Seedable, folder: str | Path = EXEMPLAR_DIR) -> int:
    """Seed ``pool`` from a folder of verified solutions; returns how many were new."""
    return pool.seed_from(load_exemplars(folder), source=f"seed:{Path(folder).name}")
