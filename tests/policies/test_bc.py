"""Behaviour cloning: ``policies train-bc`` writes weights + SHA-256 + provenance; ``bc:PATH`` acts.

Trained here on a few oracle demonstrations (small step counts, one torch thread): an MLP that
fits three demos solves the worlds it saw; the CNN observes the camera at the demos' resolution;
tampered weights and another task's state are refused with the fix named.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from simjudge.demos.record import DemosRecordConfig, run_record
from simjudge.demos.train_bc import TrainBCConfig, train_bc
from simjudge.policies import PolicyError, make_policy, run_episode
from simjudge.policies.bc import file_sha256
from simjudge.tasks.spec import make_task_env

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def demos(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bc") / "demos"
    run_record(DemosRecordConfig(tasks=("PressDispenser-v0", "CloseDoor-v0"), episodes=3, out=str(out),
                                 image_size=32), log=None)
    return out


@pytest.fixture(scope="module")
def mlp(demos: Path) -> Path:
    out = demos.parent / "mlp.npz"
    train_bc(TrainBCConfig(demos=str(demos), task="PressDispenser-v0", kind="mlp", out=str(out), steps=600))
    return out


def test_weights_come_with_sha256_and_provenance(mlp: Path, demos: Path) -> None:
    assert Path(f"{mlp}.sha256").read_text().split()[0] == file_sha256(mlp)
    with np.load(mlp) as data:
        meta = json.loads(str(data["meta"]))
    prov = meta["provenance"]
    assert prov["command"].startswith("simjudge policies train-bc --demos ") and "--kind mlp" in prov["command"]
    assert (prov["episodes"], prov["seed"], prov["demo_policy"]) == (3, 0, ["oracle"])
    assert prov["frames"] > 30 and prov["seconds"] > 0 and meta["task"] == "PressDispenser-v0"


def test_bc_mlp_solves_the_worlds_it_was_shown(mlp: Path) -> None:
    policy = make_policy(f"bc:{mlp}")
    assert policy.info.spec == f"bc:{mlp}" and policy.info.observation_needs == ()
    env = make_task_env("PressDispenser-v0")
    try:
        results = [run_episode(env, policy, seed) for seed in (0, 1, 2)]
    finally:
        env.close()
    assert all(r.success for r in results), [r.progress[-1] for r in results]


def test_train_bc_needs_one_task(demos: Path, tmp_path: Path) -> None:
    from simjudge.demos.lerobot_format import DemoFormatError

    with pytest.raises(DemoFormatError, match="choose one with --task"):
        train_bc(TrainBCConfig(demos=str(demos), out=str(tmp_path / "x.npz"), steps=1))
    with pytest.raises(DemoFormatError, match="fewer than --episodes 9: record more"):
        train_bc(TrainBCConfig(demos=str(demos), task="CloseDoor-v0", episodes=9,
                               out=str(tmp_path / "x.npz"), steps=1))


def test_tampered_weights_and_another_task_are_refused(mlp: Path, tmp_path: Path) -> None:
    policy = make_policy(f"bc:{mlp}")
    with pytest.raises(PolicyError, match="trained on PressDispenser-v0 .* audit it on its own task"):
        policy.act({"state": np.zeros(35, np.float32), "prompt": ""})
    bad = tmp_path / "bad.npz"
    data = bytearray(mlp.read_bytes())
    data[len(data) // 2] ^= 0xFF
    bad.write_bytes(bytes(data))
    Path(f"{bad}.sha256").write_text(Path(f"{mlp}.sha256").read_text())
    with pytest.raises(PolicyError, match="does not match"):
        make_policy(f"bc:{bad}")
    with pytest.raises(PolicyError, match="train-bc"):
        make_policy(f"bc:{tmp_path / 'missing.npz'}")


def test_bc_cnn_observes_the_camera(demos: Path, tmp_path: Path) -> None:
    out = tmp_path / "cnn.npz"
    card = train_bc(TrainBCConfig(demos=str(demos), task="CloseDoor-v0", kind="cnn", out=str(out), steps=20,
                                  batch_size=16))
    assert card["kind"] == "cnn" and card["frames"] > 30
    policy = make_policy(f"bc:{out}")
    assert policy.info.observation_needs == ("exterior_image",) and policy.info.image_size == (32, 32)
    env = make_task_env("CloseDoor-v0", horizon=5)
    try:
        result = run_episode(env, policy, seed=0)
    finally:
        env.close()
    assert result.steps == 5 and result.queries == 5


def test_train_bc_command_line(demos: Path, tmp_path: Path) -> None:
    out = tmp_path / "cli.npz"
    done = subprocess.run([sys.executable, "-m", "simjudge", "policies", "train-bc", "--demos", str(demos),
                           "--task", "CloseDoor-v0", "--episodes", "2", "--steps", "5", "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"use it as the policy spec bc:{out}" in done.stdout and "2 episodes" in done.stdout
