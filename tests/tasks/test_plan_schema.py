"""Plans, reference plans in the task YAML, node matching and the symbolic tier (no physics)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from simjudge.pipelines.plans import (
    PlanError,
    TaskPlanError,
    node_correctness,
    object_score,
    parse_node,
    parse_plan,
    run_symbolic,
    task_plan,
)
from simjudge.pipelines.plans.faults import (
    PLANNING_FAULTS,
    inject_planning_fault,
    plan_error_labels,
)
from simjudge.pipelines.plans.groundtruth import composed_ids, load_plan_task
from simjudge.pipelines.plans.matching import maximum_matching, raw_ids, resolve_object
from simjudge.pipelines.plans.questions import q2_score
from simjudge.tasks.spec import TaskSpec, library_ids, load_library, load_task


def nodes(*steps):
    return [parse_node(s) for s in steps]


@pytest.fixture(scope="module")
def drawer():
    return task_plan(load_task("OpenDrawer-v0"))


@pytest.fixture(scope="module")
def cube_box():
    return task_plan(load_task("PutCubeInBox-v0"))


def test_every_builtin_task_has_a_valid_plan_and_dag():
    specs = load_library()
    assert len(specs) >= 30
    for spec in specs:
        plan = task_plan(spec)
        assert plan.milestones and plan.plan.steps
        ref = nodes(*plan.reference_steps())
        assert node_correctness(plan, ref)["score"] == 10, spec.env_id
        assert run_symbolic(plan, ref).score == 10, spec.env_id


def test_taskspec_keeps_plan_sections_through_yaml(tmp_path):
    spec = load_task("OpenDrawer-v0")
    assert spec.plan is not None and len(spec.milestones) == 2
    path = tmp_path / "t.yaml"
    path.write_text(spec.to_yaml())
    assert TaskSpec.from_yaml(path) == spec
    bare = spec.model_copy(update={"plan": None, "milestones": ()})
    with pytest.raises(TaskPlanError, match="no plan: and milestones:"):
        task_plan(bare)


def test_bad_plan_section_names_the_problem():
    spec = load_task("OpenDrawer-v0")
    bad = dict(spec.plan or {})
    bad["objects"] = [{**bad["objects"][0], "object": "Sofa"}]
    with pytest.raises(TaskPlanError, match="Sofa"):
        task_plan(spec.model_copy(update={"plan": bad}))
    cyclic = [{**m, "after": [spec.milestones[-1]["name"]]} for m in spec.milestones]
    with pytest.raises(TaskPlanError, match="cycle"):
        task_plan(spec.model_copy(update={"milestones": tuple(cyclic)}))


def test_parse_node_forms():
    assert parse_node("Pick Up(cube)").skill == "pick_up"
    node = parse_node("press(none, red_button)")
    assert (node.skill, node.object, node.params) == ("press", "red_button", ())
    node = parse_node("place(cube, in_box)")
    assert (node.object, node.params) == ("cube", ("in_box",))
    assert str(parse_node("press(ButtonPanel/link_0)}")) == "press(ButtonPanel/link_0)"
    with pytest.raises(PlanError, match="skill\\(object, parameter\\)"):
        parse_node("open the drawer")


def test_parse_plan_validates():
    plan = parse_plan('{"task_summary": "x", "plan_step": ["open(drawer)"], "reason": "y"}')
    assert [str(n) for n in plan.nodes()] == ["open(drawer)"]
    with pytest.raises(PlanError, match="not JSON"):
        parse_plan("open(drawer)")
    with pytest.raises(PlanError, match="plan_step"):
        parse_plan({"task_summary": "x", "plan_step": [], "reason": ""})


def test_object_scores_alias_id_part_whole_category(drawer):
    assert object_score(drawer, "bottom drawer", "drawer") == 1.0
    assert object_score(drawer, "StorageFurniture/link_1", "drawer") == 1.0
    assert object_score(drawer, "the Drawer", "drawer") == 1.0
    assert object_score(drawer, "cabinet", "drawer") == 0.5  # whole of the part
    assert object_score(drawer, "wooden drawer", "drawer") == 0.5  # category word
    assert object_score(drawer, "top drawer", "drawer") == 0.0  # another object
    assert object_score(drawer, "sofa", "drawer") == 0.0


def test_node_correctness_counts_matched_nodes(drawer):
    assert node_correctness(drawer, nodes("open(drawer)"))["score"] == 3
    full = nodes("grasp(handle)", "pull(bottom drawer, out)", "release(drawer)")
    assert node_correctness(drawer, full)["score"] == 10
    wrong = nodes("grasp(top drawer)", "open(top drawer)", "release(top drawer)")
    assert node_correctness(drawer, wrong)["score"] == 0
    closing = nodes("grasp(drawer)", "push(drawer, close)", "release(drawer)")
    assert node_correctness(drawer, closing)["score"] == 6


def test_symbolic_tier_preconditions_and_effects(cube_box, drawer):
    swapped = run_symbolic(cube_box, nodes("place(cube, in_box)", "pick_up(cube)"))
    assert swapped.steps[0].label == "physics_violation"
    assert swapped.score == 5 and swapped.reached == ["cube picked up"]
    pick_twice = run_symbolic(cube_box, nodes("pick_up(cube)", "open(lid)"))
    assert pick_twice.steps[1].label == "physics_violation"
    closed_box = run_symbolic(cube_box, nodes("close(lid)", "release(lid)", "pick_up(cube)",
                                             "place(cube, in_box)"))
    assert closed_box.steps[3].label == "physics_violation"
    assert "cube in box" not in closed_box.reached
    odd = run_symbolic(drawer, nodes("release(drawer)", "fly(drawer)", "open(sofa)", "open(drawer)"))
    assert [s.label for s in odd.steps] == ["redundant_step", "impossible_action", "wrong_object", ""]
    assert odd.score == 10 and odd.held_score == 10


def test_planning_faults_lower_scores_where_they_bite(drawer, cube_box):
    ref = drawer.reference_steps()
    for kind in PLANNING_FAULTS:
        steps = inject_planning_fault(drawer, kind)
        assert steps is not None and steps != ref
        ns = nodes(*steps)
        nc, done = node_correctness(drawer, ns)["score"], run_symbolic(drawer, ns).score
        if kind == "swapped_order":  # matching ignores order; open() grasps by itself
            assert nc == 10 and done == 10
        else:
            assert nc < 10 and done == 5, kind
    swapped = nodes(*inject_planning_fault(cube_box, "swapped_order"))
    assert run_symbolic(cube_box, swapped).score == 5
    assert inject_planning_fault(task_plan(load_task("PressButton-v0")), "deleted_step") is None


def test_error_labels_from_the_rollout_log(drawer):
    plan = nodes("grasp(drawer)", "pull(drawer, close)", "grasp(drawer)")
    labels = plan_error_labels(drawer, plan, run_symbolic(drawer, plan))
    assert "spatial_error" in labels and "missing_step" in labels


def test_q2_scores_skill_object_parameter(drawer):
    item = {"frontier": ["open(drawer)", "pull(drawer, open)"]}
    assert q2_score(drawer, item, "open(drawer)")["score"] == 10.0
    half = q2_score(drawer, item, "open(cabinet)")
    assert (half["skill"], half["object"], half["param"]) == (1.0, 0.5, 1.0)
    assert q2_score(drawer, item, "close(drawer)")["score"] == 0.0
    assert q2_score(drawer, item, "open(sofa)")["score"] == 0.0
    assert q2_score(drawer, item, "not a step")["score"] == 0.0
    pull_in = q2_score(drawer, item, "pull(drawer, in)")
    assert pull_in["param"] == 0.0 and 0 < pull_in["score"] < 10


def test_composed_tasks_have_multi_stage_dags():
    ids = composed_ids()
    assert len(ids) >= 3 and not set(ids) & set(library_ids())
    for env_id in ids:
        plan = task_plan(load_plan_task(env_id))
        assert len(plan.milestones) >= 3 and plan.spec.goal is not None
        assert plan.spec.goal.kind in ("all", "sequence")  # unordered or ordered stages
        ref = nodes(*plan.reference_steps())
        assert run_symbolic(plan, ref).score == 10
        half = run_symbolic(plan, ref[: len(ref) // 2])
        assert 0 < half.score < 10, env_id
    fridge = task_plan(load_plan_task("OpenBothFridgeDoors-v0"))
    right_first = nodes("grasp(right door)", "open(right door)", "release(right door)")
    assert run_symbolic(fridge, right_first).score == 5  # an independent branch of the DAG


def test_maximum_matching_finds_augmenting_paths():
    assert maximum_matching([[0, 1], [0]], 2) == {0: 1, 1: 0}
    assert len(maximum_matching([[0], [0], [1]], 3)) == 2
    assert maximum_matching([], 2) == {}


def test_raw_link_and_joint_names_are_strict_ids(drawer):
    for raw in ("link_1", "StorageFurniture/link_1", "joint_0", "StorageFurniture/joint_0"):
        assert resolve_object(drawer, raw) == (drawer.object_named("drawer"), 1.0), raw
        assert object_score(drawer, raw, "drawer") == 1.0, raw
    assert resolve_object(drawer, "link_3")[0] is drawer.object_named("top drawer")
    assert object_score(drawer, "link_3", "drawer") == 0.0  # the other drawer's link
    assert resolve_object(drawer, "link_9") == (None, 0.0)
    assert resolve_object(drawer, "Link_1") == (None, 0.0)  # raw ids are exact
    raw_plan = nodes("grasp(link_1)", "open(StorageFurniture/joint_0)", "release(link_1)")
    aliased = nodes("grasp(drawer)", "open(drawer)", "release(drawer)")
    assert node_correctness(drawer, raw_plan)["score"] == 10
    raw_run, alias_run = run_symbolic(drawer, raw_plan), run_symbolic(drawer, aliased)
    assert raw_run.score == alias_run.score == 10 and raw_run.reached == alias_run.reached
    assert [(s.ok, s.label) for s in raw_run.steps] == [(s.ok, s.label) for s in alias_run.steps]


def test_bare_link_name_shared_by_two_scene_objects_names_neither(cube_box):
    box_lid = next(o for o in cube_box.plan.objects if o.link)
    other = box_lid.model_copy(update={"name": "other lid", "object": "Cube", "aliases": ()})
    plan = replace(cube_box, plan=cube_box.plan.model_copy(
        update={"objects": (*cube_box.plan.objects, other)}))
    assert resolve_object(plan, box_lid.link) == (None, 0.0)
    assert resolve_object(plan, f"Box/{box_lid.link}")[0] is box_lid
    assert resolve_object(plan, f"Cube/{box_lid.link}")[0] == other
    assert box_lid.link in raw_ids(cube_box, box_lid)
