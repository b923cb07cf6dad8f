"""``simjudge goal`` (its handler) and the LLM goal writer."""

from __future__ import annotations

import json

import pytest

from simjudge.llm import ScriptedClient
from simjudge.pipelines.goal_report import GoalConfig, goal_command, goal_report
from simjudge.pipelines.goal_writer import write_goal
from simjudge.tasks.spec import TaskSpecError


def test_goal_command_prints_the_goal_and_why(capsys):
    code = goal_command(GoalConfig(task="Nudge Drawer Halfway Shut", object="StorageFurniture-0",
                                   description="Nudge the top drawer halfway shut."))
    out = capsys.readouterr().out
    assert code == 0
    assert "between 0.40 and 0.60" in out and "'top'" in out and "link_2" in out


def test_an_ambiguous_task_exits_non_zero_and_says_what_to_add(capsys):
    code = goal_command(GoalConfig(task="Nudge Drawer Halfway Shut", object="StorageFurniture-0",
                                   json=True))
    report = json.loads(capsys.readouterr().out)
    assert code == 1 and report["goal"] is None
    assert "top/bottom" in report["ambiguities"][0]


def test_a_built_in_task_shows_its_reference_goal_and_the_parsers_reading():
    report = goal_report(GoalConfig(task="OpenDrawer-v0"))
    assert report["source"] == "reference" and report["parser_agrees"]
    assert report["goal"]["targets"][0]["low"] == 0.6
    with pytest.raises(TaskSpecError, match="--object"):
        goal_report(GoalConfig(task="Wiggle The Thing"))


def test_the_llm_goal_writer_is_checked_against_the_tree():
    bad = '{"targets": [{"joint": "joint_7", "direction": "open", "amount": "open"}]}'
    good = '{"targets": [{"joint": "joint_2", "direction": "close", "amount": "halfway"}]}'
    derived = write_goal(ScriptedClient([bad, good]), "Nudge Drawer", "Nudge the top drawer "
                         "halfway shut.", "StorageFurniture-0")
    target = derived.goal.targets[0]
    assert derived.goal.source == "llm" and "2 attempt" in derived.reasons[0]
    assert (target.joint, target.link, target.low, target.high) == ("joint_2", "link_3", 0.35, 0.65)
    none = write_goal(ScriptedClient(["no"] * 3), "Open", "", "StorageFurniture-0")
    assert none.goal is None and "no valid goal" in none.ambiguities[0]


def test_evaluate_gives_one_holds_and_start_ok_per_probe(tmp_path, capsys):
    states = tmp_path / "states.json"
    states.write_text(json.dumps([
        {"initial": {}, "final": {"joint_0": 1.0}},          # opened: holds
        {"initial": {"joint_0": 1.0}},                       # already open: not meaningful
        {"initial": {}, "final": {"joint_0": 0.1}},          # barely moved: does not hold
    ]))
    code = goal_command(GoalConfig(task="Open Door", object="Door-4",
                                   description="Open the door.", json=True,
                                   evaluate=str(states)))
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["status"] == "derived" and report["goal"]["targets"]
    assert report["evaluations"] == [{"holds": True, "start_ok": True},
                                     {"holds": True, "start_ok": False},
                                     {"holds": False, "start_ok": True}]


def test_evaluate_refuses_bad_probes_and_reports_refusals(tmp_path):
    from simjudge.tasks.spec import ProbeError

    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"initial": {"joint_9": 0.5}}]))
    with pytest.raises(ProbeError, match="joint_9"):
        goal_report(GoalConfig(task="Open Door", object="Door-4", description="Open the door.",
                               evaluate=str(bad)))
    bad.write_text(json.dumps([{"final": {"joint_0": 1.7}}]))
    with pytest.raises(ProbeError, match=r"\[0, 1\]"):
        goal_report(GoalConfig(task="Open Door", object="Door-4", description="Open the door.",
                               evaluate=str(bad)))
    bad.write_text("{not json")
    with pytest.raises(ProbeError, match="not JSON"):
        goal_report(GoalConfig(task="Open Door", object="Door-4", description="Open the door.",
                               evaluate=str(bad)))
    good = tmp_path / "good.json"
    good.write_text("[{}]")
    refused = goal_report(GoalConfig(task="Open Drawer", object="StorageFurniture-0",
                                     description="Open the drawer.", evaluate=str(good)))
    assert refused["status"] == "refused" and refused["evaluations"] == []
    assert refused["reason"]
