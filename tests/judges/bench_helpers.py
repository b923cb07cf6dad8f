"""Shared, memoised benchmark rollouts for the judge-benchmark tests (made once per run)."""

from __future__ import annotations

import functools

from simjudge.judges.bench import BenchEpisode
from simjudge.pipelines.judge_bench import task_context, task_episodes
from simjudge.tasks.spec import make_task_env

TASKS = ("OpenDrawer-v0", "OpenBoxLid-v0")
"""A prismatic drawer and a lid that falls when released: genuine regressions of both kinds."""


@functools.cache
def bench_episodes(tasks: tuple[str, ...] = TASKS, seed: int = 0) -> tuple[BenchEpisode, ...]:
    """The runner's rollouts (8 policies per task), not cached on disk."""
    episodes: list[BenchEpisode] = []
    for task in tasks:
        episodes += task_episodes(task, seed, None)
    return tuple(episodes)


def open_envs(tasks: tuple[str, ...] = TASKS):
    """Built envs and judge contexts per task (close the envs after use)."""
    envs = {t: make_task_env(t) for t in tasks}
    return envs, {t: task_context(env, t) for t, env in envs.items()}
