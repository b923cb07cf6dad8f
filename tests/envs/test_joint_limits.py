"""Object joint limits hold under the arm's maximum push (issue 16, "Physics").

Issue 16 pushed the faucet handle (range 0-0.612 rad) with the arm to -1.235 rad, where it
stayed at -0.735 after release; judges read that as progress. Two checks here:

- every movable, limited joint of one asset of every catalogue category is dragged past
  both ends by a weld of the arm's largest force (:data:`ARM_MAX_FORCE`, through the
  backend's own fixed constraint, as suction holds a part) and then released;
- the real arm (suction on the part, then Cartesian pushes in every direction, as the
  issue's probe did) on the faucet handle and the microwave door.

Overshoot is measured on every physics step, as a fraction of the joint's range.
"""

from __future__ import annotations

import numpy as np
import pytest

from simjudge.envs.catalogue import default_catalogue
from simjudge.envs.sim_env import SimEnv

ARM_MAX_FORCE = 1000.0
"""Newtons (N·m for the weld's torque rows): above anything the arm transmits. Suction
holds at most 300 N, and the arm's 2 x 87 N·m shoulder/elbow torques over the shortest
lever to the hand (~0.3 m) give under 600 N."""
MAX_OVERSHOOT = 0.02
"""Largest allowed overshoot, a fraction of the range (the issue's target)."""
RELEASED_SLACK = 0.005
"""A released joint must lie within its limits up to this fraction of its range."""


def _categories() -> dict[str, str]:
    """Category -> its first articulated asset id."""
    found: dict[str, str] = {}
    for entry in default_catalogue().entries():
        if entry.kind == "articulated":
            found.setdefault(entry.category, entry.asset_id)
    return found


CATEGORIES = _categories()
FAST = ("Faucet", "Microwave", "StorageFurniture")
"""A representative subset for the default run: the issue's two joints and a drawer."""


def _env(asset: str) -> SimEnv:
    return SimEnv({"objects": [{"name": "Obj", "asset": asset, "center": [0.5, 0.6]}]})


def _link_frames(env: SimEnv, body: int, joint: int, values: np.ndarray) -> list[tuple]:
    """World pose of the joint's child link frame at each joint value (state restored)."""
    backend = env.backend
    state = backend.save_state()
    poses = []
    for value in values:
        backend.reset_joint_states(body, [joint], [float(value)])
        pos, orn = backend.get_link_poses(body, [joint])
        poses.append((pos[0].copy(), orn[0].copy()))
    backend.restore_state(state)
    backend.remove_state(state)
    return poses


def _add_driver(env: SimEnv) -> int:
    """A small static box that collides with nothing: the weld's other end."""
    backend = env.backend
    driver = backend.add_box((0.005, 0.005, 0.005), (0.0, 0.0, 2.0))
    for body in backend.body_handles():
        if body != driver:
            for link in [-1, *(j.index for j in backend.joint_infos(body))]:
                backend.set_collision_between(driver, -1, body, link, False)
    return driver


def _drag(env: SimEnv, driver: int, base: int, joint_name: str, end: str) -> tuple[float, float]:
    """Drag a joint past one end with a weld of ARM_MAX_FORCE, then release it.

    Returns:
        (largest overshoot while dragged, distance outside the limits 1 s after release),
        both as fractions of the range.
    """
    backend, sobj = env.backend, env.scene.objects["Obj"]
    joint = next(j for j in sobj.tree.movable_joints if j.name == joint_name)
    index = sobj.joint_index[joint_name]
    span = joint.upper - joint.lower
    backend.restore_state(base)
    start = joint.lower + 0.5 * span
    backend.reset_joint_states(sobj.body, [index], [start])
    goal = joint.lower - span if end == "lower" else joint.upper + span
    path = np.concatenate([np.linspace(start, goal, 120), np.full(60, goal)])
    poses = _link_frames(env, sobj.body, index, path)
    backend.set_base_pose(driver, *poses[0])
    weld = backend.create_fixed_constraint(driver, -1, sobj.body, index, max_force=ARM_MAX_FORCE)
    worst = 0.0
    for position, orientation in poses:
        backend.set_base_pose(driver, position, orientation)
        backend.step(1)
        value = float(backend.get_joint_states(sobj.body, [index])[0][0])
        worst = max(worst, (joint.lower - value if end == "lower" else value - joint.upper) / span)
    backend.remove_constraint(weld)
    backend.step(100)
    value = float(backend.get_joint_states(sobj.body, [index])[0][0])
    outside = max(joint.lower - value, value - joint.upper, 0.0) / span
    return worst, outside


def _check_category(category: str) -> dict[str, tuple[float, float]]:
    env = _env(CATEGORIES[category])
    try:
        sobj = env.scene.objects["Obj"]
        driver = _add_driver(env)
        base = env.backend.save_state()
        result = {}
        for joint in sobj.tree.movable_joints:
            if joint.type == "continuous" or joint.upper <= joint.lower:
                continue
            for end in ("lower", "upper"):
                result[f"{joint.name}/{end}"] = _drag(env, driver, base, joint.name, end)
        return result
    finally:
        env.close()


def _assert_held(category: str, result: dict[str, tuple[float, float]]) -> None:
    assert result, f"{category}: no limited joint"
    report = {k: f"overshoot {100 * o:.2f} %, after release {100 * a:.2f} %"
              for k, (o, a) in result.items()}
    print(f"{category}: {report}")
    for key, (overshoot, after) in result.items():
        assert overshoot <= MAX_OVERSHOOT, f"{category} {key}: {report[key]}"
        assert after <= RELEASED_SLACK, f"{category} {key}: {report[key]}"


@pytest.mark.parametrize("category", FAST)
def test_limits_hold_under_max_weld_force(category):
    _assert_held(category, _check_category(category))


@pytest.mark.slow
@pytest.mark.parametrize("category", sorted(set(CATEGORIES) - set(FAST)))
def test_limits_hold_under_max_weld_force_every_category(category):
    _assert_held(category, _check_category(category))


def test_the_weld_really_pushes():
    """The drag moves a joint through its whole range (else the check above is vacuous)."""
    env = _env(CATEGORIES["Faucet"])
    try:
        backend, sobj = env.backend, env.scene.objects["Obj"]
        joint = sobj.tree.movable_joints[0]
        driver = _add_driver(env)
        _drag(env, driver, backend.save_state(), joint.name, "upper")
        # the drag ended at the upper limit, from the middle of the range
        value = float(backend.get_joint_states(sobj.body, [sobj.joint_index[joint.name]])[0][0])
        assert value > joint.upper - 0.05 * (joint.upper - joint.lower)
    finally:
        env.close()


@pytest.mark.parametrize(("asset", "link"), [("Faucet-0", "link_0"), ("Microwave-0", "link_0")])
def test_the_arm_cannot_push_a_part_past_its_limits(asset, link):
    """The issue's probe: suction on the part, then push the hand along every axis."""
    from simjudge.skills.primitives import grasp_object_link

    env = _env(asset)
    try:
        env.reset(seed=0)
        backend, sobj = env.backend, env.scene.objects["Obj"]
        joint = next(j for j in sobj.tree.movable_joints if j.child == link)
        index = sobj.joint_index[joint.name]
        span = joint.upper - joint.lower
        assert grasp_object_link(env, "Obj", link).success
        held = backend.save_state()
        attachment = env.scene.robot.attachment
        assert attachment is not None
        moved, worst, after = 0.0, 0.0, 0.0
        for axis in range(6):
            for sign in (1.0, -1.0):
                backend.restore_state(held)
                env.scene.robot.attach(attachment.body, attachment.link)
                action = np.zeros(7)
                action[axis], action[6] = sign, 1.0
                for _ in range(60):
                    env.step(action)
                    value = float(backend.get_joint_states(sobj.body, [index])[0][0])
                    moved = max(moved, abs(value - joint.lower) / span)
                    worst = max(worst, (joint.lower - value) / span, (value - joint.upper) / span)
                action[:6], action[6] = 0.0, -1.0
                for _ in range(30):
                    env.step(action)
                value = float(backend.get_joint_states(sobj.body, [index])[0][0])
                after = max(after, (joint.lower - value) / span, (value - joint.upper) / span)
        print(f"{asset} {joint.name}: moved {moved:.2f} of the range, overshoot "
              f"{100 * worst:.2f} %, after release {100 * max(after, 0):.2f} %")
        assert moved > 0.2, "the pushes never moved the part: the check would be vacuous"
        assert worst <= MAX_OVERSHOOT
        assert after <= RELEASED_SLACK
    finally:
        env.close()
