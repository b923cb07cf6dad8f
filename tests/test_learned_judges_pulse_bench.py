"""bench/learned_judges_pulse.py: its summary of a real (tiny) judge-bench run, and the hashes."""

from __future__ import annotations

import hashlib
from pathlib import Path
from types import ModuleType

from tests.bench_modules import load_bench


def _bench() -> ModuleType:
    return load_bench("learned_judges_pulse")


def test_weights_sha256_are_the_shipped_files() -> None:
    lj = _bench()
    found = lj.weights_sha256()
    assert set(found) >= {"obs_progress.npz", "image_progress.npz"}
    for name, digest in found.items():
        assert hashlib.sha256((lj.WEIGHTS / name).read_bytes()).hexdigest() == digest


def test_summary_of_a_tiny_heldout_tasks_run(tmp_path: Path) -> None:
    from simjudge.pipelines.judge_bench import JudgeBenchConfig, run_judge_bench

    lj = _bench()
    config = JudgeBenchConfig(judges=("privileged", "obs-progress"), sections=("pairs",),
                              split="heldout-tasks", pairs=12, neutral=0, seed=0, workers=1,
                              out=str(tmp_path / "run"), image_variants=False)
    entry = lj.summarize(run_judge_bench(config))
    # the privileged judge defines the labels: it orders every clean pair right
    assert entry["judges"]["privileged"]["clean"]["overall"] == 1.0
    obs = entry["judges"]["obs-progress"]
    assert set(obs) == {"clean", "state σ=0.01"}
    assert 0.0 <= obs["clean"]["overall"] <= 1.0
    assert sum(b["n"] for b in entry["pairs"]["bins"].values()) == entry["pairs"]["n"] == 12
    assert not entry["rollouts"]["failed"]
    text = lj.line("heldout-tasks", "obs-progress", "clean", obs["clean"])
    assert text.split()[:3] == ["heldout-tasks", "obs-progress", "clean"]


def test_the_judges_guide_shows_the_result_files_table() -> None:
    import json

    lj = _bench()
    result = json.loads((lj.ROOT / "results" / "learned_judges_pulse.json").read_text())
    guide = (lj.ROOT / "docs" / "guides" / "judges.md").read_text()
    assert lj.table(result) in guide, "re-run: python bench/learned_judges_pulse.py --table"
