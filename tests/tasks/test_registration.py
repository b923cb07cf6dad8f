"""Every built-in task id is registered with its horizon, and `tasks list` shows them all."""

from __future__ import annotations

import gymnasium as gym
import pytest

import simjudge  # noqa: F401 - registers the ids
from simjudge.cli import main
from simjudge.tasks.registration import builtin_ids, horizon_of
from simjudge.tasks.spec import load_task


@pytest.mark.parametrize("env_id", builtin_ids())
def test_max_episode_steps_is_the_tasks_horizon(env_id):
    assert gym.spec(f"simjudge/{env_id}").max_episode_steps == load_task(env_id).horizon
    assert horizon_of(env_id) == load_task(env_id).horizon


def test_time_limit_truncates_at_the_horizon():
    env = gym.make("simjudge/PressButton-v0")
    env.reset(seed=0)
    steps, truncated = 0, False
    while not truncated:
        *_, terminated, truncated, _ = env.step(0 * env.action_space.sample())
        steps += 1
        assert not terminated
    assert steps == load_task("PressButton-v0").horizon
    env.close()


def test_tasks_list_shows_every_registered_task(capsys):
    assert main(["tasks", "list"]) == 0
    out = capsys.readouterr().out
    for env_id in builtin_ids():
        assert f"simjudge/{env_id}" in out
    assert f"{len(builtin_ids())} tasks" in out
