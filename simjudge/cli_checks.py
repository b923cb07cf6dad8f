"""Up-front checks of the judge and policy names a command names (``simjudge`` CLI layer).

Run by :func:`simjudge.cli.main` after :func:`simjudge.tasks.spec.config_checks.check_values`
and before the command's work: every ``judge`` / ``judges`` spec must name a registered
judge and every ``policy`` spec a registered policy or one of the spec forms
(``sb3:``, ``remote:``, ``module:function``), with the registry's "did you mean". Nothing
is built or connected. (It lives here, not in ``simjudge.tasks.spec``, because the task
layer does not import the judges or the policies.)

Example:
    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Run:
    ...     judge: tuple[str, ...] = ("privilegd",)
    >>> try:
    ...     check_names(Run())
    ... except ValueError as exc:
    ...     print(str(exc).split(";")[0])
    --judge privilegd: unknown judge 'privilegd'
"""

from __future__ import annotations

import dataclasses
from typing import Any

from simjudge.tasks.spec.config import ConfigError

__all__ = ["check_names"]


def _fields(config: Any) -> dict[str, Any]:
    return {f.name: getattr(config, f.name) for f in dataclasses.fields(config) if f.init}


def _specs(value: Any) -> list[str]:
    items = [value] if isinstance(value, str) else list(value) if isinstance(value, tuple | list) else []
    return [str(v) for v in items]


def check_names(config: Any) -> None:
    """Check the judge and policy names of a config against the registries (nothing is built).

    ``judge`` / ``judges`` hold judge specs (``name[:key=value,...]``); ``policy`` holds policy
    specs, bare (``simjudge serve``) or ``NAME=SPEC`` (``audit``, ``arena``).

    Raises:
        ConfigError: An unknown name, with the registered names and the closest match.
    """
    values = _fields(config)
    judges = [s for key in ("judge", "judges") for s in _specs(values.get(key))]
    if judges:
        from simjudge.judges.registry import JUDGES, parse_judge_spec

        for spec in judges:
            try:
                JUDGES.factory(parse_judge_spec(spec)[0])
            except (KeyError, ValueError) as exc:
                message = exc.args[0] if exc.args else str(exc)
                raise ConfigError(f"--judge {spec}: {message}") from None
    policies = _specs(values.get("policy"))
    flag = "POLICY" if isinstance(values.get("policy"), str) else "--policy"
    if policies:
        from simjudge.policies.registry import check_policy_spec

        for item in policies:
            name, eq, spec = item.partition("=")
            bare = not eq or "://" in name or ":" in name
            try:
                check_policy_spec(item if bare else spec)
            except ValueError as exc:
                raise ConfigError(f"{flag} {item.split('?')[0]}: {exc}") from None
