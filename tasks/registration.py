"""Gymnasium ids of the built-in tasks, registered from file names alone.

``import simjudge`` calls :func:`register_builtin_tasks`; it imports only Gymnasium and reads
the names of the task files (``tasks/library/*.yaml`` and ``tasks/library/composed/*.yaml``)
and each file's top-level ``horizon:`` line, so importing simjudge stays cheap. Every id is
registered with ``max_episode_steps`` = the task's horizon, so Gymnasium's ``TimeLimit``
truncates there (pass ``max_episode_steps=`` to ``gym.make`` with a longer ``horizon=``). A
task's YAML is parsed when its env is made (:func:`simjudge.tasks.spec.registry.make_task_env`,
the ids' entry point).

Example:
    >>> import gymnasium as gym
    >>> "simjudge/OpenDrawer-v0" in register_builtin_tasks()
    True
    >>> gym.spec("simjudge/OpenDrawer-v0").entry_point
    'simjudge.tasks.spec.registry:make_task_env'
    >>> gym.spec("simjudge/OpenDrawer-v0").max_episode_steps
    100
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["COMPOSED_DIR", "LIBRARY_DIR", "NAMESPACE", "builtin_ids", "composed_ids",
           "horizon_of", "library_ids", "register_builtin_tasks", "task_file"]

NAMESPACE = "simjudge"
LIBRARY_DIR = Path(__file__).resolve().parent / "library"
"""The single-stage task files."""
COMPOSED_DIR = LIBRARY_DIR / "composed"
"""The composed (long-horizon) task files."""
ENTRY_POINT = "simjudge.tasks.spec.registry:make_task_env"
DEFAULT_HORIZON = 100
"""A task file's horizon when it states none (``TaskSpec.horizon``'s default)."""
_HORIZON = re.compile(r"^horizon:\s*(\d+)\s*(?:#.*)?$", re.M)


def horizon_of(env_id: str) -> int:
    """A built-in task's horizon from its file's top-level ``horizon:`` line (no YAML parse).

    ``tests/tasks/test_registration.py`` checks it equals the parsed ``TaskSpec.horizon`` of
    every built-in task.
    """
    match = _HORIZON.search(task_file(env_id).read_text())
    return int(match.group(1)) if match else DEFAULT_HORIZON


def library_ids() -> list[str]:
    """Env ids of the built-in single-stage tasks (file names; nothing is parsed)."""
    return sorted(p.stem for p in LIBRARY_DIR.glob("*.yaml"))


def composed_ids() -> list[str]:
    """Env ids of the built-in composed (long-horizon) tasks."""
    return sorted(p.stem for p in COMPOSED_DIR.glob("*.yaml"))


def builtin_ids() -> list[str]:
    """Every built-in task id: the single-stage library, then the composed tasks."""
    return library_ids() + composed_ids()


def task_file(env_id: str) -> Path:
    """The file of a built-in task id: the library's, else the composed tasks' folder's."""
    path = LIBRARY_DIR / f"{env_id}.yaml"
    return path if path.exists() else COMPOSED_DIR / f"{env_id}.yaml"


def register_builtin_tasks() -> list[str]:
    """Register every built-in task id not registered yet; return all ids (namespaced)."""
    import gymnasium as gym

    ids = []
    for env_id in builtin_ids():
        full = f"{NAMESPACE}/{env_id}"
        ids.append(full)
        if full not in gym.registry:
            gym.register(id=full, entry_point=ENTRY_POINT, kwargs={"task": env_id},
                         max_episode_steps=horizon_of(env_id))
    return ids
