"""Gymnasium ids of the built-in tasks, registered from file names alone.

``import simjudge`` calls :func:`register_builtin_tasks`; it imports only Gymnasium and reads
only the names of the task files (``tasks/library/*.yaml`` and ``tasks/library/composed/*.yaml``),
so importing simjudge stays cheap. A task's YAML is parsed when its env is made
(:func:`simjudge.tasks.spec.registry.make_task_env`, the ids' entry point).

Example:
    >>> import gymnasium as gym
    >>> "simjudge/OpenDrawer-v0" in register_builtin_tasks()
    True
    >>> gym.spec("simjudge/OpenDrawer-v0").entry_point
    'simjudge.tasks.spec.registry:make_task_env'
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["COMPOSED_DIR", "LIBRARY_DIR", "NAMESPACE", "builtin_ids", "register_builtin_tasks"]

NAMESPACE = "simjudge"
LIBRARY_DIR = Path(__file__).resolve().parent / "library"
"""The single-stage task files."""
COMPOSED_DIR = LIBRARY_DIR / "composed"
"""The composed (long-horizon) task files."""
ENTRY_POINT = "simjudge.tasks.spec.registry:make_task_env"


def builtin_ids() -> list[str]:
    """Every built-in task id: the single-stage library, then the composed tasks."""
    return (sorted(p.stem for p in LIBRARY_DIR.glob("*.yaml"))
            + sorted(p.stem for p in COMPOSED_DIR.glob("*.yaml")))


def register_builtin_tasks() -> list[str]:
    """Register every built-in task id not registered yet; return all ids (namespaced)."""
    import gymnasium as gym

    ids = []
    for env_id in builtin_ids():
        full = f"{NAMESPACE}/{env_id}"
        ids.append(full)
        if full not in gym.registry:
            gym.register(id=full, entry_point=ENTRY_POINT, kwargs={"task": env_id})
    return ids
