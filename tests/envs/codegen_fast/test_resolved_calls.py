"""Constant state-API calls resolved into the per-step reading return what the calls return.

Rollouts of several library tasks (seeded random actions, suction on and off) are replayed
step by step; at every step each resolved reader is compared with the state-API function it
stands for (same type, same values, fresh writable arrays), and compiled generated code is
compared with the same code compiled against an API that the compiler does not resolve.
"""

from __future__ import annotations

import numpy as np
import pytest

from simjudge.envs.codegen import compile_reward, compile_success
from simjudge.envs.codegen.resolve import RESOLVABLE, ConstantCall, bind_calls
from simjudge.envs.state_api import STATE_API
from simjudge.tasks.spec import make_task_env

TASKS = ("OpenDrawer-v0", "OpenDoor-v0", "PutCubeInBox-v0", "TurnFaucet-v0")
STEPS = 12


def _forward(fn):
    """``fn`` under a new identity (the compiler resolves only STATE_API's own functions)."""
    return lambda view, *args: fn(view, *args)


def _unresolvable_api():
    """The same functions under new identities: the compiler resolves none of them."""
    return {name: _forward(fn) for name, fn in STATE_API.items()}


def _same(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return (a.dtype == b.dtype and a.shape == b.shape and a.flags.writeable
                and b.flags.writeable and np.array_equal(a, b))
    if isinstance(a, tuple | list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def _calls(view) -> list[ConstantCall]:
    """Every resolvable call on every object, joint and link of the scene (and bad names)."""
    scene = view.reading_source()
    args: list[tuple[str, tuple[str, ...]]] = [("get_eef_pos", ())]
    for name, obj in scene.objects.items():
        for fn in ("get_position", "get_orientation", "get_bounding_box", "check_grasped"):
            args += [(fn, (name,)), (fn, (name.lower(),))]
        for joint in obj.joint_index:
            args += [("get_joint_state", (name, joint)), ("get_joint_limit", (name, joint))]
        for link in obj.link_index:
            for fn in ("get_bounding_box_link", "get_link_state", "check_grasped",
                       "gripper_close_to_object_link"):
                args.append((fn, (name, link)))
    args += [("get_joint_state", ("Nowhere", "joint_0")), ("get_position", ("Nowhere",)),
             ("get_bounding_box", ("init_table",)), ("get_link_state", (name, "no_link"))]
    assert {fn for fn, _ in args} == RESOLVABLE
    return [ConstantCall(fn, a, f"__sj_c{i}") for i, (fn, a) in enumerate(args)]


def _outcome(fn):
    try:
        return "ok", fn()
    except Exception as exc:  # noqa: BLE001 - the error itself is compared
        return "error", f"{type(exc).__name__}: {exc}"


def _actions(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    actions = rng.uniform(-1, 1, size=(STEPS, 7)).astype(np.float32)
    actions[:, 6] = np.where(np.arange(STEPS) % 6 < 3, -1.0, 1.0)  # suction off, then on
    return actions


@pytest.mark.parametrize("task", TASKS)
def test_every_resolved_reader_returns_what_the_state_api_returns(task):
    env = make_task_env(task)
    try:
        env.reset(seed=0)
        view = env.unwrapped.view
        calls = _calls(view)
        fallback = {c.slot: (lambda c=c: STATE_API[c.name](view, *c.args)) for c in calls}
        readers = bind_calls(view, tuple(calls), fallback)
        resolved = [c for c in calls if readers[c.slot] is not fallback[c.slot]]
        assert {c.name for c in resolved} == RESOLVABLE  # every kind resolves somewhere
        assert all(readers[c.slot] is fallback[c.slot] for c in calls if "Nowhere" in c.args)
        for action in _actions(1):
            env.step(action)
            for call in calls:
                expected = _outcome(lambda call=call: STATE_API[call.name](view, *call.args))
                got = _outcome(readers[call.slot])
                assert got[0] == expected[0] == "ok" or call not in resolved, (call, got)
                assert _same(got, expected), (call, got, expected)
    finally:
        env.close()


SUCCESS = {
    "OpenDrawer-v0": (
        'angle = get_joint_state(self, "StorageFurniture", "joint_0")\n'
        'low, high = get_joint_limit(self, "StorageFurniture", "joint_0")\n'
        "success = angle >= low + 0.6 * (high - low)\n"
    ),
}
REWARD = (
    "def _compute_reward(self):\n"
    "    eef, orn = get_eef_pos(self)\n"
    "    lo, hi = get_bounding_box(self, {obj!r})\n"
    "    centre = (lo + hi) / 2.0\n"
    "    d = np.linalg.norm(eef - get_position(self, {obj!r})) + 0.1 * np.sum(orn * orn)\n"
    "    tilt = get_orientation(self, {obj!r})[2] - 0.5 * centre[0]\n"
    "    held = check_grasped(self, {obj!r})\n"
    "    return -d + tilt, held or d < 0.02\n"
)


@pytest.mark.parametrize("task", TASKS)
def test_compiled_code_gives_the_same_results_resolved_or_not(task):
    env = make_task_env(task)
    try:
        env.reset(seed=0)
        view = env.unwrapped.view
        obj = next(iter(view.reading_source().objects))
        plain = _unresolvable_api()
        pairs = [(compile_reward(REWARD.format(obj=obj), STATE_API),
                  compile_reward(REWARD.format(obj=obj), plain))]
        if task in SUCCESS:
            pairs.append((compile_success(SUCCESS[task], STATE_API),
                          compile_success(SUCCESS[task], plain)))
        for fast, slow in pairs:
            assert fast.constant_calls and not slow.constant_calls
        for action in _actions(2):
            env.step(action)
            for fast, slow in pairs:
                assert _same(_outcome(lambda f=fast: f(view)), _outcome(lambda s=slow: s(view)))
    finally:
        env.close()
