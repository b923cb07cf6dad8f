"""Train / held-out splits of the learned judges.

* ``heldout-tasks``: :data:`HELDOUT_TASKS` are never in the training data; benchmarked on
  all their rollouts.
* ``heldout-categories``: every task of the object categories :data:`HELDOUT_CATEGORIES`
  (no asset of these categories is ever seen in training).
* ``heldout-instances``: the training tasks, on episode seeds never used in training.
  The library has one asset instance per category (StorageFurniture has two), so an
  unseen *instance* is an unseen randomised episode (initial robot pose, object placement
  and joint values of the reset) of a task seen in training.
"""

from __future__ import annotations

__all__ = [
    "BENCH_INSTANCE_TASKS", "CATEGORY_OF_TASK", "CATEGORY_SPLIT_JUDGES", "DATA_TASKS", "HELDOUT_CATEGORIES",
    "HELDOUT_CATEGORY_TASKS", "HELDOUT_TASKS", "OBS_TRAIN_TASKS", "PARTIAL_TASKS", "SPLITS", "TRAIN_SEEDS",
    "TRAIN_TASKS", "check_bench_split", "split_tasks",
]

ALL_ORACLE_TASKS: tuple[str, ...] = (
    "CloseDoor-v0", "CloseDrawer-v0", "FlushToilet-v0", "OpenBoxLid-v0", "OpenCabinetDoor-v0",
    "OpenDoor-v0", "OpenDrawer-v0", "OpenLaptop-v0", "OpenMicrowaveDoor-v0",
    "OpenRefrigeratorDoor-v0", "OpenSafeDoor-v0", "OpenToiletLid-v0", "OpenWindow-v0",
    "PressButton-v0", "PressDispenser-v0", "PressMicrowaveButton-v0", "PutBreadInBowl-v0",
    "RotateLampHead-v0", "StackCubeOnCylinder-v0", "TurnFaucet-v0", "TurnOvenKnob-v0",
    "TurnSafeDial-v0", "UnfoldChair-v0",
)
"""Tasks the scripted oracle solved when the shipped weights' data was made (the data comes
from their rollouts). It solves all of :data:`PARTIAL_TASKS` since (see
``simjudge.pipelines.judge_bench.ORACLE_TASKS``); the splits keep the data's lists."""

HELDOUT_TASKS: tuple[str, ...] = (
    "CloseDrawer-v0", "OpenMicrowaveDoor-v0", "PressDispenser-v0", "TurnOvenKnob-v0",
    "OpenToiletLid-v0",
)
"""Tasks never trained on (each has a sibling verb/part in training)."""

PARTIAL_TASKS: tuple[str, ...] = (
    "CloseBoxLid-v0", "CloseLaptop-v0", "OpenKettleLid-v0", "OpenOvenDoor-v0",
    "OpenTrashCanLid-v0", "PutCubeInBox-v0",
)
"""Tasks the scripted oracle solved only partly when the data was made: still exactly
labelled rollouts (more closing and lid examples for training)."""

DATA_TASKS: tuple[str, ...] = ALL_ORACLE_TASKS + PARTIAL_TASKS
"""Tasks of ``simjudge judges dataset`` by default."""

CATEGORY_OF_TASK: dict[str, str] = {
    "CloseDoor-v0": "Door", "CloseDrawer-v0": "StorageFurniture", "FlushToilet-v0": "Toilet",
    "OpenBoxLid-v0": "Box", "OpenCabinetDoor-v0": "StorageFurniture", "OpenDoor-v0": "Door",
    "OpenDrawer-v0": "StorageFurniture", "OpenLaptop-v0": "Laptop",
    "OpenMicrowaveDoor-v0": "Microwave", "OpenRefrigeratorDoor-v0": "Refrigerator",
    "OpenSafeDoor-v0": "Safe", "OpenToiletLid-v0": "Toilet", "OpenWindow-v0": "Window",
    "PressButton-v0": "ButtonPanel", "PressDispenser-v0": "Dispenser",
    "PressMicrowaveButton-v0": "Microwave", "PutBreadInBowl-v0": "Bowl",
    "RotateLampHead-v0": "Lamp", "StackCubeOnCylinder-v0": "Can", "TurnFaucet-v0": "Faucet",
    "TurnOvenKnob-v0": "Oven", "TurnSafeDial-v0": "Safe", "UnfoldChair-v0": "FoldingChair",
    "CloseBoxLid-v0": "Box", "CloseLaptop-v0": "Laptop", "OpenKettleLid-v0": "Kettle",
    "OpenOvenDoor-v0": "Oven", "OpenTrashCanLid-v0": "TrashCan", "PutCubeInBox-v0": "Box",
}
"""The object category (``TaskSpec.object``) of each data task (checked by a test)."""

HELDOUT_CATEGORIES: tuple[str, ...] = ("Laptop", "Safe", "Window")
"""Object categories never trained on: all their tasks are left out of training."""

HELDOUT_CATEGORY_TASKS: tuple[str, ...] = tuple(
    t for t in DATA_TASKS if CATEGORY_OF_TASK[t] in HELDOUT_CATEGORIES)
"""The tasks of :data:`HELDOUT_CATEGORIES` (benchmarked by ``--split heldout-categories``)."""

TRAIN_TASKS: tuple[str, ...] = tuple(t for t in DATA_TASKS if t not in HELDOUT_TASKS
                                     and t not in HELDOUT_CATEGORY_TASKS)
"""Tasks ``image-progress`` trains on (neither a held-out task nor a held-out category)."""

OBS_TRAIN_TASKS: tuple[str, ...] = tuple(t for t in DATA_TASKS if t not in HELDOUT_TASKS)
"""Tasks ``obs-progress``'s shipped weights were trained on: every data task but the held-out
tasks (the held-out categories were split off later and are *not* held out for it)."""

CATEGORY_SPLIT_JUDGES: tuple[str, ...] = ("image-progress",)
"""Learned judges whose training left :data:`HELDOUT_CATEGORIES` out."""

BENCH_INSTANCE_TASKS: tuple[str, ...] = (
    "OpenDrawer-v0", "OpenBoxLid-v0", "CloseDoor-v0", "PressButton-v0", "TurnFaucet-v0",
    "PutBreadInBowl-v0",
)
"""Training tasks benchmarked on unseen seeds (judge-bench's default subset)."""

SPLITS: tuple[str, ...] = ("heldout-tasks", "heldout-instances", "heldout-categories")


def split_tasks(split: str) -> tuple[str, ...]:
    """The tasks judge-bench rolls out for ``split``.

    Raises:
        ValueError: An unknown split.
    """
    if split == "heldout-tasks":
        return HELDOUT_TASKS
    if split == "heldout-instances":
        return BENCH_INSTANCE_TASKS
    if split == "heldout-categories":
        return HELDOUT_CATEGORY_TASKS
    raise ValueError(f"unknown split {split!r}; use one of {list(SPLITS)}")


TRAIN_SEEDS: tuple[int, ...] = (1, 2, 3, 4, 5)
"""Rollout seeds of ``simjudge judges dataset`` (default ``--seeds 5``); seed 5 is kept for
validation by ``simjudge judges train``; judge-bench's seed must be none of these."""


def check_bench_split(split: str, seed: int, judges: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The tasks of ``split`` for a judge-bench run with rollout ``seed``.

    ``judges``: the judge specs of the run; ``heldout-categories`` is refused for a learned
    judge that was trained on those categories (``obs-progress``).

    Raises:
        ConfigError: An unknown split, a seed whose rollouts are training data, or a judge
            for which the split is not held out.
    """
    from simjudge.tasks.spec.config import ConfigError

    if split == "heldout-categories":
        for spec in judges:
            name = spec.split(":", 1)[0]
            if name == "obs-progress":
                raise ConfigError(
                    f"--split heldout-categories: {name}'s shipped weights were trained on "
                    f"{', '.join(HELDOUT_CATEGORIES)}, so they are not held out for it; use "
                    "--split heldout-tasks or heldout-instances, or a judge of "
                    f"{list(CATEGORY_SPLIT_JUDGES)}")

    try:
        tasks = split_tasks(split)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    if seed in TRAIN_SEEDS:
        raise ConfigError(f"--split {split}: seed {seed} made training rollouts of the learned "
                          f"judges (seeds {list(TRAIN_SEEDS)}); use --seed 0 or one above "
                          f"{max(TRAIN_SEEDS)}")
    return tasks
