"""No state across calls (issue 39, part 2): 300 calls of a reward that allocates 8 MB.

A module that is not pure (a module-level array) runs afresh on every call; its namespace
used to live in a reference cycle (its functions hold it as their globals), so each call's
8 MB stayed until the cycle collector ran: 2 GB after 300 calls. Now the namespace is
cleared when the call ends. Checked where each mode runs the code: in this process (the
worker's own ``"guarded"`` compile, with the cycle collector off, so only deterministic
release can pass), in the in-process mode's worker and in subprocess mode (the worker's
peak resident memory, ``VmHWM``).
"""

from __future__ import annotations

import gc

import psutil
import pytest

from simjudge.envs.codegen import compile_reward, compile_success

CALLS = 300
LIMIT_MB = 150.0
"""Allowed growth over 300 calls (one call's 8 MB plus the interpreter's noise)."""
MODULE_ARRAY = "A = np.ones(10**6)\n\ndef _compute_reward(self):\n    return float(A[0]), False\n"
LOCAL_ARRAY = ("def helper(x):\n    return x\n\nB = [1.0]\n\ndef _compute_reward(self):\n"
               "    a = np.ones(10**6)\n    return float(helper(a)[0]), False\n")


def _rss_mb() -> float:
    return psutil.Process().memory_info().rss / 2**20


def _worker_peak_mb(reward) -> float:
    with open(f"/proc/{reward._worker._proc.pid}/status") as status:
        line = next(ln for ln in status if ln.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024


@pytest.mark.parametrize("source", [MODULE_ARRAY, LOCAL_ARRAY])
def test_300_calls_here_release_each_namespace(source: str) -> None:
    reward = compile_reward(source, {}, mode="guarded")
    assert reward.runs_in == "in-process"
    reward(None)
    base = _rss_mb()
    enabled = gc.isenabled()
    gc.disable()  # only deterministic release (no cycle) keeps memory flat now
    try:
        for i in range(CALLS):
            assert reward(None) == (1.0, False)
            grown = _rss_mb() - base
            assert grown < LIMIT_MB, f"grew {grown:.0f} MB after {i + 1} calls"
    finally:
        if enabled:
            gc.enable()


def test_300_calls_of_a_success_block_release_each_namespace() -> None:
    success = compile_success("a = np.ones(10**6)\nsuccess = float(a[0]) > 0.5\n", {},
                              mode="guarded")
    success(None)
    base = _rss_mb()
    gc.disable()
    try:
        for _ in range(CALLS):
            assert success(None) is True
        assert _rss_mb() - base < LIMIT_MB
    finally:
        gc.enable()


@pytest.mark.parametrize("mode", ["in-process", "subprocess"])
def test_300_calls_in_the_worker_stay_flat(mode: str) -> None:
    with compile_reward(MODULE_ARRAY, {}, mode=mode) as reward:
        assert reward.runs_in == "worker"
        reward(None)
        base = _worker_peak_mb(reward)
        for _ in range(CALLS):
            assert reward(None) == (1.0, False)
        peak = _worker_peak_mb(reward)
    assert peak - base < LIMIT_MB, f"the worker's peak grew {peak - base:.0f} MB"


def test_failing_calls_in_the_worker_do_not_keep_their_values() -> None:
    source = "def _compute_reward(self):\n    a = np.ones(10**6)\n    return a[10**7], False\n"
    with compile_reward(source, {}) as reward:
        with pytest.raises(Exception):  # noqa: B017 - a typed GeneratedCodeError
            reward(None)
        base = _worker_peak_mb(reward)
        for _ in range(CALLS):
            with pytest.raises(Exception):  # noqa: B017
                reward(None)
        assert _worker_peak_mb(reward) - base < LIMIT_MB
