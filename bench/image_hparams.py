"""Choose ``image-progress`` training settings on validation tasks, never on the held-out tests.

Validation tasks are carved out of the training tasks (:data:`VALIDATION_TASKS`: each has a
sibling verb or part left in training, as the held-out tasks do); the network is trained on
the remaining training tasks (rollout seeds other than ``--val-seed``) with the given
settings and scored by pulse-pair accuracy on the stored frames of the validation tasks
(all seeds) and of the validation seed of the other training tasks. The held-out tasks and
categories of :mod:`simjudge.judges.learned.splits` are never read.

Prints one JSON line per run (and appends it to ``--log``).

Usage: ``python bench/image_hparams.py --data runs/judges-data [--name NAME]
[key=value ...]`` (keys: fields of ``ImageTrainSettings``, e.g. ``steps=4000 batch=64``).
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from simjudge.cli_judges_image import shard_task_seed
from simjudge.judges.learned.image_data import concat_image_shards
from simjudge.judges.learned.image_train import (
    ImageTrainSettings,
    pair_accuracy,
    predict_images,
    train_image_net,
)
from simjudge.judges.learned.splits import TRAIN_TASKS

VALIDATION_TASKS = ("CloseDoor-v0", "PressMicrowaveButton-v0", "OpenKettleLid-v0",
                    "TurnFaucet-v0")


def _task(path: Path) -> str:
    return shard_task_seed(path)[0]


def _seed(path: Path) -> int:
    return shard_task_seed(path)[1]


def main() -> None:
    """Train once with the given settings and print the validation scores."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default="runs/judges-data")
    parser.add_argument("--name", default="run")
    parser.add_argument("--val-seed", type=int, default=5)
    parser.add_argument("--log", default=None, help="append the JSON line to this file")
    parser.add_argument("settings", nargs="*", help="ImageTrainSettings overrides key=value")
    args = parser.parse_args()
    overrides = dict(item.split("=", 1) for item in args.settings)
    settings = ImageTrainSettings(threads=2)
    settings = replace(settings, **{k: type(getattr(settings, k))(v) for k, v in overrides.items()})
    shards = sorted((Path(args.data) / "images").glob("*.npz"))
    kept = [p for p in shards if _task(p) in TRAIN_TASKS and _task(p) not in VALIDATION_TASKS]
    train = [p for p in kept if _seed(p) != args.val_seed]
    start = time.perf_counter()
    net, _ = train_image_net(concat_image_shards(train), settings, progress=False)
    result: dict = {"name": args.name, "settings": overrides,
                    "seconds": round(time.perf_counter() - start)}
    for name, paths in (("val_tasks", [p for p in shards if _task(p) in VALIDATION_TASKS]),
                        ("val_instances", [p for p in kept if _seed(p) == args.val_seed])):
        part = concat_image_shards(paths)
        pred = predict_images(net, part)
        pairs = pair_accuracy(part, pred, 0)
        result[name] = {"overall": round(pairs["overall"], 3),
                        **{k: round(v, 3) for k, v in pairs["bins"].items()},
                        "mae": round(float(np.mean(np.abs(pred - part.phi))), 3)}
    print(json.dumps(result))
    if args.log:
        with open(args.log, "a") as log:
            log.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
