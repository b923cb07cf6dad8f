"""SimEnv's joint-position action mode, and the skill-replay and executor policies.

Everything runs the real simulator, the real motion planner and the real executor: the
skills are made by executing OpenDrawer-v0's reference solution (planned grasp, then the
pull solved by sampling MPC on the solution's reward code).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from simjudge.envs.sim_state import SimState
from simjudge.policies import PolicyError, make_policy, run_episode
from simjudge.policies.joint_actions import commands_to_actions
from simjudge.policies.registry import check_policy_spec
from simjudge.skills.executor import execute_solution
from simjudge.skills.library import SkillLibrary, state_distance
from simjudge.tasks.spec import make_task_env, read_json

pytestmark = pytest.mark.timeout(180)


# ------------------------------------------------------------------ SimEnv action mode


def test_joint_position_mode_drives_the_arm_and_suction():
    env = make_task_env("OpenDrawer-v0", action_mode="joint_position")
    default = make_task_env("OpenDrawer-v0")
    try:
        assert default.action_mode == "delta_ee" and default.action_space.shape == (7,)
        robot = env.scene.robot
        assert env.action_space.shape == (8,)
        assert np.allclose(env.action_space.low[:7], robot.lower) and env.action_space.high[7] == 1
        obs, _ = env.reset(seed=0)
        start = obs[env.observation_layout["arm_qpos"]].astype(float)
        target = start + np.array([0.2, -0.1, 0.1, 0.15, -0.1, 0.1, 0.2])
        for _ in range(25):
            obs, _, _, _, info = env.step(np.append(target, 0.0))
        assert np.max(np.abs(obs[env.observation_layout["arm_qpos"]] - target)) < 0.01
        assert info["elapsed_steps"] == 25 and not robot.suction_on
        env.step(np.append(target, 0.9))
        assert robot.suction_on
        env.step(np.append(np.full(7, 10.0), 0.2))  # clipped to the limits, suction off
        assert not robot.suction_on
        with pytest.raises(ValueError, match="8 finite numbers"):
            env.step(np.zeros(7))
        with pytest.raises(ValueError, match="8 finite numbers"):
            env.step(np.append(target, np.nan))
        # a delta env switched for one block, wrappers included, then restored
        with default.using_action_mode("joint_position"):
            assert default.action_space.shape == (8,)
            default.reset(seed=0)
            default.step(np.append(target, 0.0))
        assert default.action_mode == "delta_ee" and default.action_space.shape == (7,)
        with pytest.raises(ValueError, match="action_mode"):
            make_task_env("OpenDrawer-v0", action_mode="joint_torque")
        check_env(env, skip_render_check=True)  # gymnasium's checks on the joint space
    finally:
        env.close()
        default.close()


def test_commands_become_one_action_per_step():
    events = [["command", [[0.1] * 7]], ["step", [2]], ["activate_suction", [[1]]],
              ["command", [[0.2] * 7]], ["break_overloaded_suction", [0.05]], ["step", [2]],
              ["release", []], ["step", [2]]]
    actions = commands_to_actions(events, [0.0] * 7)
    assert actions.shape == (3, 8)
    assert actions[:, 7].tolist() == [0.0, 1.0, 0.0]
    assert actions[0, 0] == 0.1 and actions[2, 0] == 0.2
    # suction turned on after the last step (a grasp's end): one more action grips
    tail = commands_to_actions([*events, ["activate_suction", [[1]]]], [0.0] * 7)
    assert tail.shape == (4, 8) and tail[-1, 7] == 1.0
    with pytest.raises(PolicyError, match="corrupt"):
        commands_to_actions([["teleport", []]], [0.0] * 7)


# ------------------------------------------------------------------ executor as a policy


def test_executor_policy_replays_the_executed_solution_to_verified_success():
    env = make_task_env("OpenDrawer-v0")
    policy = make_policy("executor:chunk=8")  # the task's reference solution, pull by MPC
    try:
        assert policy.info.action_space == "joint_position"
        assert policy.info.observation_needs == ("privileged",)
        result = run_episode(env, policy, seed=0)
        outcome = policy.last_outcome
        assert outcome.verdict == "verified" and outcome.task_success
        assert result.success and result.steps == outcome.env_steps
        assert result.queries == math.ceil(result.steps / 8)
        # the same control steps; MPC's look-ahead restored snapshots, so not bit-exact
        assert state_distance(env.get_state(), policy.last_end_state) < 0.02
        assert result.progress[-1] == pytest.approx(1.0) and result.progress[0] < 0.5
        # without look-ahead (planned grasp, scripted pull) the replay is exact: on the
        # fixed start (with the cabinet turned, PyBullet's collision queries while planning
        # leave ~1e-17 in the arm's joints, so a turned world replays to 3e-17)
        env.close()
        env = make_task_env("OpenDrawer-v0", randomization=None)
        oracle = make_policy("executor:OpenDrawer-v0,reward_solver=oracle,chunk=5")
        exact = run_episode(env, oracle, seed=0)
        assert exact.success and exact.queries == math.ceil(exact.steps / 5)
        assert state_distance(env.get_state(), oracle.last_end_state) == 0.0
        # an episode that starts elsewhere cannot follow the plan
        moved = env.get_state()
        with pytest.raises(PolicyError, match="starts elsewhere"):
            run_episode(env, oracle, seed=0, options={"state": moved})
    finally:
        policy.close()
        env.close()
    with pytest.raises(PolicyError, match="reward_solver"):
        make_policy("executor:OpenDrawer-v0,reward_solver=magic")
    with pytest.raises(PolicyError, match="neither a solution YAML"):
        make_policy("executor:no/such/solution.yaml")
    with pytest.raises(PolicyError, match="privileged"):
        from simjudge.policies import PolicyTask

        policy = make_policy("executor")
        policy.reset(PolicyTask("OpenDrawer-v0"), 0)


# ------------------------------------------------------------------ skill replay


@pytest.fixture(scope="module")
def library(tmp_path_factory) -> SkillLibrary:
    """Skills from one real run: the planned grasp (primitive) and the MPC pull (reward)."""
    root = tmp_path_factory.mktemp("skills")
    outcome = execute_solution("OpenDrawer-v0", root / "run", reward_solver="mpc",
                               skills=SkillLibrary(root / "lib"), video=False)
    assert outcome.verdict == "verified"
    return SkillLibrary(root / "lib")


def test_skill_replay_reproduces_the_planned_grasp(library):
    grasp, pull = library.list()
    assert grasp.kind == "primitive" and pull.kind == "reward"
    spec = f"skill:{grasp.id},root={library.root}"
    check_policy_spec(spec)
    check_policy_spec("executor:OpenDrawer-v0,reward_solver=oracle")
    with pytest.raises(PolicyError, match="takes no parameter"):
        check_policy_spec("executor:OpenDrawer-v0,solver=oracle")
    policy = make_policy(spec)
    assert policy.info.action_space == "joint_position" and policy.info.observation_needs == ()
    steps = grasp.metrics["steps"]
    assert steps > 10 and policy.info.metadata["steps"] == steps + 1  # + the gripping step
    env = make_task_env("OpenDrawer-v0", horizon=steps)
    try:
        # the skill's own steps end exactly where the skill ended
        result = run_episode(env, policy, seed=0, options={"state": policy.start_state})
        end = SimState.from_dict(read_json(f"{grasp.path}/end_state.json"))
        assert result.steps == steps and state_distance(env.get_state(), end) == 0.0
        assert not result.info["is_grasped"]  # suction came on after the skill's last step
        # one more step with suction on: the handle is held, as the skill's success says
        env.horizon = steps + 5
        result = run_episode(env, policy, seed=0, options={"state": policy.start_state})
        assert result.info["is_grasped"] and result.info["state"]["suction"]
        assert not result.success  # grasping alone does not open the drawer
        # played out: the policy holds its last action
        assert np.array_equal(policy.act({}), policy.actions[-1:])
    finally:
        env.close()
    with pytest.raises(PolicyError, match="stores no policy.zip"):
        make_policy(f"skill:{pull.id},root={library.root}")
    with pytest.raises(PolicyError, match="skills there are"):
        make_policy(f"skill:nope,root={library.root}")
    with pytest.raises(PolicyError, match="write skill:ID"):
        make_policy("skill")


def test_skill_replay_of_a_learned_sac_skill(tmp_path):
    """A SAC skill (tiny budget, trivially satisfied reward) replays its rollout's commands."""
    from simjudge.skills.sac import SACConfig
    from simjudge.tasks.spec import load_solution

    solution = load_solution("OpenDrawer-v0")
    data = solution.model_dump()
    data["subtasks"][1]["code"] = "def _compute_reward(self):\n    return 0.0, True\n"
    tiny = SACConfig(net_arch=(16, 16), batch_size=32, buffer_size=1_000, learning_starts=10,
                     eval_freq=50, n_eval_episodes=2, progress_bar=False)
    execute_solution(solution.model_validate(data), tmp_path / "run", budget_steps=500,
                     sac_config=tiny, skills=SkillLibrary(tmp_path / "lib"), video=False)
    learned = SkillLibrary(tmp_path / "lib").list()[1]
    assert learned.kind == "reward"
    policy = make_policy(f"skill:{learned.id},root={tmp_path / 'lib'}")
    assert policy.actions.shape == (1, 8) and policy.actions[0, 7] == 1.0  # handle still held
    env = make_task_env("OpenDrawer-v0", horizon=1)
    try:
        result = run_episode(env, policy, seed=0, options={"state": policy.start_state})
        end = SimState.from_dict(read_json(f"{learned.path}/end_state.json"))
        assert result.info["is_grasped"] and state_distance(env.get_state(), end) == 0.0
    finally:
        env.close()
