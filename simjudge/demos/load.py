"""Read a recorded demos folder back as :class:`~simjudge.demos.episodes.Episode` objects.

Both formats of ``simjudge demos record`` read back: a LeRobotDataset (``meta/info.json``;
the task id and seed of each episode come from ``meta/simjudge.json``) or an npz folder
(``episodes/*.npz``). Episodes come in recording order.

Example:
    >>> import tempfile
    >>> from simjudge.demos.record import DemosRecordConfig, run_record
    >>> out = tempfile.mkdtemp()
    >>> _ = run_record(DemosRecordConfig(tasks=("PressButton-v0",), episodes=1, out=out,
    ...                                  image_size=0), log=None)
    >>> [(ep.task, ep.seed, ep.success) for ep in load_demos(out)]
    [('PressButton-v0', 0, True)]
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .episodes import Episode
from .lerobot_format import IMAGE_KEY, DemoFormatError, read_lerobot

__all__ = ["load_demos"]


def load_demos(folder: str | Path, *, task: str | None = None, limit: int | None = None,
               images: bool = True) -> list[Episode]:
    """The episodes of a demos folder (optionally of one ``task``, the first ``limit``).

    Args:
        folder: A folder written by ``simjudge demos record`` (either format).
        task: Keep only this task's episodes.
        limit: Keep at most this many (after the task filter).
        images: Read the camera frames too (a LeRobotDataset decodes its PNGs).

    Raises:
        DemoFormatError: Neither format, or a LeRobotDataset simjudge did not record (it
            lacks the task ids and seeds; use ``simjudge demos import-lerobot``).
    """
    root = Path(folder)
    if (root / "meta" / "info.json").is_file():
        episodes = _from_lerobot(root, images)
    elif (root / "episodes").is_dir():
        order = json.loads((root / "demos.json").read_text()).get("order") if (root / "demos.json").is_file() else None
        paths = sorted((root / "episodes").glob("*.npz"))
        episodes = [Episode.load_npz(p) for p in (paths if order is None else [root / o for o in order])]
    else:
        raise DemoFormatError(f"{root} holds no demos: record them with `simjudge demos record --out {root}`")
    if task is not None:
        episodes = [ep for ep in episodes if ep.task == task]
        if not episodes:
            raise DemoFormatError(f"{root} has no episodes of {task!r}")
    return episodes[:limit] if limit is not None else episodes


def _from_lerobot(root: Path, images: bool) -> list[Episode]:
    data = read_lerobot(root)
    metas = data.simjudge.get("episodes")
    if not metas or len(metas) != len(data.episodes):
        raise DemoFormatError(f"{root}: a LeRobotDataset without simjudge's episode facts (meta/simjudge.json); "
                              "replay and judge it with `simjudge demos import-lerobot DIR --task T`")
    keys = ["observation.state", "observation.environment_state", "progress", "action",
            "next.success"]
    if images and IMAGE_KEY in data.features:
        keys.append(IMAGE_KEY)
    cols = data.columns(keys)
    dims = data.simjudge.get("env_state_dims", {})
    out = []
    for meta, sl in zip(metas, data.episode_slices(), strict=True):
        dim = int(dims.get(meta["task"], cols["observation.environment_state"].shape[1]))
        out.append(Episode(
            task=meta["task"], prompt=meta["prompt"], seed=int(meta["seed"]),
            state=cols["observation.state"][sl].astype(np.float32),
            environment_state=cols["observation.environment_state"][sl, :dim].astype(np.float32),
            actions=cols["action"][sl].astype(np.float32),
            progress=cols["progress"][sl].reshape(-1).astype(np.float32),
            next_success=cols["next.success"][sl].reshape(-1).astype(bool),
            images=cols[IMAGE_KEY][sl] if IMAGE_KEY in cols else None,
            success=bool(meta["success"]), final_progress=float(meta["final_progress"]),
            policy=str(meta.get("policy", "")), world=dict(meta.get("world", {}))))
    return out
