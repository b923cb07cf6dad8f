"""Any judge on recorded states: the privileged judge is exact, noise hurts small hops most."""

from __future__ import annotations

import numpy as np
import pytest

from simjudge.envs.sim_state import SimState
from simjudge.judges import make_judge
from simjudge.judges.bench import (
    build_pulse_pairs,
    corrupt_image,
    judge_states,
    perturb_state,
    score_pairs,
    summarize_pairs,
)
from tests.judges.bench_helpers import bench_episodes, open_envs


@pytest.fixture(scope="module")
def setup():
    envs, contexts = open_envs()
    yield list(bench_episodes()), envs, contexts
    for env in envs.values():
        env.close()


def test_privileged_judge_is_exact_on_every_bin(setup):
    episodes, envs, contexts = setup
    pairs = build_pulse_pairs([e.phi for e in episodes], 60, seed=1, n_neutral=10)
    summary = summarize_pairs(score_pairs(make_judge("privileged"), pairs, episodes, envs,
                                          contexts))
    assert summary["bins"] == {"small": 1.0, "medium": 1.0, "large": 1.0}
    assert summary["overall"] == 1.0 and summary["neutral"] == 1.0 and summary["invalid"] == 0


def test_restored_states_reproduce_the_recorded_phi(setup):
    episodes, envs, contexts = setup
    episode = next(e for e in episodes if e.policy == "release")
    signals = judge_states(make_judge("privileged"), envs[episode.task],
                           contexts[episode.task], [episode.state(i) for i in range(len(episode))])
    assert [s.phi for s in signals] == episode.phi


def test_noisy_judge_is_worse_on_small_hops(setup):
    episodes, envs, contexts = setup
    pairs = build_pulse_pairs([e.phi for e in episodes], 150, seed=2)
    results = score_pairs(make_judge("noisy:sigma=0.05"), pairs, episodes, envs, contexts, seed=4)
    bins = summarize_pairs(results)["bins"]
    assert bins["small"] < bins["large"] - 0.1, bins
    again = score_pairs(make_judge("noisy:sigma=0.05"), pairs, episodes, envs, contexts, seed=4)
    assert [r.correct for r in again] == [r.correct for r in results]  # seeded per pair


def test_state_noise_perturbs_what_the_judge_reads(setup):
    episodes, envs, contexts = setup
    pairs = build_pulse_pairs([e.phi for e in episodes], 60, seed=1)
    noisy = summarize_pairs(score_pairs(make_judge("privileged"), pairs, episodes, envs,
                                        contexts, state_sigma=0.02))
    assert noisy["overall"] < 1.0


def test_a_judge_without_potential_is_rejected(setup):
    episodes, envs, contexts = setup
    with pytest.raises(ValueError, match="no progress potential"):
        score_pairs(make_judge("rule"), [], episodes, envs, contexts)


def test_perturb_state_changes_positions_only():
    state = SimState([0.1] * 9, [0.0] * 9, {"Box": {"pos": [1.0, 2.0, 3.0], "quat": [0, 0, 0, 1],
                                                    "lin_vel": [0.0] * 3, "ang_vel": [0.0] * 3,
                                                    "qpos": [0.5], "qvel": [0.0]}},
                     ("Box", "link_0"), True, 7)
    rng = np.random.default_rng(0)
    noisy = perturb_state(state, 0.01, rng)
    assert noisy is not state and state.robot_qpos == [0.1] * 9  # the original is untouched
    assert noisy.robot_qpos[:7] != state.robot_qpos[:7] and noisy.robot_qpos[7:] == [0.1, 0.1]
    assert noisy.bodies["Box"]["pos"] != [1.0, 2.0, 3.0] and noisy.bodies["Box"]["qpos"] != [0.5]
    assert (noisy.grasped, noisy.suction_on, noisy.elapsed_steps) == (("Box", "link_0"), True, 7)
    assert noisy.bodies["Box"]["quat"] == [0, 0, 0, 1]
    assert perturb_state(state, 0.0, rng) == state
    with pytest.raises(ValueError):
        perturb_state(state, -1.0, rng)


def test_corrupt_image_follows_the_robopulse_formula():
    rng = np.random.default_rng(0)
    image = np.full((64, 64, 3), 128, dtype=np.uint8)
    assert np.array_equal(corrupt_image(image, 0.0, rng), image)
    noisy = corrupt_image(image, 0.1, np.random.default_rng(1))
    assert noisy.dtype == np.uint8 and noisy.shape == image.shape
    unit = noisy.astype(float) / 255.0
    expected_mean = 0.9 * 128 / 255.0  # (1 − α)·I + α·E[N(0, 1)]
    assert unit.mean() == pytest.approx(expected_mean, abs=0.01)
    assert unit.std() == pytest.approx(0.1, abs=0.01)  # α·std(N(0, 1)), barely clipped
    floats = corrupt_image(np.zeros((8, 8)), 0.05, rng)
    assert floats.dtype == np.float64 and floats.min() >= 0.0 and floats.max() <= 1.0
    with pytest.raises(ValueError):
        corrupt_image(image, 1.5, rng)
