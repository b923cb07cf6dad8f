"""Pair sampling for the arena: under-evaluated policies first, random sides, blind handles.

RoboArena's rule (``docs/methods.md`` (arena)): policy A is drawn with weight
(500 / (n_evals + 1))^0.8 while n_evals < 500 (weight 1 after that, where the formula
reaches 1), B uniformly among the others, and the A/B order is then randomised. Each side
gets a fresh opaque handle, so an evaluator cannot follow a policy across matches.

Every match is drawn from its own generator seeded by ``(run seed, match index)`` and the
evaluation counts at that point, so planning is deterministic and a resumed run plans the
same matches.

Example:
    >>> counts = {"a": 0, "b": 0, "c": 40}
    >>> m = sample_match(0, counts, ["OpenDrawer-v0"], run_seed=1)
    >>> m.match_id, m.task, {m.policy_a, m.policy_b} <= set(counts), m.handle_a != m.handle_b
    ('m00000', 'OpenDrawer-v0', True, True)
    >>> sampling_weight(0) > sampling_weight(40) > sampling_weight(600) == 1.0
    True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from simjudge.envs.errors import SimjudgeError

from .store import PlannedMatch

__all__ = ["ArenaSamplingError", "match_id", "sample_match", "sampling_weight"]

EVAL_CAP = 500
POWER = 0.8


class ArenaSamplingError(SimjudgeError, ValueError):
    """Matches cannot be sampled from what was given; the message says what is missing."""


def sampling_weight(n_evals: int, cap: int = EVAL_CAP, power: float = POWER) -> float:
    """Weight of a policy with ``n_evals`` evaluations when drawing side A."""
    return float((cap / (n_evals + 1)) ** power) if n_evals < cap else 1.0


def match_id(idx: int) -> str:
    """The id of the ``idx``-th match (``m00042``)."""
    return f"m{idx:05d}"


def sample_match(idx: int, counts: Mapping[str, int], tasks: Sequence[str], *,
                 run_seed: int) -> PlannedMatch:
    """Draw the ``idx``-th match.

    Args:
        idx: Match index (0-based, in planning order).
        counts: Evaluations so far per policy (every policy that may play).
        tasks: Task ids to draw from (uniformly).
        run_seed: The run's seed.

    Raises:
        ArenaSamplingError: Fewer than two policies or no task.
    """
    names = sorted(counts)
    if len(names) < 2:
        raise ArenaSamplingError(f"the arena needs at least two policies, got {names}; add "
                                 "more with --policy NAME=SPEC")
    if not tasks:
        raise ArenaSamplingError("the arena needs at least one task (--tasks)")
    rng = np.random.default_rng([run_seed, idx])
    weights = np.array([sampling_weight(counts[n]) for n in names])
    first = names[int(rng.choice(len(names), p=weights / weights.sum()))]
    others = [n for n in names if n != first]
    second = others[int(rng.integers(len(others)))]
    if rng.random() < 0.5:
        first, second = second, first
    task = str(tasks[int(rng.integers(len(tasks)))])
    seed = int(rng.integers(0, 1_000_000))
    handle_a, handle_b = (rng.bytes(8).hex() for _ in range(2))
    return PlannedMatch(match_id(idx), idx, task, seed, handle_a, handle_b, first, second)
