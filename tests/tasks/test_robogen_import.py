"""Importing RoboGen task folders: reading, scene conversion, part remaps, errors.

The fixtures under ``tests/fixtures/robogen/`` are written for these tests in RoboGen's
task format (task YAML, ``task_<Task>/`` with the substep lists and one class per
substep); they are not RoboGen's own tasks.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

from simjudge.envs.catalogue import default_catalogue
from simjudge.envs.codegen import DisallowedCodeError, compile_primitive_block, compile_reward
from simjudge.envs.state_api import STATE_API
from simjudge.pipelines.robogen import (
    CATEGORY_MAP,
    MISSING_CATEGORIES,
    RobogenImportError,
    import_robogen,
    is_robogen_task_dir,
    load_solution_or_robogen,
    rigid_category,
    solution_yaml,
)
from simjudge.pipelines.robogen.categories import CATALOGUE_ARTICULATED, CATALOGUE_RIGID
from simjudge.pipelines.robogen.reader import extract_execute_block
from simjudge.pipelines.robogen.scene import (
    RobogenObject,
    convert_scene,
    joint_fraction,
    parse_relation,
)
from simjudge.tasks.spec import Solution

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "robogen"
DRAWER = FIXTURES / "Slide_Cabinet_Drawer_Out"
OVEN = FIXTURES / "Shut_Oven_With_Snack"
DISHWASHER = FIXTURES / "Start_Dishwasher"


def _code(solution: Solution, index: int) -> str:
    return solution.subtasks[index].code


# -- reading the class files ------------------------------------------------------------------
def _execute_fn(body: str) -> tuple[ast.FunctionDef, str]:
    source = "class X:\n    def execute(self):\n" + "".join(
        f"        {line}\n" for line in body.strip().splitlines()
    )
    tree = ast.parse(source)
    return tree.body[0].body[0], source


def test_execute_body_drops_robogens_closing_return():
    fn, source = _execute_fn(
        'rgbs, final_state = grasp_object(self, "Cube")   \n'
        'success = check_grasped(self, "Cube")\n'
        "return rgbs, final_state, success"
    )
    code, notes = extract_execute_block(fn, source)
    assert code == (
        'rgbs, final_state = grasp_object(self, "Cube")\nsuccess = check_grasped(self, "Cube")\n'
    )
    assert "return" not in code and "dropped" in notes[0]
    compile_primitive_block(code, STATE_API)


def test_execute_returning_an_expression_assigns_success():
    fn, source = _execute_fn(
        'rgbs, final_state = release_grasp(self)\nreturn rgbs, final_state, not check_grasped(self, "Cube")'
    )
    code, _ = extract_execute_block(fn, source)
    assert code.endswith('success = not check_grasped(self, "Cube")\n')


def test_early_return_names_the_robogen_convention():
    fn, source = _execute_fn(
        "rgbs, final_state = release_grasp(self)\n"
        "if True:\n    return rgbs, final_state, True\n"
        "success = True\nreturn rgbs, final_state, success"
    )
    with pytest.raises(RobogenImportError, match="return rgbs, final_state, success"):
        extract_execute_block(fn, source)


# -- whole folders ----------------------------------------------------------------------------
def test_table_task_remaps_parts_by_meaning():
    solution, report = import_robogen(DRAWER)
    obj = solution.scene.object("StorageFurniture")
    entry = default_catalogue().get(obj.asset)
    assert entry.category == "StorageFurniture"
    # PartNet's link_3 "lower drawer" lands on a drawer of the catalogue instance
    (row,) = report.objects
    (part,) = row["parts"]
    assert part["robogen"] == "link_3/joint_3" and part["by_meaning"]
    new_link, new_joint = part["renames"]["link_3"], part["renames"]["joint_3"]
    assert entry.tree.link(new_link).semantic == "drawer"
    assert entry.tree.joint(new_joint).child == new_link
    # a PartNet drawer link includes its handle; the catalogue's handle is its own link,
    # fixed to the drawer: grasps and grasp checks target it, the reward reads the drawer
    (handle,) = [j.child for j in entry.tree.joints if j.type == "fixed" and j.parent == new_link]
    assert f"(grasps: {handle})" in part["catalogue"]
    grasp, pull = _code(solution, 0), _code(solution, 1)
    assert f'grasp_object_link(self, "StorageFurniture", "{handle}")' in grasp
    assert f'grasped_link == "{handle}".lower()' in grasp
    assert f'get_link_state(self, "StorageFurniture", "{new_link}")' in pull
    assert f'get_joint_state(self, "StorageFurniture", "{new_joint}")' in pull
    assert "return rgbs" not in grasp
    # the renames are said in the code, the report, stdout lines and the provenance
    assert grasp.startswith("# simjudge import-robogen renamed: StorageFurniture link_3 ->")
    assert any("remap link_3/joint_3" in line for line in report.lines())
    assert solution.provenance["robogen"]["objects"][0]["parts"][0]["renames"]["joint_3"] == new_joint
    # table fractions stay table fractions; '0' becomes RoboGen's clamped 0.06
    assert obj.center == (0.6, 0.5) and obj.fixed is True
    assert obj.joint_init == {new_joint: 0.06}
    assert solution.scene.table is True
    assert any("distractor" in n for n in report.notes)
    assert [s.kind for s in solution.subtasks] == ["primitive", "reward"]
    assert solution.subtasks[1].action_space == "delta-translation"


def test_solution_yaml_round_trips_with_the_report_on_top():
    solution, report = import_robogen(DRAWER)
    text = solution_yaml(solution, report)
    assert text.startswith("# Converted by `simjudge import-robogen`.")
    assert Solution.from_yaml(text) == solution


def test_floor_scene_metres_relations_and_lower_case_names():
    solution, report = import_robogen(OVEN)
    scene = solution.scene
    assert scene.table is False  # use_table: false and the oven's base is fixed
    oven, snack = scene.object("Oven"), scene.object("Snack")
    assert default_catalogue().get(oven.asset).category == "Oven"
    assert oven.center == (0.5, 0.5)  # the floor layout is anchored on the task object
    assert snack.inside == "Oven" and snack.center is None  # `in, snack, oven, link_4`
    assert default_catalogue().get(snack.asset).kind == "rigid" and snack.fixed is False
    assert oven.joint_init == {"joint_0": 0.7}  # joint_0: '1' clamped as RoboGen does
    grasp, shut = _code(solution, 0), _code(solution, 1)
    # "oven" -> the scene's name; the door's grasp targets its handle link
    assert 'grasp_object_link(self, "Oven", "link_1")' in grasp
    assert grasp.rstrip().endswith('success = check_grasped(self, "Oven", "link_1")')
    assert 'get_link_state(self, "Oven", "link_0")' in shut
    assert 'get_bounding_box_link(self, "Oven", "base")' in shut  # link_4, the body
    notes = "\n".join(report.notes)
    assert "metres kept" in notes and "link_4" in notes and "use_table: false" in notes


def test_stand_in_category_is_reported_and_strict_refuses_it():
    solution, report = import_robogen(DISHWASHER)
    obj = solution.scene.object("Dishwasher")
    entry = default_catalogue().get(obj.asset)
    assert entry.category in CATEGORY_MAP["Dishwasher"] and "Dishwasher" in MISSING_CATEGORIES
    (row,) = report.objects
    assert row["match"] == "stand-in" and row["why"]
    assert report.stand_ins == [f"Dishwasher (Dishwasher -> {obj.asset})"]
    part = row["parts"][0]
    link = part["catalogue"].split("/")[0]
    assert entry.tree.link(link).semantic == "button"
    code = _code(solution, 0)
    assert f'approach_object_link(self, "Dishwasher", "{link}")' in code  # DishWasher -> scene
    assert "gripper_close_to_object_link" in code
    # set_joint_angle_object_name 'DishWasher' resolves case-insensitively; random stays random
    assert list(obj.joint_init.values()) == ["random"]
    with pytest.raises(RobogenImportError, match=r"no Dishwasher.*strict.*Oven"):
        import_robogen(DISHWASHER, strict=True)


def test_distractors_can_be_placed():
    solution, report = import_robogen(DRAWER, distractors=True)
    pot = solution.scene.object("pot")
    assert pot.distractor and default_catalogue().get(pot.asset).kind == "rigid"
    # a PartNet distractor of a category with no stand-in (a pen) only decorates: rigid
    pen = solution.scene.object("Pen")
    assert pen.distractor and default_catalogue().get(pen.asset).kind == "rigid"
    assert any(o["name"] == "Pen" and "no stand-in" in o["why"] for o in report.objects)
    assert len(import_robogen(DRAWER)[0].scene.objects) == 1  # left out by default


def test_folder_is_accepted_where_a_solution_is(tmp_path):
    assert is_robogen_task_dir(DRAWER) and is_robogen_task_dir(DRAWER / "task_Slide_Cabinet_Drawer_Out")
    assert load_solution_or_robogen(DRAWER) == import_robogen(DRAWER)[0]
    inner = load_solution_or_robogen(DRAWER / "task_Slide_Cabinet_Drawer_Out")
    assert inner.task == "Slide Cabinet Drawer Out"
    path = tmp_path / "s.yaml"
    path.write_text(solution_yaml(*import_robogen(DRAWER)))
    assert load_solution_or_robogen(path).task == "Slide Cabinet Drawer Out"
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="not a RoboGen task folder"):
        load_solution_or_robogen(tmp_path / "empty")


def test_converted_task_executes_to_a_verdict(tmp_path):
    from simjudge.skills.executor import execute_solution

    solution, _ = import_robogen(DRAWER)
    outcome = execute_solution(solution, tmp_path / "run", reward_solver="mpc", budget_steps=3,
                               video=False, goal=None)  # fmt: skip
    assert len(outcome.verdicts) >= 1 and outcome.verdict in ("failed", "unverifiable")
    assert all(v.error_type is None for v in outcome.verdicts)


# -- scene pieces -----------------------------------------------------------------------------
def _obj(name: str, center: str, *, on_table: bool = False, fixed: bool = True) -> RobogenObject:
    obj = RobogenObject(name, {"name": name, "type": "urdf", "center": center, "on_table": on_table})
    obj.asset, obj.fixed = "Cube-0", fixed
    return obj


def test_floor_centres_keep_metres_between_objects():
    a, b = _obj("A", "(1.5, 1.5, 0)"), _obj("B", "(1.8, 1.5, 0)")
    scene, notes = convert_scene([a, b], {"use_table": False}, "A")
    (ua, va), (ub, vb) = (o["center"] for o in scene["objects"])
    assert (ua, va) == (0.5, 0.5)
    assert ub - ua == pytest.approx(0.3 / 0.6) and vb == va  # 0.3 m along x, in table fractions
    assert scene["table"] is False and "mobile base" in notes[0]


def test_floor_centre_off_the_table_is_clamped_and_reported():
    a, far = _obj("A", "(1.5, 1.5, 0)"), _obj("Far", "(0.5, 3.0, 0)")
    scene, _ = convert_scene([a, far], {"use_table": False}, "A")
    assert scene["objects"][1]["center"] == [0.0, 1.0]
    assert "clamped" in far.notes[0]


def test_free_floor_object_keeps_the_table_as_floor():
    a, loose = _obj("A", "(1.5, 1.5, 0)"), _obj("Loose", "(1.6, 1.5, 0)", fixed=False)
    scene, notes = convert_scene([a, loose], {"use_table": False}, "A")
    assert scene["table"] is True and any("Loose" in n for n in notes)


def test_table_items_push_the_floor_anchor_back():
    floor, item = _obj("Fridge", "(1.0, 0.2, 0)"), _obj("Food", "(0.5, 0.5, 0)", on_table=True)
    scene, _ = convert_scene([floor, item], {"use_table": True}, "Fridge")
    assert scene["objects"][0]["center"] == [0.75, 0.5] and scene["objects"][1]["center"] == [0.5, 0.5]


def test_relations_and_joint_values():
    assert parse_relation("in, item, refrigerator, link_2") == ("in", "item", "refrigerator", "link_2")
    assert parse_relation("on, cup, table") == ("on", "cup", "table", None)
    with pytest.raises(RobogenImportError, match="'on, A, B'"):
        parse_relation("beside, cup, plate")
    assert joint_fraction("1") == (0.7, "1 -> 0.7 of the range (RoboGen clamps to [0.06, 0.7])")
    assert joint_fraction("0.3") == (0.3, None)
    assert joint_fraction("random")[0] == "random"
    with pytest.raises(RobogenImportError, match="neither a number"):
        joint_fraction("wide")


def test_relation_to_an_unknown_object_is_an_error():
    with pytest.raises(RobogenImportError, match="'ghost', which is not an object"):
        convert_scene([_obj("A", "(1, 1, 0)")], {"spatial_relationships": ["in, ghost, a"]}, "A")


# -- categories -------------------------------------------------------------------------------
def test_category_map_targets_exist_and_missing_ones_are_listed():
    catalogue = default_catalogue()
    assert set(CATALOGUE_ARTICULATED) | set(CATALOGUE_RIGID) <= set(catalogue.categories())
    for name, targets in CATEGORY_MAP.items():
        assert targets and all(t in catalogue.categories() for t in targets), name
    for name in ("Dishwasher", "Suitcase", "Stapler", "Globe", "Fan", "Clock"):
        assert name in MISSING_CATEGORIES
    for name in CATALOGUE_ARTICULATED:
        if name in CATEGORY_MAP:
            assert name not in MISSING_CATEGORIES


def test_meshes_become_rigid_objects_by_keywords():
    assert rigid_category("Bowl of soup", "a bowl of tomato soup") == "Bowl"
    assert rigid_category("Item", "a bottle of water") == "Cylinder"
    assert rigid_category("Food", "an apple") == "Bread"
    assert rigid_category("Item", "a gold bar") == "Cube"
    assert rigid_category("Thing", "") == "Cube"


# -- errors that say what to do ---------------------------------------------------------------
def _copy(tmp_path: Path, src: Path = DRAWER) -> Path:
    dst = tmp_path / src.name
    shutil.copytree(src, dst)
    return dst


def test_missing_class_file(tmp_path):
    folder = _copy(tmp_path)
    (folder / "task_Slide_Cabinet_Drawer_Out" / "slide_the_lower_drawer_out.py").unlink()
    with pytest.raises(RobogenImportError, match=r"substep 2 'slide the lower drawer out': no class"):
        import_robogen(folder)


def test_reward_substep_without_compute_reward_points_at_substep_types(tmp_path):
    folder = _copy(tmp_path)
    (folder / "task_Slide_Cabinet_Drawer_Out" / "substep_types.txt").write_text("reward\nreward\n")
    with pytest.raises(RobogenImportError, match="substep_types.txt probably says 'reward'"):
        import_robogen(folder)


def test_unknown_object_in_code(tmp_path):
    folder = _copy(tmp_path)
    path = folder / "task_Slide_Cabinet_Drawer_Out" / "grasp_the_lower_drawer.py"
    path.write_text(path.read_text().replace('"StorageFurniture", "link_3")   ', '"Cabinet", "link_3")'))
    with pytest.raises(RobogenImportError, match="object 'Cabinet', which the task's YAML does not have"):
        import_robogen(folder)


def test_substep_lists_must_agree(tmp_path):
    folder = _copy(tmp_path)
    (folder / "task_Slide_Cabinet_Drawer_Out" / "action_spaces.txt").write_text("None\n")
    with pytest.raises(RobogenImportError, match="one line per substep"):
        import_robogen(folder)


def test_not_a_robogen_folder_and_locomotion(tmp_path):
    with pytest.raises(RobogenImportError, match="not a RoboGen task folder"):
        import_robogen(tmp_path)
    walker = tmp_path / "task_Walk" / "task_Walk"
    walker.mkdir(parents=True)
    (walker / "Walk.py").write_text("from locomotion.sim import SimpleEnv\n")
    with pytest.raises(RobogenImportError, match="locomotion task"):
        import_robogen(tmp_path / "task_Walk")


def test_code_that_fails_the_sandbox_is_a_conversion_error(tmp_path):
    folder = _copy(tmp_path)
    path = folder / "task_Slide_Cabinet_Drawer_Out" / "slide_the_lower_drawer_out.py"
    path.write_text(path.read_text().replace("reward = near - 5 * gap", "reward = near - 5 * gap\n        import os"))
    with pytest.raises(RobogenImportError, match="does not pass simjudge's code check: .*imports"):
        import_robogen(folder)


# -- the sandbox's own messages for RoboGen code ----------------------------------------------
def test_top_level_return_names_the_robogen_convention():
    with pytest.raises(DisallowedCodeError, match="RoboGen's `execute` method ends with"):
        compile_primitive_block(
            'rgbs, final_state = grasp_object(self, "A")\nsuccess = True\n'
            "return rgbs, final_state, success",
            STATE_API,
        )


@pytest.mark.parametrize("call", ['grasped(self, "A")', 'is_grasped(self, "A")', "get_grasped(self)"])
def test_missing_grasp_helper_suggests_check_grasped_not_a_primitive(call):
    for compile_, code in (
        (compile_reward, f"def _compute_reward(self):\n    g = {call}\n    return 0.0, g\n"),
        (compile_primitive_block, f'rgbs, final_state = grasp_object(self, "A")\nsuccess = {call}\n'),
    ):
        with pytest.raises(DisallowedCodeError) as info:
            compile_(code, STATE_API)
        message = str(info.value).split("generated code may only call")[0]
        assert "check_grasped" in message or "get_grasped_object" in message
        assert "did you mean 'grasp_object" not in message


def test_robogen_helpers_compile_in_reward_and_primitive_code():
    compile_reward(
        "def _compute_reward(self):\n"
        "    obj, link = get_grasped_object_and_link_name(self)\n"
        '    near = gripper_close_to_object_link(self, "A", "link_0")\n'
        '    return 0.0, obj == "A".lower() and near and get_grasped_object_name(self) is not None\n',
        STATE_API,
    )


# -- the command ------------------------------------------------------------------------------
def test_import_command_prints_the_report_and_writes_the_yaml(tmp_path, capsys):
    from simjudge.pipelines.robogen.command import ImportRobogenConfig, run_import

    out = tmp_path / "oven.yaml"
    assert run_import(ImportRobogenConfig(task_dir=str(OVEN), out=str(out))) == 0
    printed = capsys.readouterr().out
    assert "remap link_4 -> base" in printed and f"wrote {out}" in printed
    assert Solution.from_yaml(out) == import_robogen(OVEN)[0]
    code = run_import(ImportRobogenConfig(task_dir=str(tmp_path), out=str(tmp_path / "x.yaml")))
    captured = capsys.readouterr()
    assert code == 2 and "not a RoboGen task folder" in captured.err
    assert "Traceback" not in captured.err


def test_execute_gets_the_goal_from_robogens_words(tmp_path, capsys):
    from simjudge.pipelines.robogen.command import load_for_execute

    solution, goal = load_for_execute(OVEN)
    assert solution == import_robogen(OVEN)[0]
    printed = capsys.readouterr().out
    assert "RoboGen task 'Shut Oven With Snack'" in printed and "task goal" in printed
    assert goal is None or hasattr(goal, "evaluate")
    reference = tmp_path / "plain.yaml"
    reference.write_text(solution.model_copy(update={"provenance": {}}).to_yaml())
    assert load_for_execute(reference)[1] == "reference"


def test_unsupported_category_is_refused_with_the_reason(tmp_path):
    folder = _copy(tmp_path)
    (yaml_path,) = [p for p in folder.glob("*.yaml") if not p.name.endswith("_distractor.yaml")]
    yaml_path.write_text(yaml_path.read_text().replace("name: StorageFurniture", "name: Pliers")
                         .replace("object_name: StorageFurniture", "object_name: Pliers"))
    for path in (folder / "task_Slide_Cabinet_Drawer_Out").glob("*.py"):
        path.write_text(path.read_text().replace('"StorageFurniture"', '"Pliers"'))
    with pytest.raises(RobogenImportError, match="Pliers has no catalogue category and no stand-in"):
        import_robogen(folder)


def test_a_start_left_to_chance_is_set_where_the_goal_does_not_hold(tmp_path, capsys):
    from simjudge.pipelines.robogen.command import ImportRobogenConfig, load_for_execute, run_import

    # the fixture sets the power button's joint to `random`: pressed already at reset, maybe
    solution, goal = load_for_execute(DISHWASHER)
    assert solution.scene.object("Dishwasher").joint_init == {"joint_4": 0.0}
    (note,) = solution.provenance["scene_repairs"]
    assert "proposed: random" in note and "start repaired" in capsys.readouterr().out
    out = tmp_path / "dish.yaml"
    assert run_import(ImportRobogenConfig(task_dir=str(DISHWASHER), out=str(out))) == 0
    assert Solution.from_yaml(out).scene.object("Dishwasher").joint_init == {"joint_4": 0.0}
