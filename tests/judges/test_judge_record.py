"""JudgeRecord: streaming OPD equals batch OPD, the JSON episode format, unfinished episodes."""

from __future__ import annotations

import json

import numpy as np
import pytest

from simjudge.judges import (
    EPISODE_FORMAT,
    CodeRewardJudge,
    EpisodeRecord,
    JudgeRecord,
    JudgeVerify,
    make_judge,
    opd_metrics,
)
from tests.judges.helpers import REWARD_OK, run_actions, run_oracle

TOP_LEVEL = {
    "format", "episode", "judge", "judge_spec", "env_id", "env_kwargs", "seed", "reset_options",
    "world", "task_name", "context", "steps", "opd", "epsilon", "k", "outcome", "judge_stats", "versions",
}  # fmt: skip
STEP_KEYS = {
    "step", "action", "env_reward", "terminated", "truncated", "progress", "env_success",
    "state", "signal",
}  # fmt: skip


@pytest.mark.parametrize("spec", ["noisy:sigma=0.05,seed=3", "privileged", "quantized:levels=4"])
def test_streaming_opd_equals_batch_opd(drawer_env, spec):
    judge = make_judge(spec)
    env = JudgeRecord(JudgeVerify(drawer_env, judge), judge, epsilon=0.02)
    out = run_oracle(env, noise=0.2)
    record = env.last_record
    phi = record.phi
    assert len(phi) == out.steps + 1 and all(p is not None for p in phi)
    batch = opd_metrics(phi, epsilon=0.02).as_dict()
    streamed = out.infos[-1]["judge_record"]["opd"]
    assert streamed == pytest.approx(batch, abs=1e-12)
    assert record.opd == streamed


def test_episode_file_has_the_documented_format(drawer_env, tmp_path):
    judge = make_judge("privileged")
    env = JudgeRecord(JudgeVerify(drawer_env, judge), judge, folder=tmp_path)
    out = run_oracle(env, seed=4)
    path = out.infos[-1]["judge_record"]["path"]
    assert path == str(tmp_path / "episode_000000.json")
    data = json.loads(open(path).read())
    assert set(data) == TOP_LEVEL and data["format"] == EPISODE_FORMAT
    assert data["seed"] == 4 and data["judge_spec"] == "privileged"
    world = data["world"]  # the sampled world, as the env holds it after the reset
    assert world == json.loads(json.dumps(drawer_env.unwrapped.world_sample))
    assert set(world) == {"world_seed", "objects", "joints", "robot_qpos_offset", "camera"}
    assert data["versions"]["backend"] == "pybullet"  # the physics backend, with the versions
    assert data["context"]["task_name"] == "Open Drawer"
    assert len(data["steps"]) == out.steps + 1
    assert all(set(s) == STEP_KEYS for s in data["steps"])
    first, last = data["steps"][0], data["steps"][-1]
    assert first["action"] is None and first["env_reward"] is None and first["step"] == 0
    assert len(last["action"]) == 7 and last["terminated"] is True
    assert set(last["signal"]) == {"reward", "phi", "verdict", "reason", "details"}
    assert data["outcome"] == {
        "verdict": "success", "is_success": True, "steps": out.steps,
        "terminated": True, "truncated": False, "finished": True,
    }  # fmt: skip
    assert data["judge_stats"]["observe_calls"] == out.steps + 1
    record = EpisodeRecord.load(path)
    assert record.phi == env.last_record.phi and record.progress[0] == first["progress"]
    assert record.verdict == "success"


def test_unfinished_episode_is_written_on_reset(short_drawer_env, tmp_path):
    env = JudgeRecord(short_drawer_env, make_judge("privileged"), folder=tmp_path)
    env.reset(seed=0)
    env.step(np.zeros(7, dtype=np.float32))
    env.reset(seed=1)
    first = EpisodeRecord.load(tmp_path / "episode_000000.json")
    assert first.outcome["finished"] is False and len(first.steps) == 2
    env.close()
    assert EpisodeRecord.load(tmp_path / "episode_000001.json").outcome["steps"] == 0


def test_steps_past_the_episodes_end_leave_its_record_as_it_was():
    """Stepping on after the last step without a reset records nothing and changes nothing."""
    from simjudge.tasks.spec import make_task_env

    env = JudgeRecord(make_task_env("OpenDrawer-v0", horizon=2), make_judge("privileged"))
    env.reset(seed=0)
    for _ in range(2):
        env.step(np.zeros(7, dtype=np.float32))
    pending = env._pending
    for _ in range(2):  # past the end, no reset
        env.step(np.zeros(7, dtype=np.float32))
    record = env.last_record
    assert env._pending is None and pending is not None and len(pending.log) == 3
    assert len(record.steps) == 3 and record.outcome["finished"] is True
    env.close()


def test_judge_without_potential_records_no_opd(short_drawer_env):
    env = JudgeRecord(short_drawer_env, CodeRewardJudge(REWARD_OK))
    out = run_actions(env, [np.zeros(7)] * 10)
    assert out.truncated and out.infos[-1]["judge_record"]["opd"] is None
    assert all(p is None for p in env.last_record.phi)
    assert env.last_record.to_dict()["opd"] is None


def test_loading_something_else_is_rejected(tmp_path):
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"format": "other"}))
    with pytest.raises(ValueError, match="not an episode record"):
        EpisodeRecord.load(path)


def test_records_replay_from_env_id_kwargs_seed_and_actions():
    import gymnasium as gym

    import simjudge  # noqa: F401 - registers the task ids

    env = JudgeRecord(gym.make("simjudge/OpenDrawer-v0", horizon=8), make_judge("privileged"))
    run_actions(env, np.random.default_rng(0).uniform(-1, 1, (8, 7)), seed=5)
    record = env.last_record
    assert (record.env_id, record.env_kwargs, record.seed) == (
        "simjudge/OpenDrawer-v0",
        {"task": "OpenDrawer-v0", "horizon": 8},
        5,
    )
    replay = gym.make(record.env_id, **record.env_kwargs)
    _, info = replay.reset(seed=record.seed, options=record.reset_options)
    progress = [info["progress"]]
    for step in record.steps[1:]:
        progress.append(replay.step(np.asarray(step.action, dtype=np.float32))[4]["progress"])
    assert progress == pytest.approx(record.progress, abs=1e-6)
    env.close()
    replay.close()


def test_recorded_actions_are_copies_whatever_their_form(drawer_env):
    """Array actions are kept as bytes and decoded to the list the caller passed, even when
    the caller reuses its array or changes dtype, stride, kind or shape mid-episode."""
    env = JudgeRecord(drawer_env, make_judge("privileged"))
    env.reset(seed=0)
    action = np.zeros(7, dtype=np.float32)
    sent = []
    for value in (0.25, -0.5, 1e-7):
        action[:] = value  # the same array, changed in place after each step
        sent.append(action.tolist())
        env.step(action)
    for other in (
        np.full(7, 0.125),  # float64: another dtype
        np.arange(7, dtype=np.int64) % 2,  # ints
        np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7], dtype=np.float32)[::-1],  # a view
        np.array([0.0] * 7, dtype=object),  # not a plain number type: kept as a list
        [0.0, 0.5, 0.0, 0.0, 0.0, 0.0, -1.0],  # not an array
        np.full((1, 7), 0.25, dtype=np.float32),  # the episode's dtype, another shape
    ):
        sent.append(np.asarray(other).tolist())
        env.step(other)
    env.reset(seed=0)
    record = env.last_record
    actions = [step.action for step in record.steps[1:]]
    assert actions == sent
    assert all(type(a) is list for a in actions)
    assert [type(v) for v in actions[4]] == [int] * 7


