"""Properties of the OPD metrics listed in docs/methods.md (opd), as tests."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from simjudge.judges.metrics.opd import (
    DELTA,
    FAILURE_TYPES,
    OPDMetrics,
    StreamingOPD,
    calibrate_epsilon,
    failure_fingerprints,
    format_markdown_table,
    mc_at_k,
    milestone_coverage,
    opd_metrics,
    progress,
    summarize_episodes,
)

EPS = 0.01
N_RANDOM = 200


def _random_phi(rng: np.random.Generator, kind: str | None = None) -> np.ndarray:
    """A random potential sequence of random length: noisy walk, monotone, or plateaus."""
    n = int(rng.integers(1, 120))
    kind = kind or str(rng.choice(["walk", "monotone", "plateau", "uniform"]))
    if kind == "monotone":
        return np.sort(rng.uniform(0.0, 1.0, n))
    if kind == "plateau":
        return np.repeat(rng.uniform(0.0, 1.0, max(1, n // 10)), 10)[:n]
    if kind == "uniform":
        return rng.uniform(0.0, 1.0, n)
    return np.clip(np.cumsum(rng.normal(0.01, 0.05, n)) + rng.uniform(0, 0.3), 0.0, 1.0)


def _streamed(phi: np.ndarray, epsilon: float = EPS, k: int = 4) -> OPDMetrics:
    acc = StreamingOPD(epsilon, k)
    acc.reset(phi[0])
    for value in phi[1:]:
        acc.update(value)
    assert acc.n == len(phi) - 1
    return acc.metrics()


# ----------------------------------------------------------------- definitions on examples


def test_paper_example_cra_distinguishes_regressions() -> None:
    a = opd_metrics([0, 1, 0, 0, 0], EPS)
    b = opd_metrics([0, 1, 0, 1, 1], EPS)
    assert a.cra == pytest.approx(3 / 5, abs=1e-15)
    assert b.cra == pytest.approx(1 / 5, abs=1e-15)
    assert a.T == b.T == 4


def test_hand_computed_example() -> None:
    m = opd_metrics([0.0, 0.3, 0.3, 0.2, 0.6], epsilon=0.05)
    assert m.mp == 0.6 and m.mc == 0.5
    assert m.ppl == pytest.approx(0.6 * 0.6 / (0.3 + 0.0 + 0.1 + 0.4 + DELTA))
    assert m.cra == pytest.approx(0.1 / 5)
    assert m.str_ == m.stagnation == 0.25
    assert (m.phi_0, m.phi_T, m.epsilon, m.k) == (0.0, 0.6, 0.05, 4)
    assert m.as_dict() == {"MC": 0.5, "MP": 0.6, "PPL": m.ppl, "CRA": m.cra, "STR": 0.25}


def test_single_value_episode() -> None:
    m = opd_metrics([0.8], EPS)
    assert (m.T, m.mp, m.mc, m.ppl, m.cra, m.str_) == (0, 0.8, 0.75, 0.0, 0.0, 0.0)
    assert _streamed(np.array([0.8])) == m


def test_plateau_gate_keeps_ppl_near_epsilon() -> None:
    small = 0.05
    m = opd_metrics([0.0] + [small] * 30, EPS)
    assert m.ppl == pytest.approx(small, rel=1e-6)
    assert m.str_ == pytest.approx(29 / 30)


def test_stagnation_uses_strict_threshold() -> None:
    assert opd_metrics([0.5, 0.5, 0.5], epsilon=0.0).str_ == 0.0
    assert opd_metrics([0.0, 0.25, 0.5], epsilon=0.25).str_ == 0.0
    assert opd_metrics([0.0, 0.25, 0.5], epsilon=0.2500001).str_ == 1.0


# ----------------------------------------------------------------------- MC bin edges


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, 7, 10, 20])
def test_mc_exact_on_and_just_below_edges(k: int) -> None:
    for j in range(k + 1):
        q = j / k
        assert milestone_coverage(q, k) == q
        if j > 0:
            assert milestone_coverage(math.nextafter(q, -math.inf), k) == (j - 1) / k
        if j < k:
            assert milestone_coverage(math.nextafter(q, math.inf), k) == q


def test_mc_equals_floor_definition_on_random_values() -> None:
    rng = np.random.default_rng(0)
    for mp in rng.uniform(0.0, 1.0, 1000):
        assert milestone_coverage(mp) == max(q for q in (0, 0.25, 0.5, 0.75, 1.0) if mp >= q)


def test_mc_unchanged_under_noise_away_from_edges() -> None:
    rng = np.random.default_rng(1)
    edges = np.arange(1, 5) / 4
    for _ in range(N_RANDOM):
        sigma = rng.uniform(0.001, 0.05)
        phi = rng.uniform(0.0, 1.0, int(rng.integers(1, 60)))
        phi = phi[np.abs(phi[:, None] - edges[None, :]).min(axis=1) > sigma]
        if phi.size == 0:
            continue
        noisy = np.clip(phi + rng.uniform(-sigma, sigma, phi.size), 0.0, 1.0)
        assert opd_metrics(noisy, EPS).mc == opd_metrics(phi, EPS).mc


# ------------------------------------------------------------------ random properties


def test_ppl_bounded_by_final_potential() -> None:
    rng = np.random.default_rng(2)
    for _ in range(N_RANDOM):
        phi = _random_phi(rng)
        m = opd_metrics(phi, EPS)
        assert 0.0 <= m.ppl <= m.phi_T
        assert 0.0 <= m.cra <= 1.0 and 0.0 <= m.str_ <= 1.0 and m.mc <= m.mp


def test_monotone_gives_ppl_final_and_zero_cra() -> None:
    rng = np.random.default_rng(3)
    for _ in range(N_RANDOM):
        phi = np.sort(rng.uniform(0.0, 1.0, int(rng.integers(2, 100))))
        m = opd_metrics(phi, EPS)
        assert m.cra == 0.0
        gain = phi[-1] - phi[0]
        assert m.ppl == pytest.approx(phi[-1] * gain / (gain + DELTA), rel=1e-12)
        if gain > 1e-3:
            assert m.ppl == pytest.approx(m.phi_T, rel=1e-5)


def test_cra_positive_when_not_monotone() -> None:
    rng = np.random.default_rng(4)
    for _ in range(N_RANDOM):
        phi = _random_phi(rng)
        monotone = bool(np.all(np.diff(phi) >= 0.0))
        assert (opd_metrics(phi, EPS).cra == 0.0) == monotone
    assert opd_metrics([0.5, 0.5 - 1e-12], EPS).cra > 0.0


def test_inserting_states_never_lowers_mp_or_mc() -> None:
    rng = np.random.default_rng(5)
    for _ in range(N_RANDOM):
        phi = _random_phi(rng)
        extra = rng.uniform(0.0, 1.0, int(rng.integers(1, 20)))
        where = rng.integers(0, phi.size + 1, extra.size)
        denser = np.insert(phi, where, extra)
        before, after = opd_metrics(phi, EPS), opd_metrics(denser, EPS)
        assert after.mp >= before.mp and after.mc >= before.mc


@pytest.mark.parametrize("stride", [1, 2, 3, 7, 50])
def test_progress_telescopes_at_any_stride(stride: int) -> None:
    rng = np.random.default_rng(6)
    for _ in range(50):
        phi = _random_phi(rng)
        idx = sorted({*range(0, phi.size, stride), phi.size - 1})
        total = math.fsum(progress(phi[i], phi[j]) for i, j in zip(idx, idx[1:], strict=False))
        assert total == pytest.approx(phi[-1] - phi[0], abs=1e-12)


def test_batch_and_streaming_agree() -> None:
    rng = np.random.default_rng(7)
    fields = ("mc", "mp", "ppl", "cra", "str_", "T", "phi_0", "phi_T", "epsilon", "k")
    for _ in range(N_RANDOM):
        phi = _random_phi(rng)
        eps, k = float(rng.uniform(0.0, 0.1)), int(rng.integers(1, 8))
        batch, stream = opd_metrics(phi, eps, k), _streamed(phi, eps, k)
        for name in fields:
            assert getattr(stream, name) == pytest.approx(getattr(batch, name), abs=1e-12), name


def test_streaming_long_episode_and_reset() -> None:
    rng = np.random.default_rng(8)
    phi = rng.uniform(0.0, 1.0, 20_000)
    acc = StreamingOPD(EPS)
    acc.reset(0.3)
    acc.update(0.9)
    acc.reset(phi[0])
    for value in phi[1:]:
        acc.update(value)
    batch, stream = opd_metrics(phi, EPS), acc.metrics()
    assert stream.ppl == pytest.approx(batch.ppl, abs=1e-14)
    assert stream.cra == pytest.approx(batch.cra, abs=1e-14)
    assert stream.T == batch.T and stream.str_ == batch.str_


# ------------------------------------------------------------------------ ε calibration


def test_calibrate_epsilon_on_gaussian_noise() -> None:
    rng = np.random.default_rng(9)
    sigma = 0.01
    static = 0.5 + rng.normal(0.0, sigma, 50_000)
    assert calibrate_epsilon(static) == pytest.approx(math.sqrt(2) * sigma * 2.5758, rel=0.02)
    assert calibrate_epsilon(static, alpha=0.05) == pytest.approx(
        math.sqrt(2) * sigma * 1.95996, rel=0.02
    )
    assert calibrate_epsilon([0.4, 0.4, 0.4]) == 0.0


@pytest.mark.parametrize(
    ("phi_static", "alpha", "match"),
    [([0.5], 0.01, "at least 2"), ([0.5, 0.6], 0.0, "alpha"), ([0.5, 1.5], 0.01, r"\[1\]")],
)
def test_calibrate_epsilon_rejects_bad_input(phi_static, alpha, match) -> None:
    with pytest.raises(ValueError, match=match):
        calibrate_epsilon(phi_static, alpha)


# --------------------------------------------------------------------- input validation


@pytest.mark.parametrize(
    ("phi", "match"),
    [
        ([0.1, 0.2, math.nan], r"phi\[2\]` = nan is not finite"),
        ([0.1, math.inf], r"phi\[1\]` = inf is not finite"),
        ([0.1, 0.2, 1.2], r"phi\[2\]` = 1\.2 is outside \[0, 1\].*np\.clip"),
        ([-0.1], r"phi\[0\]` = -0\.1 is outside"),
        ([], "empty"),
        ([[0.1, 0.2]], "1-D"),
    ],
)
def test_opd_metrics_rejects_bad_phi(phi, match) -> None:
    with pytest.raises(ValueError, match=match):
        opd_metrics(phi, EPS)


@pytest.mark.parametrize(("epsilon", "k"), [(-0.1, 4), (math.nan, 4), (0.1, 0), (0.1, True)])
def test_rejects_bad_epsilon_and_k(epsilon, k) -> None:
    with pytest.raises(ValueError, match="epsilon|k"):
        opd_metrics([0.1, 0.2], epsilon, k)
    with pytest.raises(ValueError, match="epsilon|k"):
        StreamingOPD(epsilon, k)


def test_streaming_validation() -> None:
    acc = StreamingOPD(EPS)
    with pytest.raises(RuntimeError, match=r"reset\(phi0\)"):
        acc.update(0.5)
    with pytest.raises(RuntimeError, match=r"reset\(phi0\)"):
        acc.metrics()
    with pytest.raises(ValueError, match=r"phi\[0\]"):
        acc.reset(2.0)
    acc.reset(0.1)
    acc.update(0.2)
    with pytest.raises(ValueError, match=r"phi\[2\]` = nan"):
        acc.update(math.nan)
    assert acc.n == 1


# ------------------------------------------------------------------- aggregation, audits


def test_summary_and_mc_at_k() -> None:
    episodes = [opd_metrics(p, EPS) for p in ([0, 0.3], [0, 0.6], [0, 1.0], [0, 0.1])]
    assert mc_at_k(episodes) == {0.25: 75.0, 0.5: 50.0, 0.75: 25.0, 1.0: 25.0}
    summary = summarize_episodes(episodes)
    assert summary["n"] == 4
    assert summary["MP"] == pytest.approx(50.0)
    assert summary["MC"] == pytest.approx(100 * (0.25 + 0.5 + 1.0 + 0.0) / 4)
    assert (summary["MC@25"], summary["MC@100"]) == (75.0, 25.0)
    table = format_markdown_table({"pi": summary}, columns=["n", "MP", "MC@25", "x"])
    assert table.splitlines() == [
        "| policy | n | MP | MC@25 | x |",
        "|---|---:|---:|---:|---:|",
        "| pi | 4 | 50.0 | 75.0 | - |",
    ]


def test_summary_rejects_empty_and_mixed_settings() -> None:
    with pytest.raises(ValueError, match="empty"):
        summarize_episodes([])
    with pytest.raises(ValueError, match="same epsilon and k"):
        summarize_episodes([opd_metrics([0.1], 0.01), opd_metrics([0.1], 0.02)])
    with pytest.raises(ValueError, match="empty"):
        format_markdown_table({})


def _failed(mp: float, ppl: float, cra: float, str_: float) -> tuple[OPDMetrics, bool]:
    base = opd_metrics([0.0, mp], EPS)
    return replace(base, mp=mp, ppl=ppl, cra=cra, str_=str_), False


def test_failure_fingerprints_labels() -> None:
    success = (opd_metrics([0, 1.0], EPS), True)
    fp = failure_fingerprints(
        {
            "regret": [_failed(0.9, 0.3, 0.4, 0.2)] * 3 + [success],
            "stagnant": [_failed(0.3, 0.2, 0.05, 0.8), _failed(0.3, 0.2, 0.05, 0.8)],
            "wander": [_failed(0.9, 0.05, 0.1, 0.1)],
            "perfect": [success],
        }
    )
    assert list(fp) == ["regret", "stagnant", "wander", "perfect"]
    assert (fp["regret"].n_episodes, fp["regret"].n_failed) == (4, 3)
    assert fp["regret"].failure_type == "regret-dominant"
    assert fp["stagnant"].failure_type == "stagnation-dominant"
    assert fp["wander"].failure_type == "efficiency-dominant"
    assert fp["perfect"].failure_type == "no failures"
    assert math.isnan(fp["perfect"].z["MP"]) and fp["perfect"].n_failed == 0
    assert fp["regret"].means == pytest.approx({"MP": 0.9, "PPL": 0.3, "-CRA": -0.4, "-STR": -0.2})
    for key in ("MP", "PPL", "-CRA", "-STR"):
        zs = np.array([fp[p].z[key] for p in ("regret", "stagnant", "wander")])
        assert zs.mean() == pytest.approx(0.0, abs=1e-12)
        assert zs.std() == pytest.approx(1.0)
    assert set(fp["regret"].scores) == set(FAILURE_TYPES)
    z = fp["wander"].z
    assert fp["wander"].scores["efficiency-dominant"] == pytest.approx((z["MP"] - z["PPL"]) / 2)


def test_failure_fingerprints_single_policy_and_errors() -> None:
    fp = failure_fingerprints({"only": [(opd_metrics([0, 0.5], EPS), False)]})
    assert fp["only"].failure_type == "balanced"
    assert all(v == 0.0 for v in fp["only"].z.values())
    with pytest.raises(ValueError, match="empty"):
        failure_fingerprints({})
    with pytest.raises(ValueError, match="no episodes"):
        failure_fingerprints({"p": []})
