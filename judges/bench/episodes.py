"""Benchmark episodes: rollouts with the privileged Φ and the full simulator state per step.

Why the full :class:`~simjudge.envs.sim_state.SimState` and not only Φ: any judge — one
that did not exist when the rollouts were made — can then be evaluated on any recorded
state by restoring it (``env.set_state``) and calling the judge's ``observe`` on the env's
:class:`~simjudge.envs.state_api.StateView`. Rollouts are made once (in
:mod:`simjudge.pipelines.judge_bench`, which owns policies and tasks) and cached on disk.

**File format** (``format = "simjudge.bench-episodes/1"``; gzip-compressed JSON, one file
per task and seed): ``{"format", "task", "seed", "config", "episodes": [...]}``, each
episode with the fields of :class:`BenchEpisode`: ``task`` (env id), ``policy`` (str),
``seed`` (int), ``params`` (object: noise, trigger ...), ``phi`` (list[float]: privileged
Φ per step on the restored state, reset state first), ``success`` (list[bool]: goal holds),
``phi_live`` (list[float]: the env's live ``info["progress"]``),
``states`` (list[object]: :meth:`SimState.to_dict`), ``summaries`` (list[object]:
``info["state"]`` — eef_pos, suction, grasped, joints).
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from simjudge.envs.sim_state import SimState
from simjudge.tasks.spec import atomic_write

from ..context import JudgeContext
from ..episode import EpisodeRecord, StepRecord
from ..signals import SUCCESS, UNDECIDED, JudgeSignal, to_jsonable

__all__ = [
    "BENCH_EPISODES_FORMAT",
    "BenchEpisode",
    "load_episodes",
    "save_episodes",
    "to_record",
]

BENCH_EPISODES_FORMAT = "simjudge.bench-episodes/1"
"""Format tag of cached benchmark rollouts."""


@dataclass
class BenchEpisode:
    """One cached rollout (see the module docstring for the fields).

    Attributes:
        task: Env id of the built-in task.
        policy: Policy name (``oracle``, ``noisy``, ``release``, ``pushback``, ``stop``,
            ``random``).
        seed: Reset / policy seed.
        phi: Privileged Φ per step, reset state first, as the privileged judge computes it
            on the *restored* state (what every judge sees in the benchmark).
        success: Whether the goal holds per step (privileged verdict on the restored state).
        states: ``SimState.to_dict()`` per step.
        summaries: ``info["state"]`` per step.
        params: Policy parameters (noise, trigger Φ, ...).
        phi_live: ``info["progress"]`` as the env reported it live. It can differ from
            ``phi`` by a physics substep of motion: the backend updates a moving part's
            bounding box before integrating the last substep, while a restored state has
            it up to date.
    """

    task: str
    policy: str
    seed: int
    phi: list[float]
    success: list[bool]
    states: list[dict[str, Any]]
    summaries: list[dict[str, Any]] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)
    phi_live: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        n = len(self.phi)
        if not n or len(self.success) != n or len(self.states) != n:
            raise ValueError(
                f"episode {self.id}: phi, success and states need one entry per step "
                f"(got {len(self.phi)}, {len(self.success)}, {len(self.states)})"
            )

    @property
    def id(self) -> str:
        """``task/policy/seed`` (unique within a benchmark run)."""
        return f"{self.task}/{self.policy}/{self.seed}"

    def __len__(self) -> int:
        return len(self.phi)

    @property
    def succeeded(self) -> bool:
        """Whether the episode ended in success (its last step)."""
        return bool(self.success[-1])

    def state(self, index: int) -> SimState:
        """The simulator state of step ``index`` (restore it with ``env.set_state``)."""
        return SimState.from_dict(self.states[index])

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return to_jsonable(asdict(self))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BenchEpisode:
        """Inverse of :meth:`to_dict`."""
        return cls(**dict(data))


def save_episodes(
    path: str | Path, episodes: Sequence[BenchEpisode], meta: Mapping[str, Any] | None = None
) -> Path:
    """Write episodes as gzip JSON (parent folders are created)."""
    path = Path(path)
    data = {"format": BENCH_EPISODES_FORMAT, **to_jsonable(dict(meta or {}))}
    data["episodes"] = [e.to_dict() for e in episodes]
    text = json.dumps(data, separators=(",", ":"))
    atomic_write(path, gzip.compress(text.encode("utf-8"), mtime=0))
    return path


def load_episodes(path: str | Path) -> tuple[list[BenchEpisode], dict[str, Any]]:
    """Read episodes written by :func:`save_episodes`; returns (episodes, meta).

    Raises:
        ValueError: The file is not in format ``simjudge.bench-episodes/1``.
    """
    with gzip.open(Path(path), "rt", encoding="utf-8") as fh:
        data = json.load(fh)
    if data.get("format") != BENCH_EPISODES_FORMAT:
        raise ValueError(
            f"{path} is not a benchmark episode file (format {data.get('format')!r}, expected "
            f"{BENCH_EPISODES_FORMAT!r}); delete it and re-run to regenerate the rollouts"
        )
    episodes = [BenchEpisode.from_dict(e) for e in data.pop("episodes")]
    data.pop("format")
    return episodes, data


def to_record(
    episode: BenchEpisode,
    context: JudgeContext,
    indices: Sequence[int] | None = None,
    claim: str | None = None,
) -> EpisodeRecord:
    """An :class:`EpisodeRecord` of (a reordering of) the episode, for episode judges.

    Signals are the privileged Φ (as if recorded with the privileged judge); ``state`` is
    the per-step summary. ``indices`` selects and orders steps (perturbations); steps are
    renumbered 0.. in the new order. ``outcome.claimed`` is ``claim`` when given.
    """
    order = list(range(len(episode))) if indices is None else list(indices)
    steps = []
    for new, old in enumerate(order):
        phi = float(episode.phi[old])
        success = bool(episode.success[old])
        signal = JudgeSignal(phi, phi, SUCCESS if success else UNDECIDED, "privileged Φ")
        summary = episode.summaries[old] if old < len(episode.summaries) else None
        steps.append(StepRecord(step=new, signal=signal, progress=phi, env_success=success,
                                state=summary))
    last_success = bool(episode.success[order[-1]]) if order else False
    outcome: dict[str, Any] = {"is_success": last_success, "steps": max(len(order) - 1, 0),
                               "finished": True}
    if claim is not None:
        outcome["claimed"] = claim
    return EpisodeRecord(
        judge="privileged",
        env_id=episode.task,
        seed=episode.seed,
        task_name=context.task_name,
        context=context.to_dict(),
        steps=steps,
        outcome=outcome,
    )
