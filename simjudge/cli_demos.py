"""Demos and training commands: ``demos record``, ``demos import-lerobot``, ``policies train-*``.

``policies train-bc`` clones demonstrations; ``policies train-sb3`` learns from a judge reward.

Thin like :mod:`simjudge.cli`: the config in (:mod:`simjudge.demos`), one library call out.
"""

from __future__ import annotations

from simjudge.cli_configs import Command
from simjudge.demos.importer import DemosImportConfig
from simjudge.demos.record import DemosRecordConfig
from simjudge.demos.train_bc import TrainBCConfig
from simjudge.policies.train_sb3 import TrainSB3Config

__all__ = ["DEMOS_COMMANDS", "DEMOS_GROUPS"]


def _record(config: DemosRecordConfig) -> int:
    from simjudge.demos.record import run_record

    run_record(config)
    return 0


def _import(config: DemosImportConfig) -> int:
    from simjudge.demos.importer import run_import

    run_import(config)
    return 0


def _train_bc(config: TrainBCConfig) -> int:
    from simjudge.demos.train_bc import train_bc

    card = train_bc(config)
    print(f"wrote {card['weights']} (sha256 {card['sha256'][:16]}..., {card['parameters']} parameters, "
          f"{card['episodes']} episodes / {card['frames']} frames, {card['seconds']:.1f} s); "
          f"use it as the policy spec bc:{card['weights']}")
    return 0


def _train_sb3(config: TrainSB3Config) -> int:
    from simjudge.policies.train_sb3 import train_sb3

    card = train_sb3(config)
    print(f"wrote {card['weights']} (sha256 {card['sha256'][:16]}..., {card['algo']} {card['env_steps']} env "
          f"steps, {card['episodes']} episodes, last training episodes' success {card['train_success_rate']}, "
          f"{card['seconds']:.1f} s); use it as the policy spec sb3:{card['weights']}")
    return 0


DEMOS_GROUPS: dict[tuple[str, ...], str] = {
    ("demos",): "demonstration datasets: record them (LeRobotDataset or npz), import LeRobot ones",
}
"""Command groups of the demos commands (``policies`` is the audit module's group)."""

DEMOS_COMMANDS: dict[tuple[str, ...], Command] = {
    ("demos", "record"): Command(DemosRecordConfig, _record),
    ("demos", "import-lerobot"): Command(DemosImportConfig, _import),
    ("policies", "train-bc"): Command(TrainBCConfig, _train_bc),
    ("policies", "train-sb3"): Command(TrainSB3Config, _train_sb3),
}
"""The demos commands: path, config class and handler."""
