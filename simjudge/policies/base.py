"""The ``Policy`` protocol: what the audit, the arena and the policy server drive.

A policy is reset on a task and a seed, then maps observations to actions:

* :meth:`Policy.reset` ``(task, seed)``: a new episode of :class:`PolicyTask` ``task``;
  ``seed`` seeds any randomness of the policy, so the same seed gives the same episode.
* :meth:`Policy.act` ``(obs)``: one action ``(7,)`` or an action chunk ``(N, 7)`` (the
  runner executes the N actions before it asks again, as RoboArena's clients do).
* :attr:`Policy.info`: a :class:`PolicyInfo` (name, action space, what it observes).

**Observations** are plain dicts (:data:`Observation`) built by
:func:`simjudge.policies.observe` from what :attr:`PolicyInfo.observation_needs`
asks for, so a policy never receives more than it declared:

==========================  ================  =============================================
key                         need              value
==========================  ================  =============================================
``state``                   (always)          the env's flat ``float32`` state vector
``prompt``                  (always)          the task's instruction (``str``)
``joint_position``          ``proprio``       arm joint angles ``(7,)`` (rad)
``cartesian_position``      ``proprio``       suction point ``xyz`` + ``rpy`` ``(6,)``
``gripper_position``        ``proprio``       suction on/off ``(1,)`` in {0, 1}
``exterior_image``          ``exterior_image``  ``uint8 (H, W, 3)`` from the scene camera
``wrist_image``             ``wrist_image``   ``uint8 (H, W, 3)`` along the gripper axis
==========================  ================  =============================================

Privileged policies (the scripted oracle) declare the need ``privileged`` and read the
simulator through :attr:`PolicyTask.env`; every other policy gets ``task.env = None``.

**Actions** are in the policy's :attr:`PolicyInfo.action_space`: ``delta-translation`` is
SimEnv's own 7-D action (translation delta, rotation delta, suction);
``cartesian_position`` is an absolute suction-point target ``xyz`` + ``rpy`` plus a gripper
value (RoboArena's ``(N, 7)`` cartesian chunks), converted to env actions by
:func:`simjudge.policies.to_env_action`; ``joint_position`` (7 arm joint targets in
rad + a gripper value) and ``joint_velocity`` (7 joint velocities in rad/s + a gripper
value) are DROID's ``(N, 8)`` joint chunks, executed through SimEnv's ``joint_position``
action mode (the backend's joint position control, no IK). Gripper values > 0.5 turn
suction on.

Example:
    >>> import numpy as np
    >>> from simjudge.policies import PolicyTask, make_policy
    >>> policy = make_policy("random:scale=0.5")
    >>> policy.info.name, policy.info.action_space
    ('random', 'delta-translation')
    >>> policy.reset(PolicyTask("OpenDrawer-v0", prompt="open the drawer"), seed=3)
    >>> action = policy.act({"state": np.zeros(40, np.float32), "prompt": "open the drawer"})
    >>> action.shape, bool(np.all(np.abs(action) <= 0.5))
    ((7,), True)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from simjudge.envs.errors import SimjudgeError

if TYPE_CHECKING:
    from simjudge.envs.sim_env import SimEnv

__all__ = [
    "ACTION_SPACES",
    "JOINT_ACTION_SPACES",
    "OBSERVATION_NEEDS",
    "Observation",
    "Policy",
    "PolicyError",
    "PolicyInfo",
    "PolicyTask",
    "action_width",
]

ACTION_SPACES: tuple[str, ...] = (
    "delta-translation", "cartesian_position", "joint_position", "joint_velocity"
)
"""Action spaces simjudge executes (see the module docstring)."""
JOINT_ACTION_SPACES: tuple[str, ...] = ("joint_position", "joint_velocity")
"""The action spaces whose actions are 8 wide (7 joints + gripper)."""

OBSERVATION_NEEDS: tuple[str, ...] = ("privileged", "proprio", "exterior_image", "wrist_image")
"""What a policy may ask for beyond ``state`` and ``prompt``."""

Observation = Mapping[str, Any]
"""A policy's observation: ``{"state": ..., "prompt": ..., and what it asked for}``."""


class PolicyError(SimjudgeError, ValueError):
    """A policy spec, observation or action is wrong; the message names the fix."""


@dataclass(frozen=True)
class PolicyInfo:
    """What a policy is and what it needs.

    Attributes:
        name: Policy name (the registry name or the spec's kind).
        spec: The spec string the policy was made from.
        action_space: One of :data:`ACTION_SPACES`.
        observation_needs: Subset of :data:`OBSERVATION_NEEDS`.
        image_size: ``(height, width)`` of requested images.
        metadata: Free-form extra metadata (a remote server's config, a checkpoint path).
    """

    name: str
    spec: str = ""
    action_space: str = "delta-translation"
    observation_needs: tuple[str, ...] = ()
    image_size: tuple[int, int] = (224, 224)
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.action_space not in ACTION_SPACES:
            raise PolicyError(
                f"policy {self.name!r} uses action space {self.action_space!r}; simjudge "
                f"executes {list(ACTION_SPACES)}: convert the actions or serve another space"
            )
        unknown = sorted(set(self.observation_needs) - set(OBSERVATION_NEEDS))
        if unknown:
            raise PolicyError(
                f"policy {self.name!r} asks for unknown observations {unknown}; "
                f"choose from {list(OBSERVATION_NEEDS)}"
            )

    def with_spec(self, spec: str) -> PolicyInfo:
        """The same info carrying ``spec``."""
        return replace(self, spec=spec)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (recorded with every episode)."""
        return {
            "name": self.name,
            "spec": self.spec,
            "action_space": self.action_space,
            "observation_needs": list(self.observation_needs),
            "image_size": list(self.image_size),
            "metadata": dict(self.metadata),
        }


@dataclass
class PolicyTask:
    """The task a policy is reset on.

    Attributes:
        name: Task id (``OpenDrawer-v0``) or name.
        prompt: The instruction given to the policy (the task description).
        env: The :class:`SimEnv`, given only to policies that declare ``privileged``.
        horizon: Steps the episode may last.
    """

    name: str
    prompt: str = ""
    env: SimEnv | None = None
    horizon: int = 100


@runtime_checkable
class Policy(Protocol):
    """A policy: ``reset(task, seed)``, ``act(obs) -> action (7,) or chunk (N, 7)``."""

    @property
    def info(self) -> PolicyInfo:
        """What the policy is and what it observes."""
        ...

    def reset(self, task: PolicyTask, seed: int) -> None:
        """Start an episode of ``task``; ``seed`` seeds the policy's own randomness."""
        ...

    def act(self, obs: Observation) -> np.ndarray:
        """The next action ``(7,)`` or action chunk ``(N, 7)``."""
        ...

    def close(self) -> None:
        """Release resources (connections, models)."""
        ...


def action_width(action_space: str) -> int:
    """Numbers per action: 8 for :data:`JOINT_ACTION_SPACES` (7 joints + gripper), else 7."""
    return 8 if action_space in JOINT_ACTION_SPACES else 7


def as_chunk(action: Any, policy: str, width: int = 7) -> np.ndarray:
    """An action or chunk as a finite ``float64`` array ``(N, width)``.

    Args:
        action: One action or a chunk.
        policy: The policy's name (for the message).
        width: Numbers per action (:func:`action_width` of the policy's action space).

    Raises:
        PolicyError: Wrong shape or non-finite values (the message names the policy).
    """
    arr = np.asarray(action, dtype=np.float64)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] != width or arr.shape[0] < 1:
        hint = ("joint chunks are (N, 8): 7 joints + gripper" if width == 8 else
                "RoboArena's 8-wide joint chunks need the joint_position or joint_velocity space")
        raise PolicyError(
            f"policy {policy!r} returned an action of shape {np.shape(action)}; return "
            f"({width},) or an action chunk (N, {width}) ({hint})"
        )
    if not np.all(np.isfinite(arr)):
        raise PolicyError(f"policy {policy!r} returned non-finite actions; return finite numbers")
    return arr
