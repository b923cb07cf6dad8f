"""The goal parser: built-in goals reproduced, new descriptions, ambiguity reported."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from simjudge.envs.goals import PlaceGoal
from simjudge.envs.scene import SceneConfig
from simjudge.tasks.spec import (
    GoalParseError,
    JointTarget,
    PlaceTarget,
    derive_goal,
    goal_for_spec,
    library_ids,
    load_task,
    object_parts,
)
from simjudge.tasks.spec.goal_words import find_amount, words

NEW_TASKS = yaml.safe_load((Path(__file__).parent / "data" / "new_task_goals.yaml").read_text())


REFUSED = {"PressButton-v0": "counts from no side", "TurnOvenKnob-v0": "counts from no side",
           "RotateLampHead-v0": "names no amount and no end state"}
"""Built-in descriptions the reader refuses — 'the first button' counts from no side, a plain
'tilt the lamp's head' says neither how far nor where it ends; the reference goal, which these
tasks have, is what they are judged by."""


@pytest.mark.parametrize("env_id", library_ids())
def test_the_parser_reads_every_reference_goal_at_least_as_strictly(env_id):
    # The plain verbs' thresholds are calibrated on RoboGen's stated thresholds (door 0.65,
    # drawer 0.775, others 0.9, close 0.1), stricter than most built-in references (a lid
    # at 0.35 of its range is not open): the parser's reading must name the same part and
    # direction and be at least as strict.
    spec = load_task(env_id)
    derived = goal_for_spec(spec)
    if env_id in REFUSED:
        assert derived.goal is None and REFUSED[env_id] in derived.ambiguities[0]
        return
    assert derived.goal is not None, derived.ambiguities
    assert derived.goal.source == "parser" and not derived.ambiguities
    (target,) = derived.goal.targets
    ref = spec.goal
    if isinstance(ref, PlaceGoal):
        assert isinstance(target, PlaceTarget)
        assert (target.object, target.target, target.relation) == (
            ref.object, ref.target, ref.relation)
        return
    assert isinstance(target, JointTarget)
    assert (target.object, target.joint, target.link, target.direction) == (
        ref.object, ref.joint, ref.link, ref.direction)
    if target.amount in ("open", "close", "press", "turn", "fully"):  # a plain verb
        if ref.direction == "open":
            assert target.low >= ref.threshold - 1e-9 and target.high == 1.0
        else:
            assert target.high <= ref.threshold + 1e-9 and target.low == 0.0
    else:  # an amount the words state ("a quarter turn"): the reference is inside it
        assert target.low <= ref.threshold <= target.high
    assert target.requires_grasp == ref.requires_grasp


def test_new_descriptions_cover_amounts_directions_and_two_part_tasks():
    categories = {case["asset"].split("-")[0] for case in NEW_TASKS}
    assert len(NEW_TASKS) >= 12 and len(categories) >= 8
    assert any(len(case["targets"]) > 1 for case in NEW_TASKS)
    assert {t["direction"] for case in NEW_TASKS for t in case["targets"]} == {"open", "close"}


@pytest.mark.parametrize("case", NEW_TASKS, ids=[c["name"] for c in NEW_TASKS])
def test_new_descriptions_give_the_hand_written_goals(case):
    derived = derive_goal(case["name"], case["description"], case["asset"])
    assert derived.goal is not None, derived.ambiguities
    got = derived.goal.joint_targets
    assert [t.joint for t in got] == [t["joint"] for t in case["targets"]], derived.reasons
    for target, want in zip(got, case["targets"], strict=True):
        assert target.link == want["link"]
        assert target.direction == want["direction"]
        assert (target.low, target.high) == pytest.approx((want["low"], want["high"]), abs=1e-3)
        assert target.relative == want.get("relative", False)
        assert target.requires_grasp == want.get("requires_grasp", True)
        if "start" in want:
            assert target.implied_start() == pytest.approx(want["start"])
        assert not target.contains(target.implied_start())  # the start is not already done


def test_a_safe_dial_is_its_knob_and_opening_the_safe_is_its_door():
    dial = derive_goal("Turn Safe Dial", "Turn the dial on the safe's door by a quarter turn.",
                       "Safe-0").goal.targets[0]
    assert (dial.joint, dial.semantic) == ("joint_1", "free knob")
    door = derive_goal("Open Safe", "Open the safe.", "Safe-0").goal.targets[0]
    assert (door.joint, door.link) == ("joint_0", "link_2")  # the door, grasped at its handle


def test_two_drawers_without_an_ordinal_are_reported_not_guessed():
    derived = derive_goal("Nudge Drawer Halfway Shut", "", "StorageFurniture-0")
    assert derived.goal is None and not derived.ok
    assert "fits 2 parts" in derived.ambiguities[0]
    assert "top/bottom" in derived.ambiguities[0]
    top = derive_goal("Nudge Drawer Halfway Shut", "Nudge the top drawer halfway shut.",
                      "StorageFurniture-0").goal.targets[0]
    bottom = derive_goal("Open Drawer", "Open the bottom drawer.",
                         "StorageFurniture-0").goal.targets[0]
    assert (top.joint, bottom.joint) == ("joint_2", "joint_0")  # by height, from the URDF


@pytest.mark.parametrize(
    ("name", "description", "asset", "fragment"),
    [
        ("Close Fridge", "Close the refrigerator.", "Refrigerator-2", "fits 2 parts"),
        ("Open Drawer", "Push the door closed.", "Door-0", "make them agree"),
        ("Open Drawer", "Open the drawer.", "Door-0", "names no part"),
        ("Turn Knob", "Turn the knob.", "Oven-0", "fits 2 parts"),
        ("Wiggle", "Wiggle it about.", "Door-0", "could not read 'wiggle'"),
        ("Put Cube In Box", "Put the cube into the box.", None, "not a placement"),
    ],
)
def test_ambiguities_are_reported_with_the_fix(name, description, asset, fragment):
    derived = derive_goal(name, description, asset)
    assert derived.goal is None
    assert any(fragment in a for a in derived.ambiguities), derived.ambiguities


def test_the_scene_start_state_picks_the_open_drawer():
    scene = SceneConfig.model_validate({"objects": [
        {"name": "Cabinet", "asset": "StorageFurniture-0", "joint_init": {"joint_2": 0.9}}]})
    derived = derive_goal("Close Drawer", "Push the open drawer closed.", "StorageFurniture-0",
                          "Cabinet", scene)
    target = derived.goal.targets[0]
    assert (target.object, target.joint, target.start) == ("Cabinet", "joint_2", 0.9)
    assert any("scene starts joint_2" in r for r in derived.reasons)


def test_placement_needs_two_scene_objects_and_a_relation():
    scene = load_task("StackCubeOnCylinder-v0").scene
    goal = derive_goal("Stack", "Place the cube on top of the can.", None, scene=scene).goal
    assert goal.targets == (PlaceTarget(object="Cube", target="Can", relation="on"),)
    into = derive_goal("Store", "Drop the cube into the can.", None, scene=scene).goal
    assert into.targets[0].relation == "in"


def test_words_amounts_and_parts():
    assert words("Press the toilet's flush lever") == ["press", "the", "toilet", "button"]
    assert words("the half-open door") == ["the", "half_open", "door"]
    assert find_amount("open it halfway")[0] == "halfway"
    assert find_amount("push the half-open door shut") is None
    assert find_amount("turn it 90 degrees")[:2] == ("degrees", 90.0)
    assert find_amount("open to 30%")[:2] == ("percent", 0.3)
    parts = {p.joint: p for p in object_parts("Safe-0")}
    assert parts["joint_0"].grip == "link_2" and parts["joint_1"].parent == "link_0"
    with pytest.raises(GoalParseError, match="Did you mean"):
        derive_goal("Open", "Open it.", "Microwav-0")


def test_turning_a_lamp_on_is_refused_and_pressing_its_switch_is_a_press():
    # issue 37: the lamp's switch is a spring button, so "on" is a state it toggles that no
    # joint state shows (it was read as a press); the press itself is verifiable
    refused = derive_goal("Turn Lamp On", "Turn on the lamp.", "Lamp-0")
    assert refused.goal is None and "spring button" in refused.ambiguities[0]
    target = derive_goal("Press Switch", "Press the lamp's switch.", "Lamp-0").goal.targets[0]
    assert (target.joint, target.requires_grasp, target.amount) == ("joint_1", False, "press")
    tap = derive_goal("Turn On Tap", "Turn on the tap.", "Faucet-1").goal.targets[0]
    assert (tap.joint, tap.requires_grasp) == ("joint_0", True)
