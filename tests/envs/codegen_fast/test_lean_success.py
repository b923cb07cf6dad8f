"""A success condition's per-step call (``CompiledSuccess.lean``) gives what calling it gives.

The code-success judge calls the condition's lean entry directly every step; ``outcome``
turns any result that is not ``True``/``False`` into the condition's value, or raises, as a
call of the compiled condition does. Checked on a live env's view for the block and function
forms, non-bool results, missing outputs and runtime errors, and for the judge on rollouts.
"""

from __future__ import annotations

import numpy as np
import pytest

from simjudge.envs.codegen import GeneratedCodeError, compile_success
from simjudge.envs.state_api import STATE_API
from simjudge.judges import CodeSuccessJudge, JudgeContext, Transition
from simjudge.tasks.spec import make_task_env

_JOINT = 'get_joint_state(self, "StorageFurniture", "joint_0")'
CODES = {
    "block": f"success = {_JOINT} > 0.05\n",
    "function": f"def is_success(self):\n    return {_JOINT} > 0.05\n",
    "number": f"success = {_JOINT} * 0.0 + 1\n",  # a float: converted as a call converts it
    "none": "def is_success(self):\n    return None\n",
    "missing": f"if {_JOINT} > 5.0:\n    success = True\n",
    "error": f"success = {_JOINT} / 0.0 > 1\n",
}


@pytest.fixture(scope="module")
def env():
    env = make_task_env("OpenDrawer-v0", horizon=40)
    yield env
    env.close()


def _outcome(call):
    try:
        return ("value", call())
    except GeneratedCodeError as exc:
        return ("error", type(exc).__name__, str(exc))


@pytest.mark.parametrize("name", sorted(CODES))
def test_lean_call_and_outcome_give_what_a_call_gives(env, name):
    compiled = compile_success(CODES[name], STATE_API)
    reference = compile_success(CODES[name], STATE_API)
    env.reset(seed=0)
    view = env.view
    lean = compiled.lean(view)
    assert lean is not None  # loop-free code on a live view
    rng = np.random.default_rng(1)
    for _ in range(25):
        env.step(rng.uniform(-1, 1, 7).astype(np.float32))

        def via_lean():
            result = lean(view)
            return result if result is True or result is False else compiled.outcome(result)

        assert _outcome(via_lean) == _outcome(lambda: reference(view))


def test_code_with_a_loop_has_no_lean_call(env):
    env.reset(seed=0)
    compiled = compile_success("n = 0\nwhile n < 3:\n    n += 1\nsuccess = n == 3\n", STATE_API)
    assert compiled.lean(env.view) is None and compiled(env.view) is True


def test_the_judge_takes_the_lean_call_and_agrees_with_the_general_path(env):
    lean_judge = CodeSuccessJudge(CODES["block"])
    general = CodeSuccessJudge(CODES["block"])
    general._lean_call = lambda view: None  # the path every step took before
    for judge in (lean_judge, general):
        judge.reset(JudgeContext())
    env.reset(seed=0)
    rng = np.random.default_rng(2)
    seen = set()
    for step in range(40):
        env.step(rng.uniform(-1, 1, 7).astype(np.float32))
        a = lean_judge.observe_fast(step, env.view, {})
        b = general.observe_fast(step, env.view, {})
        assert a == b
        seen.add(a[2])
        assert lean_judge.explain(a) == general.explain(b)
    assert lean_judge._lean is not None and lean_judge._lean[1] is not None
    signal = lean_judge.observe(Transition(step=0, view=env.view))
    assert signal.verdict in ("success", "undecided")


def test_the_judge_reports_runtime_errors_from_the_lean_call(env):
    judge = CodeSuccessJudge(CODES["error"])
    judge.reset(JudgeContext())
    env.reset(seed=0)
    signal = judge.observe_fast(0, env.view, {})
    reward, phi, code, note = signal
    assert judge._lean[1] is not None
    assert judge.explain(signal).verdict == "failure"  # a FastSignal, read by name
    assert "runtime error" in note and "ZeroDivisionError" in note
