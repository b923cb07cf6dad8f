"""Per-seed world variation: seeds change the world, the same seed repeats it, none fixes it."""

from __future__ import annotations

import numpy as np
import pytest

from simjudge.envs.randomization import Randomization, RandomizationError, WorldSample
from simjudge.envs.sim_env import SimEnv
from simjudge.tasks.spec import TaskSpec, TaskSpecError, builtin_ids, load_task, make_task_env


@pytest.mark.parametrize("env_id", builtin_ids())
def test_twenty_seeds_give_distinct_worlds_and_a_seed_repeats_its_own(env_id):
    env = make_task_env(env_id)
    try:
        first = [env.reset(seed=s)[0] for s in range(20)]
        assert len({o.tobytes() for o in first}) >= 15
        for s in (0, 7, 19):  # after other worlds, the same seed gives the same observation
            obs, info = env.reset(seed=s)
            assert np.array_equal(obs, first[s])
            assert info["world_sample"] == env.world_sample
        assert env.world_sample is not None and env.world_sample["world_seed"] >= 0
    finally:
        env.close()


def test_randomization_none_is_the_fixed_start_bit_for_bit():
    spec = load_task("CloseDrawer-v0")
    data = spec.model_dump(mode="json", by_alias=True)
    fixed = TaskSpec.parse({**data, "randomization": "none"})
    assert fixed.world_randomization() is None
    env = SimEnv(**fixed.env_kwargs())
    plain = SimEnv(spec.scene, goal=spec.goal, horizon=spec.horizon)  # no randomization at all
    try:
        observations = [env.reset(seed=s)[0] for s in range(5)]
        assert all(np.array_equal(o, observations[0]) for o in observations)
        assert np.array_equal(observations[0], plain.reset(seed=3)[0])
        assert env.world_sample is None and "world_sample" not in env.reset(seed=1)[1]
        # --no-randomize's path: make_task_env(..., randomization=None)
        assert np.array_equal(make_task_env("CloseDrawer-v0", randomization=None).reset(seed=9)[0],
                              observations[0])
    finally:
        env.close()
        plain.close()


def _interval(spec: TaskSpec, obj: str, joint: str) -> tuple[float, float]:
    r = spec.world_randomization()
    assert r is not None
    return r.joints[obj][joint]


def test_default_joint_starts_follow_the_goal_direction():
    close, open_ = load_task("CloseDrawer-v0"), load_task("OpenDrawer-v0")
    low, high = _interval(close, "StorageFurniture", "joint_0")
    assert low >= close.goal.threshold + 0.25 and high <= 1.0  # clearly open
    low, high = _interval(open_, "StorageFurniture", "joint_0")
    assert low == 0.0 and high <= 0.25 * open_.goal.threshold  # near closed
    button = load_task("PressButton-v0").world_randomization()
    assert button is not None and button.joints == {}  # a spring part starts at rest
    assert set(button.objects) == {"ButtonPanel"} and button.robot_qpos > 0


def test_sampled_values_lie_in_their_ranges_and_reach_the_world():
    env = make_task_env("CloseDrawer-v0")
    r = env.randomization
    jitter = r.objects["StorageFurniture"]
    low, high = r.joints["StorageFurniture"]["joint_0"]
    tree = env.scene.objects["StorageFurniture"].tree
    joint = tree.joint("joint_0")
    nominal = env.scene.initial_poses["StorageFurniture"][0].copy()  # before any reset: nominal
    try:
        for seed in range(10):
            env.reset(seed=seed)
            world = env.world_sample
            d = world["objects"]["StorageFurniture"]
            assert abs(d["dx"]) <= jitter.dx and abs(d["dy"]) <= jitter.dy and abs(d["yaw"]) <= jitter.yaw
            fraction = world["joints"]["StorageFurniture"]["joint_0"]
            assert low <= fraction <= high
            value = env.view.joint_value("StorageFurniture", "joint_0")
            assert value == pytest.approx(joint.lower + fraction * (joint.upper - joint.lower), abs=1e-9)
            assert env.view.initial_joint_value("StorageFurniture", "joint_0") == pytest.approx(value)
            pos, _ = env.view.initial_pose("StorageFurniture")
            assert pos[:2] == pytest.approx(nominal[:2] + [d["dx"], d["dy"]], abs=1e-9)
            assert all(abs(x) <= r.robot_qpos for x in world["robot_qpos_offset"])
    finally:
        env.close()


def test_a_state_restores_the_world_it_was_taken_in():
    env = make_task_env("OpenLaptop-v0")
    try:
        obs3, info3 = env.reset(seed=3)
        state = env.get_state()
        assert state.world_seed == env.world_sample["world_seed"]
        env.reset(seed=5)
        env.set_state(state)
        assert env.world_sample["world_seed"] == state.world_seed
        assert env.get_info()["progress"] == info3["progress"]
        obs, _ = env.reset(seed=8, options={"state": state.to_dict()})
        assert np.array_equal(obs, obs3)
    finally:
        env.close()


def test_scene_seed_gives_the_world_of_that_reset_seed():
    spec = load_task("PutCubeInBox-v0")
    fixed_world = SimEnv(**{**spec.env_kwargs(), "scene_seed": 4})
    task_env = make_task_env("PutCubeInBox-v0")
    try:
        a, _ = fixed_world.reset()
        b, _ = fixed_world.reset(seed=11)  # scene_seed fixes the world
        c, _ = task_env.reset(seed=4)
        assert np.array_equal(a, b) and np.array_equal(a, c)
    finally:
        fixed_world.close()
        task_env.close()


def test_camera_and_brightness_vary_with_the_seed():
    env = make_task_env("OpenDrawer-v0", render_mode="rgb_array")
    try:
        env.reset(seed=1)
        one = env.render()
        env.reset(seed=2)
        two = env.render()
        env.reset(seed=1)
        assert np.array_equal(env.render(), one) and not np.array_equal(one, two)
        eye = env.world_sample["camera"]["eye"]
        assert max(abs(x) for x in eye) <= env.randomization.camera.eye and any(eye)
    finally:
        env.close()


def test_the_mujoco_backend_repeats_and_varies_worlds_too():
    pytest.importorskip("mujoco")
    env = make_task_env("OpenDoor-v0", backend="mujoco")
    try:
        obs = [env.reset(seed=s)[0] for s in range(8)]
        assert len({o.tobytes() for o in obs}) == 8
        assert np.array_equal(env.reset(seed=2)[0], obs[2])
    finally:
        env.close()


def _with(randomization) -> dict:
    data = load_task("OpenDrawer-v0").model_dump(mode="json", by_alias=True)
    return {**data, "randomization": randomization}


@pytest.mark.parametrize(("section", "message"), [
    ({"objects": {"Cabinet": {"dx": 0.01}}}, "randomization.objects.Cabinet: no object 'Cabinet'"),
    ({"objects": {"StorageFurniture": {"dx": 0.5}}},
     "randomization.objects.StorageFurniture.dx: Input should be less than or equal to 0.15"),
    ({"objects": {"StorageFurniture": {"dz": 0.01}}},
     "randomization.objects.StorageFurniture.dz: unknown key"),
    ({"joints": {"StorageFurniture": {"joint_0": [0.6, 0.2]}}},
     "joints.StorageFurniture.joint_0 = [0.6, 0.2] is not an interval"),
    ({"robot_qpos": -1}, "randomization.robot_qpos: Input should be greater than or equal to 0"),
    ({"lighting": 0.2}, "randomization.lighting: unknown key"),
    ("random", "write `randomization: none` for the fixed start"),
])
def test_bad_sections_name_the_field_and_the_fix(section, message):
    with pytest.raises(TaskSpecError) as caught:
        TaskSpec.parse(_with(section), source="OpenDrawer-v0.yaml").world_randomization()
    assert message in str(caught.value)


def test_an_unknown_joint_is_refused_when_the_env_is_built():
    spec = TaskSpec.parse(_with({"joints": {"StorageFurniture": {"joint_9": [0.0, 0.1]}}}))
    with pytest.raises(RandomizationError, match=r"joints.StorageFurniture.joint_9: .*movable joints are"):
        SimEnv(**spec.env_kwargs()).reset(seed=0)


def test_a_section_replaces_only_the_default_sections_it_names():
    default = load_task("OpenDrawer-v0").world_randomization()
    spec = TaskSpec.parse(_with({"robot_qpos": 0.0}))
    got = spec.world_randomization()
    assert got is not None and got.robot_qpos == 0.0
    assert got.objects == default.objects and got.joints == default.joints
    assert got.camera == default.camera


def test_world_sample_is_plain_and_deterministic():
    env = make_task_env("PutBreadInBowl-v0")
    try:
        sample = env.randomization.sample(123, env.scene)
        again = env.randomization.sample(123, env.scene)
        assert sample == again and isinstance(sample, WorldSample)
        assert sample.to_dict()["world_seed"] == 123
        assert Randomization.parse({}).is_empty
    finally:
        env.close()
