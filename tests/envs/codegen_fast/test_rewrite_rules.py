"""Which calls are resolved, which guards are dropped, and that nothing else changes."""

from __future__ import annotations

import ast

import pytest

from simjudge.envs.codegen import compile_reward, compile_success
from simjudge.envs.codegen.resolve import rewrite_constant_calls
from simjudge.envs.codegen.shapes import block_as_function
from simjudge.envs.codegen.transform import GuardTransformer
from simjudge.envs.codegen.typed import SLOT_TYPES, drop_known_guards
from simjudge.envs.state_api import STATE_API
from simjudge.tasks.spec import make_task_env

JOINT = 'get_joint_state(self, "StorageFurniture", "joint_0")'
LIMIT = 'get_joint_limit(self, "StorageFurniture", "joint_0")'


def _forward(fn):
    """``fn`` under a new identity (the compiler resolves only STATE_API's own functions)."""
    return lambda view, *args: fn(view, *args)


def _guarded_entry(source: str, entry: str = "__sj_block") -> str:
    tree = ast.parse(source)
    if entry == "__sj_block":
        tree = block_as_function(tree)
    tree, calls = rewrite_constant_calls(tree, entry, STATE_API)
    types = {c.slot: SLOT_TYPES[c.name] for c in calls if c.name in SLOT_TYPES}
    return ast.unparse(drop_known_guards(GuardTransformer().visit(tree), entry, types))


def test_float_arithmetic_on_resolved_readings_runs_unguarded():
    text = _guarded_entry(f"a = {JOINT}\nlow, high = {LIMIT}\nsuccess = a >= low + 0.6 * (high - low)\n")
    assert "__sj_binop" not in text and "__sj_compare" not in text
    assert "__sj_c0()" in text and "__sj_c1()" in text


@pytest.mark.parametrize(
    "source",
    [
        f"a = {JOINT}\nsuccess = a * (10 ** 400) > 1\n",  # an int power: guarded
        f"a = {JOINT}\nb = [a] * 3\nsuccess = len(b) > 1\n",  # a list: guarded
        f"a = {JOINT}\nif a > 0:\n    a = 'x'\nsuccess = a * 2 == 'xx'\n",  # two types: unknown
        f"a = {LIMIT}\nsuccess = a ** 0.5 > 0\n",  # a tuple operand: guarded
    ],
)
def test_unknown_types_keep_their_guards(source):
    assert "__sj_binop" in _guarded_entry(source)


@pytest.mark.parametrize(
    "source",
    [
        "def _compute_reward(self):\n    self = 3\n    return get_joint_state(self, 'A', 'j'), False\n",
        "def _compute_reward(self):\n    get_joint_state = 1\n    return 0.0, False\n",
        "def helper(self):\n    return get_joint_state(self, 'A', 'j')\n"
        "def _compute_reward(self):\n    return helper(self), False\n",
        "def _compute_reward(self):\n    f = lambda self: get_joint_state(self, 'A', 'j')\n"
        "    return f(1), False\n",
        "def _compute_reward(env, self=2):\n    return get_joint_state(self, 'A', 'j'), False\n",
        "def _compute_reward(self):\n    return get_joint_state(self, 'A', name='j'), False\n",
        "def _compute_reward(self):\n    n = 'A'\n    return get_joint_state(self, n, 'j'), False\n",
    ],
)
def test_calls_whose_self_or_function_may_differ_are_not_resolved(source):
    _, calls = rewrite_constant_calls(ast.parse(source), "_compute_reward", STATE_API)
    assert calls == ()


def test_other_api_functions_under_the_same_name_are_not_resolved():
    api = dict(STATE_API, get_joint_state=lambda view, obj, joint: 0.5)
    code = compile_success(f"success = {JOINT} > 0.1\n", api)
    assert code.constant_calls == ()


def test_code_with_loops_keeps_the_tracer_and_its_calls():
    source = f"def _compute_reward(self):\n    t = 0.0\n    for i in range(3):\n        t = t + {JOINT}\n    return t, False\n"
    code = compile_reward(source, STATE_API)
    assert code.traced and code.constant_calls == ()


@pytest.fixture(scope="module")
def drawer_view():
    env = make_task_env("OpenDrawer-v0")
    env.reset(seed=0)
    yield env.unwrapped.view
    env.close()


def test_unknown_names_fail_as_written_with_the_same_message(drawer_view):
    source = 'success = get_joint_state(self, "StorageFurniture", "joint_9") > 0\n'
    plain = {name: _forward(fn) for name, fn in STATE_API.items()}
    fast, slow = compile_success(source, STATE_API), compile_success(source, plain)
    assert fast.constant_calls
    errors = []
    for code in (fast, slow):
        with pytest.raises(Exception) as caught:
            code(drawer_view)
        errors.append((type(caught.value), str(caught.value), caught.value.line))
    assert errors[0] == errors[1]
    assert "unknown joint 'joint_9'" in errors[0][1]


def test_reads_only_code_skips_the_run_state_but_keeps_the_deadline(drawer_view):
    source = f"a = {JOINT}\nlow, high = {LIMIT}\nsuccess = a >= low + 0.6 * (high - low)\n"
    code = compile_success(source, STATE_API)
    code(drawer_view)
    assert code._reads_only
    assert code._runs == [] or all(run.view is None for run in code._runs)
    printing = compile_success(f"print('x')\nsuccess = {JOINT} > -1\n", STATE_API)
    assert printing(drawer_view) is True and printing.last_output == "x\n"
    assert not printing._reads_only


@pytest.mark.parametrize(
    "source",
    ["success = __sj_c0() > 0\n", "f = get_joint_state.__closure__\nsuccess = True\n",
     "success = get_joint_state.__globals__ is None\n"],
)
def test_slots_and_wrappers_stay_out_of_reach(source):
    with pytest.raises(Exception, match="not allowed|reserved|cannot"):
        compile_success(source, STATE_API)


def test_resolved_calls_ask_the_engine_nothing_after_the_step_was_read(monkeypatch):
    env = make_task_env("OpenDrawer-v0")
    try:
        env.reset(seed=0)
        view = env.unwrapped.view
        code = compile_reward(
            "def _compute_reward(self):\n"
            f"    a = {JOINT}\n"
            "    d = np.linalg.norm(get_eef_pos(self)[0] - get_position(self, 'StorageFurniture'))\n"
            "    return a - d, a > 0.3\n",
            STATE_API,
        )
        code(view)
        engine = env.unwrapped.backend._p
        asked: list[str] = []
        for name in ("getJointStates", "getLinkStates", "getBasePositionAndOrientation",
                     "getAABB", "getJointState", "getLinkState"):
            original = getattr(engine, name)
            monkeypatch.setattr(engine, name, lambda *a, _n=name, _f=original, **k: (
                asked.append(_n), _f(*a, **k))[1])
        for _ in range(5):
            env.step(env.action_space.sample())
            asked.clear()
            code(view)
            code(view)
            assert asked == []  # the env's own per-step reading answered every call
    finally:
        monkeypatch.undo()
        env.close()


def test_a_name_bound_by_a_match_pattern_keeps_its_guards():
    from simjudge.envs.codegen.typed import _assignments

    tree = block_as_function(ast.parse(
        f"y = {JOINT}\nmatch y:\n    case [*rest] as y:\n        pass\nsuccess = y * 3 > 0\n"))
    _, other = _assignments(tree.body[0])
    assert {"y", "rest"} <= other
