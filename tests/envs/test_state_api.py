"""Every state-API function: values, unknown names, and the read-only guarantee."""

from __future__ import annotations

import numpy as np
import pytest

from simjudge.envs import state_api as api
from simjudge.envs.state_api import STATE_API, StateView, UnknownNameError


def _snapshot(env) -> dict:
    return env.get_state().to_dict()


def test_api_lists_the_robogen_names():
    assert set(STATE_API) == {
        "get_eef_pos", "get_position", "get_orientation", "get_link_state", "get_joint_state",
        "get_joint_limit", "get_bounding_box", "get_bounding_box_link", "in_bbox",
        "check_grasped", "get_initial_joint_angle", "get_initial_pos_orient",
        # RoboGen's read-only helpers
        "get_grasped_object_name", "get_grasped_object_and_link_name",
        "gripper_close_to_object_link", "gripper_close_to_object",
    }


def test_values_agree_with_observation_and_tree(cabinet_env):
    env = cabinet_env
    obs, _ = env.reset(seed=0)
    view, lay = env.view, env.observation_layout
    pos, orn = api.get_eef_pos(view)
    np.testing.assert_allclose(pos, obs[lay["eef_pos"]], atol=1e-5)
    assert orn.shape == (4,)
    np.testing.assert_allclose(api.get_position(view, "Cabinet"), obs[lay["Cabinet/pos"]], atol=1e-5)
    assert api.get_orientation(view, "Cabinet").shape == (3,)
    tree = env.scene.objects["Cabinet"].tree
    joint = tree.movable_joints[0]
    assert api.get_joint_limit(view, "Cabinet", joint.name) == (joint.lower, joint.upper)
    value = api.get_joint_state(view, "Cabinet", joint.name)
    assert value == pytest.approx(obs[lay["Cabinet/joints"]][0], abs=1e-5)
    assert api.get_initial_joint_angle(view, "Cabinet", joint.name) == pytest.approx(value, abs=1e-4)
    lo, hi = api.get_bounding_box(view, "Cabinet")
    llo, lhi = api.get_bounding_box_link(view, "Cabinet", joint.child)
    assert np.all(lo <= llo + 1e-6) and np.all(hi >= lhi - 1e-6)
    centre = api.get_link_state(view, "Cabinet", joint.child)
    np.testing.assert_allclose(centre, (llo + lhi) / 2)
    assert api.in_bbox(view, centre, lo, hi)
    assert not api.in_bbox(view, hi + 0.1, lo, hi)
    init_pos, init_euler = api.get_initial_pos_orient(view, "Cube")
    np.testing.assert_allclose(init_pos, api.get_position(view, "Cube"), atol=1e-3)
    assert init_euler.shape == (3,)


def test_check_grasped_follows_suction(cabinet_env):
    env = cabinet_env
    env.reset(seed=0)
    view = env.view
    link = env.goal.link
    assert not api.check_grasped(view, "Cabinet")
    obj = env.scene.objects["Cabinet"]
    env.scene.robot.attach(obj.body, obj.link_index[link])
    assert api.check_grasped(view, "Cabinet")
    assert api.check_grasped(view, "Cabinet", link)
    assert not api.check_grasped(view, "Cabinet", "base")
    assert not api.check_grasped(view, "Cube")
    env.scene.robot.release()
    assert not api.check_grasped(view, "Cabinet", link)


@pytest.mark.parametrize(
    ("call", "kind"),
    [
        (lambda v: api.get_position(v, "Cabinett"), "object"),
        (lambda v: api.get_orientation(v, "Drawer"), "object"),
        (lambda v: api.get_link_state(v, "Cabinet", "link_99"), "link"),
        (lambda v: api.get_bounding_box_link(v, "Cabinet", "handle"), "link"),
        (lambda v: api.get_joint_state(v, "Cabinet", "joint_99"), "joint"),
        (lambda v: api.get_joint_limit(v, "Cabinet", "hinge"), "joint"),
        (lambda v: api.get_initial_joint_angle(v, "Cube", "joint_0"), "joint"),
        (lambda v: api.get_initial_pos_orient(v, "Ghost"), "object"),
        (lambda v: api.get_bounding_box(v, "Ghost"), "object"),
        (lambda v: api.check_grasped(v, "Cabinet", "link_99"), "link"),
        (lambda v: api.gripper_close_to_object_link(v, "Cabinet", "link_99"), "link"),
        (lambda v: api.gripper_close_to_object(v, "Cabinets"), "object"),
        (lambda v: api.get_bounding_box(v, "init_tables"), "object"),
    ],
)
def test_unknown_names_list_valid_names(cabinet_env, call, kind):
    with pytest.raises(UnknownNameError) as err:
        call(cabinet_env.view)
    message = str(err.value)
    assert f"unknown {kind}" in message
    if err.value.valid:
        assert all(name in message for name in err.value.valid)
    else:
        assert f"has no {kind}s" in message


def test_unknown_object_suggests_closest(cabinet_env):
    with pytest.raises(UnknownNameError, match="Did you mean 'Cabinet'"):
        api.get_position(cabinet_env.view, "Cabinett")


def test_view_is_read_only(cabinet_env):
    env = cabinet_env
    env.reset(seed=0)
    for _ in range(5):
        env.step(np.array([0.3, -0.2, 0.1, 0, 0, 0, -1], dtype=np.float32))
    before = _snapshot(env)
    view = env.view
    joint = env.goal.joint
    results = [fn(view, *args) for fn, args in _all_calls(env, joint)]
    assert _snapshot(env) == before
    # returned arrays are copies: mutating them changes nothing
    for result in results:
        for item in result if isinstance(result, tuple) else (result,):
            if isinstance(item, np.ndarray):
                item += 1.0
    assert _snapshot(env) == before
    with pytest.raises(AttributeError):
        view.anything = 1
    assert not [name for name in dir(StateView) if name.startswith(("set", "step", "reset"))]


def _all_calls(env, joint):
    link = env.goal.link
    return [
        (api.get_eef_pos, ()),
        (api.get_position, ("Cabinet",)),
        (api.get_orientation, ("Cube",)),
        (api.get_link_state, ("Cabinet", link)),
        (api.get_joint_state, ("Cabinet", joint)),
        (api.get_joint_limit, ("Cabinet", joint)),
        (api.get_bounding_box, ("Cabinet",)),
        (api.get_bounding_box_link, ("Cabinet", link)),
        (api.in_bbox, (np.zeros(3), -np.ones(3), np.ones(3))),
        (api.check_grasped, ("Cabinet", link)),
        (api.get_initial_joint_angle, ("Cabinet", joint)),
        (api.get_initial_pos_orient, ("Cube",)),
        (api.get_grasped_object_name, ()),
        (api.get_grasped_object_and_link_name, ()),
        (api.gripper_close_to_object_link, ("Cabinet", link)),
        (api.gripper_close_to_object, ("Cube",)),
        (api.get_bounding_box, ("init_table",)),
    ]


def test_robogen_grasp_helpers_lower_case_names(cabinet_env):
    """RoboGen compares ``grasped_object == "Cabinet".lower()``: names come back lower-cased."""
    env = cabinet_env
    env.reset(seed=0)
    view = env.view
    link = env.goal.link
    assert api.get_grasped_object_name(view) is None
    assert api.get_grasped_object_and_link_name(view) == (None, None)
    obj = env.scene.objects["Cabinet"]
    env.scene.robot.attach(obj.body, obj.link_index[link])
    assert api.get_grasped_object_name(view) == "Cabinet".lower()
    assert api.get_grasped_object_and_link_name(view) == ("cabinet", link)
    # object names resolve case-insensitively, as RoboGen lower-cases what it is given
    assert api.check_grasped(view, "cabinet", link)
    assert api.check_grasped(view, "CABINET")
    np.testing.assert_allclose(api.get_position(view, "cabinet"), api.get_position(view, "Cabinet"))
    env.scene.robot.release()
    cube = env.scene.objects["Cube"]
    env.scene.robot.attach(cube.body, -1)
    assert api.get_grasped_object_and_link_name(view) == ("cube", "base")
    env.scene.robot.release()


def test_gripper_close_to_object_link_uses_six_centimetres(cabinet_env):
    env = cabinet_env
    env.reset(seed=0)
    view = env.view
    link = env.goal.link
    eef = api.get_eef_pos(view)[0]
    lo, hi = api.get_bounding_box_link(view, "Cabinet", link)
    distance = float(np.linalg.norm(eef - np.clip(eef, lo, hi)))
    assert api.gripper_close_to_object_link(view, "Cabinet", link) == (distance < 0.06)
    assert api.gripper_close_to_object(view, "Cabinet") == (
        float(np.linalg.norm(eef - np.clip(eef, *api.get_bounding_box(view, "Cabinet")))) < 0.06
    )


def test_init_table_is_the_usable_table_top(cabinet_env):
    """RoboGen's reward code reads ``get_bounding_box(self, "init_table")``."""
    lo, hi = api.get_bounding_box(cabinet_env.view, "init_table")
    assert hi[2] == pytest.approx(0.0) and np.all(lo < hi)
    cube = api.get_position(cabinet_env.view, "Cube")
    assert np.all(cube[:2] >= lo[:2]) and np.all(cube[:2] <= hi[:2])
    with pytest.raises(UnknownNameError):
        api.get_position(cabinet_env.view, "init_table")  # only its bounding box exists


def test_case_insensitive_names_stay_strict_when_ambiguous():
    """Two objects that differ only by case: the folded name is unknown, listing both."""

    class _Scene:
        objects = {"Box": object(), "box": object()}
        table = None

    view = StateView(_Scene())
    with pytest.raises(UnknownNameError, match="Box"):
        view.base_pose("BOX")
