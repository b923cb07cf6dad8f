"""ATSR, ASSR, subtasks per solution and Wilson intervals (docs/methods.md (vergsa), Metrics)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from simjudge.tasks.spec import (
    Outcome,
    SuccessRates,
    assr,
    atsr,
    avg_subtasks,
    success_rates,
    wilson_interval,
)

OUTCOMES = [
    Outcome((True, True, True), True),
    Outcome((True, False), False),
    Outcome((True, True, True, False), False),
    Outcome((), False),
]


def test_rates_on_example() -> None:
    assert atsr(OUTCOMES) == 0.25
    assert assr(OUTCOMES) == 7 / 9
    assert avg_subtasks(OUTCOMES) == 9 / 4
    r = success_rates(OUTCOMES)
    assert isinstance(r, SuccessRates)
    assert (r.atsr, r.assr, r.avg_subtasks) == (0.25, 7 / 9, 9 / 4)
    assert (r.n_solutions, r.n_successful_solutions) == (4, 1)
    assert (r.n_subtasks, r.n_successful_subtasks) == (9, 7)
    assert r.atsr_ci[0] <= r.atsr <= r.atsr_ci[1] and r.confidence == 0.95
    row = r.as_dict(percent=True)
    assert row["ATSR"] == 25.0 and row["ASSR"] == pytest.approx(100 * 7 / 9) and row["n"] == 4


def test_outcome_normalizes_and_validates() -> None:
    o = Outcome([np.bool_(True), False], np.bool_(True))
    assert o.subtask_success == (True, False) and o.task_success is True
    assert type(o.subtask_success[0]) is bool
    assert (o.n_subtasks, o.n_successful_subtasks) == (2, 1)
    with pytest.raises(TypeError, match=r"subtask_success\[1\] must be a bool"):
        Outcome((True, 1), True)
    with pytest.raises(TypeError, match="task_success must be a bool"):
        Outcome((True,), "yes")
    with pytest.raises(TypeError, match="sequence of bools"):
        Outcome("TT", True)


def test_empty_inputs_raise_clear_errors() -> None:
    for fn in (atsr, assr, avg_subtasks, success_rates):
        with pytest.raises(ValueError, match="at least one executed solution"):
            fn([])
    no_subtasks = [Outcome((), True)]
    with pytest.raises(ValueError, match="ASSR is undefined"):
        assr(no_subtasks)
    assert math.isnan(success_rates(no_subtasks).assr)
    with pytest.raises(TypeError, match="must be a Outcome"):
        atsr([((True,), True)])


def test_wilson_interval_known_values() -> None:
    # Reference values (Wilson score, z = 1.959964): 8/10 -> (0.4902, 0.9433).
    low, high = wilson_interval(8, 10)
    assert (low, high) == pytest.approx((0.49016, 0.94332), abs=1e-4)
    assert wilson_interval(0, 10)[0] == 0.0 and wilson_interval(10, 10)[1] == 1.0
    assert wilson_interval(0, 10)[1] == pytest.approx(0.27753, abs=1e-4)
    narrow, wide = wilson_interval(50, 100, 0.8), wilson_interval(50, 100, 0.99)
    assert wide[0] < narrow[0] < 0.5 < narrow[1] < wide[1]


def test_wilson_interval_contains_estimate_and_covers() -> None:
    rng = np.random.default_rng(0)
    for n in (1, 2, 5, 17, 100):
        for s in range(n + 1):
            low, high = wilson_interval(s, n)
            assert 0.0 <= low <= s / n <= high <= 1.0
    p, n, trials = 0.3, 40, 2000
    hits = 0
    for s in rng.binomial(n, p, trials):
        low, high = wilson_interval(int(s), n)
        hits += low <= p <= high
    assert 0.92 <= hits / trials <= 0.98


@pytest.mark.parametrize(
    ("s", "n", "conf"), [(1, 0, 0.95), (3, 2, 0.95), (-1, 5, 0.95), (1, 5, 1.0)]
)
def test_wilson_interval_rejects_bad_input(s: int, n: int, conf: float) -> None:
    with pytest.raises(ValueError):
        wilson_interval(s, n, conf)
