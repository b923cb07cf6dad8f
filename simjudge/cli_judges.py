"""``simjudge judges dataset`` and ``simjudge judges train``: data and weights of learned judges.

The dataset is the judge-bench rollouts (:data:`simjudge.pipelines.judge_bench.POLICIES`:
oracle, noisy, early release, push-back, stop, random) of built-in tasks on seeds that
judge-bench's default seed 0 never uses, featurised into NPZ shards (one per task and
seed; existing shards are kept, so an interrupted run resumes). Training rebuilds the
shipped weights of ``obs-progress`` from the shards and a seed.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
from tqdm import tqdm

from simjudge.cli_configs import Command
from simjudge.judges.learned.splits import DATA_TASKS, HELDOUT_TASKS, OBS_TRAIN_TASKS
from simjudge.tasks.spec.config import ConfigError, option

__all__ = ["JUDGES_COMMANDS", "JUDGES_GROUPS", "JudgesDatasetConfig", "JudgesTrainConfig",
           "build_dataset", "model_card", "train_obs_progress"]


@dataclass(frozen=True)
class JudgesDatasetConfig:
    """Roll out built-in tasks and store featurised states with privileged Φ labels.

    Attributes:
        out: Dataset folder (``shards/<task>__seed<s>.npz``).
        tasks: Task ids, a comma list, or ``default`` (the shipped weights' 29 data tasks:
            the 23 the oracle solved then and 6 it solved partly).
        seeds: Rollout seeds 1..seeds per task (each seed = 8 policy rollouts; seed 0 is
            judge-bench's and never used).
        images: Also render every state (randomised camera, colours and light per
            episode) into ``images/<task>__seed<s>.npz`` for ``image-progress``.
    """

    out: str = "runs/judges-data"
    tasks: tuple[str, ...] = option(("default",), shown_default="default")
    seeds: int = 5
    images: bool = False

    def __post_init__(self) -> None:
        if self.seeds < 1:
            raise ConfigError(f"--seeds must be >= 1, got {self.seeds}")
        if self.tasks == ("default",):
            object.__setattr__(self, "tasks", DATA_TASKS)


@dataclass(frozen=True)
class JudgesTrainConfig:
    """Train a learned judge from a dataset folder and write its weights and model card.

    Attributes:
        judge: Which judge (``obs-progress`` or ``image-progress``).
        data: Dataset folder from ``simjudge judges dataset`` (``--images`` for
            ``image-progress``).
        out: Weights file (default: the shipped package weights).
        steps: Optimiser steps (default: 3000 for ``obs-progress``, 4000 for
            ``image-progress``).
        seed: Training seed.
        val_seed: Rollout seed kept out of training (held-out instances of training tasks).
        threads: torch threads of ``image-progress`` training (1 or 2).
    """

    judge: Literal["obs-progress", "image-progress"] = "obs-progress"
    data: str = "runs/judges-data"
    out: str | None = None
    steps: int | None = None
    seed: int = 0
    val_seed: int = 5
    threads: int = 1

    def __post_init__(self) -> None:
        if self.judge not in ("obs-progress", "image-progress"):
            raise ConfigError(f"--judge {self.judge!r}: trainable judges are 'obs-progress' "
                              "and 'image-progress'")
        if self.steps is not None and self.steps < 1:
            raise ConfigError(f"--steps must be >= 1, got {self.steps}")


def _shard(task: str, seed: int, folder: Path, embed: object,
           episodes: list[Any] | None = None) -> None:
    from simjudge.judges.learned.data import featurize_states, save_shard
    from simjudge.pipelines.judge_bench import task_episodes
    from simjudge.tasks.spec import load_task, make_task_env

    episodes = episodes if episodes is not None else task_episodes(task, seed, None)
    env = make_task_env(task)
    texts: list[str] = []
    cols: dict[str, list[np.ndarray]] = {k: [] for k in
                                         ("tokens", "mask", "globals", "text_ids", "phi",
                                          "episode", "step")}
    try:
        env.reset(seed=0)
        for e, ep in enumerate(episodes):
            def view_of(i: int, ep: object = ep) -> object:
                env.set_state(ep.state(i))  # type: ignore[attr-defined]
                return env.view
            tokens, mask, globals_, ids = featurize_states(view_of, len(ep.phi), texts)
            for k, v in zip(("tokens", "mask", "globals", "text_ids"),
                            (tokens, mask, globals_, ids), strict=True):
                cols[k].append(v)
            cols["phi"].append(np.asarray(ep.phi, np.float32))
            cols["episode"].append(np.full(len(ep.phi), e, np.int32))
            cols["step"].append(np.arange(len(ep.phi), dtype=np.int32))
    finally:
        env.close()
    description = load_task(task).description
    arrays = {k: np.concatenate(v) for k, v in cols.items()}
    arrays["text_emb"] = embed.embed(texts)  # type: ignore[attr-defined]
    arrays["task_emb"] = embed.embed([description])[0]  # type: ignore[attr-defined]
    meta = {"task": task, "seed": seed, "texts": texts, "description": description,
            "policies": [e.policy for e in episodes]}
    save_shard(folder / f"{task}__seed{seed}.npz", arrays, meta)


def build_dataset(config: JudgesDatasetConfig) -> list[Path]:
    """Write the missing shards of ``config``; return every shard path (observations)."""
    from simjudge.judges.learned.obs_judge import text_embedder
    from simjudge.pipelines.judge_bench import task_episodes

    from .cli_judges_image import build_image_shard

    folder = Path(config.out) / "shards"
    images = Path(config.out) / "images"
    folder.mkdir(parents=True, exist_ok=True)
    embed = text_embedder()
    jobs = [(t, s) for t in config.tasks for s in range(1, config.seeds + 1)]
    for task, seed in tqdm(jobs, desc="judges dataset"):
        name = f"{task}__seed{seed}.npz"
        need_obs = not (folder / name).exists()
        need_img = config.images and not (images / name).exists()
        episodes = task_episodes(task, seed, None) if need_obs or need_img else None
        if need_obs:
            _shard(task, seed, folder, embed, episodes)
        if need_img:
            build_image_shard(task, seed, images, embed, episodes)
    (Path(config.out) / "dataset.json").write_text(json.dumps(asdict(config), indent=1))
    return [folder / f"{t}__seed{s}.npz" for t, s in jobs]


def _pair_accuracy(data: object, pred: np.ndarray, seed: int) -> dict[str, object]:
    from simjudge.judges.learned.image_train import pair_accuracy

    return pair_accuracy(data, pred, seed)


def train_obs_progress(config: JudgesTrainConfig) -> dict[str, object]:
    """Train ``obs-progress`` on the training shards; write weights, sha256 and model card."""
    if config.judge != "obs-progress":
        raise ConfigError(f"--judge {config.judge!r}: this trains 'obs-progress'")
    from simjudge.judges.learned.data import concat_shards
    from simjudge.judges.learned.model import save_net
    from simjudge.judges.learned.obs_judge import DEFAULT_WEIGHTS
    from simjudge.judges.learned.train import TrainSettings, predict, train_net
    from simjudge.tasks.spec.provenance import versions

    shards = sorted((Path(config.data) / "shards").glob("*.npz"))
    if not shards:
        raise ConfigError(f"no shards in {config.data}/shards; run `simjudge judges dataset "
                          f"--out {config.data}` first")

    from .cli_judges_image import shard_task_seed as parse  # one shard-name parser
    from .cli_judges_image import split_by_seed  # and one split rule

    train, val = split_by_seed(shards, OBS_TRAIN_TASKS, config.val_seed)
    heldout = [p for p in shards if parse(p)[0] in HELDOUT_TASKS]
    start = time.perf_counter()
    data = concat_shards(train)
    net, log = train_net(data, TrainSettings(steps=config.steps or 3000, seed=config.seed))
    metrics: dict[str, object] = {"train_seconds": time.perf_counter() - start}
    for name, paths in (("train", train), ("heldout_instances", val), ("heldout_tasks", heldout)):
        if paths:
            part = concat_shards(paths)
            pred = predict(net, part)
            metrics[name] = {"states": len(part.phi), "tasks": part.tasks,
                             "mae": float(np.mean(np.abs(pred - part.phi))),
                             "pulse_pairs": _pair_accuracy(part, pred, config.seed)}
    out = Path(config.out) if config.out else DEFAULT_WEIGHTS
    meta = {"judge": config.judge, "config": asdict(config), "train": log,
            "train_shards": [p.name for p in train], "versions": versions()}
    digest = save_net(net, out, meta)
    report: dict[str, object] = {"weights": str(out), "sha256": digest, "metrics": metrics, **meta}
    (out.parent / "obs_progress_train.json").write_text(json.dumps(report, indent=1,
                                                                   default=str))
    (out.parent / "MODEL_CARD.md").write_text(model_card(report))
    return report


def model_card(report: dict[str, object]) -> str:
    """A short markdown model card of a training report (data, splits, metrics)."""
    from .cli_judges_image import split_metrics_table  # one table layout for both cards

    metrics = report["metrics"]
    assert isinstance(metrics, dict)
    lines = [
        "# obs-progress: model card", "",
        "Learned progress potential Φ̂ ∈ [0, 1] over the *non-privileged* observation "
        "(end-effector pose, suction state, object poses and boxes, joint values, the "
        "articulation tree, the reset state) conditioned on the task text (MiniLM "
        "all-MiniLM-L6-v2). Never reads `info`, the goal or its facts.", "",
        f"- weights: `{Path(str(report['weights'])).name}`, sha256 `{report['sha256']}`",
        f"- rebuild: `simjudge judges dataset` then `simjudge judges train --judge "
        f"obs-progress` (config: `{json.dumps(report['config'])}`)",
        f"- training data: judge-bench policies (oracle, noisy 0.3/0.6, release ×2, push-back, "
        f"stop, random) on {len(OBS_TRAIN_TASKS)} tasks (some solved only partly by the oracle), "
        "rollout seeds except the validation seed",
        f"- held-out tasks (never trained on): {', '.join(HELDOUT_TASKS)}",
        "- held-out instances: training tasks on unseen rollout seeds (the library has one "
        "asset instance per category, so an unseen instance is an unseen randomised episode)",
        f"- training time: {float(metrics['train_seconds']):.0f} s on one CPU thread", "",
    ]
    lines += split_metrics_table(metrics, ("train", "heldout_instances", "heldout_tasks"))
    lines += ["", "Pulse pairs here are built from the stored Φ labels of the split's shards "
              "(no env); `simjudge judge-bench --judge obs-progress --split heldout-instances` "
              "(and `heldout-tasks`) measures the same through live env state restores.", ""]
    return "\n".join(lines)


def _dataset(config: JudgesDatasetConfig) -> int:
    paths = build_dataset(config)
    print(f"{len(paths)} shards in {config.out}/shards")
    return 0


def _train(config: JudgesTrainConfig) -> int:
    if config.judge == "image-progress":
        from .cli_judges_image import train_image_progress

        report = train_image_progress(config)
    else:
        report = train_obs_progress(config)
    print(json.dumps({"weights": report["weights"], "sha256": report["sha256"],
                      "metrics": report["metrics"]}, indent=1, default=str))
    return 0


JUDGES_GROUPS: dict[tuple[str, ...], str] = {("judges",): "data and weights of learned judges"}
"""The command group."""

JUDGES_COMMANDS: dict[tuple[str, ...], Command] = {
    ("judges", "dataset"): Command(JudgesDatasetConfig, _dataset),
    ("judges", "train"): Command(JudgesTrainConfig, _train),
}
"""``judges dataset`` and ``judges train``."""
