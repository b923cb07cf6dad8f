"""Policies: the protocol, the spec registry, built-in adapters, observations and actions."""

from __future__ import annotations

import sys
import textwrap

import numpy as np
import pytest

from simjudge.envs.errors import SimjudgeError
from simjudge.envs.transforms import rpy_matrix
from simjudge.policies import (
    Policy,
    PolicyError,
    PolicyInfo,
    PolicyTask,
    make_policy,
    observe,
    registered_policies,
    run_episode,
    to_env_action,
)
from simjudge.policies.observe import quat_to_rpy
from simjudge.tasks.spec import make_task_env


@pytest.fixture
def drawer_env():
    env = make_task_env("OpenDrawer-v0")
    yield env
    env.close()


def test_every_registered_policy_satisfies_the_protocol(drawer_env):
    for name in registered_policies():
        policy = make_policy(name)
        assert isinstance(policy, Policy)
        result = run_episode(drawer_env, policy, seed=0)
        assert result.steps == len(result.progress) - 1 > 0
        assert result.queries == result.steps  # one action per query
        assert policy.info.spec == name


def test_oracle_solves_and_its_failure_variants_do_worse(drawer_env):
    oracle = run_episode(drawer_env, make_policy("oracle"), seed=0)
    assert oracle.success and max(oracle.progress) == 1.0
    wrong = run_episode(drawer_env, make_policy("oracle-wrong-target"), seed=0)
    assert not wrong.success and max(wrong.progress) < 0.5
    delay = run_episode(drawer_env, make_policy("oracle-delay:delay=6"), seed=0)
    assert delay.steps > oracle.steps  # the lagged loop takes longer
    zero = run_episode(drawer_env, make_policy("zero"), seed=0)
    assert max(zero.progress) - zero.progress[0] < 1e-3 and not zero.success


def test_early_release_lets_go_for_good():
    env = make_task_env("OpenMicrowaveDoor-v0")
    try:
        oracle = run_episode(env, make_policy("oracle"), seed=0)
        early = run_episode(env, make_policy("oracle-early-release:at=0.4"), seed=0)
    finally:
        env.close()
    assert oracle.success and not early.success
    assert 0.4 <= max(early.progress) < 1.0


def test_reach_only_approaches_and_never_touches():
    """It earns the approach stage of Φ (well above random), never a grasp, press or success."""
    for task in ("OpenDrawer-v0", "PressButton-v0"):
        env = make_task_env(task)
        try:
            reach = run_episode(env, make_policy("reach-only"), seed=0)
            assert not env.scene.robot.suction_on and env.view.grasped() is None
            joints = env.get_info()["joint_progress"]
            random = run_episode(env, make_policy("random"), seed=0)
        finally:
            env.close()
        assert not reach.success and joints == 0.0, task  # the button is never pressed
        assert 0.2 <= max(reach.progress) < 0.4, (task, max(reach.progress))  # approach only
        assert max(reach.progress) > 1.5 * max(random.progress), task
        steady = reach.progress[-20:]  # holding still at its pre-contact pose
        assert max(steady) - min(steady) < 1e-3, task


def test_random_is_seeded(drawer_env):
    a = run_episode(drawer_env, make_policy("random"), seed=4)
    b = run_episode(drawer_env, make_policy("random"), seed=4)
    c = run_episode(drawer_env, make_policy("random"), seed=5)
    assert a.progress == b.progress
    policy = make_policy("random:scale=0.2")
    policy.reset(PolicyTask("x"), 4)
    first = policy.act({"state": np.zeros(3), "prompt": ""})
    policy.reset(PolicyTask("x"), 4)
    assert np.array_equal(first, policy.act({"state": np.zeros(3), "prompt": ""}))
    assert np.all(np.abs(first) <= 0.2)
    assert c.info["state"] != a.info["state"] or c.progress != a.progress


def test_spec_errors_name_the_fix():
    with pytest.raises(PolicyError, match="Did you mean 'oracle-noisy'"):
        make_policy("oracle-noisey")
    with pytest.raises(PolicyError, match="key=value"):
        make_policy("random:0.5")
    with pytest.raises(PolicyError, match="scale"):
        make_policy("random:scale=3")
    with pytest.raises(PolicyError, match="cannot import module"):
        make_policy("no_such_module_xyz:act")
    with pytest.raises(PolicyError, match="does not exist"):
        make_policy("sb3:/nonexistent/model.zip")
    with pytest.raises(PolicyError, match="privileged"):
        make_policy("oracle").reset(PolicyTask("OpenDrawer-v0"), 0)
    with pytest.raises(PolicyError, match="unknown observations"):
        PolicyInfo("x", observation_needs=("lidar",))
    assert issubclass(PolicyError, SimjudgeError)


def test_module_function_policy_and_chunks(tmp_path, monkeypatch, drawer_env):
    (tmp_path / "my_policies.py").write_text(textwrap.dedent("""
        import numpy as np
        CALLS = []
        def down(obs):
            CALLS.append(sorted(obs))
            return np.tile([0.0, 0.0, -1.0, 0, 0, 0, -1.0], (5, 1))
        def bad(obs):
            return np.zeros(3)
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("my_policies", None)
    policy = make_policy("my_policies:down")
    result = run_episode(drawer_env, policy, seed=0)
    assert result.queries == -(-result.steps // 5)  # a chunk of 5 per query
    import my_policies

    assert my_policies.CALLS[0] == ["prompt", "state"]  # nothing undeclared
    with pytest.raises(PolicyError, match=r"shape \(3,\)"):
        run_episode(drawer_env, make_policy("my_policies:bad"), seed=0)


def test_sb3_checkpoint_acts_like_the_model(tmp_path, drawer_env):
    sb3 = pytest.importorskip("stable_baselines3")
    import torch

    torch.set_num_threads(1)
    model = sb3.SAC("MlpPolicy", drawer_env, seed=0, device="cpu", buffer_size=100)
    path = tmp_path / "model.zip"
    model.save(path)
    policy = make_policy(f"sb3:{path}")
    assert policy.info.metadata["algorithm"] == "sac"
    obs, _ = drawer_env.reset(seed=0)
    policy.reset(PolicyTask("OpenDrawer-v0"), 0)
    expected, _ = model.predict(obs, deterministic=True)
    got = policy.act({"state": obs, "prompt": ""})
    assert np.allclose(got, expected, atol=1e-6)
    with pytest.raises(PolicyError, match="observes shape"):
        policy.act({"state": np.zeros(3, np.float32), "prompt": ""})


def test_observation_needs_and_images(drawer_env):
    obs, _ = drawer_env.reset(seed=0)
    info = PolicyInfo("cam", observation_needs=("proprio", "exterior_image", "wrist_image"),
                      image_size=(48, 64))
    o = observe(drawer_env, obs, info, "open the drawer")
    assert o["exterior_image"].shape == (48, 64, 3) and o["exterior_image"].dtype == np.uint8
    assert o["wrist_image"].shape == (48, 64, 3)
    assert o["exterior_image"].std() > 0 and o["wrist_image"].std() > 0
    assert o["joint_position"].shape == (7,) and o["cartesian_position"].shape == (6,)
    pos, _ = drawer_env.scene.robot.ee_pose()
    assert np.allclose(o["cartesian_position"][:3], pos, atol=1e-4)


def test_rpy_round_trip():
    rng = np.random.default_rng(0)
    from simjudge.envs.transforms import quat_from_matrix

    for _ in range(20):
        rpy = rng.uniform([-3, -1.4, -3], [3, 1.4, 3])
        assert np.allclose(quat_to_rpy(quat_from_matrix(rpy_matrix(rpy.tolist()))), rpy, atol=1e-9)


def test_cartesian_position_actions_reach_the_target(drawer_env):
    drawer_env.reset(seed=0)
    pos, orn = drawer_env.scene.robot.ee_pose()
    target = np.concatenate([pos + np.array([0.0, 0.0, 0.08]), quat_to_rpy(orn), [0.0]])
    for _ in range(15):
        drawer_env.step(to_env_action(target, "cartesian_position", drawer_env).astype(np.float32))
    reached, _ = drawer_env.scene.robot.ee_pose()
    assert np.linalg.norm(reached - target[:3]) < 0.015
    with pytest.raises(PolicyError, match="cannot execute"):
        to_env_action(target, "joint_torque", drawer_env)
