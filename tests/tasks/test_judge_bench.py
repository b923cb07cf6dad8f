"""The judge-benchmark runner: rollouts, their cache, and the ``judge-bench`` command."""

from __future__ import annotations

import json

import pytest

from simjudge.cli import main
from simjudge.judges.bench import load_episodes
from simjudge.pipelines.judge_bench import (
    ORACLE_TASKS,
    POLICIES,
    JudgeBenchConfig,
    rollout_episode,
    run_judge_bench,
    task_episodes,
)
from tests.tasks.test_library import ORACLE_SOLVED


def test_oracle_task_list_matches_the_library_test():
    assert set(ORACLE_TASKS) == ORACLE_SOLVED


def test_rollouts_are_deterministic_and_regress_for_real():
    a = rollout_episode("OpenBoxLid-v0", "release", 3, {"trigger": (0.45, 0.7)})
    b = rollout_episode("OpenBoxLid-v0", "release", 3, {"trigger": (0.45, 0.7)})
    assert a.phi == b.phi and a.states == b.states
    peak = max(range(len(a.phi)), key=a.phi.__getitem__)
    assert a.phi[-1] < a.phi[peak] - 0.1  # the lid falls back after the release
    assert len(a.phi) == len(a.states) == len(a.summaries) == len(a.phi_live)
    assert max(abs(x - y) for x, y in zip(a.phi, a.phi_live, strict=True)) < 0.02


def test_rollouts_are_cached(tmp_path):
    first = task_episodes("PressButton-v0", 1, tmp_path)
    path = tmp_path / "PressButton-v0__seed1.json.gz"
    assert path.exists() and len(first) == len(POLICIES)
    stored, meta = load_episodes(path)
    assert meta["seed"] == 1 and [e.phi for e in stored] == [e.phi for e in first]
    path.touch()
    mtime = path.stat().st_mtime_ns
    again = task_episodes("PressButton-v0", 1, tmp_path)
    assert path.stat().st_mtime_ns == mtime and [e.id for e in again] == [e.id for e in first]


def test_run_reports_exact_privileged_and_na_sections(tmp_path):
    config = JudgeBenchConfig(judges=("privileged", "rule"), tasks=("OpenDrawer-v0",),
                              pairs=30, neutral=4, out=str(tmp_path), sections=("pairs",))
    result = run_judge_bench(config)
    rows = result["judges"]["privileged"]["pairs"]
    assert rows["clean"]["bins"] == {"small": 1.0, "medium": 1.0, "large": 1.0}
    assert rows["image α=0.05"] == "n/a" and result["judges"]["rule"]["pairs"] == "n/a"
    with pytest.raises(ValueError, match="--llm"):
        run_judge_bench(JudgeBenchConfig(judges=("llm-episode",), tasks=("OpenDrawer-v0",),
                                         out=str(tmp_path), sections=("pairs",)))


def test_cli_judge_bench_smoke(tmp_path, capsys):
    code = main(["judge-bench", "--judge", "privileged", "--judge", "noisy:sigma=0.05",
                 "--tasks", "OpenDrawer-v0", "--pairs", "30", "--neutral", "6",
                 "--out", str(tmp_path), "--sections", "pairs,scores,perturb,rules"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "| privileged | clean | 1.000 | 1.000 | 1.000 | 1.000 |" in printed
    result = json.loads((tmp_path / "judge_bench.json").read_text())
    assert set(result["judges"]) == {"privileged", "noisy:sigma=0.05"}
    assert result["judges"]["privileged"]["scores"]["acc@2"] == 1.0
    assert result["rules"]["rule"]["flag"]["recall"] >= 0.95
    assert (tmp_path / "judge_bench.md").read_text().startswith("# Judge benchmark")
    assert main(["judge-bench", "--sections", "bogus", "--out", str(tmp_path)]) == 2
