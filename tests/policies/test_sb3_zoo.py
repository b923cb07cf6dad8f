"""The zoo's SB3 policies and ``simjudge policies train-sb3``.

The shipped PPO checkpoints were trained by the command each one records and measured by
``simjudge audit`` (``bench/zoo_sb3.py``); here: one loads through ``zoo:`` with its SHA-256
checked and plays an episode on the real env, the training command works on a tiny budget
(PPO from the command line, SAC in process) and writes a checkpoint ``sb3:`` loads.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("stable_baselines3", reason="pip install 'simjudge[rl]'")

from simjudge.policies import PolicyError, make_policy, run_episode  # noqa: E402
from simjudge.policies.bc import file_sha256  # noqa: E402
from simjudge.policies.sb3 import sb3_algorithm  # noqa: E402
from simjudge.policies.train_sb3 import TrainSB3Config, read_card, train_sb3  # noqa: E402
from simjudge.policies.zoo import ZOO_DIR, zoo_entries  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SB3 = {name: e for name, e in zoo_entries().items() if e["kind"] == "sb3"}


def test_the_sb3_zoo_is_graded_by_budget() -> None:
    assert len(SB3) >= 6 and len({e["task"] for e in SB3.values()}) >= 2
    for name, entry in SB3.items():
        prov, measured = entry["provenance"], entry["measured"]
        assert prov["command"].startswith("simjudge policies train-sb3 --task ") and f"{name}.zip" in prov["command"]
        assert {"algo", "budget", "env_steps", "seed", "seconds", "stable_baselines3", "torch"} <= set(prov)
        assert measured["seeds"] >= 30 and measured["command"].startswith("simjudge audit ")
        side = Path(f"{ZOO_DIR / entry['file']}.sha256").read_text().split()[0]
        assert side == entry["sha256"] == file_sha256(ZOO_DIR / entry["file"])
    rates = [e["measured"]["success"] for e in SB3.values()]
    assert max(rates) - min(rates) >= 0.5  # the budgets grade the quality


def test_a_zoo_sb3_policy_loads_and_plays_an_episode() -> None:
    from simjudge.tasks.spec import make_task_env

    name = "ppo-CloseDoor-10k"
    entry = SB3[name]
    assert file_sha256(ZOO_DIR / entry["file"]) == entry["sha256"]
    policy = make_policy(f"zoo:{name}")
    assert policy.info.name == f"zoo:{name}" and policy.info.spec == f"zoo:{name}"
    assert policy.info.metadata["algorithm"] == "ppo"
    env = make_task_env(entry["task"])
    try:
        result = run_episode(env, policy, seed=0)
    finally:
        env.close()
    assert 0 < result.steps <= 200 and len(result.progress) >= result.steps


def test_a_tampered_zoo_checkpoint_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import simjudge.policies.zoo as zoo

    entry = SB3["ppo-CloseDoor-2k"]
    (tmp_path / entry["file"]).write_bytes((ZOO_DIR / entry["file"]).read_bytes() + b"x")
    monkeypatch.setattr(zoo, "ZOO_DIR", tmp_path)
    with pytest.raises(PolicyError, match="does not match its SHA-256"):
        zoo.zoo_path("ppo-CloseDoor-2k")


def test_train_sb3_command_on_a_tiny_budget(tmp_path: Path) -> None:
    out = tmp_path / "ppo.zip"
    done = subprocess.run([sys.executable, "-m", "simjudge", "policies", "train-sb3", "--task", "CloseDoor-v0",
                           "--steps", "64", "--envs", "1", "--hidden", "16", "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"sb3:{out}" in done.stdout
    assert Path(f"{out}.sha256").read_text().split() == [file_sha256(out), "ppo.zip"]
    card = read_card(out)
    assert card["algo"] == "ppo" and card["env_steps"] == 256 and card["budget"] == 64  # one rollout
    assert card["command"] == ("simjudge policies train-sb3 --task CloseDoor-v0 --algo ppo --steps 64 "
                               f"--seed 0 --out {out} --envs 1 --hidden 16")
    assert sb3_algorithm(out) == "ppo"
    policy = make_policy(f"sb3:{out}")
    action = policy.act({"state": np.zeros(policy.model.observation_space.shape, np.float32), "prompt": ""})
    assert action.shape == (7,) and np.all(np.abs(action) <= 1.0)


def test_train_sb3_sac_in_process(tmp_path: Path) -> None:
    card = train_sb3(TrainSB3Config(task="CloseDoor-v0", algo="sac", steps=40, hidden=16,
                                    out=str(tmp_path / "sac.zip")))
    assert card["algo"] == "sac" and card["env_steps"] == 40 and card["settings"]["learning_starts"] == 20
    assert sb3_algorithm(tmp_path / "sac.zip") == "sac" and card["sha256"] == file_sha256(tmp_path / "sac.zip")


def test_train_sb3_refuses_a_zero_budget(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="--steps"):
        train_sb3(TrainSB3Config(task="CloseDoor-v0", steps=0, out=str(tmp_path / "x.zip")))


def test_policies_list_shows_the_sb3_zoo() -> None:
    done = subprocess.run([sys.executable, "-m", "simjudge", "policies", "list"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    entry = SB3["ppo-CloseDoor-10k"]
    assert "zoo:ppo-CloseDoor-10k" in done.stdout and entry["provenance"]["command"] in done.stdout
    assert f"ppo {entry['provenance']['env_steps']} env steps on the dense privileged reward" in done.stdout
