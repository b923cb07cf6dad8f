"""bench/zoo_ranking.py on a tiny real config: oracle vs random on CloseDoor-v0, 3+3 seeds."""

from __future__ import annotations

import re
from types import ModuleType

import pytest

from simjudge.pipelines.arena import oracle_cell
from tests.bench_modules import load_bench


def _bench() -> ModuleType:
    return load_bench("zoo_ranking")


def test_kendall_tau_known_rankings() -> None:
    zr = _bench()
    truth = {"a": 3.0, "b": 2.0, "c": 1.0}
    assert zr.kendall_tau({"a": 30, "b": 20, "c": 10}, truth) == pytest.approx(1.0)
    assert zr.kendall_tau({"a": 1, "b": 2, "c": 3}, truth) == pytest.approx(-1.0)
    # one swapped pair of three: (2 - 1) / 3
    assert zr.kendall_tau({"a": 3, "b": 1, "c": 2}, truth) == pytest.approx(1 / 3)


def test_tiny_config_lines_and_ground_truth() -> None:
    zr = _bench()
    specs = {"oracle": "oracle", "random": "random"}
    task = "CloseDoor-v0"
    truth = {task: {s: oracle_cell(task, s, specs) for s in (5000, 5001, 5002)}}
    pool = {task: {s: oracle_cell(task, s, specs) for s in (7000, 7001, 7002)}}
    found = zr.evaluate(truth, pool, audit_ns=[2], budgets=[5], subsets=3)
    gt = found["ground_truth"][task]
    assert gt["oracle"]["k"] == 3 and gt["oracle"]["score"] > gt["random"]["score"]
    assert 0.0 <= gt["random"]["lo"] <= gt["random"]["hi"] <= 1.0
    lines = zr.tau_lines(found)
    assert "success_only kendall_tau@2: 1.000" in lines
    models = {line.split()[0] for line in lines}
    assert {"MP", "PPL", "CRA", "progress", "davidson", "em", "elo", "prog"} <= models
    assert all(re.fullmatch(r"\S+ kendall_tau@\d+: -?\d\.\d{3}", line) for line in lines)
