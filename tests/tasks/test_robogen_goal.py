"""RoboGen goals: RoboGen's framing dropped, the converter's part mapping used, no lid for a bucket."""

from __future__ import annotations

from pathlib import Path

from simjudge.pipelines.robogen import import_robogen, robogen_goal
from simjudge.pipelines.robogen.convert import robogen_words
from simjudge.tasks.spec import derive_goal

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "robogen"


def test_robogen_framing_and_purposes_are_not_read_as_goal_words():
    assert robogen_words("The robotic arm will close the window to preserve indoor "
                         "temperature") == "close the window"
    assert robogen_words("The robot arm pulls a lever to start the brewing process of the "
                         "coffee machine") == "pulls a lever"
    assert robogen_words("Open the lid 30%.") == "Open the lid 30%."  # nothing to drop


def test_the_converters_mapping_picks_the_part_the_words_leave_open():
    words = "open the refrigerator door"
    assert derive_goal("T", words, "Refrigerator-0").goal is None  # two doors: refused
    mapped = derive_goal("T", words, "Refrigerator-0", resolved={"door": ["joint_2"]})
    assert [t.joint for t in mapped.goal.targets] == ["joint_2"]
    assert any("converter mapped" in r for r in mapped.reasons)


def test_lifting_or_carrying_the_object_is_not_one_of_its_parts():
    derived = derive_goal("Carry Bucket", "lift and carry the bucket from one location to "
                          "another", "Kettle-0", "Bucket")
    assert derived.goal is None  # not "open the kettle lid"
    lift = derive_goal("Lift Bucket", "lift the bucket", "Kettle-0", "Bucket")
    assert lift.goal is None and "moves the object itself" in lift.ambiguities[0]
    assert derive_goal("Lift", "lift the kettle", "Kettle-0").goal is None
    assert derive_goal("Lift", "lift the kettle lid", "Kettle-0").goal is not None


def test_an_imported_robogen_task_reads_its_own_words():
    solution, _ = import_robogen(FIXTURES / "Slide_Cabinet_Drawer_Out")
    derivation = robogen_goal(solution)
    (target,) = derivation.goal.targets
    assert target.direction == "open" and target.semantic.endswith("drawer")
    assert target.low == 0.775  # the plain open of a drawer (calibrated)
