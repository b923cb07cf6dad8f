"""Episode records: what a judged rollout leaves behind, and its JSON format.

Why a documented, versioned file: episodes are re-judged later (episode judges, benchmarks
of judges against the privileged Φ) and replayed (actions, seed and env kwargs are stored),
possibly by other programs.

**File format** (``format = "simjudge.episode/1"``; one JSON object per file, written by
:class:`~simjudge.judges.judge_record.JudgeRecord` as ``episode_<k:06d>.json``):

====================  ====================  ===================================================
field                 type                  meaning
====================  ====================  ===================================================
format                str                   ``"simjudge.episode/1"``
episode               int                   episode index of the writer (0-based)
judge                 str                   judge class and name (``Judge.label``)
judge_spec            str | null            registry string the judge was made from
env_id                str | null            Gymnasium id (``env.spec.id``) if made by ``gym.make``
env_kwargs            object                ``env.spec.kwargs`` (JSON-safe) or ``{}``
seed                  int | null            ``reset(seed=...)`` of the episode
reset_options         object | null         ``reset(options=...)`` (JSON-safe)
world                 object | null         the sampled world of the episode
                                            (``env.world_sample``: world_seed, object
                                            offsets, joint starts, robot and camera jitter);
                                            null for a fixed world (and in older files)
task_name             str                   task name from the context
context               object                :meth:`JudgeContext.to_dict` (goal as a dict)
steps                 list[object]          one entry per transition, reset state first:
  .step               int                   0 = reset state
  .action             list[float] | null    action taken (null at step 0)
  .env_reward         float | null          env reward (null at step 0)
  .terminated         bool                  flag after the wrappers below the recorder
  .truncated          bool                  ditto
  .progress           float | null          ``info["progress"]``: the env's privileged Φ
  .env_success        bool | null           ``info["success"]`` of the env
  .state              object | null         ``info["state"]``: eef_pos, suction, grasped, joints
  .signal             object                :meth:`JudgeSignal.to_dict`: reward, phi, verdict,
                                            reason, details
opd                   object | null         OPD metrics MC, MP, PPL, CRA, STR (fractions), null
                                            if the judge gave no Φ on some step
epsilon, k            float, int            stagnation threshold and MC bins of ``opd``
outcome               object                verdict (str), is_success (bool), steps (int),
                                            terminated (bool), truncated (bool), finished (bool:
                                            false if the episode was cut by reset/close)
judge_stats           object                observe_calls (int), observe_seconds (float)
versions              object                simjudge, numpy, gymnasium versions; ``backend``:
                                            the physics backend (pybullet, mujoco, sapien)
====================  ====================  ===================================================
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, cast

from simjudge.tasks.spec import versions, write_json

from .signals import JudgeSignal, Verdict, to_jsonable

__all__ = ["EPISODE_FORMAT", "EpisodeRecord", "StepRecord", "library_versions"]

EPISODE_FORMAT = "simjudge.episode/1"
"""Format tag written into every episode file."""


@dataclass
class StepRecord:
    """One recorded transition (see the module docstring for the JSON fields)."""

    step: int
    signal: JudgeSignal
    action: list[float] | None = None
    env_reward: float | None = None
    terminated: bool = False
    truncated: bool = False
    progress: float | None = None
    env_success: bool | None = None
    state: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        data = {k: v for k, v in asdict(self).items() if k != "signal"}
        data["signal"] = self.signal.to_dict()
        return cast(dict[str, Any], to_jsonable(data))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> StepRecord:
        """Inverse of :meth:`to_dict`."""
        fields = {k: v for k, v in data.items() if k != "signal"}
        return cls(signal=JudgeSignal.from_dict(data["signal"]), **fields)


@dataclass
class EpisodeRecord:
    """A judged episode: per-step signals, privileged Φ, actions, outcome and replay data."""

    episode: int = 0
    judge: str = ""
    judge_spec: str | None = None
    env_id: str | None = None
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    seed: int | None = None
    reset_options: dict[str, Any] | None = None
    world: dict[str, Any] | None = None
    task_name: str = ""
    context: dict[str, Any] = field(default_factory=dict)
    steps: list[StepRecord] = field(default_factory=list)
    opd: dict[str, float] | None = None
    epsilon: float = 0.0
    k: int = 4
    outcome: dict[str, Any] = field(default_factory=dict)
    judge_stats: dict[str, Any] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)

    @property
    def phi(self) -> list[float | None]:
        """The judge's Φ per step (None where it gave none)."""
        return [s.signal.phi for s in self.steps]

    @property
    def progress(self) -> list[float | None]:
        """The env's privileged Φ per step (``info["progress"]``), the ground truth."""
        return [s.progress for s in self.steps]

    @property
    def verdict(self) -> Verdict:
        """Verdict of the last recorded step ("undecided" if nothing was recorded)."""
        return self.steps[-1].signal.verdict if self.steps else "undecided"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict in the documented format."""
        data = {k: v for k, v in asdict(self).items() if k != "steps"}
        data = {"format": EPISODE_FORMAT, **to_jsonable(data)}
        data["steps"] = [s.to_dict() for s in self.steps]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EpisodeRecord:
        """Inverse of :meth:`to_dict`.

        Raises:
            ValueError: The data is not in format ``simjudge.episode/1``.
        """
        if data.get("format") != EPISODE_FORMAT:
            raise ValueError(
                f"not an episode record: format is {data.get('format')!r}, expected "
                f"{EPISODE_FORMAT!r}; write records with JudgeRecord"
            )
        fields = {k: v for k, v in data.items() if k not in ("format", "steps")}
        return cls(steps=[StepRecord.from_dict(s) for s in data.get("steps", [])], **fields)

    def save(self, path: str | Path) -> Path:
        """Write the record as indented JSON (parent folders are created)."""
        path = Path(path)
        write_json(path, self.to_dict(), indent=1)
        return path

    @classmethod
    def load(cls, path: str | Path) -> EpisodeRecord:
        """Read a record written by :meth:`save`."""
        return cls.from_dict(json.loads(Path(path).read_text()))


def library_versions() -> dict[str, str]:
    """Versions a record depends on (python, simjudge, numpy, gymnasium, ...)."""
    return versions()
