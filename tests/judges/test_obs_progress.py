"""The observation progress judge: features, dataset shards, training, shipped weights, splits."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from simjudge.cli_judges import JudgesDatasetConfig, JudgesTrainConfig, build_dataset
from simjudge.judges import JudgeContext, make_judge
from simjudge.judges.bench import judge_states
from simjudge.judges.learned import DEFAULT_WEIGHTS, ObsProgressJudge
from simjudge.judges.learned.data import concat_shards
from simjudge.judges.learned.features import TOKEN_FEATURES, scene_features
from simjudge.judges.learned.model import file_sha256, load_net, save_net
from simjudge.judges.learned.splits import HELDOUT_TASKS, TRAIN_TASKS, check_bench_split
from simjudge.judges.learned.train import TrainSettings, predict, train_net
from simjudge.pipelines.judge_bench import JudgeBenchConfig, run_judge_bench, task_episodes
from simjudge.tasks.spec import make_task_env
from simjudge.tasks.spec.config import ConfigError


@pytest.fixture(scope="module")
def drawer_episodes() -> list:
    """Judge-bench rollouts of OpenDrawer on seed 9 (never training data)."""
    return task_episodes("OpenDrawer-v0", 9, None)


@pytest.fixture(scope="module")
def tiny_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("judges-data")
    paths = build_dataset(JudgesDatasetConfig(out=str(out), tasks=("OpenDrawer-v0",), seeds=1))
    assert [p.name for p in paths] == ["OpenDrawer-v0__seed1.npz"]
    return out


def test_features_read_no_goal_and_follow_the_drawer(drawer_episodes: list) -> None:
    env = make_task_env("OpenDrawer-v0")
    try:
        env.reset(seed=0)
        oracle = next(e for e in drawer_episodes if e.policy == "oracle")
        env.set_state(oracle.state(0))
        first = scene_features(env.view)
        env.goal = None  # the features must not need the goal
        env.set_state(oracle.state(len(oracle) - 1))
        last = scene_features(env.view)
    finally:
        env.close()
    assert first.texts == last.texts and first.tokens.shape[1] == len(TOKEN_FEATURES)
    q = TOKEN_FEATURES.index("q_norm")
    assert last.tokens[:, q].max() > first.tokens[:, q].max() + 0.3  # a drawer opened


def test_dataset_is_resumable_and_training_learns(tiny_data: Path) -> None:
    shard = tiny_data / "shards" / "OpenDrawer-v0__seed1.npz"
    stamp = shard.stat().st_mtime_ns
    build_dataset(JudgesDatasetConfig(out=str(tiny_data), tasks=("OpenDrawer-v0",), seeds=1))
    assert shard.stat().st_mtime_ns == stamp  # kept, not remade
    data = concat_shards([shard])
    assert len(np.unique(data.episode)) == 8 and data.phi.max() > 0.9
    untrained, _ = train_net(data, TrainSettings(steps=0, seed=1), progress=False)
    net, log = train_net(data, TrainSettings(steps=80, batch=64, seed=1), progress=False)
    before = float(np.mean(np.abs(predict(untrained, data) - data.phi)))
    after = float(np.mean(np.abs(predict(net, data) - data.phi)))
    assert after < 0.6 * before, (before, after)
    again, _ = train_net(data, TrainSettings(steps=80, batch=64, seed=1), progress=False)
    assert np.array_equal(predict(again, data), predict(net, data))  # same seed, same net


def test_weights_round_trip_and_sha256_guard(tiny_data: Path, tmp_path: Path) -> None:
    data = concat_shards(sorted((tiny_data / "shards").glob("*.npz")))
    net, _ = train_net(data, TrainSettings(steps=5, batch=16), progress=False)
    path = tmp_path / "w.npz"
    digest = save_net(net, path, {"note": "test"})
    loaded, meta = load_net(path)
    assert meta["note"] == "test" and digest == file_sha256(path)
    assert np.allclose(predict(loaded, data), predict(net, data), atol=1e-6)
    path.with_name("w.npz.sha256").write_text("0" * 64 + "  w.npz\n")
    with pytest.raises(ValueError, match="sha256"):
        load_net(path)


def test_train_command_rejects_other_judges_and_empty_data(tmp_path: Path) -> None:
    from simjudge.cli_judges import train_obs_progress

    with pytest.raises(ConfigError, match="obs-progress"):
        train_obs_progress(JudgesTrainConfig(judge="image-progress", data=str(tmp_path)))
    with pytest.raises(ConfigError, match="judges dataset"):
        train_obs_progress(JudgesTrainConfig(data=str(tmp_path)))


def test_shipped_weights_load_and_rank_an_unseen_episode(drawer_episodes: list) -> None:
    want = DEFAULT_WEIGHTS.with_name(DEFAULT_WEIGHTS.name + ".sha256").read_text().split()[0]
    assert file_sha256(DEFAULT_WEIGHTS) == want
    judge = make_judge("obs-progress")
    assert isinstance(judge, ObsProgressJudge) and judge.provides_potential
    oracle = next(e for e in drawer_episodes if e.policy == "oracle")
    env = make_task_env("OpenDrawer-v0")
    try:
        env.reset(seed=0)
        context = JudgeContext(task="Pull the bottom drawer of the storage cabinet open.")
        steps = [0, len(oracle) // 2, len(oracle) - 1]
        signals = judge_states(judge, env, context, [oracle.state(i) for i in steps])
    finally:
        env.close()
    phis = [s.phi for s in signals]
    assert all(p is not None and 0.0 <= p <= 1.0 for p in phis)
    assert phis[0] < phis[1] < phis[2], phis
    assert abs(phis[2] - oracle.phi[-1]) < 0.25 and abs(phis[0] - oracle.phi[0]) < 0.25


def test_bench_splits_pick_tasks_and_refuse_training_seeds(tmp_path: Path) -> None:
    assert check_bench_split("heldout-tasks", 0) == HELDOUT_TASKS
    assert set(check_bench_split("heldout-instances", 0)) <= set(TRAIN_TASKS)
    assert not set(HELDOUT_TASKS) & set(TRAIN_TASKS)
    with pytest.raises(ConfigError, match="unknown split"):
        check_bench_split("heldout-everything", 0)
    config = JudgeBenchConfig(split="heldout-instances", seed=2, out=str(tmp_path / "b"))
    with pytest.raises(ConfigError, match="training rollouts"):
        run_judge_bench(config)  # refused before any rollout
    assert not (tmp_path / "b").exists()
