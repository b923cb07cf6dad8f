"""The LLM goal reader and ``--goal-reader rule|llm|both``.

Scripted replies stand in for the model here (they test the reader's own logic: schema,
conversion, the K-sample vote, the agreement of ``both``); the ``llm``-marked test runs the
embedded model itself (``make test-llm``).
"""

from __future__ import annotations

import json

import pytest

from simjudge.llm import ScriptedClient
from simjudge.pipelines.goal_llm import LLMGoalReader, canonical, read_goal, same_meaning
from simjudge.tasks.spec import derive_goal

LEFT_DOOR = ("Open Left Door", "Open the left door but leave the right one shut.",
             "StorageFurniture-4")


def reply(targets, unchanged=(), starts=(), refuse=False, reason=""):
    return json.dumps({"refuse": refuse, "reason": reason, "targets": [
        {"joint": j, "low": lo, "high": hi, "direction": d, "relative": False, "reached": None}
        for j, lo, hi, d in targets], "unchanged": list(unchanged), "starts": list(starts)})


OPEN_LEFT = reply([("joint_0", 0.65, 1.0, "open")], unchanged=["joint_2"])
OPEN_LEFT_NO_CONSTRAINT = reply([("joint_0", 0.65, 1.0, "open")])
OPEN_RIGHT = reply([("joint_2", 0.65, 1.0, "open")], unchanged=["joint_0"])


def test_a_strict_majority_gives_the_goal_and_sampling_stops_once_it_is_reached():
    client = ScriptedClient([OPEN_LEFT, OPEN_LEFT, OPEN_RIGHT])
    d = LLMGoalReader(client, k=3).derive(*LEFT_DOOR)
    assert d.goal is not None and d.goal.source == "llm"
    assert [t.joint for t in d.goal.joint_targets] == ["joint_0"]
    assert [u.joint for u in d.goal.unchanged] == ["joint_2"]
    assert len(client.calls) == 2  # two agreeing samples of three are a majority
    seeds = [c.seed for c in client.calls]
    assert seeds == [0, 1] and all(c.temperature > 0 for c in client.calls)


def test_samples_that_disagree_give_no_goal_and_show_every_reading():
    client = ScriptedClient([OPEN_LEFT, OPEN_RIGHT, OPEN_LEFT_NO_CONSTRAINT])
    d = LLMGoalReader(client, k=3).derive(*LEFT_DOOR)
    assert d.goal is None
    assert "disagree" in d.ambiguities[0]
    assert d.ambiguities[0].count("|") == 2  # the three readings, side by side


def test_a_refusing_model_and_an_unknown_joint_give_no_goal():
    refuse = reply([], refuse=True, reason="'a good amount' has no agreed band")
    d = LLMGoalReader(ScriptedClient([refuse, refuse]), k=3).derive(*LEFT_DOOR)
    assert d.goal is None and "a good amount" in d.ambiguities[0]
    ghost = reply([("joint_9", 0.65, 1.0, "open")])
    d = LLMGoalReader(ScriptedClient([ghost]), k=1).derive(*LEFT_DOOR)
    assert d.goal is None and "joint_9" in d.ambiguities[0]


def test_one_sample_is_greedy_and_the_prompt_shows_the_parts_not_a_proposal():
    client = ScriptedClient([OPEN_LEFT])
    LLMGoalReader(client, k=1).derive(*LEFT_DOOR)
    (call,) = client.calls
    assert call.temperature == 0.0
    prompt = "\n".join(m["content"] for m in call.messages)
    assert "joint_0" in prompt and "joint_2" in prompt and "+y is LEFT" in prompt
    assert LEFT_DOOR[1] in prompt


def test_both_returns_the_rule_readers_goal_only_when_the_llm_agrees():
    agreed = read_goal("both", *LEFT_DOOR, llm=LLMGoalReader(ScriptedClient([OPEN_LEFT]), k=1))
    rule = derive_goal(*LEFT_DOOR)
    assert agreed.goal == rule.goal
    assert any("LLM reader agrees" in r for r in agreed.reasons)
    # the LLM drops the constraint: the two readings differ, so no goal, both shown
    missed = read_goal("both", *LEFT_DOOR,
                       llm=LLMGoalReader(ScriptedClient([OPEN_LEFT_NO_CONSTRAINT]), k=1))
    assert missed.goal is None
    text = missed.ambiguities[0]
    assert "rule reader:" in text and "LLM reader:" in text and "--goal" in text


def test_both_refuses_when_the_rule_reader_refuses_even_if_the_llm_reads_a_goal():
    vague = ("Open Door", "Open the left door a good amount.", "StorageFurniture-4")
    assert derive_goal(*vague).goal is None
    d = read_goal("both", *vague, llm=LLMGoalReader(ScriptedClient([OPEN_LEFT_NO_CONSTRAINT]),
                                                    k=1))
    assert d.goal is None and "refused" in d.ambiguities[0]


def test_same_meaning_compares_joints_directions_and_intervals_within_the_tolerance():
    rule = derive_goal(*LEFT_DOOR).goal
    close = LLMGoalReader(ScriptedClient([reply([("joint_0", 0.7, 1.0, "open")],
                                                unchanged=["joint_2"])]), k=1).derive(*LEFT_DOOR)
    far = LLMGoalReader(ScriptedClient([reply([("joint_0", 0.35, 0.65, "open")],
                                              unchanged=["joint_2"])]), k=1).derive(*LEFT_DOOR)
    assert same_meaning(rule, close.goal) and not same_meaning(rule, far.goal)
    assert canonical(rule) != canonical(far.goal)


def test_unknown_reader_and_a_missing_llm_say_what_to_pass():
    with pytest.raises(ValueError, match="rule, llm, both"):
        read_goal("magic", *LEFT_DOOR)
    with pytest.raises(ValueError, match="--llm"):
        read_goal("both", *LEFT_DOOR)


@pytest.mark.llm
def test_the_embedded_model_reads_a_plain_goal_or_abstains():
    from simjudge.llm import make_client

    reader = LLMGoalReader(make_client("llamacpp:qwen2.5-coder-1.5b"), k=3)
    d = reader.derive("Open Left Door", "Open the left door.", "StorageFurniture-4")
    if d.goal is not None:  # a goal must be the right one; abstaining is allowed
        assert [t.joint for t in d.goal.joint_targets] == ["joint_0"]
        assert d.goal.joint_targets[0].direction == "open"
