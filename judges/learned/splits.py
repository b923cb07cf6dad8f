"""Train / held-out splits of the learned judges.

* ``heldout-tasks``: :data:`HELDOUT_TASKS` are never in the training data; benchmarked on
  all their rollouts.
* ``heldout-instances``: the training tasks, on episode seeds never used in training.
  The library has one asset instance per category (StorageFurniture has two), so an
  unseen *instance* is an unseen randomised episode (initial robot pose, object placement
  and joint values of the reset) of a task seen in training.
"""

from __future__ import annotations

__all__ = [
    "BENCH_INSTANCE_TASKS", "DATA_TASKS", "HELDOUT_TASKS", "PARTIAL_TASKS", "SPLITS", "TRAIN_SEEDS", "TRAIN_TASKS",
    "check_bench_split", "split_tasks",
]

ALL_ORACLE_TASKS: tuple[str, ...] = (
    "CloseDoor-v0", "CloseDrawer-v0", "FlushToilet-v0", "OpenBoxLid-v0", "OpenCabinetDoor-v0",
    "OpenDoor-v0", "OpenDrawer-v0", "OpenLaptop-v0", "OpenMicrowaveDoor-v0",
    "OpenRefrigeratorDoor-v0", "OpenSafeDoor-v0", "OpenToiletLid-v0", "OpenWindow-v0",
    "PressButton-v0", "PressDispenser-v0", "PressMicrowaveButton-v0", "PutBreadInBowl-v0",
    "RotateLampHead-v0", "StackCubeOnCylinder-v0", "TurnFaucet-v0", "TurnOvenKnob-v0",
    "TurnSafeDial-v0", "UnfoldChair-v0",
)
"""Tasks the scripted oracle solves (the data comes from their rollouts)."""

HELDOUT_TASKS: tuple[str, ...] = (
    "CloseDrawer-v0", "OpenMicrowaveDoor-v0", "PressDispenser-v0", "TurnOvenKnob-v0",
    "OpenToiletLid-v0",
)
"""Tasks never trained on (each has a sibling verb/part in training)."""

PARTIAL_TASKS: tuple[str, ...] = (
    "CloseBoxLid-v0", "CloseLaptop-v0", "OpenKettleLid-v0", "OpenOvenDoor-v0",
    "OpenTrashCanLid-v0", "PutCubeInBox-v0",
)
"""Tasks the scripted oracle solves only partly: still exactly labelled rollouts (more
closing and lid examples for training)."""

DATA_TASKS: tuple[str, ...] = ALL_ORACLE_TASKS + PARTIAL_TASKS
"""Tasks of ``simjudge judges dataset`` by default."""

TRAIN_TASKS: tuple[str, ...] = tuple(t for t in DATA_TASKS if t not in HELDOUT_TASKS)

BENCH_INSTANCE_TASKS: tuple[str, ...] = (
    "OpenDrawer-v0", "OpenBoxLid-v0", "CloseDoor-v0", "PressButton-v0", "TurnFaucet-v0",
    "PutBreadInBowl-v0",
)
"""Training tasks benchmarked on unseen seeds (judge-bench's default subset)."""

SPLITS: tuple[str, ...] = ("heldout-tasks", "heldout-instances")


def split_tasks(split: str) -> tuple[str, ...]:
    """The tasks judge-bench rolls out for ``split``.

    Raises:
        ValueError: An unknown split.
    """
    if split == "heldout-tasks":
        return HELDOUT_TASKS
    if split == "heldout-instances":
        return BENCH_INSTANCE_TASKS
    raise ValueError(f"unknown split {split!r}; use one of {list(SPLITS)}")


TRAIN_SEEDS: tuple[int, ...] = (1, 2, 3, 4, 5)
"""Rollout seeds of ``simjudge judges dataset`` (default ``--seeds 5``); seed 5 is kept for
validation by ``simjudge judges train``; judge-bench's seed must be none of these."""


def check_bench_split(split: str, seed: int) -> tuple[str, ...]:
    """The tasks of ``split`` for a judge-bench run with rollout ``seed``.

    Raises:
        ConfigError: An unknown split, or a seed whose rollouts are training data.
    """
    from simjudge.tasks.spec.config import ConfigError

    try:
        tasks = split_tasks(split)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    if seed in TRAIN_SEEDS:
        raise ConfigError(f"--split {split}: seed {seed} made training rollouts of the learned "
                          f"judges (seeds {list(TRAIN_SEEDS)}); use --seed 0 or one above "
                          f"{max(TRAIN_SEEDS)}")
    return tasks
