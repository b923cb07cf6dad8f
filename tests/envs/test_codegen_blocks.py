"""Primitive blocks: proven ones run here, any other in the OS-bounded worker (issue 39).

The attacks target this design's own assumptions: that primitive results stay in the
parent (the worker cannot read them), that a primitive's time is not the code's but the
code's own work stays bounded, that the primitives run on the live view (not a copy), that
nothing is read ahead of a primitive that changes the state, and that the worker's death
is a verdict, not a crash.
"""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

from simjudge.envs.codegen import (
    CodeResourceError,
    CodeTimeoutError,
    ExecutionLimits,
    GeneratedCodeError,
    compile_primitive_block,
)
from simjudge.envs.sim_env import SimEnv
from simjudge.envs.state_api import STATE_API
from simjudge.skills.executor import execute_solution
from simjudge.tasks.spec import Solution, load_task

STRAIGHT = (
    'rgbs, final_state = grasp_object_link(self, "StorageFurniture", "link_1")\n'
    'success = check_grasped(self, "StorageFurniture", "link_1")\n'
)
LOOPING = (
    "tries = 0\n"
    "while tries < 2:\n"
    '    rgbs, final_state = grasp_object_link(self, "StorageFurniture", "link_1")\n'
    "    tries += 1\n"
    'success = check_grasped(self, "StorageFurniture", "link_1") and tries == 2\n'
)


class Recorder:
    """Primitives that change a real env's state and return real frames and states."""

    def __init__(self, env: SimEnv, sleep: float = 0.0) -> None:
        self.env, self.sleep = env, sleep
        self.views: list[object] = []
        self.results: list[tuple] = []
        self.args: list[tuple] = []

    def grasp_object_link(self, view, obj, link):
        self.views.append(view)
        self.args.append((obj, link))
        time.sleep(self.sleep)
        for _ in range(2):
            self.env.step(np.array([0.2, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0]))
        result = ([np.zeros((4, 4, 3), np.uint8)], self.env.get_state())
        self.results.append(result)
        return result

    def move_to_pose(self, view, position, orientation=None):
        self.views.append(view)
        self.args.append((position, orientation))
        return [], None

    def bound(self) -> dict:
        return {"grasp_object_link": self.grasp_object_link, "move_to_pose": self.move_to_pose}


@pytest.fixture(scope="module")
def env():
    env = SimEnv(load_task("OpenDrawer-v0").scene)
    env.reset(seed=0)
    yield env
    env.close()


def test_a_straight_block_is_proven_and_runs_here(env):
    block = compile_primitive_block(STRAIGHT, STATE_API)
    assert (block.cost_class, block.runs_in) == ("bounded", "in-process")
    prims = Recorder(env)
    out = block(env.unwrapped.view, prims.bound())
    assert prims.views == [env.unwrapped.view]
    assert out["rgbs"] is prims.results[0][0] and out["final_state"] is prims.results[0][1]


def test_an_unproven_block_runs_in_the_worker_and_its_primitives_here(env):
    block = compile_primitive_block(LOOPING, STATE_API)
    assert (block.cost_class, block.runs_in) == ("unproven", "worker")
    assert "While" in block.reason
    prims = Recorder(env)
    view = env.unwrapped.view
    with block:
        out = block(view, prims.bound())
    # the primitives ran here, twice, on the live view itself (not a snapshot)
    assert prims.views == [view, view]
    assert prims.args == [("StorageFurniture", "link_1")] * 2
    # the worker held stand-ins; the outputs carry the real objects of the last call
    assert out["rgbs"] is prims.results[1][0]
    assert out["final_state"] is prims.results[1][1]
    assert out["tries"] == 2 and out["success"] is False  # nothing is grasped by nudging


def test_the_worker_cannot_read_what_a_primitive_returned(env):
    for read in ("n = len(rgbs)", "n = rgbs[0]", "n = final_state + 1"):
        source = ('rgbs, final_state = grasp_object_link(self, "StorageFurniture", "link_1")\n'
                  f"{read}\nsuccess = True\n")
        block = compile_primitive_block(source, STATE_API)
        assert block.runs_in == "worker", read  # the proof refuses to compute with results
        with block, pytest.raises(GeneratedCodeError):
            block(env.unwrapped.view, Recorder(env).bound())


def test_a_held_result_passed_to_a_primitive_arrives_as_the_real_value(env):
    source = ('rgbs, final_state = grasp_object_link(self, "StorageFurniture", "link_1")\n'
              "k = 0\nwhile k < 1:\n    k += 1\n"
              "out = move_to_pose(self, [0.1, 0.0, 0.4], final_state)\nsuccess = True\n")
    block = compile_primitive_block(source, STATE_API)
    assert block.runs_in == "worker"
    prims = Recorder(env)
    with block:
        block(env.unwrapped.view, prims.bound())
    assert prims.args[1][0] == [0.1, 0.0, 0.4]
    assert prims.args[1][1] is prims.results[0][1]


def test_primitive_time_is_not_the_codes_but_the_codes_own_loop_is_bounded(env):
    limits = ExecutionLimits(time_limit_s=0.2)
    slow = Recorder(env, sleep=0.3)  # each call longer than the whole budget
    block = compile_primitive_block(LOOPING, STATE_API, limits=limits)
    with block:
        out = block(env.unwrapped.view, slow.bound())
    assert out["tries"] == 2
    spin = ('rgbs, final_state = grasp_object_link(self, "StorageFurniture", "link_1")\n'
            "while True:\n    pass\nsuccess = True\n")
    block = compile_primitive_block(spin, STATE_API, limits=limits)
    start = time.monotonic()
    with block, pytest.raises(CodeTimeoutError):
        block(env.unwrapped.view, Recorder(env).bound())
    assert time.monotonic() - start < 5.0


def test_calling_primitives_forever_is_stopped(env):
    forever = "while True:\n    out = move_to_pose(self, [0.1, 0.0, 0.4])\nsuccess = True\n"
    block = compile_primitive_block(forever, STATE_API,
                                    limits=ExecutionLimits(time_limit_s=0.5))
    prims = Recorder(env)
    start = time.monotonic()
    with block, pytest.raises(GeneratedCodeError):
        block(env.unwrapped.view, prims.bound())
    assert time.monotonic() - start < 30.0
    assert len(prims.args) == 64  # MAX_PRIMITIVE_CALLS: the 65th never runs


def test_a_huge_primitive_argument_is_refused_before_the_primitive_runs(env):
    source = ("k = 0\nwhile k < 1:\n    k += 1\n"
              "out = move_to_pose(self, [0.5] * 100000)\nsuccess = True\n")
    block = compile_primitive_block(source, STATE_API)
    prims = Recorder(env)
    with block, pytest.raises(GeneratedCodeError):
        block(env.unwrapped.view, prims.bound())
    assert prims.args == []


def test_a_memory_bomb_in_a_block_kills_only_the_worker(env):
    source = ("k = 0\nwhile k < 1:\n    k += 1\n"
              "x = np.ones((30000, 30000))\nsuccess = True\n")
    block = compile_primitive_block(source, STATE_API,
                                    limits=ExecutionLimits(max_memory_mb=256))
    with block, pytest.raises((CodeResourceError, GeneratedCodeError)):
        block(env.unwrapped.view, Recorder(env).bound())
    assert os.getpid() > 0  # this process is alive and the env still steps
    env.step(np.zeros(7))


def test_the_state_is_read_after_the_primitive_not_before(env):
    # A prefetched reading would answer from the state before the block ran.
    source = ("k = 0\nwhile k < 1:\n    k += 1\n"
              'before = get_joint_state(self, "StorageFurniture", "joint_0")\n'
              'rgbs, final_state = grasp_object_link(self, "StorageFurniture", "link_1")\n'
              'after = get_joint_state(self, "StorageFurniture", "joint_0")\nsuccess = True\n')
    view = env.unwrapped.view
    joint = env.unwrapped.scene.objects["StorageFurniture"]

    class Pull(Recorder):
        def grasp_object_link(self, view, obj, link):
            index = joint.joint_index["joint_0"]
            env.unwrapped.backend.reset_joint_states(joint.body, [index], np.array([0.2]),
                                                     np.zeros(1))
            return super().grasp_object_link(view, obj, link)

    block = compile_primitive_block(source, STATE_API)
    with block:
        out = block(view, Pull(env).bound())
    assert out["after"] != out["before"]


def test_the_executor_runs_an_unproven_block_in_the_worker_on_its_live_env(tmp_path):
    scene = load_task("OpenDrawer-v0").scene.model_dump(mode="json", by_alias=True)
    code = "k = 0\nwhile k < 2:\n    rgbs, final_state = move_to_pose(self, [0.1, 0.0, 0.4])\n" \
           "    k += 1\nsuccess = k == 2\n"
    solution = Solution.parse({"task": "nudge twice", "scene": scene,
                               "subtasks": [{"name": "nudge", "kind": "primitive", "code": code}]})
    starts = []

    def move_to_pose(env, position, orientation=None):
        starts.append(env.get_state().to_dict())
        for _ in range(3):
            env.step(np.array([0.5, 0.2, -0.3, 0.0, 0.0, 0.0, -1.0]))

        class Done:
            success, reason, steps, frames = True, "", 3, []
            final_state = env.get_state()

            def __iter__(self):
                return iter((self.frames, self.final_state))

        return Done()

    summary = execute_solution(solution, tmp_path, primitives={"move_to_pose": move_to_pose},
                               video=False)
    verdict = summary.verdicts[0]
    assert verdict.success and verdict.steps == 6
    assert verdict.details["runs_in"] == "worker" and verdict.details["cost_class"] == "unproven"
    assert starts[0] != starts[1]  # the second call saw the first one's steps: the live env


def test_a_proven_loop_of_primitives_is_held_to_the_same_call_limit(env):
    source = "for i in range(100):\n    out = move_to_pose(self, [0.1, 0.0, 0.4])\nsuccess = True\n"
    block = compile_primitive_block(source, STATE_API)
    assert block.runs_in == "in-process"
    prims = Recorder(env)
    with pytest.raises(CodeResourceError, match="more than 64 times"):
        block(env.unwrapped.view, prims.bound())
    assert len(prims.args) == 64
