"""Built-in policies: the scripted oracle and its failure variants, random, zero, callables.

The oracle variants fail in the ways real policies do, so audits and the arena have
policies of graded quality without training anything:

* ``oracle`` (alias ``scripted``): the privileged closed-loop
  :class:`~simjudge.skills.scripted.ScriptedPolicy`.
* ``oracle-noisy``: Gaussian noise of std ``noise`` on every motion component.
* ``oracle-delay``: the oracle's actions reach the robot ``delay`` steps late (a slow
  control loop: it overshoots and oscillates).
* ``oracle-early-release``: lets go (suction off for good) once the task's privileged
  progress reaches ``at``: stagnation after partial progress.
* ``oracle-wrong-target``: solves the wrong goal: a joint driven the other way, an object
  put ``on`` instead of ``in`` (or the reverse).
* ``reach-only``: the oracle's approach to the part (to its pre-contact pose, 5 cm out),
  then it holds still, suction off: never touches, presses or attaches. It scores the
  approach stage of the staged progress Φ and nothing more (a policy that reaches the handle
  and fails to grasp).
"""

from __future__ import annotations

import importlib
from collections import deque
from collections.abc import Callable
from typing import Any

import numpy as np

from simjudge.envs.goals import JointGoal, PlaceGoal
from simjudge.skills.scripted import ScriptedPolicy

from .base import Observation, PolicyError, PolicyInfo, PolicyTask, as_chunk

__all__ = [
    "CallablePolicy",
    "OraclePolicy",
    "RandomPolicy",
    "ZeroPolicy",
    "load_callable",
]

_HOLD = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0])


class _GoalOverride:
    """The env seen through another goal (for the wrong-target oracle); all else delegated."""

    def __init__(self, env: Any, goal: Any) -> None:
        self._env = env
        self.goal = goal

    def __getattr__(self, name: str) -> Any:
        return getattr(self._env, name)


def _wrong_goal(goal: Any) -> Any:
    if isinstance(goal, JointGoal):
        flipped = "close" if goal.direction == "open" else "open"
        return goal.model_copy(update={"direction": flipped})
    if isinstance(goal, PlaceGoal):
        return goal.model_copy(update={"relation": "on" if goal.relation == "in" else "in"})
    return goal


class OraclePolicy:
    """The scripted oracle, optionally degraded (see the module docstring).

    Args:
        variant: ``oracle``, ``noisy``, ``delay``, ``early-release``, ``wrong-target`` or
            ``reach-only``.
        noise: Std of the action noise (``noisy``; 0 for the others unless given).
        delay: Steps of action delay (``delay``).
        at: Privileged progress at which ``early-release`` lets go.
        name: Name reported in :attr:`info`.
    """

    VARIANTS = ("oracle", "noisy", "delay", "early-release", "wrong-target", "reach-only")

    def __init__(
        self,
        variant: str = "oracle",
        noise: float = 0.0,
        delay: int = 4,
        at: float = 0.5,
        name: str = "oracle",
    ) -> None:
        if variant not in self.VARIANTS:
            raise PolicyError(f"unknown oracle variant {variant!r}; use one of {self.VARIANTS}")
        if noise < 0 or delay < 0 or not 0.0 <= at <= 1.0:
            raise PolicyError(
                f"oracle parameters out of range (noise={noise}, delay={delay}, at={at}); "
                "use noise >= 0, delay >= 0 and 0 <= at <= 1"
            )
        self.variant, self.noise, self.delay, self.at = variant, float(noise), int(delay), float(at)
        self._info = PolicyInfo(name, observation_needs=("privileged",))
        self._script: ScriptedPolicy | None = None
        self._env: Any = None
        self._queue: deque[np.ndarray] = deque()
        self._released = False  # early-release: suction off for good; reach-only: holding still

    @property
    def info(self) -> PolicyInfo:
        """Name, action space (delta-translation) and needs (privileged)."""
        return self._info

    def reset(self, task: PolicyTask, seed: int) -> None:
        """Build the script on the task's env (privileged access)."""
        if task.env is None:
            raise PolicyError(
                f"{self._info.name} is a privileged policy and needs the simulator: run it "
                "through simjudge audit/arena (it cannot drive a remote robot)"
            )
        env: Any = task.env
        if self.variant == "wrong-target":
            env = _GoalOverride(env, _wrong_goal(env.goal))
        self._env = task.env
        self._script = ScriptedPolicy(env, noise=self.noise, seed=int(seed))
        self._queue = deque(_HOLD.copy() for _ in range(self.delay if self.variant == "delay" else 0))
        self._released = False

    def act(self, obs: Observation) -> np.ndarray:
        """The oracle's next action, degraded by the variant."""
        if self._script is None:
            raise PolicyError(f"{self._info.name}.act() called before reset(task, seed)")
        action = np.asarray(self._script(), dtype=np.float64)
        if self.variant == "delay":
            self._queue.append(action)
            action = self._queue.popleft()
        elif self.variant == "early-release":
            if not self._released and self._env.get_info()["progress"] >= self.at:
                self._released = True
            if self._released:
                action = action.copy()
                action[6] = -1.0
        elif self.variant == "reach-only":
            if self._script.phase.name != "approach":  # the script moves in from here on
                self._released = True
            if self._released:
                return _HOLD.copy()
            action = action.copy()
            action[6] = -1.0
        return action

    def close(self) -> None:
        """Drop the script."""
        self._script = None


class RandomPolicy:
    """Uniform random actions in ``[-scale, scale]^7``, seeded by ``reset``.

    Args:
        scale: Half-width of the box.
    """

    def __init__(self, scale: float = 1.0) -> None:
        if not 0.0 < scale <= 1.0:
            raise PolicyError(f"random: scale must be in (0, 1], got {scale}")
        self.scale = float(scale)
        self._info = PolicyInfo("random")
        self._rng = np.random.default_rng(0)

    @property
    def info(self) -> PolicyInfo:
        """Name and action space."""
        return self._info

    def reset(self, task: PolicyTask, seed: int) -> None:
        """Reseed."""
        self._rng = np.random.default_rng(int(seed))

    def act(self, obs: Observation) -> np.ndarray:
        """A random action."""
        return self._rng.uniform(-self.scale, self.scale, 7)

    def close(self) -> None:
        """Nothing to release."""


class ZeroPolicy:
    """Does nothing: zero motion, suction off (the static baseline ε is calibrated on)."""

    def __init__(self) -> None:
        self._info = PolicyInfo("zero")

    @property
    def info(self) -> PolicyInfo:
        """Name and action space."""
        return self._info

    def reset(self, task: PolicyTask, seed: int) -> None:
        """Nothing to reset."""

    def act(self, obs: Observation) -> np.ndarray:
        """The zero action."""
        return np.zeros(7)

    def close(self) -> None:
        """Nothing to release."""


def load_callable(target: str) -> Any:
    """Import ``module:attribute`` (dotted attributes allowed).

    Raises:
        PolicyError: The module or attribute does not exist.
    """
    module_name, _, attr = target.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise PolicyError(
            f"policy {target!r}: cannot import module {module_name!r} ({exc}); put it on "
            "PYTHONPATH or install it"
        ) from exc
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise PolicyError(f"policy {target!r}: module {module_name!r} has no {attr!r}")
        obj = getattr(obj, part)
    return obj


class CallablePolicy:
    """Any Python callable ``f(obs) -> action or chunk`` as a policy (``module:function``).

    If the callable also has ``reset(task, seed)`` it is called on reset.

    Args:
        fn: The callable.
        name: Its name in reports.
        action_space: Action space of what it returns.
        observation_needs: What it observes beyond state and prompt.
    """

    def __init__(
        self,
        fn: Callable[[Observation], Any],
        name: str,
        action_space: str = "delta-translation",
        observation_needs: tuple[str, ...] = (),
    ) -> None:
        if not callable(fn):
            raise PolicyError(f"policy {name!r} is not callable; point module:function at a function")
        self.fn = fn
        self._info = PolicyInfo(name, action_space=action_space, observation_needs=observation_needs)

    @property
    def info(self) -> PolicyInfo:
        """Name, action space and needs."""
        return self._info

    def reset(self, task: PolicyTask, seed: int) -> None:
        """Forward to ``fn.reset`` if it has one."""
        reset = getattr(self.fn, "reset", None)
        if callable(reset):
            reset(task, seed)

    def act(self, obs: Observation) -> np.ndarray:
        """``fn(obs)`` checked to be ``(7,)`` or ``(N, 7)``."""
        return as_chunk(self.fn(obs), self._info.name)

    def close(self) -> None:
        """Nothing to release."""
