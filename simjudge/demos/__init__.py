"""Demonstrations: record episodes as LeRobotDatasets (or npz), import LeRobot ones, train BC.

* :mod:`~simjudge.demos.episodes`: one recorded episode (:class:`Episode`), recording and
  replaying it.
* :mod:`~simjudge.demos.lerobot_format`: the LeRobotDataset v3.0 format, written and read
  with pyarrow (no ``lerobot`` needed).
* :mod:`~simjudge.demos.record`: ``simjudge demos record`` (resumable per episode).
* :mod:`~simjudge.demos.importer`: ``simjudge demos import-lerobot`` (replay and judge).
* :mod:`~simjudge.demos.load`: a demos folder back as episodes.
* :mod:`~simjudge.demos.train_bc`: ``simjudge policies train-bc``.
"""

from __future__ import annotations

from .episodes import Episode, record_episode, replay_actions
from .importer import DemosImportConfig, run_import
from .lerobot_format import DemoFormatError, read_lerobot, write_lerobot
from .load import load_demos
from .record import DemosRecordConfig, run_record
from .train_bc import TrainBCConfig, train_bc

__all__ = [
    "DemoFormatError",
    "DemosImportConfig",
    "DemosRecordConfig",
    "Episode",
    "TrainBCConfig",
    "load_demos",
    "read_lerobot",
    "record_episode",
    "replay_actions",
    "run_import",
    "run_record",
    "train_bc",
    "write_lerobot",
]
