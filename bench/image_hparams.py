"""Choose ``image-progress`` training settings on validation tasks, never on the held-out tests.

Validation tasks are carved out of the training tasks (:data:`VALIDATION_TASKS`: each has a
sibling verb or part left in training, as the held-out tasks do); the network is trained on
the remaining training tasks (rollout seeds other than ``--val-seed``) with the given
settings and scored by pulse-pair accuracy on the stored frames of the validation tasks
(all seeds) and of the validation seed of the other training tasks. The held-out tasks and
categories of :mod:`simjudge.judges.learned.splits` are never read.

Prints one JSON line per run (and appends it to ``--log``). ``--save-pred FILE`` keeps Φ̂ of
every validation frame; ``--combine A.npz B.npz ...`` then scores each saved run and the
ensembles averaging Φ̂ of the first 2, 3, ... of them on the same pulse pairs, with paired
counts against the first run (pairs only the ensemble gets right / only the run gets right,
exact two-sided sign-test p) — no training.

Usage: ``python bench/image_hparams.py --data runs/judges-data [--name NAME] [--pairs N]
[--save-pred FILE] [key=value ...]`` (keys: fields of ``ImageTrainSettings``, e.g.
``steps=4000 batch=64``), or ``python bench/image_hparams.py --data runs/judges-data
--combine A.npz B.npz C.npz``.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from math import comb
from pathlib import Path

import numpy as np

from simjudge.cli_judges_image import shard_task_seed, split_by_seed
from simjudge.judges.bench import build_pulse_pairs
from simjudge.judges.learned.image_data import concat_image_shards
from simjudge.judges.learned.image_train import (
    ImageTrainSettings,
    pair_accuracy,
    predict_images,
    train_image_ensemble,
)
from simjudge.judges.learned.splits import TRAIN_TASKS

VALIDATION_TASKS = ("CloseDoor-v0", "PressMicrowaveButton-v0", "OpenKettleLid-v0",
                    "TurnFaucet-v0")


def _task(path: Path) -> str:
    return shard_task_seed(path)[0]


def _splits(data: str, val_seed: int) -> tuple[list[Path], dict[str, list[Path]]]:
    """Training shards and the two validation splits (never the held-out tests)."""
    shards = sorted((Path(data) / "images").glob("*.npz"))
    tasks = set(TRAIN_TASKS) - set(VALIDATION_TASKS)
    train, instances = split_by_seed(shards, tasks, val_seed)  # the trainer's rule
    return train, {"val_tasks": [p for p in shards if _task(p) in VALIDATION_TASKS],
                   "val_instances": instances}


def _train_and_score(args: argparse.Namespace) -> dict:
    overrides = dict(item.split("=", 1) for item in args.settings)
    settings = ImageTrainSettings(threads=2)
    settings = replace(settings, **{k: type(getattr(settings, k))(v) for k, v in overrides.items()})
    train, splits = _splits(args.data, args.val_seed)
    start = time.perf_counter()
    net, _ = train_image_ensemble(concat_image_shards(train), settings, progress=False)
    result: dict = {"name": args.name, "settings": overrides,
                    "seconds": round(time.perf_counter() - start)}
    saved: dict[str, np.ndarray] = {}
    for name, paths in splits.items():
        part = concat_image_shards(paths)
        pred = saved[name] = predict_images(net, part)
        pairs = pair_accuracy(part, pred, 0, args.pairs)
        result[name] = {"overall": round(pairs["overall"], 3),
                        **{k: round(v, 3) for k, v in pairs["bins"].items()},
                        "mae": round(float(np.mean(np.abs(pred - part.phi))), 3)}
    if args.save_pred:
        np.savez(args.save_pred, **saved)  # type: ignore[arg-type]
    return result


def _sign_p(wins: int, losses: int) -> float:
    """Exact two-sided sign-test p of ``wins`` against ``losses`` (ties dropped)."""
    n = wins + losses
    k = min(wins, losses)
    tail = sum(comb(n, i) for i in range(k + 1)) / 2.0 ** n if n else 1.0
    return min(1.0, 2 * tail)


def _correct(preds: list[np.ndarray], pairs: list) -> dict:
    bins: dict[str, list[bool]] = {}
    for p in pairs:
        d = preds[p.episode][p.after] - preds[p.episode][p.before]
        bins.setdefault(p.bin, []).append(bool(np.sign(d) == p.label))
    return {k: np.array(v) for k, v in bins.items()}


def _combine(args: argparse.Namespace) -> dict:
    """Score saved runs and their Φ̂-averaging ensembles on the same pulse pairs."""
    runs = [np.load(f) for f in args.combine]
    result: dict = {"name": "combine", "runs": args.combine, "pairs": args.pairs}
    for name, paths in _splits(args.data, args.val_seed)[1].items():
        part = concat_image_shards(paths)
        ep, ids = np.asarray(part.episode), np.unique(part.episode)
        phis = [part.phi[ep == i] for i in ids]
        pairs = build_pulse_pairs(phis, args.pairs, 0)
        preds = {f"run{i}": r[name] for i, r in enumerate(runs)}
        preds |= {f"ens{k}": np.mean([r[name] for r in runs[:k]], axis=0)
                  for k in range(2, len(runs) + 1)}
        scores = {k: _correct([v[ep == i] for i in ids], pairs) for k, v in preds.items()}
        base = np.concatenate(list(scores["run0"].values()))
        out: dict = {"n": len(base)}
        for key, bins in scores.items():
            flat = np.concatenate(list(bins.values()))
            wins, losses = int(np.sum(flat & ~base)), int(np.sum(~flat & base))
            out[key] = {"overall": round(float(np.mean([b.mean() for b in bins.values()])), 4),
                        **{b: round(float(v.mean()), 3) for b, v in bins.items()},
                        "vs_run0": [wins, losses, float(f"{_sign_p(wins, losses):.2g}")]}
        result[name] = out
    return result


def main() -> None:
    """Train once with the given settings (or combine saved runs) and print the scores."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default="runs/judges-data")
    parser.add_argument("--name", default="run")
    parser.add_argument("--val-seed", type=int, default=5)
    parser.add_argument("--log", default=None, help="append the JSON line to this file")
    parser.add_argument("--pairs", type=int, default=600, help="pulse pairs per split")
    parser.add_argument("--save-pred", default=None,
                        help="write Φ̂ of every validation frame to this .npz (for --combine)")
    parser.add_argument("--combine", nargs="+", default=None,
                        help="score these --save-pred files and their ensembles instead")
    parser.add_argument("settings", nargs="*", help="ImageTrainSettings overrides key=value")
    args = parser.parse_args()
    result = _combine(args) if args.combine else _train_and_score(args)
    print(json.dumps(result))
    if args.log:
        with open(args.log, "a") as log:
            log.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
