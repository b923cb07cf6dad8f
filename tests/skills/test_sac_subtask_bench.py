"""The SAC subtask bench's summary arithmetic (bench/sac_subtask.py)."""

from __future__ import annotations

from types import ModuleType

import numpy as np
import pytest

from tests.bench_modules import load_bench


def _bench() -> ModuleType:
    return load_bench("sac_subtask")


def _row(reward: str, seed: int, steps: int | None) -> dict:
    return {"task": "T", "reward": reward, "seed": seed, "success": steps is not None,
            "steps_to_success": steps, "env_steps": steps or 4000, "wall_time_s": 1.0,
            "best_success_rate": 1.0 if steps else 0.2, "reason": ""}


def test_ratio_is_median_over_succeeding_seeds() -> None:
    bench = _bench()
    rows = [_row("privileged", 0, 1000), _row("privileged", 1, 1500), _row("privileged", 2, 2000),
            _row("obs-progress", 0, 3000), _row("obs-progress", 1, None),
            _row("obs-progress", 2, 2000)]
    # obs-progress median over its two successes 2500 ÷ privileged median 1500
    assert bench.step_ratios(rows, budget=4000) == {"obs-progress": pytest.approx(2500 / 1500)}
    # a success past the budget does not count
    assert bench.step_ratios(rows, budget=2000) == {"obs-progress": pytest.approx(2000 / 1500)}


def test_ratio_is_none_when_a_reward_never_succeeds() -> None:
    bench = _bench()
    rows = [_row("privileged", 0, None), _row("obs-progress", 0, 1000)]
    assert bench.step_ratios(rows, budget=4000) == {"obs-progress": None}


def test_summary_prints_k_of_n_and_ratio(capsys: pytest.CaptureFixture[str]) -> None:
    bench = _bench()
    rows = [_row("privileged", s, 1000) for s in range(5)]
    rows += [_row("obs-progress", s, 3000 if s < 4 else None) for s in range(5)]
    bench._summary(rows, budget=4000, seeds=5)
    out = capsys.readouterr().out
    assert "privileged 5/5 seeds" in out
    assert "obs-progress 4/5 seeds" in out
    assert "= 3.00" in out and "MISSES issue 10" in out


def test_runs_passed_before_learning_are_flagged(capsys) -> None:
    bench = _bench()
    assert bench.passed_before_learning(1, learning_starts=1000)
    assert bench.passed_before_learning(1000, learning_starts=1000)
    assert not bench.passed_before_learning(1001, learning_starts=1000)
    assert not bench.passed_before_learning(None, learning_starts=1000)
    rows = [_row("privileged", 0, 1), _row("privileged", 1, 2251)]
    rows[0]["before_learning"], rows[1]["before_learning"] = True, False
    assert bench._row(rows[0]).split()[4] == "1*"
    bench._summary(rows, budget=4000, seeds=2)
    out = capsys.readouterr().out
    assert "1/2 runs passed before learning started (privileged seed 0)" in out


def test_a_judge_that_reads_frames_gets_a_rendered_frame_every_step() -> None:
    """``--reward image-progress``: the training env renders, and the judge's Φ moves with it."""
    from simjudge.judges import JudgeReward, make_judge
    from simjudge.pipelines.judge_bench import task_context
    from simjudge.tasks.spec import make_task_env

    bench = _bench()
    task = "OpenDrawer-v0"
    spec_data = bench.reward_subtask_spec(task).to_dict()
    task_env = make_task_env(task)
    context = task_context(task_env, task)
    task_env.close()
    judge = make_judge("image-progress")
    assert judge.needs_frames
    env = JudgeReward(bench.JudgedSubtaskEnv(spec_data, "rgb_array"), judge, context=context)
    try:
        env.reset(seed=0)
        frame = env.unwrapped.render()
        assert frame.ndim == 3 and frame.shape[2] == 3 and frame.std() > 0
        env.action_space.seed(0)
        rewards = [env.step(env.action_space.sample())[1] for _ in range(8)]
        assert all(np.isfinite(rewards)) and len(set(rewards)) > 1  # Φ read from new frames
        assert judge.stats["observe"].calls >= 9
    finally:
        env.close()
