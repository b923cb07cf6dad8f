"""VLM judges over recorded exchanges with a real server (replay), and the Φ-only paths.

The exchanges in ``data/exchanges`` were recorded from llama.cpp's OpenAI-compatible server
serving SmolLM2-135M (text-only: it ignores the images; ``fixtures.py``). Replay serves a
reply only for the exact recorded request, so every replayed judgement also checks that the
judge sent the same text, the same images (PNG bytes) and the same sampling parameters.
"""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

from simjudge.judges import JudgeReward, JudgeSignal, make_judge
from simjudge.judges.episode import EpisodeRecord, StepRecord
from simjudge.judges.llm.prompts import keyframe_indices
from simjudge.judges.vlm import (
    FramedEpisodeRecord,
    TerminalReward,
    VLMFrameError,
    VLMServerError,
    image_parts_of,
    parse_progress,
)
from simjudge.llm import LLMLog
from simjudge.tasks.spec import make_task_env
from tests.judges.helpers import run_oracle
from tests.judges.vlm.fixtures import (
    RUNS,
    SIZE,
    TASK,
    judge_for,
    load_frames,
    load_progress,
    replay_client,
    run_step,
)


@pytest.fixture(scope="module")
def oracle_frames():
    return load_frames("oracle")


@pytest.fixture(scope="module")
def idle_frames():
    return load_frames("idle")


def _logged(tmp_path, run):
    log = LLMLog(tmp_path / f"{run}.jsonl")
    return judge_for(run, replay_client(log=log)), log


def test_step_judge_keyframes_held_phi_and_images_sent(tmp_path, oracle_frames):
    judge, log = _logged(tmp_path, "step")
    signals = run_step(judge, oracle_frames)
    every, last = RUNS["step"]["every"], len(oracle_frames) - 1
    asked = [s.details["judged_step"] for s in signals if not s.details["held"]]
    assert asked == [*range(0, last + 1, every), last]  # every k steps and the last step
    records = log.read()
    assert len(records) == len(asked) and all(r["cached"] for r in records)
    for signal in signals:
        keyframe = signals[signal.details["judged_step"]]
        assert signal.phi == keyframe.phi and signal.reward == signal.phi  # Φ held in between
    assert len({frozenset(s.details) for s in signals}) == 1
    for record, step in zip(records, asked, strict=True):
        reply = parse_progress(record["text"])
        assert signals[step].phi == pytest.approx((reply.score or 0.0) / 100.0)
        images = image_parts_of(record["request"]["messages"])
        expected = [oracle_frames[step]] if step == 0 else [oracle_frames[0], oracle_frames[step]]
        assert len(images) == len(expected)  # the reference start frame, then the current one
        for got, want in zip(images, expected, strict=True):
            np.testing.assert_array_equal(got, want)
        assert max(images[-1].shape[:2]) == SIZE


def test_step_judge_k_samples_aggregate_and_spread(tmp_path, idle_frames):
    judge, log = _logged(tmp_path, "step_k3")
    signals = run_step(judge, idle_frames)
    seeds = [r["request"]["seed"] for r in log.read()]
    assert seeds == [0, 1, 2, 0, 1, 2]  # k = 3 samples per keyframe, distinct seeds
    assert all(r["request"]["temperature"] == 0.8 for r in log.read())
    for signal in (signals[0], signals[-1]):
        d = signal.details
        assert len(d["samples"]) == 3 and d["valid"] + d["invalid"] == 3
        valid = [s for s in d["samples"] if s is not None]
        assert d["score"] == pytest.approx(float(np.mean(valid)))
        assert d["spread"] == pytest.approx(float(np.std(valid)))
        assert signal.phi == pytest.approx(d["score"] / 100.0)
    assert signals[-1].details["invalid"] >= 1  # a rambling sample was dropped, not guessed
    assert "±" in signals[-1].reason


def test_a_changed_image_is_a_different_request(oracle_frames):
    frames = [f.copy() for f in oracle_frames]
    frames[5][0, 0] = 255 - frames[5][0, 0]  # one pixel of one keyframe
    judge = judge_for("step", replay_client())
    with pytest.raises(VLMServerError, match="no cached reply"):
        run_step(judge, frames)
    run_step(judge_for("step", replay_client()), oracle_frames)  # unchanged frames replay


def test_step_judge_needs_frames():
    judge = make_judge("vlm-step", client=replay_client())
    from simjudge.judges import JudgeContext, Transition

    judge.reset(JudgeContext(task=TASK))
    with pytest.raises(VLMFrameError, match="render_mode='rgb_array'"):
        judge.observe(Transition(step=0))


def test_image_episode_judge_scores_keyframes(tmp_path, oracle_frames):
    judge, log = _logged(tmp_path, "episode_json")
    signal = judge.judge_frames(oracle_frames, TASK)
    index = keyframe_indices(len(oracle_frames), 5)
    assert signal.details["keyframe_steps"] == index and len(index) == 5
    record = log.read()[0]
    for got, step in zip(image_parts_of(record["request"]["messages"]), index, strict=True):
        np.testing.assert_array_equal(got, oracle_frames[step])
    d = signal.details
    assert d["samples"][0] == 10.0 and d["clipped"][0]  # the model said 60 on a 0-10 scale
    assert d["valid"] == 1 and d["invalid"] == 1
    assert signal.phi == signal.reward == 1.0 and signal.verdict == "success"
    bad = judge_for("episode_k2", replay_client()).judge_frames(oracle_frames, TASK)
    assert bad.phi is None and bad.verdict == "undecided" and bad.details["invalid"] == 2


def test_image_episode_judge_reads_framed_records(oracle_frames):
    record = FramedEpisodeRecord(task_name="OpenDrawer-v0", context={"task": TASK},
                                 frames=oracle_frames)
    signal = judge_for("episode_json", replay_client()).judge_episode(record)
    assert signal.details["score"] == 10.0
    assert "frames" not in record.to_dict()
    with pytest.raises(VLMFrameError, match="without frames"):
        judge_for("episode_json", replay_client()).judge_episode(EpisodeRecord())


def test_terminal_reward_over_image_episode(oracle_frames):
    from simjudge.judges import JudgeContext, Transition

    judge = TerminalReward(judge_for("episode_json", replay_client()), scale=2.0)
    assert judge.needs_frames and judge.max_reward == 2.0
    judge.reset(JudgeContext(task=TASK))
    last = len(oracle_frames) - 1
    signals = [judge.observe(Transition(step=i, frame=f, truncated=i == last,
                                        action=None if i == 0 else np.zeros(4)))
               for i, f in enumerate(oracle_frames)]
    assert [s.reward for s in signals[:-1]] == [0.0] * last
    assert signals[-1].reward == 2.0 and signals[-1].verdict == "success"
    assert signals[-1].details["episode"]["details"]["keyframe_steps"] == [0, 6, 13, 20, 26]
    assert len({frozenset(s.details) for s in signals}) == 1


def test_terminal_reward_wraps_rl_in_a_real_env():
    env = make_task_env("OpenDrawer-v0", horizon=30)
    judge = make_judge("terminal-reward:episode='pairwise:stride=5'")
    wrapped = JudgeReward(env, judge)
    out = run_oracle(wrapped, seed=0)
    assert out.rewards[:-1] == [0.0] * (len(out.rewards) - 1)
    final = out.infos[-1]["judge_reward"]["term"]
    episode = judge.explain(wrapped.last_fast).details["episode"]
    assert final == pytest.approx(episode["reward"]) and final > 0.0
    assert episode["details"]["true_delta"] > 0.9  # the recorded privileged Φ: drawer opened
    assert episode["details"]["pairs"] == math.ceil((len(out.rewards)) / 5)
    wrapped.close()
    with pytest.raises(TypeError, match="needs an episode judge"):
        TerminalReward(make_judge("privileged"))


def test_preference_vlm_both_strips_in_one_request_and_swap(tmp_path, oracle_frames,
                                                            idle_frames):
    judge, log = _logged(tmp_path, "preference")
    signal = judge.judge_pair(oracle_frames, idle_frames, task=TASK)
    first, second = log.read()
    strip_a = [oracle_frames[i] for i in keyframe_indices(len(oracle_frames), 4)]
    strip_b = [idle_frames[i] for i in keyframe_indices(len(idle_frames), 4)]
    for record, order in ((first, strip_a + strip_b), (second, strip_b + strip_a)):
        for got, want in zip(image_parts_of(record["request"]["messages"]), order, strict=True):
            np.testing.assert_array_equal(got, want)
    d = signal.details
    # SmolLM2 cannot see the images and answered "A" both times: swapping the strips maps
    # its second "A" back to B, so the position bias shows up as a split vote, a tie
    assert d["votes"] == ["A", "B"] and d["preference"] == "tie" and signal.reward == 0.0
    assert "split" in signal.reason and d["agreement"] == 0.5


def test_preference_from_phi_traces_with_tie_margin():
    oracle, idle = load_progress("oracle"), load_progress("idle")
    judge = make_judge("preference")
    win = judge.judge_pair(oracle, idle)
    assert win.details["preference"] == "A" and win.reward == 1.0
    assert judge.judge_pair(idle, oracle).details["preference"] == "B"
    assert judge.judge_pair([0.0, 0.50], [0.0, 0.54]).details["preference"] == "tie"
    assert judge.judge_pair([0.0, 0.50], [0.0, 0.56]).details["preference"] == "B"
    regressed = [0.0, 0.9, 0.2]
    assert make_judge("preference:statistic='max'").judge_pair(regressed, [0, .5, .5]).reward == 1
    assert make_judge("preference:statistic='final'").judge_pair(regressed, [0, .5, .5]).reward == -1
    area = make_judge("preference:statistic='area',margin=0.0")
    assert area.judge_pair([0, 1, 1, 1], [0, 0, 0, 1]).details["preference"] == "A"
    with pytest.raises(ValueError, match="statistic"):
        make_judge("preference:statistic='median'")


def test_preference_reads_records_and_reruns_a_frame_judge(oracle_frames, idle_frames):
    def record(values):
        steps = [StepRecord(step=i, signal=JudgeSignal(v, v)) for i, v in enumerate(values)]
        return EpisodeRecord(steps=steps, context={"task": TASK})

    judge = make_judge("preference")
    assert judge.judge_pair(record([0, .2, .8]), record([0, .3, .3])).details["preference"] == "A"
    gap = EpisodeRecord(steps=[StepRecord(step=0, signal=JudgeSignal())])
    with pytest.raises(ValueError, match="no Φ on every step"):
        judge.judge_pair(gap, record([0, 1]))
    # Φ from a frame-reading judge run now over both episodes' frames (recorded exchanges)
    phi_judge = judge_for("step", replay_client())
    by_vlm = make_judge("preference", phi_judge=phi_judge)
    a = FramedEpisodeRecord(frames=oracle_frames, context={"task": TASK})
    signal = by_vlm.judge_pair(a, a)
    assert signal.details["preference"] == "tie" and signal.details["phi_judge"]


def test_vlm_judges_pickle_and_rebuild_their_client(tmp_path):
    from tests.judges.vlm.fixtures import EXCHANGES

    judge = make_judge(f"vlm-step:server='openai:smollm2-135m',cache='{EXCHANGES}',"
                       "replay='replay',size=48,every=5,max_tokens=48")
    clone = pickle.loads(pickle.dumps(judge))
    assert clone.client is None
    signals = run_step(clone, load_frames("oracle")[:1])  # rebuilt from the spec, replayed
    assert signals[0].details["model"] == "smollm2-135m"
    orphan = pickle.loads(pickle.dumps(make_judge("vlm-step", client=replay_client())))
    with pytest.raises(VLMServerError, match="no VLM client"):
        run_step(orphan, load_frames("oracle")[:1])


def test_arena_evaluator_takes_the_preference_judge():
    from simjudge.pipelines.arena import SideSignals, judge_match

    a, b = SideSignals([0.0, 0.9, 0.3], False), SideSignals([0.0, 0.5, 0.5], False)
    assert judge_match(a, b).preference == "A"  # the tie rule: A made more progress
    verdict = judge_match(a, b, prefer=make_judge("preference:statistic='final'"))
    assert (verdict.preference, verdict.rule) == ("B", "preference")  # B kept more at the end
    assert verdict.reason.startswith("B preferred")
