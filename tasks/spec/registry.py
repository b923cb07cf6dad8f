"""Gymnasium registration of the built-in tasks (``simjudge/<EnvId>``).

Registration reads only file names, so ``import simjudge`` stays cheap; a task's
YAML is parsed when its env is made.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import gymnasium as gym

from .task import builtin_ids, load_task

if TYPE_CHECKING:
    from simjudge.envs.sim_env import SimEnv

__all__ = ["NAMESPACE", "make_task_env", "register_builtin_tasks"]

NAMESPACE = "simjudge"


def make_task_env(task: str, **kwargs: Any) -> SimEnv:
    """Create the :class:`~simjudge.envs.SimEnv` of a built-in task.

    Args:
        task: Env id (``OpenDrawer-v0``) or task name.
        **kwargs: Further :class:`SimEnv` arguments (``render_mode``, ``reward_mode`` ...),
            overriding the task's own.
    """
    from simjudge.envs.sim_env import SimEnv

    spec = load_task(task)
    env_kwargs = spec.env_kwargs()
    env_kwargs.update(kwargs)
    return SimEnv(**env_kwargs)


def register_builtin_tasks() -> list[str]:
    """Register every built-in task id (library and composed) not registered yet; return all ids."""
    ids = []
    for env_id in builtin_ids():
        full = f"{NAMESPACE}/{env_id}"
        ids.append(full)
        if full not in gym.registry:
            gym.register(
                id=full,
                entry_point="simjudge.tasks.spec.registry:make_task_env",
                kwargs={"task": env_id},
            )
    return ids
