"""simjudge: generate, execute and judge robot manipulation skills in simulation.

Importing ``simjudge`` registers the built-in tasks as Gymnasium ids
(``simjudge/OpenDrawer-v0`` ...); heavier pieces load on first use.

Example:
    >>> import gymnasium as gym
    >>> import simjudge
    >>> env = gym.make("simjudge/OpenDrawer-v0")        # doctest: +SKIP
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_LAZY: dict[str, str] = {
    # errors: every exception simjudge raises on purpose derives from SimjudgeError
    "SimjudgeError": "simjudge.envs.errors",
    # simjudge.envs: physics, scenes, the env, the state API
    "SimEnv": "simjudge.envs.sim_env",
    "SceneConfig": "simjudge.envs.scene",
    "SimState": "simjudge.envs.sim_state",
    "StateView": "simjudge.envs.state_api",
    "STATE_API": "simjudge.envs.state_api",
    "JointGoal": "simjudge.envs.goals",
    "PlaceGoal": "simjudge.envs.goals",
    "RecordVideo": "simjudge.envs.wrappers",
    "make_backend": "simjudge.envs.backends",
    "default_catalogue": "simjudge.envs.catalogue",
    # simjudge.tasks: task specs and the library
    "TaskSpec": "simjudge.tasks.spec",
    "load_task": "simjudge.tasks.spec",
    "load_library": "simjudge.tasks.spec",
    "make_task_env": "simjudge.tasks.spec",
    # simjudge.skills: policies and rollouts
    "ScriptedPolicy": "simjudge.skills.scripted",
    "rollout": "simjudge.skills.rollout",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'simjudge' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def _register() -> None:
    from simjudge._moved import install

    install()
    from simjudge.tasks.registration import register_builtin_tasks

    register_builtin_tasks()


_register()
