"""The rule reader on the development part of the goal-reading set (never the held-out part)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "goal_reading.py"


def _bench():
    spec = importlib.util.spec_from_file_location("goal_reading_bench", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_dev_precision_and_coverage_per_class():
    bench = _bench()
    numbers, rows = bench.score(bench.load_items("dev"), bench.rule_reader)
    assert len(rows) == 128 and not [r for r in rows if r["outcome"] == "error"]
    overall = numbers["overall"]
    assert overall["precision"] >= 0.97 and overall["coverage"] >= 0.95, [
        (r["id"], r["outcome"], r["detail"]) for r in rows
        if r["outcome"] == "wrong_goal" or (r["outcome"] == "refused" and r["expect"] == "goal")]
    refuse = numbers["classes"]["ambiguous_refuse"]
    assert refuse["goals_given"] == 0 and refuse["refuse_items_refused"] == refuse["items"]
