"""The entry point of the built-in tasks' Gymnasium ids (``simjudge/<EnvId>``).

The ids are registered by :mod:`simjudge.tasks.registration` (file names only, so that
``import simjudge`` stays cheap); this module makes the env when one is asked for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from simjudge.tasks.registration import NAMESPACE, register_builtin_tasks

from .task import load_task

if TYPE_CHECKING:
    from simjudge.envs.sim_env import SimEnv

__all__ = ["NAMESPACE", "make_task_env", "register_builtin_tasks"]


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
