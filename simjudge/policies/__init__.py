"""simjudge.policies: the ``Policy`` protocol, built-in policies, remote policies.

* :mod:`~simjudge.policies.base`: :class:`Policy` (``reset(task, seed)``,
  ``act(obs) -> action (7,) or chunk (N, 7)``, ``info``), :class:`PolicyInfo`,
  :class:`PolicyTask`, the observation keys.
* :mod:`~simjudge.policies.registry`: :func:`make_policy` from a spec string
  (``oracle``, ``oracle-noisy``, ``random``, ``zero``, ``sb3:PATH.zip``,
  ``module:function``, ``remote:ws://HOST:PORT``, ``skill:ID``, ``executor[:SOLUTION]``).
* :mod:`~simjudge.policies.rollout`: :func:`run_episode`, one episode of a policy
  on an env (chunks executed in order, per-step latency recorded).
* :mod:`~simjudge.policies.remote` / :mod:`~simjudge.policies.server`:
  RoboArena's/openpi's msgpack-numpy WebSocket protocol, client and server.

Example:
    >>> from simjudge.policies import PolicyTask, make_policy, run_episode
    >>> from simjudge.tasks.spec import make_task_env
    >>> env = make_task_env("OpenDrawer-v0")
    >>> result = run_episode(env, make_policy("oracle"), seed=0)
    >>> result.steps > 0, bool(result.success)
    (True, True)
"""

from __future__ import annotations

from .base import (
    ACTION_SPACES,
    OBSERVATION_NEEDS,
    Observation,
    Policy,
    PolicyError,
    PolicyInfo,
    PolicyTask,
    as_chunk,
)
from .builtin import CallablePolicy, OraclePolicy, RandomPolicy, ZeroPolicy
from .observe import observe, to_env_action
from .registry import make_policy, parse_policy_spec, register_policy, registered_policies
from .rollout import EpisodeResult, policy_task, run_episode

__all__ = [
    "ACTION_SPACES",
    "OBSERVATION_NEEDS",
    "CallablePolicy",
    "EpisodeResult",
    "Observation",
    "OraclePolicy",
    "Policy",
    "PolicyError",
    "PolicyInfo",
    "PolicyTask",
    "RandomPolicy",
    "ZeroPolicy",
    "as_chunk",
    "make_policy",
    "observe",
    "parse_policy_spec",
    "policy_task",
    "register_policy",
    "registered_policies",
    "run_episode",
    "to_env_action",
]
