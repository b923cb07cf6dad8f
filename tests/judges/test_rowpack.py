"""The recorder's row packer and episode log (judges/_rowpack.c): exact copies of plain data,
refusal otherwise."""

from __future__ import annotations

import collections
import math
import random
import struct
from typing import Any, NamedTuple

import numpy as np
import pytest

from simjudge.judges import JudgeRecord, make_judge
from simjudge.judges._rowpack import RowLog, pack, unpack
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
    log = env._log
    assert log is not None and len(log) == 2
    data = log.packed(1)
    assert type(data) is bytes  # the env's summaries and the privileged judge's note are plain
    fast, progress, success, state, *_ = unpack(data)
    assert same(log.rows()[1], unpack(data))
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


def test_add_row_packs_the_row_in_one_call_as_pack_would() -> None:
    action = np.linspace(-1, 1, 7, dtype=np.float32)
    form = (np.ndarray, action.dtype, action.shape)
    fast = (0.25, 0.25, 0, (("success", "fail"), (False, False), "joint"))
    info = {"progress": 0.25, "success": False, "state": {"eef_pos": [0.1, 0.2, 0.3]}, "x": 1}
    log, expected = RowLog(), []
    for states in (True, False):
        for given in (info, {"state": info["state"]}, {}):
            state = given.get("state") if states else None
            row = (fast, given.get("progress"), given.get("success"), state, action.tobytes(),
                   0.5, False, True)
            assert log.add_row(fast, given, states, action, form, 0.5, False, True) is True
            assert log.packed(len(log) - 1) == pack(row)
            expected.append(row)
    assert all(same(a, b) for a, b in zip(log.rows(), expected, strict=True))
    assert log.phis() == [0.25] * len(expected) and log.nbytes == sum(map(len, map(pack, expected)))


@pytest.mark.parametrize(
    "change",
    ["strided", "shape", "dtype", "byte order", "list", "info mapping", "numpy reward",
     "numpy state", "form", "fast list"],
)
def test_add_row_declines_what_the_python_path_must_handle(change: str) -> None:
    action: Any = np.linspace(-1, 1, 7, dtype=np.float32)
    form: Any = (np.ndarray, action.dtype, action.shape)
    info: Any = {"progress": 0.25, "success": False, "state": {"q": [0.0]}}
    reward: Any = 0.5
    fast: Any = (0.0, 0.0, 0, None)
    if change == "strided":
        action = np.linspace(-1, 1, 14, dtype=np.float32)[::2]
    elif change == "shape":
        action = action.reshape(1, 7)
    elif change == "dtype":
        action = action.astype(np.float64)
    elif change == "byte order":  # the same numbers and item size, another dtype object
        action = action.astype(">f4")
    elif change == "list":
        action = action.tolist()
    elif change == "info mapping":
        info = collections.OrderedDict(info)
    elif change == "numpy reward":
        reward = np.float64(0.5)
    elif change == "numpy state":
        info["state"] = {"q": np.zeros(1)}
    elif change == "fast list":
        fast = list(fast)
    else:
        form = (np.ndarray, "f", [7])
    log = RowLog()
    log.add((1.0,), 1.0)
    before = log.nbytes
    assert log.add_row(fast, info, True, action, form, reward, False, False) is False
    assert len(log) == 1 and log.nbytes == before  # nothing added, nothing left behind
    assert log.rows() == [(1.0,)]


def test_add_row_packs_a_missing_action_as_none_whatever_the_form() -> None:
    """The reset's row has no action: add_row packs None there, as pack() packs the row."""
    fast = (0.5, 0.5, 0, None)
    info = {"progress": 0.5, "success": False, "state": {"q": [0.0]}}
    for form in (None, (np.ndarray, np.dtype(np.float32), (7,))):
        log = RowLog()
        assert log.add_row(fast, info, True, None, form, None, False, False) is True
        assert log.packed(0) == pack((fast, 0.5, False, {"q": [0.0]}, None, None, False, False))


def test_the_log_keeps_rows_in_order_packed_or_as_they_are() -> None:
    """Plain rows packed (bytes as pack()), others kept as the object (not converted); Φ as given,
    floats to the bit; rows() and phis() give them back in order."""
    note = object()
    rng = random.Random(1)
    rows = [plain(rng) for _ in range(300)] + [(np.float64(1.0),), (note,), "tail"]
    phis: list[Any] = [rng.uniform(0, 1) for _ in rows]
    phis[3], phis[4], phis[5] = None, np.float64(0.5), -0.0
    log = RowLog(16)  # grows as needed
    for k, (row, phi) in enumerate(zip(rows, phis, strict=True)):
        (log.keep if k == 7 else log.add)(row, phi)
    assert len(log) == len(rows)
    for k, row in enumerate(rows):
        kept = k == 7 or pack(row) is None
        assert log.packed(k) == (None if kept else pack(row))
    back = log.rows()
    assert all(same(a, b) for a, b in zip(back, rows, strict=True))
    assert back[-2][0] is note and back[7] is rows[7]
    assert all(same(a, b) if type(b) is float else a is b
               for a, b in zip(log.phis(), phis, strict=True))
    with pytest.raises(IndexError):
        log.packed(len(rows))


def test_a_log_holding_itself_is_collected() -> None:
    import gc
    import weakref

    class Holder:
        pass

    holder = Holder()
    holder.log = RowLog()  # type: ignore[attr-defined]
    holder.log.add((holder,), None)  # type: ignore[attr-defined]  # kept: a cycle through the log
    gone = weakref.ref(holder)
    del holder
    gc.collect()
    assert gone() is None


def test_a_log_must_be_initialised_and_takes_its_arguments() -> None:
    log = RowLog.__new__(RowLog)
    with pytest.raises(ValueError, match="__init__"):
        log.add((1.0,), 1.0)
    with pytest.raises(TypeError, match="2 arguments"):
        RowLog().add((1.0,))  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="8 arguments"):
        RowLog().add_row(1, 2)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="once"):
        RowLog().__init__()  # type: ignore[misc]
