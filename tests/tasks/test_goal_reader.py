"""The rule reader: starts, constraints, amounts, positions, sequences, and what it refuses.

Each case is read from words against a catalogue asset and evaluated on probe states through
the same path as ``simjudge goal --evaluate``.
"""

from __future__ import annotations

import pytest

from simjudge.pipelines.goal_report import evaluations
from simjudge.tasks.spec import derive_goal


def _goal(description: str, asset: str):
    derived = derive_goal("Task", description, asset)
    assert derived.goal is not None, derived.ambiguities
    return derived.goal


def _refusal(description: str, asset: str) -> str:
    derived = derive_goal("Task", description, asset)
    assert derived.goal is None, derived.goal
    return " ".join(derived.ambiguities)


def test_a_stated_start_is_a_start_condition_not_an_action():
    goal = _goal("With the door open, close it.", "Door-1")
    (target,) = goal.targets
    assert target.direction == "close" and target.reached is None
    (start,) = goal.starts
    assert start.joint == "joint_0" and start.low > 0.0
    assert goal.implied_initial_joints()[("Door", "joint_0")] == start.start_at()
    got = evaluations(goal, [{"initial": {"joint_0": 1.0}, "final": {"joint_0": 0.0}},
                             {"initial": {"joint_0": 0.0}, "final": {"joint_0": 0.0}}], "Door-1")
    assert got == [{"holds": True, "start_ok": True}, {"holds": True, "start_ok": False}]


def test_constraints_become_parts_that_must_stay_put():
    goal = _goal("Open the top drawer and keep the other drawer closed.", "StorageFurniture-7")
    assert [t.joint for t in goal.targets] == ["joint_4"]
    assert [u.joint for u in goal.unchanged] == ["joint_2"]
    moved = {"initial": {}, "final": {"joint_4": 1.0, "joint_2": 0.6}}
    kept = {"initial": {}, "final": {"joint_4": 1.0, "joint_0": 1.0}}  # the door: unconstrained
    assert evaluations(goal, [moved, kept], "StorageFurniture-7") == [
        {"holds": False, "start_ok": True}, {"holds": True, "start_ok": True}]
    buttons = _goal("Close the microwave door; don't press any buttons.", "Microwave-0")
    assert {u.joint for u in buttons.unchanged} == {"joint_2", "joint_3"}
    assert all(u.spring for u in buttons.unchanged)  # judged by the episode's max
    assert "must both move and stay put" in _refusal("Open the door but leave the door shut.",
                                                       "Door-0")


def test_amounts_convert_with_the_joint_limits_and_refuse_beyond_them():
    window = _goal("Open the window 4 inches.", "Window-0").targets[0]  # 0.1016 m of 0.277
    assert (window.low + window.high) / 2 == pytest.approx(0.1016 / 0.277, abs=2e-3)
    assert "beyond the joint's range" in _refusal("Open the door 100 degrees.", "Door-0")
    assert "is a length" in _refusal("Open the door 10 cm.", "Door-0")
    assert "no agreed amount" in _refusal("Open the lid most of the way.", "Kettle-2")
    assert "full turn" in _refusal("Turn the knob 360 degrees.", "Microwave-1")
    small = _goal("Open the lid fully, then close it a bit.", "Box-2").targets[0]
    assert (small.low, small.high, small.reached) == (0.65, 0.95, 0.9)  # from where it was left


def test_positions_are_read_in_the_world_frame_and_refuse_when_they_do_not_separate():
    knob = _goal("Turn the third knob from the left by 45 degrees.", "Oven-4").targets[0]
    assert knob.joint == "joint_4"  # y: joint_2 +0.21, joint_3 +0.07, joint_4 -0.07
    button = _goal("Press the left button in the back row.", "ButtonPanel-1").targets[0]
    assert button.joint == "joint_5" and button.spring
    assert "does not resolve" in _refusal("Open the top drawer.", "StorageFurniture-4")
    assert "only 4" in _refusal("Open the fifth drawer from the top.", "StorageFurniture-5")
    assert "counts from no side" in _refusal("Press the second button.", "ButtonPanel-1")


def test_two_steps_keep_the_first_in_the_max_and_after_reorders():
    goal = _goal("Lower the window to 20% after raising it fully.", "Window-4")
    (target,) = goal.targets
    assert (target.low, target.high, target.reached) == (0.1, 0.3, 0.9)
    got = evaluations(goal, [{"final": {"joint_0": 0.2}, "max": {"joint_0": 1.0}},
                             {"final": {"joint_0": 0.2}}], "Window-4")
    assert [g["holds"] for g in got] == [True, False]


@pytest.mark.parametrize(("description", "asset", "fragment"), [
    ("Fill the kettle with water.", "Kettle-3", "'fill'"),
    ("Dispense two pumps of soap.", "Dispenser-0", "'dispense', 'two'"),
    ("Adjust the door.", "Door-0", "'adjust'"),
    ("Open the box the other way.", "Box-4", "'other', 'way'"),
    ("Turn the lamp off.", "Lamp-0", "spring button"),
    ("Close the pump.", "Dispenser-0", "springs back"),
    ("Open any door.", "StorageFurniture-4", "without saying which"),
    ("Open the drawer halfway or fully.", "StorageFurniture-4", "'or'"),
    ("Turn on the microwave.", "Microwave-1", "turns all the way round"),
    ("Turn the dial.", "Safe-0", "say how far"),
    ("Slide the door.", "Door-0", "names no direction"),
])
def test_what_the_reader_cannot_read_it_refuses_and_says_so(description, asset, fragment):
    assert fragment in _refusal(description, asset)
