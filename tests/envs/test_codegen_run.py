"""Running compiled generated code: outputs, runtime guards, limits and typed errors."""

from __future__ import annotations

import sys
import threading
import time

import numpy as np
import pytest

from simjudge.envs.codegen import (
    CodeResourceError,
    CodeRuntimeError,
    CodeTimeoutError,
    DisallowedCodeError,
    ExecutionLimits,
    InvalidOutputError,
    MissingOutputError,
    NonFiniteRewardError,
    compile_primitive_block,
    compile_reward,
    compile_success,
)


class FakeView:
    """A tiny stand-in for the read-only state view."""

    def __init__(self, joint: float = 0.95) -> None:
        self.joints = {("StorageFurniture", "joint_0"): joint}
        self.links = {("StorageFurniture", "link_1"): np.array([0.5, 0.2, 0.6])}
        self.eef = np.array([0.4, 0.2, 0.6])
        self.grasped: set[tuple[str, str]] = set()


def get_eef_pos(view: FakeView) -> tuple[np.ndarray, np.ndarray]:
    return view.eef, np.array([0.0, 0.0, 0.0, 1.0])


def get_link_state(view: FakeView, obj: str, link: str) -> np.ndarray:
    return view.links[(obj, link)]


def get_joint_state(view: FakeView, obj: str, joint: str) -> float:
    try:
        return view.joints[(obj, joint)]
    except KeyError:
        raise KeyError(f"unknown joint {joint!r}; valid joints: joint_0") from None


def get_joint_limit(view: FakeView, obj: str, joint: str) -> tuple[float, float]:
    return 0.0, 1.0


def check_grasped(view: FakeView, obj: str, link: str | None = None) -> bool:
    return (obj, link) in view.grasped


API = {
    "get_eef_pos": get_eef_pos,
    "get_link_state": get_link_state,
    "get_joint_state": get_joint_state,
    "get_joint_limit": get_joint_limit,
    "check_grasped": check_grasped,
}

ROBOGEN_REWARD = """
def _compute_reward(self):
    eef_pos = get_eef_pos(self)[0]
    handle_pos = get_link_state(self, "StorageFurniture", "link_1")
    distance = np.linalg.norm(eef_pos - handle_pos)
    joint_angle = get_joint_state(self, "StorageFurniture", "joint_0")
    joint_limit_low, joint_limit_high = get_joint_limit(self, "StorageFurniture", "joint_0")
    target = joint_limit_high
    diff = np.abs(joint_angle - target)
    reward = -distance - 5 * diff
    success = diff < 0.1 * (joint_limit_high - joint_limit_low)
    return reward, success
"""


def reward_with(*lines: str, result: str = "0.0, False") -> str:
    """A reward function whose body starts on line 2."""
    body = "".join(f"    {line}\n" for line in lines)
    return f"def _compute_reward(self):\n{body}    return {result}\n"


# -- positive ------------------------------------------------------------------------------


def test_robogen_reward() -> None:
    reward = compile_reward(ROBOGEN_REWARD, API)
    value, success = reward(FakeView(joint=0.95))
    assert value == pytest.approx(-0.1 - 5 * 0.05)
    assert success is True
    assert reward(FakeView(joint=0.2)) == (pytest.approx(-0.1 - 5 * 0.8), False)
    assert reward.entry == "_compute_reward"
    assert reward.api_used == {
        "get_eef_pos",
        "get_link_state",
        "get_joint_state",
        "get_joint_limit",
    }


def test_helpers_constants_loops_and_prints() -> None:
    source = """
SCALE = 2.0

def closeness(a, b):
    return -float(np.linalg.norm(np.asarray(a) - np.asarray(b)))

def compute_reward(self):
    total = 0.0
    for i, w in enumerate([1.0, 0.5]):
        total += w * i
    values = [x ** 2 for x in range(4) if x % 2 == 0]
    pts = np.zeros((3, 3))
    pts[:, 0] = 1.0
    pts[1] += 2.0
    print(f"total={total:.2f}", len(values), pts.shape)
    reward = SCALE * closeness(get_eef_pos(self)[0], [0.4, 0.2, 0.6]) + total + sum(values)
    return reward, math.isclose(reward, 4.5) and 0 <= total < 1
"""
    reward = compile_reward(source, API)
    assert reward(FakeView()) == (pytest.approx(4.5), True)
    assert reward.last_output == "total=0.50 2 (3, 3)\n"


def test_returned_arrays_do_not_alias_the_view() -> None:
    view = FakeView()
    reward = compile_reward(reward_with("p = get_eef_pos(self)[0]", "p[0] = 100.0"), API)
    reward(view)
    assert view.eef[0] == pytest.approx(0.4)


def test_api_error_becomes_runtime_error_with_line() -> None:
    reward = compile_reward(
        reward_with("x = 1", "a = get_joint_state(self, 'StorageFurniture', 'j9')"), API
    )
    with pytest.raises(CodeRuntimeError) as info:
        reward(FakeView())
    assert info.value.line == 3
    assert "get_joint_state() failed" in str(info.value) and "valid joints" in str(info.value)


def test_zero_division_is_runtime_error_with_line() -> None:
    reward = compile_reward(reward_with("a = 1.0", "b = a / 0"), API)
    with pytest.raises(CodeRuntimeError) as info:
        reward(FakeView())
    assert info.value.line == 3 and "ZeroDivisionError" in str(info.value)


def test_nan_and_inf_rewards_are_errors() -> None:
    with pytest.raises(NonFiniteRewardError) as info:
        compile_reward(reward_with(result="float('nan'), False"), API)(FakeView())
    assert info.value.line == 2
    with pytest.raises(NonFiniteRewardError):
        compile_reward(reward_with(result="np.inf, True"), API)(FakeView())


def test_reward_returning_none_at_runtime() -> None:
    source = "def _compute_reward(self):\n    if get_joint_state(self, 'StorageFurniture', 'joint_0') > 5:\n        return 1.0, True\n"
    with pytest.raises(MissingOutputError, match="returned None"):
        compile_reward(source, API)(FakeView())


@pytest.mark.parametrize(
    ("result", "error"),
    [
        ("np.ones(3), True", InvalidOutputError),
        ("1.0, np.array([True, False])", InvalidOutputError),
        ("'high', True", InvalidOutputError),
        ("1.0, None", MissingOutputError),
    ],
)
def test_bad_outputs(result: str, error: type[Exception]) -> None:
    with pytest.raises(error):
        compile_reward(reward_with(result=result), API)(FakeView())


def test_numpy_scalar_outputs_are_converted() -> None:
    value, success = compile_reward(reward_with(result="np.float32(1.5), np.bool_(True)"), API)(
        None
    )
    assert (type(value), type(success)) == (float, bool)


def test_success_function_and_block_forms() -> None:
    function = compile_success(
        "def check_success(self):\n    return get_joint_state(self, 'StorageFurniture', 'joint_0') > 0.9\n",
        API,
    )
    block = compile_success(
        "angle = get_joint_state(self, 'StorageFurniture', 'joint_0')\nsuccess = angle > 0.9\n", API
    )
    for compiled in (function, block):
        assert compiled(FakeView(0.95)) is True
        assert compiled(FakeView(0.10)) is False


def test_primitive_block_binds_implementations_at_call_time() -> None:
    calls = []

    def grasp_object_link(view: FakeView, obj: str, link: str) -> tuple[list, dict]:
        calls.append((view, obj, link))
        time.sleep(0.2)  # longer than the time limit: primitive time is not counted
        view.grasped.add((obj, link))
        return ["frame"], {"joint": 0.1}

    source = (
        'rgbs, final_state = grasp_object_link(self, "StorageFurniture", "link_1")\n'
        'success = check_grasped(self, "StorageFurniture", "link_1")\n'
    )
    block = compile_primitive_block(source, API, limits=ExecutionLimits(time_limit_s=0.1))
    view = FakeView()
    out = block(view, {"grasp_object_link": grasp_object_link})
    assert out == {"rgbs": ["frame"], "final_state": {"joint": 0.1}, "success": True}
    assert calls == [(view, "StorageFurniture", "link_1")]
    with pytest.raises(ValueError, match="grasp_object_link"):
        block(view, {})


# -- runtime guards and limits -------------------------------------------------------------------


def test_infinite_loop_times_out_quickly() -> None:
    limits = ExecutionLimits(time_limit_s=0.3, max_steps=10**12)
    reward = compile_reward(reward_with("while True: pass"), API, limits=limits)
    start = time.perf_counter()
    with pytest.raises(CodeTimeoutError) as info:
        reward(FakeView())
    assert time.perf_counter() - start < 1.0
    assert info.value.line == 2


def test_step_budget_is_deterministic() -> None:
    reward = compile_reward(
        reward_with("x = 0", "while x >= 0:", "    x += 1"),
        API,
        limits=ExecutionLimits(max_steps=10_000, time_limit_s=5),
    )
    with pytest.raises(CodeTimeoutError, match="10000 steps"):
        reward(FakeView())


def test_timeout_works_in_a_thread_and_restores_trace() -> None:
    reward = compile_reward(
        reward_with("for i in range(10**6):", "    x = [j for j in range(100)]"),
        API,
        limits=ExecutionLimits(time_limit_s=0.2, max_steps=10**12),
    )
    errors: list[BaseException] = []

    def run() -> None:
        try:
            reward(FakeView())
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=run)
    before = sys.gettrace()
    thread.start()
    thread.join(5)
    assert not thread.is_alive()
    assert len(errors) == 1 and isinstance(errors[0], CodeTimeoutError)
    assert sys.gettrace() is before


@pytest.mark.parametrize(
    "lines",
    [
        ("n = 10", "x = [0] * n**10"),
        ("x = np.zeros(10**10)",),
        ("n = 9", "x = 'a' * 10**n"),
        ("x = 2", "for i in range(40):", "    x = x * x"),
        ("x = [0]", "for i in range(64):", "    x = x + x"),
        ("a = np.ones(100000)", "b = a[:, None] - a[None, :]"),
        ("a = np.ones(100000)", "b = a[:, None] < a"),
        ("idx = np.zeros(1000000, dtype=int)", "b = np.ones((1000, 1000))[idx]"),
        ("x = np.array([np.ones(1000)] * 10000)",),
        ("x = np.arange(0, 1e12)",),
        ("x = np.outer(np.ones(10**5), np.ones(10**5))",),
        ("a = np.ones((10**5, 1))", "x = a @ a.T"),
        ("n = 12", "for i in range(10**n):", "    pass"),
        ("x = list(range(10**9))",),
        ("x = [1]", "x.extend(x * 999999)", "x.extend(x)"),
        ("x = np.tile(np.ones(1000), 10**4)",),
        ("x = pow(3, 10**6)",),
    ],
)
def test_allocation_bombs_are_contained(lines: tuple[str, ...]) -> None:
    reward = compile_reward(reward_with(*lines), API)
    start = time.perf_counter()
    with pytest.raises(CodeResourceError) as info:
        reward(FakeView())
    assert time.perf_counter() - start < 2.0
    assert info.value.line is not None and 2 <= info.value.line <= 1 + len(lines)


@pytest.mark.parametrize(
    "lines",
    [
        ("x = np.zeros(10, dtype='U100000')",),
        ("x = np.array([1, 2]).astype(object)",),
        ("s = 'abc'", "x = s % ()"),
        ("x = round(5, -10**9)",),
        ("g = (i for i in range(3))", "x = [g]", "y = x[0].copy()"),
    ],
)
def test_runtime_type_guards(lines: tuple[str, ...]) -> None:
    with pytest.raises(DisallowedCodeError):
        compile_reward(reward_with(*lines), API)(FakeView())


def test_self_token_cannot_reach_the_view() -> None:
    source = (
        "def helper(view):\n    return view.copy()\n\n"
        "def _compute_reward(self):\n    helper(self)\n    return 0.0, False\n"
    )
    with pytest.raises(DisallowedCodeError) as info:
        compile_reward(source, API)(FakeView())
    assert info.value.line == 2


def test_memory_growth_is_bounded() -> None:
    limits = ExecutionLimits(max_memory_mb=64, time_limit_s=10, max_steps=10**12)
    reward = compile_reward(
        reward_with("keep = []", "for i in range(100000):", "    keep.append(np.ones(100000) + i)"),
        API,
        limits=limits,
    )
    with pytest.raises(CodeResourceError, match="memory"):
        reward(FakeView())
