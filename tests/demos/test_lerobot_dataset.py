"""LeRobot's own code on simjudge's datasets, both ways (runs in ``.venv-lerobot``).

* A dataset ``simjudge demos record`` wrote loads in ``LeRobotDataset`` and a torch
  ``DataLoader`` batch holds what was recorded.
* A dataset written by LeRobot's ``LeRobotDataset.create`` / ``add_frame`` / ``save_episode``
  (the actions of oracle episodes) replays and is judged by ``simjudge demos import-lerobot``;
  one whose action is not simjudge's is refused with the mismatch named.

The LeRobot environment is separate (lerobot pins an older torch than simjudge's): these
tests skip without it; ``make lerobot`` creates it.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from simjudge.demos.importer import DemosImportConfig, run_import
from simjudge.demos.lerobot_format import DemoFormatError
from simjudge.demos.load import load_demos
from simjudge.demos.record import DemosRecordConfig, run_record

ROOT = Path(__file__).resolve().parents[2]
LEROBOT_PYTHON = ROOT / ".venv-lerobot" / "bin" / "python"
pytestmark = pytest.mark.skipif(not LEROBOT_PYTHON.is_file(),
                                reason="needs the LeRobot environment .venv-lerobot: run `make lerobot`")

LOAD = """
import sys, numpy as np, torch
torch.set_num_threads(1)
from lerobot.datasets.lerobot_dataset import LeRobotDataset
ds = LeRobotDataset("simjudge/test", root=sys.argv[1])
loader = torch.utils.data.DataLoader(ds, batch_size=len(ds), shuffle=False, num_workers=0)
batch = next(iter(loader))
np.savez(sys.argv[2], **{k: v.numpy() for k, v in batch.items() if hasattr(v, "numpy")},
         task=np.array(batch["task"]), num_episodes=ds.num_episodes, fps=ds.fps)
"""

CREATE = """
import sys, numpy as np, torch
from lerobot.datasets.lerobot_dataset import LeRobotDataset
from simjudge.demos.episodes import record_episode
from simjudge.policies import make_policy
width = int(sys.argv[2])
features = {
    "observation.state": {"dtype": "float32", "shape": (15,), "names": None},
    "action": {"dtype": "float32", "shape": (width,), "names": [f"a{i}" for i in range(width)]},
}
ds = LeRobotDataset.create("user/their_dataset", fps=50, features=features, root=sys.argv[1],
                           use_videos=False)
for seed in (3, 4):
    ep = record_episode("CloseDoor-v0", make_policy("oracle-noisy:noise=0.2"), seed=seed, image_size=0)
    for state, action in zip(ep.state, ep.actions):
        ds.add_frame({"observation.state": state, "action": action[:width], "task": ep.prompt})
    ds.save_episode()
    print("RECORDED", seed, int(ep.success), ep.length)
ds.finalize()
"""


def _lerobot(code: str, *args: str, timeout: float = 300) -> str:
    done = subprocess.run([str(LEROBOT_PYTHON), "-c", code, *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout, env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


def test_lerobot_loads_a_simjudge_dataset(tmp_path: Path) -> None:
    out = tmp_path / "ds"
    run_record(DemosRecordConfig(tasks=("PressDispenser-v0", "CloseDoor-v0"), episodes=2, out=str(out),
                                 image_size=24, seed=2), log=None)
    _lerobot(LOAD, str(out), str(tmp_path / "batch.npz"))
    batch = np.load(tmp_path / "batch.npz")
    episodes = load_demos(out)
    assert int(batch["num_episodes"]) == 4 and int(batch["fps"]) == 50
    np.testing.assert_array_equal(batch["action"], np.concatenate([ep.actions for ep in episodes]))
    np.testing.assert_array_equal(batch["observation.state"], np.concatenate([ep.state for ep in episodes]))
    env = batch["observation.environment_state"]
    width = episodes[0].environment_state.shape[1]  # PressDispenser's 17, padded to CloseDoor's 20
    assert (width, env.shape[1]) == (17, 20)
    np.testing.assert_array_equal(env[: episodes[0].length, :width], episodes[0].environment_state)
    assert not env[: episodes[0].length, width:].any()
    images = np.concatenate([ep.images for ep in episodes]).transpose(0, 3, 1, 2) / 255.0
    np.testing.assert_allclose(batch["observation.images.exterior"], images, atol=1e-6)
    np.testing.assert_allclose(batch["progress"], np.concatenate([ep.progress for ep in episodes]))
    assert list(batch["task"][:1]) == ["Press the pump of the soap dispenser down."]
    lengths = [ep.length for ep in episodes]
    np.testing.assert_array_equal(batch["episode_index"], np.repeat(np.arange(4), lengths))
    np.testing.assert_allclose(batch["timestamp"][: lengths[0]], np.arange(lengths[0]) / 50.0, atol=1e-6)


def test_a_lerobot_written_dataset_replays_and_is_judged(tmp_path: Path) -> None:
    root = tmp_path / "theirs"
    out = _lerobot(CREATE, str(root), "7")
    recorded = [line.split()[1:] for line in out.splitlines() if line.startswith("RECORDED")]
    assert not (root / "meta" / "simjudge.json").exists()  # nothing of simjudge's: a user's dataset
    report = run_import(DemosImportConfig(dataset=str(root), seed=3), log=None)
    rows = report["episodes"]
    assert [r["task"] for r in rows] == ["CloseDoor-v0"] * 2  # found by the task text
    assert [(str(r["seed"]), str(int(r["success"])), str(r["frames"])) for r in rows] == [tuple(r) for r in recorded]
    assert all(r["steps_replayed"] == r["frames"] for r in rows)
    info = json.loads((root / "meta" / "info.json").read_text())
    assert info["codebase_version"] == "v3.0"


def test_a_lerobot_dataset_of_another_action_space_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "six"
    _lerobot(CREATE, str(root), "6")
    with pytest.raises(DemoFormatError, match=r"float32 \[6\] \(names \['a0'.*CloseDoor-v0's env takes float \[7\]"):
        run_import(DemosImportConfig(dataset=str(root)), log=None)
