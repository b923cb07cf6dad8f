"""Splits of the learned judges: held-out tasks and categories never reach training."""

from __future__ import annotations

from simjudge.judges.learned.splits import (
    CATEGORY_OF_TASK,
    DATA_TASKS,
    HELDOUT_CATEGORIES,
    HELDOUT_CATEGORY_TASKS,
    HELDOUT_TASKS,
    TRAIN_TASKS,
    check_bench_split,
)
from simjudge.tasks.spec import load_task


def test_categories_match_the_task_specs() -> None:
    assert set(CATEGORY_OF_TASK) == set(DATA_TASKS)
    for task, category in CATEGORY_OF_TASK.items():
        assert load_task(task).object == category, task


def test_heldout_splits_share_nothing_with_training() -> None:
    train_categories = {CATEGORY_OF_TASK[t] for t in TRAIN_TASKS}
    assert not train_categories & set(HELDOUT_CATEGORIES)
    assert not set(TRAIN_TASKS) & set(HELDOUT_TASKS)
    assert not set(TRAIN_TASKS) & set(HELDOUT_CATEGORY_TASKS)
    cats = check_bench_split("heldout-categories", 0)
    assert cats and {CATEGORY_OF_TASK[t] for t in cats} == set(HELDOUT_CATEGORIES)
    assert set(check_bench_split("heldout-tasks", 0)) == set(HELDOUT_TASKS)


def test_categories_split_is_refused_for_a_judge_trained_on_them() -> None:
    import json

    import pytest

    from simjudge.judges.learned.obs_judge import DEFAULT_WEIGHTS
    from simjudge.judges.learned.splits import OBS_TRAIN_TASKS
    from simjudge.tasks.spec.config import ConfigError

    # obs-progress's shipped weights saw the held-out categories' tasks: not held out for it
    report = json.loads((DEFAULT_WEIGHTS.parent / "obs_progress_train.json").read_text())
    trained = {name.rpartition("__seed")[0] for name in report["train_shards"]}
    assert trained <= set(OBS_TRAIN_TASKS) and trained & set(HELDOUT_CATEGORY_TASKS)
    with pytest.raises(ConfigError, match="not held out"):
        check_bench_split("heldout-categories", 0, ("obs-progress",))
    assert check_bench_split("heldout-categories", 0, ("image-progress",))
