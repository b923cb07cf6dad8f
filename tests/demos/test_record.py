"""``simjudge demos record`` and ``import-lerobot`` in the main environment (no lerobot needed).

The dataset written holds what the episode recorder saw, frame for frame; a killed recording
resumes at the next episode; an imported dataset replays to the success it recorded; a
dataset of another action space is refused with the mismatch named.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from simjudge.demos.episodes import record_episode
from simjudge.demos.importer import DemosImportConfig, run_import
from simjudge.demos.lerobot_format import DemoFormatError, read_lerobot
from simjudge.demos.load import load_demos
from simjudge.demos.record import DemosRecordConfig, run_record
from simjudge.policies import make_policy

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("demos") / "ds"
    run_record(DemosRecordConfig(tasks=("PressButton-v0", "CloseDoor-v0"), episodes=2, out=str(out),
                                 policy="oracle-noisy:noise=0.3", image_size=32, seed=5), log=None)
    return out


def test_lerobot_layout_and_info(dataset: Path) -> None:
    info = json.loads((dataset / "meta" / "info.json").read_text())
    assert info["codebase_version"] == "v3.0" and info["total_episodes"] == 4
    assert info["fps"] == 50 and info["video_path"] is None
    feats = info["features"]
    assert feats["observation.state"]["shape"] == [15]
    assert feats["observation.images.exterior"] == {"dtype": "image", "shape": [32, 32, 3],
                                                    "names": ["height", "width", "channels"]}
    # PressButton's state is the longer one: the environment state is padded to it
    assert feats["observation.environment_state"]["shape"] == [44 - 15]
    for path in ("meta/stats.json", "meta/tasks.parquet", "meta/episodes/chunk-000/file-000.parquet",
                 "data/chunk-000/file-000.parquet"):
        assert (dataset / path).is_file(), path
    assert not (dataset / ".staging").exists()
    stats = json.loads((dataset / "meta" / "stats.json").read_text())
    assert np.shape(stats["observation.images.exterior"]["mean"]) == (3, 1, 1)
    data = read_lerobot(dataset)
    assert data.tasks == {0: "Press the first button on the button panel.", 1: "Push the half-open door shut."}
    assert [e["length"] for e in data.episodes] == [s.stop - s.start for s in data.episode_slices()]
    assert stats["action"]["count"] == [info["total_frames"]]


def test_dataset_holds_what_was_recorded(dataset: Path) -> None:
    episodes = load_demos(dataset)
    assert [(ep.task, ep.seed) for ep in episodes] == [
        ("PressButton-v0", 5), ("PressButton-v0", 6), ("CloseDoor-v0", 5), ("CloseDoor-v0", 6)]
    fresh = record_episode("CloseDoor-v0", make_policy("oracle-noisy:noise=0.3"), seed=6, image_size=32)
    back = episodes[3]
    assert back.environment_state.shape[1] == 35 - 15  # the padding is cut off again
    np.testing.assert_array_equal(back.actions, fresh.actions)
    np.testing.assert_array_equal(back.state, fresh.state)
    np.testing.assert_array_equal(back.environment_state, fresh.environment_state)
    np.testing.assert_array_equal(back.images, fresh.images)  # PNG is lossless
    np.testing.assert_allclose(back.progress, fresh.progress)
    assert back.success == fresh.success and back.next_success[-1] == fresh.success


def test_import_replays_to_the_recorded_success(dataset: Path, tmp_path: Path) -> None:
    report = run_import(DemosImportConfig(dataset=str(dataset), out=str(tmp_path / "r.json")), log=None)
    rows = report["episodes"]
    assert len(rows) == 4 and all(r["matches_recorded"] for r in rows)
    assert all(r["steps_replayed"] == r["frames"] for r in rows)
    assert json.loads((tmp_path / "r.json").read_text())["replayed_success_rate"] == report["replayed_success_rate"]


def test_import_refuses_another_action_space(dataset: Path, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "joint"
    shutil.copytree(dataset, copy)
    info = json.loads((copy / "meta" / "info.json").read_text())
    info["features"]["action"]["shape"] = [8]
    info["features"]["action"]["names"] = [f"joint_{i}" for i in range(7)] + ["gripper"]
    (copy / "meta" / "info.json").write_text(json.dumps(info))
    with pytest.raises(DemoFormatError, match=r"float32 \[8\].*joint_0.*PressButton-v0's env takes float \[7\]"):
        run_import(DemosImportConfig(dataset=str(copy)), log=None)


def test_import_refuses_what_is_no_dataset(tmp_path: Path) -> None:
    with pytest.raises(DemoFormatError, match="meta/info.json is missing"):
        run_import(DemosImportConfig(dataset=str(tmp_path)), log=None)


def test_killed_recording_resumes_at_the_next_episode(tmp_path: Path) -> None:
    out = tmp_path / "ds"
    cmd = [sys.executable, "-m", "simjudge", "demos", "record", "--tasks", "CloseDrawer-v0",
           "--episodes", "40", "--image-size", "0", "--format", "npz", "--out", str(out)]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line.startswith("[3/40]"):
            break
    proc.kill()
    proc.wait(10)
    staged = sorted((out / "episodes").glob("*.npz"))
    assert 3 <= len(staged) < 40 and not (out / "demos.json").exists()
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    lines = [line for line in done.stdout.splitlines() if line.startswith("[")]
    resumed = [line for line in lines if line.endswith("(resumed)")]
    assert len(lines) == 40 and len(resumed) == len(staged)
    assert lines[len(staged)].startswith(f"[{len(staged) + 1}/40]") and "resumed" not in lines[len(staged)]
    summary = json.loads((out / "demos.json").read_text())
    assert summary["episodes"] == 40 and len(load_demos(out)) == 40


def test_resuming_with_other_options_is_refused(tmp_path: Path) -> None:
    from simjudge.policies import PolicyError

    out = str(tmp_path / "ds")
    run_record(DemosRecordConfig(tasks=("PressButton-v0",), episodes=1, out=out, format="npz", image_size=0),
               log=None)
    more = run_record(DemosRecordConfig(tasks=("PressButton-v0",), episodes=2, out=out, format="npz",
                                        image_size=0), log=None)
    assert more["episodes"] == 2  # more episodes of the same recording: resumed
    with pytest.raises(PolicyError, match=r"other options \(policy: \['oracle'\]\)"):
        run_record(DemosRecordConfig(tasks=("PressButton-v0",), episodes=2, out=out, format="npz",
                                     image_size=0, policy="random"), log=None)
