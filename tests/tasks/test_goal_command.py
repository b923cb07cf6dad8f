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
    assert "between 0.35 and 0.65" in out and "'top' picks link_2" in out


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
