"""Prove it bounded or run it isolated (issue 39): the cost proof and where each call runs.

In-process mode runs here only what :mod:`simjudge.envs.codegen.prove` bounds; everything
else runs in the OS-bounded worker, with the state API answered by this process (so any
api mapping and any view work). The worker's limits are read from inside it.
"""

from __future__ import annotations

import ast
import errno
import time

import numpy as np
import pytest

from simjudge.envs.codegen import (
    CodeResourceError,
    CodeTimeoutError,
    ExecutionLimits,
    GeneratedCodeError,
    compile_reward,
    compile_success,
)
from simjudge.envs.codegen.prove import MAX_WORK, prove
from simjudge.envs.state_api import STATE_API
from tests.envs.hostile.corpus import body

DRAWER_REWARD = '''
def _compute_reward(self):
    lower, upper = get_joint_limit(self, "StorageFurniture", "joint_0")
    joint = get_joint_state(self, "StorageFurniture", "joint_0")
    fraction = (joint - lower) / (upper - lower)
    eef_pos = get_eef_pos(self)[0]
    part = get_link_state(self, "StorageFurniture", "link_1")
    distance = np.linalg.norm(eef_pos - part)
    grasped = check_grasped(self, "StorageFurniture", "link_1")
    reward = -distance - 2.0 * abs(1.0 - fraction) - (0.0 if grasped else 1.0)
    return reward, fraction >= 0.6
'''


def _proof(source: str, api=STATE_API):
    tree = ast.parse(source)
    entry = next(s.name for s in tree.body if isinstance(s, ast.FunctionDef)
                 and s.name == "_compute_reward")
    return prove(tree, api, entry, True)


def test_a_shipped_reward_is_proven_and_runs_in_process() -> None:
    reward = compile_reward(DRAWER_REWARD, STATE_API)
    assert (reward.cost_class, reward.runs_in) == ("bounded", "in-process")
    assert "bounded" in reward.reason and reward._worker is None
    proof = _proof(DRAWER_REWARD)
    assert proof.proven and 0 < proof.work <= MAX_WORK


def test_proven_code_gives_the_worker_s_results_on_a_live_view() -> None:
    from simjudge.tasks.spec import make_task_env

    env = make_task_env("OpenDrawer-v0")
    try:
        env.reset(seed=0)
        view = env.unwrapped.view
        here = compile_reward(DRAWER_REWARD, STATE_API)
        with compile_reward(DRAWER_REWARD, STATE_API, mode="subprocess") as there:
            assert there.runs_in == "worker" and "subprocess mode" in there.reason
            assert here(view) == there(view)
    finally:
        env.close()


def test_unproven_code_runs_in_the_worker_with_any_api_and_view() -> None:
    """A lambda api and a dict view cannot be pickled: the worker asks this process."""
    api = {"get_joint_state": lambda view, obj, joint: view[joint]}
    source = body("angle = get_joint_state(self, 'Door', 'joint_0')",
                  result="-abs(angle - 1.0), angle > 0.9")
    with compile_reward(source, api) as reward:
        assert (reward.cost_class, reward.runs_in) == ("unproven", "worker")
        assert "get_joint_state() is not simjudge's state API function" in reward.reason
        assert reward({"joint_0": 0.5}) == (-0.5, False)
        assert reward({"joint_0": 0.95}) == (pytest.approx(-0.05), True)
        assert reward.isolation["rlimit_as"].endswith("MB")
    with compile_reward(source, api, mode="inprocess") as alias:  # the old spelling
        assert alias.mode == "in-process" and alias.runs_in == "worker"


def test_success_conditions_are_proven_or_isolated_alike() -> None:
    proven = compile_success("success = abs(-2) > 1", {})
    assert proven.runs_in == "in-process" and proven(None) is True
    with compile_success("x = [1]\nx.append(2)\nsuccess = len(x) == 2\n", {}) as mutated:
        assert mutated.runs_in == "worker" and "in the proof's table" in mutated.reason
        assert mutated(None) is True and mutated.lean(None) is None


@pytest.mark.parametrize(
    ("lines", "reason"),
    [
        (("x = int('f' * 10**6, 16)",), "a repeated string may exceed"),
        (("x = 0x" + "f" * 40,), "integer literal of more than 64 bits"),
        (("x = np.dot(a=np.ones(3), b=np.ones(3))",), "np.dot() with 0 positional"),
        (("x = np.clip(np.ones(3), a_min=np.ones((100, 1)), a_max=np.ones((1, 100)))",),
         "np.clip() may make more than 4096"),
        (("x = np.isclose(np.ones(3), b=np.ones(3))",), "np.isclose() with 1 positional"),
        (("x = np.add(np.ones(3), 1.0, where=np.ones(3) > 0)",), "keyword where="),
        (("x = np.linspace(np.zeros(100), np.ones(100), 100)",), "np.linspace() may make"),
        (("x = np.repeat(np.ones(4), (2**62, 2**62, 2**62, 2**62))",), "np.repeat() may make"),
        (("x = np.repeat(np.ones(4), [2**62] * 4)",), "not known to be a bounded integer"),
        (("x = 'ab' * np.int64(3)",), "not known to be a bounded Python int"),
        (("x = pow(3, 5, 7)",), "pow() with 3 arguments"),
        (("x = 2**64", "y = x ** x"), "integer of more than"),
        (("x = divmod(int(1e308) ** 4, 7)",), "integer of more than"),
        (("s = 'ab'", "x = s.strip('a')"), "str.strip() with arguments"),
        (("s = 'ab'", "x = s.startswith(('a', 'b'))"), "other than one string"),
        (("L = [1, 2]", "x = L.count(1)"), ".count() is not in the proof's table"),
        (("x = 1", "while x < 5:", "    x += 1"), "While statements"),
        (("t = 0.0", "for i in range(10001):", "    t += 1.0"), "more than 10000 items"),
        (("x = 3", "for i in range(40):", "    x = x * x"), "do not settle"),
        (("x = sorted([1.0, 2.0], key=abs)",), "keyword"),
        (("print(1, sep='-')",), "keyword"),
        (("d = {'a': 1.0}",), "Dict expressions"),
        (("L = [0.0] * 1000", "M = L", "L += L", "x = M * 4"), "grows in place"),
    ],
)
def test_what_the_proof_refuses_runs_in_the_worker(lines: tuple[str, ...], reason: str) -> None:
    with compile_reward(body(*lines), {}) as reward:
        assert (reward.cost_class, reward.runs_in) == ("unproven", "worker"), reward.reason
        assert reason in reward.reason
        start = time.perf_counter()
        try:
            reward(None)
        except GeneratedCodeError:
            pass  # a typed verdict; what matters is that it was bounded
        assert time.perf_counter() - start < 10.0


@pytest.mark.parametrize(
    "lines",
    [
        ("a = np.ones(3)", "a[0] = 2.0", "b = np.clip(a * 2.0, 0.0, 3.0)"),
        ("t = 0.0", "for i in range(100):", "    t += float(i) % 7"),
        ("x = [float(i) for i in range(10)]", "y = sum(x) / len(x)"),
        ("x = int(1e308)", "y = x * x // 3"),
        ("x = np.linalg.norm(np.ones((8, 8)), 2)", "y = np.sum(np.ones(8), axis=0)"),
        ("name = 'Drawer'", "ok = name.lower() == 'drawer' and 'raw' in name"),
        ("x = [0.0] * 3", "y = np.asarray(x, dtype=float) + 1.0"),
    ],
)
def test_ordinary_code_is_proven(lines: tuple[str, ...]) -> None:
    reward = compile_reward(body(*lines), {})
    assert reward.runs_in == "in-process", reward.reason
    assert reward(None) == (0.0, False)


def test_what_def_runs_at_load_is_part_of_the_proof() -> None:
    for source in ("def h(x, y=np.ones(10**6)):\n    return x\n" + body("z = h(1.0)"),
                   "def h(x: np.ones(10**6)):\n    return x\n" + body("z = h(1.0)")):
        with compile_reward(source, {}) as reward:
            assert reward.runs_in == "worker"
    typed = compile_reward("def h(x: float, y=2.0) -> float:\n    return x * y\n"
                           + body("z = h(1.0)", result="z, False"), {})
    assert typed.runs_in == "in-process" and typed(None) == (2.0, False)


def test_the_proof_of_deeply_nested_loops_gives_up_quickly() -> None:
    loops = "".join("    " * (i + 1) + f"for i{i} in range(2):\n" for i in range(22))
    source = ("def _compute_reward(self):\n    t = 0.0\n" + loops + "    " * 23 + "t = t + 1.0\n"
              "    return t, False\n")
    start = time.perf_counter()
    proof = _proof(source, {})
    assert time.perf_counter() - start < 5.0
    assert not proof.proven and ("steps to analyse" in proof.reason or "work" in proof.reason)


def test_a_hanging_worker_call_is_killed_and_the_worker_restarted() -> None:
    limits = ExecutionLimits(time_limit_s=0.3, kill_grace_s=0.3)
    source = body("x = get_joint_state(self, 'Door', 'joint_0')", "if x > 0.9:",
                  "    while True:", "        x = x + 1.0", result="x, False")
    api = {"get_joint_state": lambda view, obj, joint: view}
    with compile_reward(source, api, limits=limits) as reward:
        assert reward.runs_in == "worker"
        with pytest.raises(CodeTimeoutError):
            reward(1.0)
        assert reward(0.5) == (0.5, False)  # a fresh worker


def test_the_worker_cannot_write_files_fork_or_hold_other_descriptors() -> None:
    from tests.envs.hostile.probe_api import PROBE_API

    source = body("a = rlimit_fsize(self)", "b = fork_errno(self)", "c = open_fds(self)",
                  result="a, b == 0")
    with compile_reward(source, PROBE_API, mode="subprocess") as reward:
        assert reward(None) == (0.0, False)  # RLIMIT_FSIZE is 0; the fork failed
        seccomp = reward.isolation["seccomp"]
    if seccomp.startswith("installed"):
        probe = body("b = fork_errno(self)", result="b, False")
        with compile_reward(probe, PROBE_API, mode="subprocess") as forked:
            assert forked(None) == (float(errno.EPERM), False)
    fds = body("c = open_fds(self)", "print(c)")
    with compile_reward(fds, PROBE_API, mode="subprocess") as reward:
        reward(None)
        listed = reward.last_output
    entries = [e.strip(" '") for e in listed.strip().strip("()").split(",") if e.strip()]
    targets = dict(e.split(":", 1) for e in entries)
    assert {targets[k] for k in ("0", "1", "2")} == {"/dev/null"}
    others = [t for k, t in targets.items() if k not in ("0", "1", "2") and t != "gone"]
    assert len(others) == 1 and others[0].startswith("socket:"), targets


def test_a_worker_result_too_large_is_a_typed_error() -> None:
    source = body("x = [0.0] * 10**6", "y = [x] * 20", result="y, False")
    with compile_reward(source, {}) as reward:
        with pytest.raises(GeneratedCodeError):
            reward(None)


def test_bad_mode_is_refused_with_the_modes() -> None:
    with pytest.raises(ValueError, match="'in-process' or 'subprocess'"):
        compile_reward(body(), {}, mode="thread")  # type: ignore[arg-type]


def test_arrays_from_the_worker_are_plain_results() -> None:
    source = body("x = np.ones(10**5)", "y = float(x.sum())", result="y, y > 1")
    with compile_reward(source, {}) as reward:
        assert reward.runs_in == "worker"
        assert reward(None) == (1e5, True)
    assert isinstance(np.float64(1.0), float)  # results are floats either way


def test_resource_errors_in_the_worker_are_typed() -> None:
    source = body("x = np.ones(10**8)", "y = x + x", result="float(y[0]), False")
    with compile_reward(source, {}, limits=ExecutionLimits(max_memory_mb=256)) as reward:
        with pytest.raises((CodeResourceError, CodeTimeoutError)):
            reward(None)
