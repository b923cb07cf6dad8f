"""``simjudge demos import-lerobot``: replay a LeRobotDataset's actions in simjudge and judge them.

A user's dataset replays where its action space is simjudge's: each frame's ``action`` is
SimEnv's 7-D ``delta-translation`` action (translation delta, rotation delta, suction in
[-1, 1]). Each episode is replayed from its recorded start: the randomized world and start of
its seed (``meta/simjudge.json`` for datasets simjudge recorded; otherwise episode ``i``
starts from seed ``--seed + i``, as ``simjudge demos record`` numbers them). The replay is
judged by the simulator: verified success (the task's goal on the final state) and Φ.

Example:
    >>> import tempfile
    >>> from simjudge.demos.record import DemosRecordConfig, run_record
    >>> out = tempfile.mkdtemp()
    >>> _ = run_record(DemosRecordConfig(tasks=("CloseDoor-v0",), episodes=1, out=out,
    ...                                  image_size=0), log=None)
    >>> report = run_import(DemosImportConfig(dataset=out), log=None)
    >>> report["replayed_success_rate"], report["episodes"][0]["matches_recorded"]
    (1.0, True)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from simjudge.tasks.spec import builtin_ids, load_task
from simjudge.tasks.spec.config import option

from .episodes import replay_actions
from .lerobot_format import DemoFormatError, LeRobotData, read_lerobot

__all__ = ["DemosImportConfig", "check_action_space", "run_import"]

ACTION_DIM = 7
"""SimEnv's ``delta-translation`` action: dx dy dz, droll dpitch dyaw, suction."""


def _say(line: str) -> None:
    print(line, flush=True)


@dataclass(frozen=True, kw_only=True)
class DemosImportConfig:
    """Replay a LeRobotDataset's episodes in simjudge and judge them (verified success, Φ).

    Attributes:
        dataset: The dataset's root folder (holding ``meta/`` and ``data/``).
        task: The built-in task every episode is of; default: the task ids simjudge
            recorded, else the built-in task whose description is the episode's task text.
        seed: Seed of episode 0's start when the dataset does not record seeds (episode
            ``i`` starts from ``seed + i``).
        episodes: Replay only the first N episodes (0: all).
        out: Write the report as JSON here too.
    """

    dataset: str = option(positional=True)
    task: str | None = None
    seed: int = 0
    episodes: int = 0
    out: str | None = None


def check_action_space(data: LeRobotData, task: str) -> None:
    """Raise :class:`DemoFormatError` unless the dataset's ``action`` is ``task``'s env action.

    The message names the mismatch (the feature, its shape and names, what the env takes).
    """
    from simjudge.tasks.spec import make_task_env

    ft = data.features.get("action")
    if ft is None:
        raise DemoFormatError(f"{data.root}: no 'action' feature (features: {sorted(data.features)}); "
                              "a replayable dataset records each frame's action")
    env = make_task_env(task)
    try:
        env_shape = tuple(int(n) for n in (env.action_space.shape or ()))
    finally:
        env.close()
    shape = tuple(int(n) for n in ft.get("shape", ()))
    dtype = str(ft.get("dtype", ""))
    if shape != env_shape or not dtype.startswith("float"):
        names = ft.get("names")
        raise DemoFormatError(
            f"{data.root}: its action is {dtype} {list(shape)}"
            f"{f' (names {names})' if names else ''}, but {task}'s env takes float {list(env_shape)} "
            "delta-translation actions (dx, dy, dz, droll, dpitch, dyaw, suction in [-1, 1]); "
            "convert the actions to that space before importing")


def _task_of(text: str, by_text: dict[str, str], root: Path) -> str:
    if text in by_text:
        return by_text[text]
    raise DemoFormatError(f"{root}: no built-in task is described as {text!r}; name it with --task "
                          f"(built-in tasks: {sorted(set(by_text.values()))[:8]}...)")


def _episode_tasks(data: LeRobotData, config: DemosImportConfig) -> list[str]:
    if config.task is not None:
        if config.task not in set(builtin_ids()):
            raise DemoFormatError(f"unknown task {config.task!r}; built-in tasks are {sorted(builtin_ids())}")
        return [config.task] * len(data.episodes)
    metas = data.simjudge.get("episodes") or []
    if len(metas) == len(data.episodes):
        return [str(m["task"]) for m in metas]
    by_text: dict[str, str] = {}
    for tid in builtin_ids():
        spec = load_task(tid)
        by_text.setdefault(spec.description or spec.name, tid)
    return [_task_of(str((row["tasks"] or [""])[0]), by_text, data.root) for row in data.episodes]


def run_import(config: DemosImportConfig, *, log: Callable[[str], None] | None = _say) -> dict[str, Any]:
    """Replay and judge the episodes of a LeRobotDataset; returns the report.

    Raises:
        DemoFormatError: Not a v3.0 dataset, an unknown task, or an action space that is not
            the task's (the message names the mismatch).
    """
    data = read_lerobot(config.dataset)
    tasks = _episode_tasks(data, config)
    for task in dict.fromkeys(tasks):
        check_action_space(data, task)
    metas = data.simjudge.get("episodes") or []
    keys = ["action"] + (["next.success"] if "next.success" in data.features else [])
    cols = data.columns(keys)
    rows: list[dict[str, Any]] = []
    slices = data.episode_slices()
    count = len(slices) if config.episodes <= 0 else min(config.episodes, len(slices))
    for i in range(count):
        seed = int(metas[i]["seed"]) if len(metas) == len(slices) else config.seed + i
        actions = np.asarray(cols["action"][slices[i]], dtype=np.float32)
        success, phis = replay_actions(tasks[i], seed, actions)
        recorded = bool(np.asarray(cols["next.success"][slices[i]]).reshape(-1)[-1]) if "next.success" in cols else None
        row = {"episode_index": int(data.episodes[i]["episode_index"]), "task": tasks[i], "seed": seed,
               "frames": int(actions.shape[0]), "steps_replayed": len(phis) - 1, "success": success,
               "final_progress": phis[-1], "max_progress": max(phis), "recorded_success": recorded,
               "matches_recorded": None if recorded is None else recorded == success}
        rows.append(row)
        if log:
            log(f"[{i + 1}/{count}] episode {row['episode_index']} {tasks[i]} seed {seed}: "
                f"{'success' if success else 'failure'}, Φ {phis[-1]:.2f} (max {max(phis):.2f}), "
                f"{row['steps_replayed']}/{row['frames']} actions"
                + ("" if recorded is None else f", recorded {'success' if recorded else 'failure'}"))
    report = {"dataset": str(data.root), "fps": data.info.get("fps"), "episodes": rows,
              "replayed_success_rate": sum(r["success"] for r in rows) / len(rows) if rows else 0.0,
              "mean_final_progress": float(np.mean([r["final_progress"] for r in rows])) if rows else 0.0}
    if config.out:
        Path(config.out).parent.mkdir(parents=True, exist_ok=True)
        Path(config.out).write_text(json.dumps(report, indent=2))
    if log:
        log(f"replayed {len(rows)} episodes of {data.root}: success {report['replayed_success_rate']:.2f}, "
            f"mean final Φ {report['mean_final_progress']:.2f}")
    return report
