"""Random programs against the cost proof: whatever it admits must run small and fast.

A seeded generator writes rewards from the constructs the proof knows (numbers from 1 to
2**62, arrays up to 10**6 elements, strings, tuples, lists, repetition, broadcasting
indexes, the numpy table with its keywords, builtins, loops, comprehensions, helpers),
each also in shapes it should refuse. Every program the proof admits (``runs_in ==
"in-process"``) is called here, and the call must end (a result or a typed error) within
a second with at most 64 MB of Python and numpy allocations (``tracemalloc``). A program
whose bound the proof got wrong fails this test.
"""

from __future__ import annotations

import random
import time
import tracemalloc

import pytest

from simjudge.envs.codegen import GeneratedCodeError, compile_reward

SIZES = ["1", "3", "64", "1000", "4096", "10**6", "2**62", "len(v0)", "int(1e308)"]
_NAMES = ["v0", "v1", "v2", "v3"]


def _size(rng: random.Random) -> str:
    return rng.choice(SIZES)


def _leaf(rng: random.Random) -> str:
    return rng.choice([
        "1.5", "2", "-3", "2**62", "int(1e308)", "'ab'", "(1.0, 2.0, 3.0)", "[0.5, 1.5]",
        f"np.ones({_size(rng)})", f"np.arange({_size(rng)})", f"np.zeros(({_size(rng)}, 3))",
        "np.ones(3)", *_NAMES,
    ])


def _expr(rng: random.Random, depth: int = 0) -> str:
    if depth > 2 or rng.random() < 0.3:
        return _leaf(rng)
    a, b = _expr(rng, depth + 1), _expr(rng, depth + 1)
    n = _size(rng)
    return rng.choice([
        f"({a} + {b})", f"({a} * {b})", f"({a} - {b})", f"({a} / {b})", f"({a} // {b})",
        f"({a} % {b})", f"({a} ** {b})", f"({a} == {b})", f"({a} < {b})", f"({a} in {b})",
        f"[{a}] * {n}", f"({a},) * {n}", f"'ab' * {n}", f"{a}[:, None]", f"{a}[0]",
        f"{a}[::2]", f"np.sum({a})", f"np.sum({a}, axis=0)", f"np.dot({a}, {b})",
        f"np.clip({a}, 0.0, {b})", f"np.clip({a}, a_min={b}, a_max=1.0)",
        f"np.repeat({a}, {n})", f"np.tile({a}, ({n}, 2))", f"np.linspace(0.0, 1.0, {n})",
        f"np.linspace({a}, {b}, 3)", f"np.concatenate([{a}, {b}])", f"np.isclose({a}, {b})",
        f"np.where({a} > 0, {a}, {b})", f"np.linalg.norm({a})", f"np.outer({a}, {b})",
        f"np.maximum({a}, {b})", f"np.cumsum({a})", f"np.diff({a})", f"len({a})",
        f"sum({a})", f"sorted({a})", f"min({a}, {b})", f"max({a})", f"abs({a})",
        f"int({a})", f"round({a})", f"float({a})", f"divmod({a}, {b})", f"pow({a}, {b})",
        f"[{a} for i in range({n})]", f"sum([{a} for i in range({n})])",
        f"np.array([{a}, {b}])", f"{a}.sum()", f"{a}.reshape(-1)", f"{a}.dot({b})",
        f"({a} if {b} else {a})", f"tuple({a})", f"list(range({n}))",
    ])


def _program(rng: random.Random) -> str:
    lines = ["v0 = (1.0, 2.0)", "v1 = np.ones(3)", "v2 = 2", "v3 = 'xy'"]
    for _ in range(rng.randint(1, 5)):
        target = rng.choice(_NAMES)
        kind = rng.random()
        if kind < 0.2:
            lines += [f"for i in range({_size(rng)}):", f"    {target} = {_expr(rng)}"]
        elif kind < 0.3:
            lines += [f"{target} = h({_expr(rng)})"]
        else:
            lines.append(f"{target} = {_expr(rng)}")
    body = "".join(f"    {line}\n" for line in lines)
    helper = "def h(x):\n    return (x, x)\n\n"
    return helper + f"def _compute_reward(self):\n{body}    return 0.0, False\n"


@pytest.mark.filterwarnings("ignore::SyntaxWarning")  # generated nonsense like 2[0]
@pytest.mark.parametrize("seed", range(4))
def test_what_the_proof_admits_runs_small_and_fast(seed: int) -> None:
    rng = random.Random(seed)
    admitted = 0
    for _ in range(300):
        source = _program(rng)
        try:
            reward = compile_reward(source, {})
        except GeneratedCodeError:
            continue
        if reward.runs_in != "in-process":
            reward.close()
            continue
        admitted += 1
        tracemalloc.start()
        start = time.perf_counter()
        try:
            reward(None)
        except GeneratedCodeError:
            pass
        finally:
            seconds = time.perf_counter() - start
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
        assert seconds < 1.0, (seconds, source)  # a proven call takes < 0.1 s unloaded
        assert peak < 64 * 2**20, (peak, source)
    assert admitted >= 30  # the generator does reach the proven subset (~18 % of programs)
