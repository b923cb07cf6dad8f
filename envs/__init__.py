"""simjudge.envs: physics backends, assets, scenes, the env, the state API, the codegen sandbox.

Names load on first use (module ``__getattr__``), so importing the package costs nothing
beyond what its submodules need:

    >>> from simjudge.envs import SimEnv, SceneConfig, make_backend
    >>> SimEnv.__name__
    'SimEnv'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from simjudge.envs.lazy import lazy_attributes

if TYPE_CHECKING:
    from simjudge.envs.backends import BACKENDS, Backend, available_backends, make_backend
    from simjudge.envs.catalogue import default_catalogue
    from simjudge.envs.codegen import (
        ExecutionLimits,
        GeneratedCodeError,
        compile_reward,
        compile_success,
    )
    from simjudge.envs.errors import SimjudgeError
    from simjudge.envs.goals import Goal, JointGoal, PlaceGoal
    from simjudge.envs.registry import MissingExtraError, Registry
    from simjudge.envs.scene import SceneConfig, SceneConfigError
    from simjudge.envs.sim_env import SimEnv
    from simjudge.envs.sim_state import SimState
    from simjudge.envs.state_api import STATE_API, StateView, UnknownNameError
    from simjudge.envs.wrappers import RecordVideo

_LAZY: dict[str, str] = {
    "SimEnv": "simjudge.envs.sim_env",
    "SceneConfig": "simjudge.envs.scene",
    "SceneConfigError": "simjudge.envs.scene",
    "SimState": "simjudge.envs.sim_state",
    "STATE_API": "simjudge.envs.state_api",
    "StateView": "simjudge.envs.state_api",
    "UnknownNameError": "simjudge.envs.state_api",
    "JointGoal": "simjudge.envs.goals",
    "PlaceGoal": "simjudge.envs.goals",
    "Goal": "simjudge.envs.goals",
    "BACKENDS": "simjudge.envs.backends",
    "Backend": "simjudge.envs.backends",
    "make_backend": "simjudge.envs.backends",
    "available_backends": "simjudge.envs.backends",
    "default_catalogue": "simjudge.envs.catalogue",
    "SimjudgeError": "simjudge.envs.errors",
    "Registry": "simjudge.envs.registry",
    "MissingExtraError": "simjudge.envs.registry",
    "RecordVideo": "simjudge.envs.wrappers",
    "compile_reward": "simjudge.envs.codegen",
    "compile_success": "simjudge.envs.codegen",
    "ExecutionLimits": "simjudge.envs.codegen",
    "GeneratedCodeError": "simjudge.envs.codegen",
}
"""Public name -> the module that defines it."""

__all__ = [
    "BACKENDS",
    "Backend",
    "ExecutionLimits",
    "GeneratedCodeError",
    "Goal",
    "JointGoal",
    "MissingExtraError",
    "PlaceGoal",
    "RecordVideo",
    "Registry",
    "STATE_API",
    "SceneConfig",
    "SceneConfigError",
    "SimEnv",
    "SimState",
    "SimjudgeError",
    "StateView",
    "UnknownNameError",
    "available_backends",
    "compile_reward",
    "compile_success",
    "default_catalogue",
    "make_backend",
]


__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, globals())
