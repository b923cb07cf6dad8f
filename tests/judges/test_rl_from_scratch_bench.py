"""bench/rl_from_scratch.py at a toy budget: it trains, evaluates on held-out worlds, resumes,
and prints the documented line per task and reward (the real budget is a bench, not a test)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_bench_prints_one_line_per_task_and_reward(tmp_path):
    argv = [sys.executable, str(ROOT / "bench" / "rl_from_scratch.py"), "--algo", "ppo",
            "--tasks", "PressButton-v0", "--seeds", "1", "--budget", "1024", "--eval-every",
            "1024", "--eval-episodes", "2", "--jobs", "1", "--work", str(tmp_path / "w"),
            "--out", str(tmp_path / "rl.json"), "--plot", str(tmp_path / "rl.png")]
    first = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=True)
    lines = [line for line in first.stdout.splitlines() if "steps_to_0.8:" in line]
    assert [line.split()[:3] for line in lines] == [
        ["PressButton-v0", "dense", "steps_to_0.8:"], ["PressButton-v0", "sparse", "steps_to_0.8:"]]
    data = json.loads((tmp_path / "rl.json").read_text())
    runs = data["numbers"]["runs"]
    assert {r["reward"] for r in runs} == {"dense", "sparse"}
    assert all(r["curve"] and r["curve"][0][0] >= 1024 for r in runs)
    assert (tmp_path / "rl.png").stat().st_size > 1000
    again = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=True)
    assert [line for line in again.stdout.splitlines() if "steps_to_0.8:" in line] == lines
