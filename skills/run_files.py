"""The files a solution execution writes into its :class:`~simjudge.tasks.spec.RunDir`.

Layout (written by :func:`~simjudge.skills.executor.execute_solution`)::

    RUN/config.json           seed, reward solver, budget, solution digest, provenance
                              (the identity keys are checked on resume)
    RUN/solution.yaml         the solution executed
    RUN/verdicts.jsonl        one SubtaskVerdict per line, in subtask order
    RUN/summary.json          the Outcome (claimed and verified success, goal facts), config,
                              seed, versions
    RUN/solution.mp4          frames of all subtasks (primitives and SAC rollouts)
    RUN/subtasks/NN/verdict.json, start_state.json, end_state.json (SimState.to_dict),
                   video.mp4, trajectory.json (primitives: recorded robot commands),
                   actions.json (SAC: the final rollout's actions), policy.zip + policy.json (SAC)

A subtask's ``verdict.json`` is written last, so it marks the subtask finished: a resumed
run skips exactly the subtasks that have one.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import numpy as np

from simjudge.envs.sim_state import SimState
from simjudge.tasks.spec import (
    Outcome,
    RunDir,
    Solution,
    SubtaskVerdict,
    atomic_write,
    json_default,
    read_json,
    versions,
    write_json,
)

__all__ = [
    "IDENTITY_KEYS",
    "OUTPUTS",
    "load_subtask",
    "prepare_run",
    "read_frames",
    "save_subtask",
    "subtask_dir",
    "write_frames",
    "write_results",
]

OUTPUTS: tuple[str, ...] = ("subtasks", "verdicts.jsonl", "summary.json", "solution.mp4")
"""What a fresh (non-resumed) execution clears."""
IDENTITY_KEYS: tuple[str, ...] = ("solution_digest", "seed", "reward_solver")
"""Config keys a resumed execution must share with the recorded one."""


def subtask_dir(run: RunDir, index: int) -> Path:
    """Folder of subtask ``index``."""
    return run.path("subtasks", f"{index:02d}")


def prepare_run(run: RunDir, solution: Solution, config: dict[str, Any], resume: bool) -> None:
    """Record the config (with the solution's digest) and the solution; clear or resume.

    Raises:
        RunDirError: Resuming a run of another solution, seed or reward solver.
    """
    digest = hashlib.sha256(solution.to_yaml().encode()).hexdigest()[:16]
    run.prepare({**config, "solution_digest": digest}, resume=resume, identity=IDENTITY_KEYS,
                clear=OUTPUTS)
    run.write_text("solution.yaml", solution.to_yaml())


def save_subtask(
    run: RunDir,
    verdict: SubtaskVerdict,
    start: SimState,
    end: SimState,
    frames: list[np.ndarray],
    fps: int,
) -> None:
    """Write a subtask's files; the verdict last, so it marks the subtask finished."""
    where = subtask_dir(run, verdict.index)
    write_json(where / "start_state.json", start.to_dict())
    write_json(where / "end_state.json", end.to_dict())
    details = verdict.details
    if "trajectory" in details:
        write_json(where / "trajectory.json", details.pop("trajectory"))
    if "actions" in details.get("rollout", {}):
        write_json(where / "actions.json", details["rollout"].pop("actions"))
    write_frames(frames, where / "video.mp4", fps)
    write_json(where / "verdict.json", verdict.to_dict())


def load_subtask(run: RunDir, index: int) -> tuple[SubtaskVerdict, SimState] | None:
    """A finished subtask's verdict and end state, or None if it did not finish."""
    where = subtask_dir(run, index)
    if not (where / "verdict.json").exists() or not (where / "end_state.json").exists():
        return None
    verdict = SubtaskVerdict.from_dict(read_json(where / "verdict.json"))
    return verdict, SimState.from_dict(read_json(where / "end_state.json"))


def write_results(
    run: RunDir, outcome: Outcome, config: dict[str, Any], video: bool, fps: int
) -> None:
    """Write ``verdicts.jsonl``, ``summary.json`` and ``solution.mp4``."""
    lines = [json.dumps(v.to_dict(), default=json_default) for v in outcome.verdicts]
    atomic_write(run.path("verdicts.jsonl"), "".join(line + "\n" for line in lines))
    brief = [replace(v, details={}) for v in outcome.verdicts]
    record = replace(outcome, verdicts=brief).to_dict()
    record["verdicts"] = [
        {k: v[k] for k in ("index", "name", "kind", "success", "reason", "error_type", "steps")}
        for v in record["verdicts"]
    ]
    record.update(config=config, seed=config.get("seed"), versions=versions())
    if video:
        frames = [
            f for v in outcome.verdicts for f in read_frames(subtask_dir(run, v.index) / "video.mp4")
        ]
        if frames:
            write_frames(frames, run.path("solution.mp4"), fps)
            record["video"] = "solution.mp4"
    run.write_json("summary.json", record)


def write_frames(frames: list[np.ndarray], path: Path, fps: int) -> None:
    """Write frames as an mp4 (nothing if there are none)."""
    from simjudge.envs.wrappers import write_video

    if frames:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_video(frames, path, fps=fps)


def read_frames(path: Path) -> list[np.ndarray]:
    """The frames of an mp4, or [] if it does not exist."""
    import imageio.v2 as imageio

    if not path.exists():
        return []
    reader = imageio.get_reader(path)
    with reader:
        # imageio's stubs type Reader.__iter__ as one array; it yields one per frame
        return [np.asarray(frame) for frame in cast(Iterable[Any], reader)]
