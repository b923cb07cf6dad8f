"""Policies by spec string: ``make_policy("oracle-noisy:noise=0.3")``.

Spec forms (the same on ``--policy NAME=SPEC`` of ``simjudge audit`` and ``arena``):

* ``NAME`` or ``NAME:key=value,...``: a registered policy (:func:`registered_policies`):
  ``oracle`` (= ``scripted``), ``oracle-noisy``, ``oracle-delay``,
  ``oracle-early-release``, ``oracle-wrong-target``, ``reach-only``, ``random``, ``zero``.
* ``sb3:PATH.zip``: a stable-baselines3 checkpoint.
* ``bc:PATH.npz``: a behaviour-cloning policy (``simjudge policies train-bc``;
  :mod:`~simjudge.policies.bc`).
* ``zoo:NAME``: a policy of the shipped zoo (``simjudge policies list``;
  :mod:`~simjudge.policies.zoo`).
* ``lerobot:PATH``: a LeRobot policy checkpoint (:mod:`~simjudge.policies.lerobot_policy`).
* ``skill:ID[,root=DIR]``: a skill-library skill replayed as joint-position actions
  (:mod:`~simjudge.policies.replay`).
* ``executor[:SOLUTION][,reward_solver=mpc]``: the subtask executor's plan for a solution
  (default: the task's reference solution) as joint-position actions
  (:mod:`~simjudge.policies.executor_policy`).
* ``remote:ws://HOST:PORT[?api_key=KEY&timeout=S]`` (or the bare URL): a RoboArena/openpi
  policy server.
* ``module:function``: any importable callable ``f(obs) -> action``; a class or a
  ready-made object with ``act`` is used as a :class:`Policy` itself.

Examples:
    >>> policy = make_policy("oracle-noisy:noise=0.2")
    >>> policy.info.name, policy.info.spec, policy.info.observation_needs
    ('oracle-noisy', 'oracle-noisy:noise=0.2', ('privileged',))
    >>> sorted(registered_policies())[:3]
    ['executor', 'oracle', 'oracle-delay']
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable
from typing import Any

from simjudge.envs.registry import Registry, parse_spec_params

from .base import Policy, PolicyError
from .builtin import CallablePolicy, OraclePolicy, RandomPolicy, ZeroPolicy, load_callable

__all__ = ["POLICIES", "check_policy_spec", "make_policy", "parse_policy_spec", "register_policy",
           "registered_policies"]

POLICIES: Registry[Policy] = Registry(
    "policy", plural="policies", error=PolicyError,
    hint=", or use sb3:PATH.zip, bc:PATH.npz, zoo:NAME, lerobot:PATH, remote:ws://HOST:PORT, "
         "module:function")
"""The policies by name (:class:`simjudge.envs.registry.Registry`; plugins: entry-point group
``simjudge.policies``)."""
_MODULE = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*$")
_POSITIONAL = {"skill": "skill", "executor": "solution"}
"""Spec names whose first parameter may be given bare (``skill:ID``, ``executor:PATH``)."""
_PREFIXES = ("sb3", "remote", "skill", "bc", "zoo", "lerobot")
"""Spec prefixes that take an argument (``sb3:PATH.zip``, ``remote:URL``, ``skill:ID``)."""


def register_policy(
    name: str, factory: Callable[..., Policy], summary: str = "", *, replace: bool = False
) -> None:
    """Register ``factory(**params)`` under ``name`` (letters, digits, ``-``, ``_``).

    Raises:
        PolicyError: Malformed name, a reserved prefix, or taken without ``replace``.
    """
    if name in _PREFIXES:
        raise PolicyError(
            f"policy names use letters, digits, '-' and '_' (not {'/'.join(_PREFIXES)}); got {name!r}"
        )
    try:
        POLICIES.register(name, factory, summary, replace=replace)
    except ValueError as exc:
        raise PolicyError(str(exc)) from None


def registered_policies() -> dict[str, str]:
    """Registered names -> one-line summaries."""
    return POLICIES.summaries()


def parse_policy_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """Split ``name:key=value,...`` into the name and typed parameters.

    For ``skill`` and ``executor`` the first parameter may be bare: ``skill:ID`` is
    ``skill:skill=ID``, ``executor:PATH.yaml`` is ``executor:solution=PATH.yaml``.

    Raises:
        PolicyError: A parameter is not ``key=value`` or is repeated.
    """
    name, _, rest = spec.strip().partition(":")
    first = rest.split(",")[0]
    if name.strip() in _POSITIONAL and first.strip() and "=" not in first:
        rest = f"{_POSITIONAL[name.strip()]}={rest}"
    params = parse_spec_params(spec, rest, "policy", PolicyError)
    return name.strip(), params


def _with_spec(policy: Any, spec: str) -> Policy:
    info = getattr(policy, "info", None)
    if info is not None and hasattr(info, "with_spec") and hasattr(policy, "_info"):
        policy._info = info.with_spec(spec)
    return policy


def _from_callable(spec: str) -> Policy:
    obj = load_callable(spec)
    if inspect.isclass(obj):
        obj = obj()
    if all(callable(getattr(obj, m, None)) for m in ("act", "reset")) and hasattr(obj, "info"):
        return obj
    return CallablePolicy(obj, name=spec)


def check_policy_spec(spec: str) -> None:
    """Raise :class:`PolicyError` now for a registered-name spec that cannot be built.

    Cheap (nothing is loaded or connected): a ``remote:`` spec's URL and options are
    checked here, a ``zoo:`` name and its weights' SHA-256, that a ``bc:`` file and a
    ``lerobot:`` checkpoint's ``config.json`` exist; ``sb3:`` and ``module:function`` specs
    when the policy is made.
    """
    spec = str(spec).strip()
    head, _, rest = spec.partition(":")
    if spec.startswith(("ws://", "wss://")) or head == "remote":
        from .remote import check_remote_spec

        check_remote_spec(rest if head == "remote" else spec)
        return
    if head in ("bc", "zoo", "lerobot"):
        _check_learned(head, rest.strip())
        return
    if head in _PREFIXES:
        return
    if head not in POLICIES and rest and _MODULE.match(head) and "=" not in rest:
        return
    name, params = parse_policy_spec(spec)
    accepted = inspect.signature(POLICIES.factory(name)).parameters  # unknown: the hints
    unknown = sorted(set(params) - set(accepted)) if not any(
        p.kind is p.VAR_KEYWORD for p in accepted.values()) else []
    if unknown:
        raise PolicyError(f"policy spec {spec!r}: {name} takes no parameter(s) {unknown}; "
                          f"it takes {sorted(accepted)}")


def make_policy(spec: str) -> Policy:
    """Build a policy from its spec (see the module docstring).

    Raises:
        PolicyError: Unknown name (with the registered names and a close match), bad
            parameters, a missing checkpoint or module.
    """
    spec = str(spec).strip()
    if spec.startswith(("ws://", "wss://")):
        spec = f"remote:{spec}"
    head, _, rest = spec.partition(":")
    if head == "remote":
        from .remote import RemotePolicy
        from .wire_limits import redact_secrets

        return _with_spec(RemotePolicy(rest), redact_secrets(spec))
    if head == "sb3":
        from .sb3 import SB3Policy

        return _with_spec(SB3Policy(rest), spec)
    if head in ("bc", "zoo", "lerobot"):
        return _with_spec(_learned(head, rest), spec)
    if head == "skill":
        _, params = parse_policy_spec(spec)
        try:
            return _with_spec(_skill_replay(**params), spec)
        except TypeError as exc:
            raise PolicyError(f"policy spec {spec!r}: write skill:ID[,root=DIR,chunk=N] ({exc})") from exc
    if head not in POLICIES and rest and _MODULE.match(head) and "=" not in rest:
        return _with_spec(_from_callable(spec), spec)
    name, params = parse_policy_spec(spec)
    factory = POLICIES.factory(name)
    try:
        policy = factory(**params)
    except TypeError as exc:
        raise PolicyError(f"policy spec {spec!r}: {exc}") from exc
    return _with_spec(policy, spec)


def _check_learned(head: str, rest: str) -> None:
    """The cheap part of :func:`_learned`: the zoo name, the files exist."""
    from pathlib import Path

    if not rest:
        raise PolicyError(f"policy spec {head}: needs its argument: {head}:"
                          f"{'NAME (simjudge policies list)' if head == 'zoo' else 'PATH'}")
    if head == "zoo":
        from .zoo import zoo_path

        zoo_path(rest)
    elif head == "bc" and not Path(rest).is_file():
        raise PolicyError(f"BC weights {rest} do not exist; train them with `simjudge policies train-bc "
                          f"--demos DIR --out {rest}` or use a zoo policy (`simjudge policies list`)")
    elif head == "lerobot" and not (Path(rest) / "config.json").is_file():
        raise PolicyError(f"lerobot:{rest}: no config.json there; give the pretrained_model folder of a "
                          "lerobot-train checkpoint (outputs/.../checkpoints/last/pretrained_model)")


def _learned(head: str, rest: str) -> Policy:
    """A ``bc:PATH``, ``zoo:NAME`` or ``lerobot:PATH`` policy."""
    _check_learned(head, rest.strip())
    if head == "bc":
        from .bc import BCPolicy

        return BCPolicy(rest.strip())
    if head == "zoo":
        from .zoo import zoo_policy

        return zoo_policy(rest.strip())
    from .lerobot_policy import make_lerobot_policy

    return make_lerobot_policy(rest.strip())


def _oracle(variant: str, name: str, **defaults: Any) -> Callable[..., Policy]:
    return functools.partial(OraclePolicy, variant=variant, name=name, **defaults)


def _skill_replay(skill: str, root: str | None = None, chunk: int = 8) -> Policy:
    from .replay import SkillReplayPolicy

    return SkillReplayPolicy(str(skill), root=root, chunk=chunk)


def _executor(
    solution: str | None = None,
    reward_solver: str = "mpc",
    budget_steps: int | None = None,
    chunk: int = 1,
) -> Policy:
    from .executor_policy import ExecutorPolicy

    return ExecutorPolicy(solution, reward_solver=reward_solver, budget_steps=budget_steps, chunk=chunk)


def _register_builtins() -> None:
    builtins: list[tuple[str, Callable[..., Policy], str]] = [
        ("oracle", _oracle("oracle", "oracle"), "privileged scripted oracle (solves built-in tasks)"),
        ("scripted", _oracle("oracle", "scripted"), "alias of oracle"),
        ("oracle-noisy", _oracle("noisy", "oracle-noisy", noise=0.3), "oracle + action noise (noise)"),
        ("oracle-delay", _oracle("delay", "oracle-delay"), "oracle acting `delay` steps late"),
        (
            "oracle-early-release",
            _oracle("early-release", "oracle-early-release"),
            "oracle that lets go once progress reaches `at`",
        ),
        (
            "oracle-wrong-target",
            _oracle("wrong-target", "oracle-wrong-target"),
            "oracle solving the wrong goal (joint reversed, in/on swapped)",
        ),
        (
            "reach-only",
            _oracle("reach-only", "reach-only"),
            "oracle's approach to the part, then still: never touches or attaches",
        ),
        ("executor", _executor, "the executor's plan for a solution as joint positions"),
        ("random", RandomPolicy, "uniform random actions (scale)"),
        ("zero", ZeroPolicy, "no motion, suction off"),
    ]
    for name, factory, summary in builtins:
        register_policy(name, factory, summary, replace=True)


_register_builtins()
