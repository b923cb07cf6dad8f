"""Subprocess mode: the same source runs in a bounded child process that can be killed."""

from __future__ import annotations

import time

import numpy as np
import pytest

from simjudge.envs.codegen import (
    CodeResourceError,
    CodeRuntimeError,
    CodeTimeoutError,
    ExecutionLimits,
    compile_reward,
    compile_success,
)


class Snapshot:
    """A picklable state snapshot (module-level so that the child can import it)."""

    def __init__(self, joint: float) -> None:
        self.joint = joint


def get_joint_state(view: Snapshot, obj: str, joint: str) -> float:
    return view.joint


def get_eef_pos(view: Snapshot) -> tuple[np.ndarray, np.ndarray]:
    return np.zeros(3), np.array([0.0, 0.0, 0.0, 1.0])


def hang_in_c(view: Snapshot) -> float:
    time.sleep(60)  # one C call: the in-process tracer cannot interrupt it
    return 0.0


def hog_memory(view: Snapshot) -> int:
    return len(bytearray(4 * 2**30))  # beyond the child's address-space limit


API = {
    "get_joint_state": get_joint_state,
    "get_eef_pos": get_eef_pos,
    "hang_in_c": hang_in_c,
    "hog_memory": hog_memory,
}
LIMITS = ExecutionLimits(time_limit_s=0.5, kill_grace_s=0.5, max_memory_mb=256)
REWARD = """
def _compute_reward(self):
    angle = get_joint_state(self, "Door", "joint_0")
    eef = get_eef_pos(self)[0]
    return -abs(angle - 1.0) - float(np.linalg.norm(eef)), angle > 0.9
"""


def reward_with(*lines: str) -> str:
    body = "".join(f"    {line}\n" for line in lines)
    return f"def _compute_reward(self):\n{body}    return 0.0, False\n"


@pytest.fixture(scope="module")
def sandboxed():
    """One worker reused by the tests below (spawning costs ~0.5 s)."""
    with compile_reward(REWARD, API, limits=LIMITS, mode="subprocess") as reward:
        yield reward


def test_subprocess_matches_inprocess(sandboxed) -> None:
    inprocess = compile_reward(REWARD, API, limits=LIMITS)
    for joint in (0.2, 0.95):
        assert sandboxed(Snapshot(joint)) == inprocess(Snapshot(joint))


def test_subprocess_reports_typed_errors_with_lines() -> None:
    with compile_reward(
        reward_with("x = 1", "y = x / 0"), API, limits=LIMITS, mode="subprocess"
    ) as r:
        with pytest.raises(CodeRuntimeError) as info:
            r(Snapshot(0.0))
    assert info.value.line == 3 and "ZeroDivisionError" in str(info.value)


def test_subprocess_infinite_loop() -> None:
    limits = ExecutionLimits(time_limit_s=0.3, kill_grace_s=0.5, max_steps=10**12)
    with compile_reward(
        reward_with("while True: pass"), API, limits=limits, mode="subprocess"
    ) as r:
        r._worker._start()
        start = time.perf_counter()
        with pytest.raises(CodeTimeoutError):
            r(Snapshot(0.0))
        assert time.perf_counter() - start < 5.0


def test_subprocess_kills_code_stuck_in_c_and_restarts() -> None:
    source = reward_with(
        "if get_joint_state(self, 'Door', 'joint_0') > 0.5:", "    hang_in_c(self)"
    )
    with compile_reward(source, API, limits=LIMITS, mode="subprocess") as reward:
        reward._worker._start()  # start up outside the measured window
        start = time.perf_counter()
        with pytest.raises(CodeTimeoutError, match="killed"):
            reward(Snapshot(1.0))
        assert time.perf_counter() - start < LIMITS.time_limit_s + LIMITS.kill_grace_s + 1.0
        assert reward(Snapshot(0.0)) == (0.0, False)  # a fresh child serves the next call


def test_subprocess_memory_bombs() -> None:
    with compile_reward(
        reward_with("n = hog_memory(self)"), API, limits=LIMITS, mode="subprocess"
    ) as r:
        with pytest.raises(CodeResourceError):
            r(Snapshot(0.0))
    source = reward_with(
        "keep = []", "for i in range(100000):", "    keep.append(np.ones(100000) + i)"
    )
    limits = ExecutionLimits(time_limit_s=10, max_steps=10**12, max_memory_mb=128)
    with compile_reward(source, API, limits=limits, mode="subprocess") as r:
        with pytest.raises(CodeResourceError):
            r(Snapshot(0.0))


def test_subprocess_success_and_unpicklable_view() -> None:
    with compile_success(
        "success = get_joint_state(self, 'Door', 'joint_0') > 0.5",
        API,
        limits=LIMITS,
        mode="subprocess",
    ) as success:
        assert success(Snapshot(0.7)) is True
        with pytest.raises(TypeError, match="picklable"):
            success(lambda: None)


def test_subprocess_requires_picklable_api() -> None:
    with pytest.raises(TypeError, match="picklable"):
        compile_reward(
            REWARD,
            {"get_joint_state": lambda v, o, j: 0.0, "get_eef_pos": get_eef_pos},
            mode="subprocess",
        )
