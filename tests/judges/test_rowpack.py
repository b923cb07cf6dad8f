"""The recorder's row packer (judges/_rowpack.c): exact copies of plain data, refusal otherwise."""

from __future__ import annotations

import collections
import math
import random
import struct
from typing import Any, NamedTuple

import numpy as np
import pytest

from simjudge.judges import JudgeRecord, make_judge
from simjudge.judges._rowpack import pack, unpack
from simjudge.tasks.spec import make_task_env


def same(a: Any, b: Any) -> bool:
    """Equal, with the same types all the way down (floats by their bits: -0.0 and NaNs too)."""
    if type(a) is not type(b):
        return False
    if type(a) is float:
        return struct.pack("<d", a) == struct.pack("<d", b)
    if type(a) in (tuple, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if type(a) is dict:
        return list(a) == list(b) and all(same(a[k], b[k]) and same(k, j)
                                          for k, j in zip(a, b, strict=True))
    return bool(a == b)


def plain(rng: random.Random, depth: int = 0) -> Any:
    """A random nested value of the types pack() takes."""
    scalars = [
        None, True, False, 0, 1, -1, 2**63 - 1, -(2**63), rng.randint(-(10**12), 10**12),
        rng.uniform(-1e6, 1e6), -0.0, math.inf, -math.inf, math.nan,
        struct.unpack("<d", struct.pack("<Q", 0x7FF8_0000_DEAD_BEEF))[0],  # a NaN payload
        "", "joint_0", "é€ 😀", "nul\x00inside", b"", b"\x00\xff" * rng.randint(0, 40),
    ]
    if depth >= 4 or rng.random() < 0.4:
        return rng.choice(scalars)
    kind = rng.choice(("tuple", "list", "dict"))
    items = [plain(rng, depth + 1) for _ in range(rng.randint(0, 6))]
    if kind == "tuple":
        return tuple(items)
    if kind == "list":
        return items
    keys = [rng.choice(["a", "b", "c", "success", 0, 1.5, None, True, ("k", 2), b"x"])
            for _ in items]
    return dict(zip(keys, items, strict=True))


def test_plain_values_come_back_equal_with_the_same_types_bit_for_bit() -> None:
    rng = random.Random(0)
    for _ in range(2000):
        value = plain(rng)
        data = pack(value)
        assert type(data) is bytes, value
        assert same(unpack(data), value), value


def test_a_recorded_row_comes_back_as_it_was() -> None:
    env = JudgeRecord(make_task_env("OpenDrawer-v0", horizon=5), make_judge("privileged"))
    env.reset(seed=0)
    env.step(env.action_space.sample())
    row = env._rows[-1]
    assert type(row) is bytes  # the env's summaries and the privileged judge's note are plain
    fast, progress, success, state, *_ = unpack(row)
    assert fast[1] == progress and type(success) is bool and "eef_pos" in state
    env.close()


class Pair(NamedTuple):
    a: int
    b: int


class Text(str):
    pass


@pytest.mark.parametrize(
    "value",
    [
        np.float64(1.5), np.bool_(True), np.int64(3), np.array([1.0]), bytearray(b"a"),
        memoryview(b"a"), 2**63, -(2**63) - 1, Text("a"), Pair(1, 2),
        collections.OrderedDict(a=1), {1, 2}, frozenset(), object(), 1j, "\ud800",
        (1, [2, {"k": np.float32(0.5)}]),  # refused anywhere inside, not converted
    ],
    ids=repr,
)
def test_anything_else_is_refused_not_converted(value: Any) -> None:
    assert pack(value) is None


def test_nesting_deeper_than_32_is_refused() -> None:
    value: Any = 1.0
    for _ in range(32):
        value = [value]
    assert same(unpack(pack(value)), value)
    assert pack([value]) is None


def test_altered_or_cut_bytes_raise_a_clear_error() -> None:
    data = pack(({"eef_pos": [0.1, 0.2]}, "joint", b"abc", 7))
    assert data is not None
    for cut in range(len(data)):
        with pytest.raises(ValueError, match="not a packed row"):
            unpack(data[:cut])
    with pytest.raises(ValueError, match="not a packed row"):
        unpack(data + b"N")
    with pytest.raises(ValueError, match="not a packed row"):
        unpack(b"?" + data[1:])
    with pytest.raises(TypeError, match="bytes"):
        unpack(bytearray(data))  # type: ignore[arg-type]


def test_pack_row_is_pack_of_the_row_in_one_call() -> None:
    from simjudge.judges._rowpack import pack_row

    action = np.linspace(-1, 1, 7, dtype=np.float32)
    form = (np.ndarray, action.data.format, action.shape)
    fast = (0.25, 0.25, 0, (("success", "fail"), (False, False), "joint"))
    info = {"progress": 0.25, "success": False, "state": {"eef_pos": [0.1, 0.2, 0.3]}, "x": 1}
    for states in (True, False):
        for given in (info, {"state": info["state"]}, {}):
            state = given.get("state") if states else None
            row = (fast, given.get("progress"), given.get("success"), state, action.tobytes(),
                   0.5, False, True)
            assert pack_row(fast, given, states, action, form, 0.5, False, True) == pack(row)


@pytest.mark.parametrize(
    "change",
    ["strided", "shape", "dtype", "list", "info mapping", "numpy reward", "numpy state", "form"],
)
def test_pack_row_declines_what_the_python_path_must_handle(change: str) -> None:
    from simjudge.judges._rowpack import pack_row

    action: Any = np.linspace(-1, 1, 7, dtype=np.float32)
    form: Any = (np.ndarray, action.data.format, action.shape)
    info: Any = {"progress": 0.25, "success": False, "state": {"q": [0.0]}}
    reward: Any = 0.5
    if change == "strided":
        action = np.linspace(-1, 1, 14, dtype=np.float32)[::2]
    elif change == "shape":
        action = action.reshape(1, 7)
    elif change == "dtype":
        action = action.astype(np.float64)
    elif change == "list":
        action = action.tolist()
    elif change == "info mapping":
        info = collections.OrderedDict(info)
    elif change == "numpy reward":
        reward = np.float64(0.5)
    elif change == "numpy state":
        info["state"] = {"q": np.zeros(1)}
    else:
        form = (np.ndarray, "f", [7])
    assert pack_row((0.0, 0.0, 0, None), info, True, action, form, reward, False, False) is None
