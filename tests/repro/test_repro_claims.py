"""The claim scripts: what they store, how they score, and that committed numbers re-score."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from repro.common import CLAIMS, RESULTS, compare_scored, load_claim
from repro.page import PAGE, render
from repro.roboarena import _choose, _disagreement, active_curve, success_only
from repro.robobench import trim
from simjudge.judges.metrics.rankings import Comparison
from simjudge.pipelines.plans.evaluate import PlanEvalConfig, aggregate, run_plan_eval
from simjudge.tasks.spec import RunDir

COMMITTED = [c for c in CLAIMS if (RESULTS / f"{c}.json").is_file()]


def test_trimmed_plan_eval_items_aggregate_as_the_full_results(tmp_path):
    run_plan_eval(PlanEvalConfig(planner="oracle", tasks=("OpenDrawer-v0",), out=str(tmp_path),
                                 q3_per_task=4, failures_per_task=2))
    full = RunDir(tmp_path).read_json("tasks/OpenDrawer-v0.json")
    item = trim(full)
    assert aggregate([item]) == aggregate([full])
    assert len(item["q3_items"]) == 4 and "log" not in item["failure_items"][0]
    assert len(str(item)) < len(str(full)) / 4


def test_success_only_keeps_only_who_reached_the_goal():
    pool = [Comparison("a", "b", 2, 100.0, 40.0), Comparison("a", "b", 2, 60.0, 40.0),
            Comparison("a", "b", 1, 100.0, 100.0), Comparison("a", "b", 2, 30.0, 100.0)]
    assert [c.outcome for c in success_only(pool)] == [2, 1, 1, 0]
    assert _disagreement(pool) == 25.0  # the last: preference A, progress says B


def _pool(seed: int = 0, per_pair: int = 40) -> tuple[list[Comparison], dict[str, float]]:
    theta = {"p0": 2.0, "p1": 1.0, "p2": 0.0, "p3": -1.0, "p4": -2.0}
    rng = np.random.default_rng(seed)
    pool = []
    names = sorted(theta)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            p = 1.0 / (1.0 + np.exp(theta[b] - theta[a]))
            for _ in range(per_pair):
                pool.append(Comparison(a, b, 2 if rng.random() < p else 0))
    return pool, theta


def test_active_selection_asks_the_uncertain_pairs():
    pool, theta = _pool()
    rng = np.random.default_rng(1)
    by_pair: dict[tuple[str, str], list[int]] = {}
    for k, c in enumerate(pool):
        by_pair.setdefault((c.a, c.b), []).append(k)
    seen = [pool[ks[0]] for ks in by_pair.values()] * 3  # every pair three times
    left = {p: ks[3:] for p, ks in by_pair.items()}
    a, b = _choose("active", seen, left, sorted(theta), rng)
    assert abs(theta[a] - theta[b]) == 1.0, (a, b)  # neighbours, not p0 vs p4


def test_active_and_uniform_curves_rank_a_known_zoo():
    pool, theta = _pool()
    for strategy in ("active", "uniform"):
        curve = active_curve(pool, theta, strategy, budgets=(10, 60), repeats=3)
        assert sorted(curve) == [10, 60] and all(len(v) == 3 for v in curve.values())
        assert np.mean(curve[60]) >= 0.6, (strategy, curve)


@pytest.mark.parametrize("claim", COMMITTED)
def test_committed_claim_rescores_exactly(claim):
    module = importlib.import_module(CLAIMS[claim])
    assert compare_scored(load_claim(claim), module.score()) == []


def test_the_reproduction_page_is_generated_from_the_result_files():
    assert PAGE.read_text() == render(), "docs/reproduction.md is out of date: python -m repro.page"


def test_eqarm_scores_nested_prefixes_of_one_sample_set(tmp_path):
    from repro.common import ItemStore
    from repro.eqarm import KS, score

    store = ItemStore("eqarm", root=tmp_path)
    for i in range(10):  # first sample 6 points off, the other 15 right: pooling helps
        gt = 10.0 if i % 2 else 2.0
        first = gt - 6.0 if i % 2 else gt + 6.0
        store.put(f"t__p__{i}", {"id": str(i), "task": "t", "policy": "p", "seed": i,
                                 "success": bool(i % 2), "final_phi": 1.0, "gt": gt,
                                 "samples": [first] + [gt] * 14 + [None], "format_ok": []})
    result = score(tmp_path)
    s = result["simjudge"]
    assert s["acc@2_k1"] == 0.0 and s["acc@2_k16"] == 100.0 and s["acc@2_gain"] == 100.0
    assert s["success_acc_k16"] == 100.0 and s["success_acc_k1"] == 0.0
    assert s["rmse_k1"] == 6.0 and s["rmse_k2"] == 3.0
    assert result["reproduced"] == "yes" and result["n"]["acc@2_k4"] == 10
    assert [k for k in KS] == [1, 2, 4, 8, 16]
