"""The image progress judge: image shards, training, shipped weights, bench image rows."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from simjudge.cli_judges_image import build_image_shard
from simjudge.judges import JudgeContext, make_judge
from simjudge.judges.bench import build_pulse_pairs, judge_states
from simjudge.judges.bench.image_rows import image_variant_rows
from simjudge.judges.bench.noise import corrupt_image
from simjudge.judges.learned import DEFAULT_IMAGE_WEIGHTS, ImageProgressJudge
from simjudge.judges.learned.image_data import (
    FRAME_SIZE,
    STORE_SIZE,
    concat_image_shards,
    load_image_shard,
)
from simjudge.judges.learned.image_model import (
    ImageProgressEnsemble,
    load_image_net,
    save_image_net,
)
from simjudge.judges.learned.image_train import (
    ImageTrainSettings,
    pair_accuracy,
    predict_images,
    train_image_ensemble,
    train_image_net,
)
from simjudge.judges.learned.model import file_sha256
from simjudge.judges.learned.obs_judge import text_embedder
from simjudge.pipelines.judge_bench import task_context, task_episodes
from simjudge.tasks.spec import make_task_env

DRAWER_TEXT = "Pull the bottom drawer of the storage cabinet open."


@pytest.fixture(scope="module")
def drawer_episodes() -> list:
    """Judge-bench rollouts of OpenDrawer on seed 9 (never training data), first 4."""
    return task_episodes("OpenDrawer-v0", 9, None)[:4]


@pytest.fixture(scope="module")
def shard(tmp_path_factory: pytest.TempPathFactory, drawer_episodes: list) -> Path:
    folder = tmp_path_factory.mktemp("images")
    return build_image_shard("OpenDrawer-v0", 9, folder, text_embedder(), drawer_episodes)


def test_shard_has_randomised_views_and_labels(shard: Path, drawer_episodes: list) -> None:
    arrays, meta = load_image_shard(shard)
    n = sum(len(e) for e in drawer_episodes)
    assert arrays["frames"].shape == (n, STORE_SIZE[1], STORE_SIZE[0], 3)
    assert arrays["frames"].dtype == np.uint8
    assert np.allclose(arrays["phi"], np.concatenate([e.phi for e in drawer_episodes]))
    cams = [v["camera"]["eye"] for v in meta["views"]]
    assert len({tuple(c) for c in cams}) == len(drawer_episodes)  # one camera per episode
    firsts = [arrays["frames"][arrays["episode"] == e][0] for e in range(2)]
    assert np.abs(firsts[0].astype(int) - firsts[1].astype(int)).mean() > 3  # views differ


def test_training_learns_and_is_deterministic(shard: Path, tmp_path: Path) -> None:
    data = concat_image_shards([shard])
    assert data.frames.shape[1:] == (FRAME_SIZE[1], FRAME_SIZE[0], 3)
    assert (data.step[data.first] == 0).all()
    settings = ImageTrainSettings(steps=60, batch=8, lr=3e-3, seed=1)
    untrained, _ = train_image_net(data, ImageTrainSettings(steps=0), progress=False)
    net, _ = train_image_net(data, settings, progress=False)
    before = float(np.mean((predict_images(untrained, data) - data.phi) ** 2))
    pred = predict_images(net, data)
    after = float(np.mean((pred - data.phi) ** 2))
    assert after < 0.7 * before, (before, after)
    again, _ = train_image_net(data, settings, progress=False)
    assert np.array_equal(predict_images(again, data), pred)  # same seed, same net
    path = tmp_path / "w.npz"
    digest = save_image_net(net, path, {"note": "test"})
    loaded, meta = load_image_net(path)
    assert meta["note"] == "test" and digest == file_sha256(path)
    assert np.allclose(predict_images(loaded, data), pred, atol=1e-5)
    assert pair_accuracy(data, pred, 0)["overall"] is not None
    path.with_name("w.npz.sha256").write_text("0" * 64 + "  w.npz\n")
    with pytest.raises(ValueError, match="sha256"):
        load_image_net(path)


def test_ensemble_averages_members_and_round_trips(shard: Path, tmp_path: Path) -> None:
    data = concat_image_shards([shard])
    settings = ImageTrainSettings(steps=6, batch=4, seed=3, members=2)
    ens, log = train_image_ensemble(data, settings, progress=False)
    assert isinstance(ens, ImageProgressEnsemble)
    assert [m["settings"]["seed"] for m in log["members"]] == [3, 4]
    members = [predict_images(m, data) for m in ens.members]
    single, _ = train_image_net(data, replace(settings, seed=4), progress=False)
    assert np.array_equal(members[1], predict_images(single, data))  # member i: seed + i
    assert not np.allclose(members[0], members[1])
    pred = predict_images(ens, data)
    assert np.allclose(pred, np.mean(members, axis=0), atol=1e-6)
    path = tmp_path / "ens.npz"
    save_image_net(ens, path, {})
    loaded, meta = load_image_net(path)
    assert meta["arch"]["members"] == 2 and isinstance(loaded, ImageProgressEnsemble)
    assert np.allclose(predict_images(loaded, data), pred, atol=1e-5)
    judge = ImageProgressJudge(weights=str(path))
    judge.reset(JudgeContext(task=DRAWER_TEXT))
    first = load_image_shard(shard)[0]["frames"][0]  # its own reference frame
    assert judge.phi_of_frame(first) == pytest.approx(float(np.clip(pred[0], 0, 1)), abs=1e-5)
    with pytest.raises(ValueError, match="members"):
        train_image_ensemble(data, replace(settings, members=0), progress=False)


def test_shipped_weights_load_and_judge_rendered_frames(drawer_episodes: list) -> None:
    want = DEFAULT_IMAGE_WEIGHTS.with_name(DEFAULT_IMAGE_WEIGHTS.name + ".sha256")
    assert file_sha256(DEFAULT_IMAGE_WEIGHTS) == want.read_text().split()[0]
    judge = make_judge("image-progress")
    assert isinstance(judge, ImageProgressJudge) and judge.needs_frames
    oracle = next(e for e in drawer_episodes if e.policy == "oracle")
    env = make_task_env("OpenDrawer-v0", render_mode="rgb_array")
    try:
        env.reset(seed=0)
        steps = [0, len(oracle) - 1]
        signals = judge_states(judge, env.unwrapped, JudgeContext(task=DRAWER_TEXT),
                               [oracle.state(i) for i in steps])
        env.unwrapped.set_state(oracle.state(0))
        frame = env.unwrapped.render()
    finally:
        env.close()
    phis = [s.phi for s in signals]
    assert all(p is not None and 0.0 <= p <= 1.0 for p in phis)
    assert phis[0] < phis[1], phis  # an opened drawer scores above the closed one
    judge.reset(JudgeContext(task=DRAWER_TEXT))
    noisy = corrupt_image(frame, 1.0, np.random.default_rng(0))  # pure noise: still in [0, 1]
    assert 0.0 <= judge.phi_of_frame(noisy) <= 1.0
    judge.reset(JudgeContext(task=DRAWER_TEXT))
    with pytest.raises(ValueError, match="rendered frame"):
        judge.observe_fast(0, None, {}, transition=None)


def test_bench_image_rows(drawer_episodes: list) -> None:
    judge = make_judge("image-progress")
    pairs = build_pulse_pairs([e.phi for e in drawer_episodes], 6, 0, n_neutral=2)
    env = make_task_env("OpenDrawer-v0", render_mode="rgb_array")
    try:
        env.reset(seed=0)
        contexts = {"OpenDrawer-v0": task_context(env, "OpenDrawer-v0")}
        rows = image_variant_rows(judge, pairs, drawer_episodes, {"OpenDrawer-v0": env},
                                  contexts)
    finally:
        env.close()
    assert {"occlusion 20%", "viewpoint az+8°", "invariance: duplicate frame"} <= set(rows)
    for name, row in rows.items():
        assert row["overall"] is not None and 0.0 <= row["overall"] <= 1.0, name
    assert rows["invariance: duplicate frame"]["max_abs_delta_0_10"] == 0.0  # same frame
