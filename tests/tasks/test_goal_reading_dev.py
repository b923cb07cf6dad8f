"""The rule reader on the development part of the goal-reading set (never the held-out part)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from tests.bench_modules import load_bench

BENCH = Path(__file__).resolve().parents[2] / "bench" / "goal_reading.py"


def _bench() -> ModuleType:
    return load_bench("goal_reading")


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


def test_the_paraphrases_rebuild_offline_from_the_committed_replay_cache():
    import subprocess
    import sys

    script = BENCH.parent / "goal_paraphrases.py"
    # llama_cpp blocked: the rebuild must come from the cache alone
    code = ("import sys, runpy; sys.modules['llama_cpp'] = None; "
            f"sys.argv = ['x', '--replay', '--check']; runpy.run_path({str(script)!r}, "
            "run_name='__main__')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "70 paraphrases rebuilt from the cache, identical" in done.stdout


def test_the_rule_reader_on_the_faithful_paraphrases():
    import json

    bench = _bench()
    review = json.loads((bench.FIXTURES / "paraphrases_review.json").read_text())["items"]
    items = [i for i in bench.load_items("paraphrases") if review[i["id"]]["faithful"]]
    numbers, _ = bench.score(items, bench.rule_reader)
    assert len(items) == 31 and numbers["overall"]["precision"] >= 0.95
