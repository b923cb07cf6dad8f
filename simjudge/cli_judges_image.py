"""Image data and training of ``image-progress`` (used by ``simjudge judges dataset|train``).

``simjudge judges dataset --images`` renders the judge-bench rollouts of each task and seed
(the same rollouts the observation shards featurise) from a per-episode randomised
exterior camera with per-episode colours and light
(:mod:`simjudge.judges.learned.image_data`) into ``<out>/images/<task>__seed<s>.npz``;
existing shards are kept, so an interrupted build resumes. ``simjudge judges train --judge
image-progress`` trains the image network on those shards and writes the shipped weights,
their sha256 and a model card.
"""

from __future__ import annotations

import json
import os
import time
import zlib
from collections.abc import Collection, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from simjudge.judges.learned.splits import (
    HELDOUT_CATEGORIES,
    HELDOUT_CATEGORY_TASKS,
    HELDOUT_TASKS,
    TRAIN_TASKS,
)
from simjudge.tasks.spec.config import ConfigError

__all__ = ["build_image_shard", "image_model_card", "shard_task_seed", "split_by_seed",
           "train_image_progress"]


def build_image_shard(task: str, seed: int, folder: Path, embed: Any,
                      episodes: list[Any] | None = None) -> Path:
    """Render every state of the rollouts of ``task``/``seed`` into one image shard."""
    from simjudge.envs.backends.base import CameraSpec
    from simjudge.judges.learned.image_data import (
        STORE_SIZE,
        describe_view,
        random_camera,
        random_photometric,
        save_image_shard,
        to_model_size,
    )
    from simjudge.pipelines.judge_bench import task_episodes
    from simjudge.tasks.spec import load_task, make_task_env

    path = folder / f"{task}__seed{seed}.npz"
    episodes = episodes if episodes is not None else task_episodes(task, seed, None)
    env = make_task_env(task)
    frames, phi, episode, step, views = [], [], [], [], []
    try:
        env.reset(seed=0)
        base_env: Any = env.unwrapped
        cfg = base_env.scene_config.cameras[0]
        base = CameraSpec(cfg.name, cfg.eye, cfg.target, fov=cfg.fov, width=cfg.width,
                          height=cfg.height)
        for e, ep in enumerate(episodes):
            rng = np.random.default_rng([seed, e, zlib.crc32(task.encode())])
            camera = random_camera(base, rng)
            photometric = None
            for i in range(len(ep.phi)):
                env.set_state(ep.state(i))
                shot = base_env.backend.render(camera, depth=True)
                if photometric is None:
                    bodies = sorted(int(b) for b in np.unique(shot.segmentation) if b >= 0)
                    photometric = random_photometric(bodies, rng)
                frames.append(to_model_size(photometric.apply(shot.rgb, shot.segmentation),
                                            STORE_SIZE))
            views.append(describe_view(camera, photometric))  # type: ignore[arg-type]
            phi.append(np.asarray(ep.phi, np.float32))
            episode.append(np.full(len(ep.phi), e, np.int32))
            step.append(np.arange(len(ep.phi), dtype=np.int32))
    finally:
        env.close()
    description = load_task(task).description
    arrays = {"frames": np.stack(frames), "phi": np.concatenate(phi),
              "episode": np.concatenate(episode), "step": np.concatenate(step),
              "task_emb": np.asarray(embed.embed([description])[0], np.float32)}
    meta = {"task": task, "seed": seed, "description": description, "views": views,
            "policies": [e.policy for e in episodes]}
    save_image_shard(path, arrays, meta)
    return path


def shard_task_seed(path: Path) -> tuple[str, int]:
    """Task id and rollout seed of a shard file ``<task>__seed<s>.npz``."""
    task, _, seed = path.stem.rpartition("__seed")
    return task, int(seed)


def split_by_seed(
    shards: Sequence[Path], tasks: Collection[str], val_seed: int
) -> tuple[list[Path], list[Path]]:
    """The shards of ``tasks``: (training = every seed but ``val_seed``, held-out instances).

    The one split rule of both trainers (image and ``obs-progress``) and of
    ``bench/image_hparams.py`` (which takes its validation tasks out of ``tasks``).
    """
    mine = [(p, shard_task_seed(p)) for p in shards]
    return ([p for p, (task, seed) in mine if task in tasks and seed != val_seed],
            [p for p, (task, seed) in mine if task in tasks and seed == val_seed])


def train_image_progress(config: Any) -> dict[str, Any]:
    """Train ``image-progress`` on the training image shards; write weights, sha256, card.

    Args:
        config: A :class:`~simjudge.cli_judges.JudgesTrainConfig`.

    Raises:
        ConfigError: No image shards in ``config.data``.
    """
    from simjudge.judges.learned.image_data import concat_image_shards
    from simjudge.judges.learned.image_judge import DEFAULT_IMAGE_WEIGHTS
    from simjudge.judges.learned.image_model import save_image_net
    from simjudge.judges.learned.image_train import (
        ImageTrainSettings,
        pair_accuracy,
        predict_images,
        train_image_ensemble,
    )
    from simjudge.tasks.spec.provenance import versions

    shards = sorted((Path(config.data) / "images").glob("*.npz"))
    if not shards:
        raise ConfigError(f"no image shards in {config.data}/images; run `simjudge judges "
                          f"dataset --images --out {config.data}` first")
    train, instances = split_by_seed(shards, TRAIN_TASKS, config.val_seed)
    splits = {
        "heldout_instances": instances,
        "heldout_tasks": [p for p in shards if shard_task_seed(p)[0] in HELDOUT_TASKS],
        "heldout_categories": [p for p in shards if shard_task_seed(p)[0] in HELDOUT_CATEGORY_TASKS],
    }
    if not train:
        raise ConfigError(f"no training image shards in {config.data}/images (tasks "
                          f"{list(TRAIN_TASKS)}, seeds other than {config.val_seed})")
    settings = ImageTrainSettings(steps=config.steps or ImageTrainSettings.steps,
                                  seed=config.seed, threads=config.threads)
    start = time.perf_counter()
    data = concat_image_shards(train)
    net, log = train_image_ensemble(data, settings)
    metrics: dict[str, Any] = {"train_seconds": time.perf_counter() - start,
                               "load_average": [round(x, 2) for x in os.getloadavg()]}
    for name, paths in splits.items():
        if paths:
            part = concat_image_shards(paths)
            pred = predict_images(net, part)
            metrics[name] = {"states": len(part.phi), "tasks": part.tasks,
                             "mae": float(np.mean(np.abs(pred - part.phi))),
                             "pulse_pairs": pair_accuracy(part, pred, config.seed)}
    out = Path(config.out) if config.out else DEFAULT_IMAGE_WEIGHTS
    meta = {"judge": "image-progress", "config": asdict(config), "train": log,
            "train_shards": [p.name for p in train], "versions": versions()}
    digest = save_image_net(net, out, meta)
    report: dict[str, Any] = {"weights": str(out), "sha256": digest, "metrics": metrics, **meta}
    (out.parent / "image_progress_train.json").write_text(json.dumps(report, indent=1,
                                                                     default=str))
    (out.parent / "IMAGE_MODEL_CARD.md").write_text(image_model_card(report))
    return report


def _members_text(settings: dict[str, Any]) -> str:
    n, seed = int(settings.get("members", 1)), int(settings["seed"])
    if n == 1:
        return f"1 (seed {seed})"
    seeds = ", ".join(str(seed + i) for i in range(n))
    return f"an ensemble of {n} trained with seeds {seeds}; Φ̂ is the mean of theirs"


def split_metrics_table(metrics: dict[str, Any], splits: Sequence[str]) -> list[str]:
    """A model card's markdown table: states, MAE and pulse-pair accuracy per split.

    Splits missing from ``metrics`` are left out (both learned judges' cards use it).
    """
    lines = ["| split | states | MAE of Φ̂ | pulse pairs overall | small | medium | large |",
             "|---|---|---|---|---|---|---|"]
    for name in splits:
        m = metrics.get(name)
        if not isinstance(m, dict):
            continue
        pp = m["pulse_pairs"]
        cells = [f"{pp['bins'].get(b, float('nan')):.3f}" for b in ("small", "medium", "large")]
        lines.append(f"| {name} | {m['states']} | {m['mae']:.3f} | {pp['overall']:.3f} | "
                     + " | ".join(cells) + " |")
    return lines


def image_model_card(report: dict[str, Any]) -> str:
    """A short markdown model card of an ``image-progress`` training report."""
    metrics = report["metrics"]
    settings = report["train"]["settings"]
    shards = [Path(name) for name in report["train_shards"]]
    trained = sorted({shard_task_seed(p)[0] for p in shards})
    lines = [
        "# image-progress: model card", "",
        "Learned progress potential Φ̂ ∈ [0, 1] from a rendered exterior RGB frame, the first "
        "frame of the episode as a reference (channel stack) and the task text (MiniLM "
        "all-MiniLM-L6-v2 embedding, FiLM-conditioned). Reads no simulator state.", "",
        f"- weights: `{Path(str(report['weights'])).name}`, sha256 `{report['sha256']}`",
        "- rebuild: `simjudge judges dataset --images` then `simjudge judges train --judge "
        f"image-progress` (config: `{json.dumps(report['config'])}`)",
        f"- network input: {settings['width']}×{settings['height']} RGB, current + first "
        "frame + their difference (9 channels)",
        "- training data: judge-bench policies (oracle, noisy 0.3/0.6, release ×2, push-back, "
        f"stop, random) in {len(shards)} shards (task × rollout seed, the validation seed "
        f"excluded) of {len(trained)} of the {len(TRAIN_TASKS)} training tasks: "
        f"{', '.join(trained)}; per episode a camera drawn within ±12° azimuth / ±6° "
        "elevation / ±10 % distance of the default view, per-body colour tints, brightness "
        "and a light ramp",
        f"- networks: {_members_text(settings)}",
        f"- training losses: MSE + {settings['rank_weight']} × pairwise ranking (pairs within "
        "episodes, half of them 1–6 steps apart); augmentations: image noise α ≤ "
        f"{settings['max_alpha']}, patch masking, colour jitter",
        f"- held-out tasks (never trained on): {', '.join(HELDOUT_TASKS)}",
        f"- held-out categories (no asset seen): {', '.join(HELDOUT_CATEGORIES)} "
        f"({', '.join(HELDOUT_CATEGORY_TASKS)})",
        f"- training time: {float(metrics['train_seconds']):.0f} s ({settings.get('members', 1)}"
        f" × {settings['steps']} steps of {settings['batch']} pairs, "
        f"{settings['threads']} CPU thread(s); load average at the end "
        f"{metrics.get('load_average', '?')})", "",
    ]
    lines += split_metrics_table(metrics, ("heldout_instances", "heldout_tasks", "heldout_categories"))
    lines += ["", "Pulse pairs here use the stored frames of the split's shards (randomised "
              "views); `simjudge judge-bench --judge image-progress --split heldout-tasks` "
              "(and `heldout-instances`, `heldout-categories`) measures live renders from "
              "the default camera, with image noise, occlusion and viewpoint rows.", ""]
    return "\n".join(lines)
