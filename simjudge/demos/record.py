"""``simjudge demos record``: episodes of a policy on randomized tasks, as a dataset.

Every episode is first written to its own ``.npz`` (atomically) under the output folder,
so a killed recording resumes at the next episode: the episodes already on disk are kept,
not re-run. ``--format npz`` keeps exactly those files (``episodes/*.npz`` and
``demos.json``); ``--format lerobot`` writes the LeRobotDataset
(:mod:`simjudge.demos.lerobot_format`) from them once all are recorded and removes the
staging folder.

Example:
    >>> import tempfile
    >>> from simjudge.demos.record import DemosRecordConfig, run_record
    >>> out = tempfile.mkdtemp()
    >>> summary = run_record(DemosRecordConfig(tasks=("PressButton-v0",), episodes=2, out=out,
    ...                                        format="npz", image_size=0), log=None)
    >>> summary["episodes"], summary["success_rate"]
    (2, 1.0)
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from simjudge.policies import PolicyError, make_policy
from simjudge.tasks.spec import builtin_ids, make_task_env
from simjudge.tasks.spec.config import config_to_dict, option

from .episodes import Episode, frame_rate, record_episode
from .lerobot_format import write_lerobot

__all__ = ["DemosRecordConfig", "check_tasks", "run_record"]

STAGING = ".staging"
"""Folder under ``--out`` holding each episode's ``.npz`` until the LeRobotDataset is written."""


def _say(line: str) -> None:
    print(line, flush=True)


@dataclass(frozen=True, kw_only=True)
class DemosRecordConfig:
    """Record episodes of a policy on randomized tasks as a dataset (LeRobotDataset or npz).

    Episode ``i`` of a task resets with seed ``seed + i`` (its randomized world and start), so
    the dataset replays. A line is printed per episode; re-running the same command resumes a
    killed recording at the next episode.

    Attributes:
        tasks: Built-in task ids, comma separated (``PressButton-v0,CloseDoor-v0``).
        episodes: Episodes per task.
        policy: The policy spec that acts (``oracle``, ``oracle-noisy:noise=0.3``, ``bc:PATH``).
        out: The dataset folder.
        format: ``lerobot`` (a LeRobotDataset, format v3.0) or ``npz`` (one file per episode).
        image_size: Side of the square exterior camera frames; 0 records none.
        seed: Seed of each task's first episode.
        only_success: Keep only the episodes that succeeded (verified), recording until
            ``episodes`` of them are kept or ``10 * episodes`` were tried.
    """

    tasks: tuple[str, ...] = option(default=("PressButton-v0",))
    episodes: int = 10
    policy: str = "oracle"
    out: str = option()
    format: Literal["lerobot", "npz"] = "lerobot"
    image_size: int = 64
    seed: int = 0
    only_success: bool = False


def check_tasks(tasks: tuple[str, ...] | list[str]) -> list[str]:
    """The task ids of a comma list, each a built-in task.

    Raises:
        PolicyError: An unknown task (the message lists the built-in ones).
    """
    known = set(builtin_ids())
    flat = [t.strip() for item in tasks for t in str(item).split(",") if t.strip()]
    unknown = [t for t in flat if t not in known]
    if unknown or not flat:
        raise PolicyError(f"unknown task(s) {unknown or list(tasks)}; built-in tasks are {sorted(known)}")
    return flat


def _check_resume(path: Path, config: DemosRecordConfig) -> None:
    """Refuse to resume another recording's episodes (all options but ``episodes`` must agree)."""
    mine = {k: v for k, v in config_to_dict(config).items() if k not in ("episodes", "tasks")}
    if path.is_file():
        theirs = json.loads(path.read_text())
        if theirs != mine:
            diff = sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))
            raise PolicyError(f"{path.parent} holds episodes recorded with other options ({', '.join(diff)}: "
                              f"{[theirs.get(k) for k in diff]}); resume with the same options or use another --out")
        return
    path.write_text(json.dumps(mine, indent=1, default=str))


def _staged(folder: Path, task: str, seed: int) -> Path:
    return folder / f"{task}__s{seed:06d}.npz"


def run_record(config: DemosRecordConfig, *, log: Callable[[str], None] | None = _say) -> dict[str, Any]:
    """Record (or resume) the dataset of ``config``; returns its summary (also ``demos.json``).

    Raises:
        PolicyError: Unknown task, a bad policy spec, or ``episodes < 1``.
    """
    tasks = check_tasks(config.tasks)
    if config.episodes < 1:
        raise PolicyError(f"--episodes must be at least 1, got {config.episodes}")
    out = Path(config.out)
    done_file = out / "demos.json"
    if done_file.is_file() and not (out / STAGING).exists():
        summary = json.loads(done_file.read_text())
        if summary.get("config") == config_to_dict(config):
            if log:
                log(f"{out}: already recorded ({summary['episodes']} episodes); nothing to do")
            return dict(summary)
    staging = out / (STAGING if config.format == "lerobot" else "episodes")
    staging.mkdir(parents=True, exist_ok=True)
    _check_resume(staging / "recording.json", config)
    policy = make_policy(config.policy)
    kept: list[Path] = []
    fps = 0.0
    total = len(tasks) * config.episodes
    try:
        for task in tasks:
            env = make_task_env(task)
            fps = frame_rate(env.unwrapped)
            try:
                kept += _record_task(config, task, policy, env, staging, len(kept), total, log)
            finally:
                env.close()
    finally:
        policy.close()
    episodes = [Episode.load_npz(p) for p in kept]
    summary = _summary(config, episodes, fps)
    if config.format == "npz":
        summary["order"] = [str(p.relative_to(out)) for p in kept]
    if config.format == "lerobot":
        write_lerobot(out, episodes, fps=fps)
        shutil.rmtree(staging)
    done_file.write_text(json.dumps(summary, indent=2, default=float))
    if log:
        log(f"wrote {out} ({config.format}): {summary['episodes']} episodes, {summary['frames']} frames, "
            f"success {summary['success_rate']:.2f}")
    return summary


def _record_task(config: DemosRecordConfig, task: str, policy: Any, env: Any, staging: Path,
                 offset: int, total: int, log: Callable[[str], None] | None) -> list[Path]:
    kept: list[Path] = []
    tries = config.episodes * (10 if config.only_success else 1)
    for i in range(tries):
        if len(kept) == config.episodes:
            break
        seed = config.seed + i
        path = _staged(staging, task, seed)
        note = "resumed"
        start = time.perf_counter()
        if path.is_file():
            ep = Episode.load_npz(path)
        else:
            ep = record_episode(task, policy, seed, image_size=config.image_size, env=env)
            ep.save_npz(path)
            note = f"{time.perf_counter() - start:.1f} s"
        if config.only_success and not ep.success:
            if log:
                log(f"  {task} seed {seed}: failed, not kept ({note})")
            continue
        kept.append(path)
        if log:
            log(f"[{offset + len(kept)}/{total}] {task} seed {seed}: "
                f"{'success' if ep.success else 'failure'}, Φ {ep.final_progress:.2f}, {ep.length} steps ({note})")
    return kept


def _summary(config: DemosRecordConfig, episodes: list[Episode], fps: float) -> dict[str, Any]:
    per_task: dict[str, list[bool]] = {}
    for ep in episodes:
        per_task.setdefault(ep.task, []).append(ep.success)
    return {"config": config_to_dict(config), "episodes": len(episodes),
            "frames": sum(ep.length for ep in episodes), "fps": fps,
            "success_rate": (sum(ep.success for ep in episodes) / len(episodes)) if episodes else 0.0,
            "tasks": {t: {"episodes": len(s), "success_rate": sum(s) / len(s)} for t, s in per_task.items()}}
