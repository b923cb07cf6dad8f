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
    assert robogen_words("After filling or extracting contents, the robotic arm will close "
                         "the lid of the dispenser") == "close the lid of the dispenser"


def test_robogen_procedure_means_and_instruments_are_not_read_as_goal_words():
    # RoboGen's folder names join the sentences without a full stop
    assert robogen_words("The robot arm needs to close the oven door after use This task "
                         "involves moving towards the oven door and applying force to close "
                         "it") == "close the oven door"
    assert robogen_words("The robotic arm turns off the faucet by rotating one of the hinge "
                         "switches") == "turns off the faucet"
    assert robogen_words("The robot arm uses the prismatic joint to slide the drawer out "
                         "from the box") == "slide the drawer out from the box"
    assert robogen_words("The robotic arm pushes the slider button") == \
        "pushes the sliding button"
    # a constraint is not a means: it stays, and the reader reads it
    assert robogen_words("open the left door but leave the right one shut") == \
        "open the left door but leave the right one shut"


def test_robogen_possessives_without_apostrophe_name_the_objects_part():
    assert robogen_words("The robotic arm will close the trashcans lid") == \
        "close the trashcan lid"
    assert robogen_words("manipulating the lamps head") == "manipulating the lamp head"
    assert robogen_words("extend the suitcases handle", ("Suitcase",)) == \
        "extend the suitcase handle"
    assert robogen_words("extend the suitcases handle") == "extend the suitcases handle"
    # only an object's name before a part word loses its s
    assert robogen_words("press the buttons gently") == "press the buttons gently"
    assert robogen_words("open the doors fully") == "open the doors fully"
    goal = derive_goal("Close Trashcan Lid", robogen_words(
        "The robotic arm will close the trashcans lid"), "TrashCan-0").goal
    assert goal is not None and goal.targets[0].direction == "close"


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
