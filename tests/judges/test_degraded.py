"""Degraded judges: seeded noise, quantisation, and the drift of a pairwise judge."""

from __future__ import annotations

import numpy as np
import pytest

from simjudge.judges import (
    CodeRewardJudge,
    DegradedNoisyJudge,
    DegradedPairwiseJudge,
    DegradedQuantizedJudge,
    JudgeRecord,
    JudgeVerify,
    PrivilegedProgressJudge,
)
from tests.judges.helpers import REWARD_OK, run_actions, run_oracle


def _trace(env, judge, seed: int = 0, key: str = "phi") -> tuple[list[float], list[float]]:
    """Judge Φ (or a detail) and privileged Φ of an oracle rollout."""
    out = run_oracle(JudgeVerify(env, judge), seed=seed)
    infos = [out.reset_info, *out.infos]
    values = [i["judge"][key] if key == "phi" else i["judge"]["details"][key] for i in infos]
    return values, [i["progress"] for i in infos]


def test_noisy_judge_is_deterministic_per_seed_and_noisy(drawer_env):
    noise_a, _ = _trace(drawer_env, DegradedNoisyJudge(sigma=0.05, seed=1), key="noise")
    noise_b, _ = _trace(drawer_env, DegradedNoisyJudge(sigma=0.05, seed=1), key="noise")
    noise_c, _ = _trace(drawer_env, DegradedNoisyJudge(sigma=0.05, seed=2), key="noise")
    assert noise_a == noise_b and noise_a != noise_c
    a, truth = _trace(drawer_env, DegradedNoisyJudge(sigma=0.05, seed=1))
    error = np.asarray(a) - np.asarray(truth)
    assert 0.01 < np.std(error) < 0.1 and all(0.0 <= p <= 1.0 for p in a)
    zero, _ = _trace(drawer_env, DegradedNoisyJudge(sigma=0.0))
    assert zero == pytest.approx(truth)


def test_noise_differs_between_episodes_of_one_judge(short_drawer_env):
    judge = DegradedNoisyJudge(sigma=0.1, seed=0)
    env = JudgeVerify(short_drawer_env, judge)
    first = run_actions(env, [np.zeros(7)] * 6)
    second = run_actions(env, [np.zeros(7)] * 6)
    assert [i["judge"]["phi"] for i in first.infos] != [i["judge"]["phi"] for i in second.infos]


def test_quantized_judge_rounds_down_to_levels(drawer_env):
    phis, truth = _trace(drawer_env, DegradedQuantizedJudge(levels=4))
    assert set(phis) <= {0.0, 0.25, 0.5, 0.75, 1.0}
    assert all(q <= t + 1e-12 and t - q < 0.25 for q, t in zip(phis, truth, strict=True))


def test_pairwise_judge_drifts_on_a_static_scene(short_drawer_env):
    judge = DegradedPairwiseJudge(step=0.05, bias=0.01)
    out = run_actions(JudgeVerify(short_drawer_env, judge), [np.zeros(7)] * 6)
    phis = [out.reset_info["judge"]["phi"]] + [i["judge"]["phi"] for i in out.infos]
    truth = [out.reset_info["progress"]] + [i["progress"] for i in out.infos]
    assert abs(truth[-1] - truth[0]) < 0.01  # nothing happened ...
    assert phis[-1] - phis[0] == pytest.approx(6 * 0.05)  # ... but every pair "progressed"


def test_pairwise_totals_depend_on_the_stride(drawer_env):
    env = JudgeRecord(drawer_env, PrivilegedProgressJudge())
    run_oracle(env)
    record = env.last_record
    totals = {}
    for stride in (1, 5):
        signal = DegradedPairwiseJudge(step=0.02, stride=stride).judge_episode(record)
        totals[stride] = signal.reward
        assert signal.details["true_delta"] == pytest.approx(
            record.progress[-1] - record.progress[0]
        )
    assert totals[1] != pytest.approx(totals[5])  # not additive: depends on the sampling rate


def test_invalid_degraded_judges():
    with pytest.raises(ValueError, match="sigma"):
        DegradedNoisyJudge(sigma=-1)
    with pytest.raises(ValueError, match="levels"):
        DegradedQuantizedJudge(levels=0)
    with pytest.raises(ValueError, match="stride"):
        DegradedPairwiseJudge(stride=0)
    with pytest.raises(ValueError, match="gives none"):
        DegradedNoisyJudge(base=CodeRewardJudge(REWARD_OK))
