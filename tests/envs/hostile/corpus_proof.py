"""Hostile cases against the cost proof (issue 39): how would one break "proven => bounded"?

Each case targets one assumption of :mod:`simjudge.envs.codegen.prove`: that single C calls
are bounded by the sizes of *all* their arguments (keywords included), that conversions and
literals have bounded sizes, that comparisons cost at most the logical sizes of their
operands, that size arithmetic cannot wrap, that unions of types are handled for every
option, that the proof itself is cheap, and that no memory survives from one call to the
next (cases with ``calls`` > 1 are called that many times in one child). They are rows
``(id, category, source[, calls])``; ``corpus.py`` turns them into cases.
"""

from __future__ import annotations

__all__ = ["PROOF_CASES"]


def _body(*lines: str, result: str = "0.0, False") -> str:
    text = "".join(f"    {line}\n" for line in lines)
    return f"def _compute_reward(self):\n{text}    return {result}\n"


_BIG = "s = 'a' * 10**6"
_NESTED_LOOPS = "".join("    " * (i + 1) + f"for i{i} in range(2):\n" for i in range(25))

PROOF_CASES: list[tuple[str, ...] | tuple[str, str, str, int]] = [
    # -- single C calls: every argument counts, keywords too ------------------------------
    ("proof-dot-keywords", "time", _body("x = np.dot(a=np.ones((3000, 3000)), b=np.ones((3000, 3000)))")),
    ("proof-clip-keyword-broadcast", "memory",
     _body("a = np.ones(4)", "x = np.clip(a, a_min=np.ones((20000, 1)), a_max=np.ones((1, 20000)))")),
    ("proof-isclose-keyword", "memory",
     _body("x = np.isclose(np.ones(20000), b=np.ones((20000, 1)))")),
    ("proof-cross-keyword", "memory",
     _body("x = np.cross(np.ones((10**7, 3)), b=np.ones((10**7, 3)))")),
    ("proof-ufunc-where", "memory",
     _body("m = np.ones(20000) > 0", "x = np.add(1.0, 2.0, where=m[:, None] & m[None, :])")),
    ("proof-sum-where", "memory",
     _body("a = np.ones(20000)", "x = np.sum(a, where=a[:, None] > a[None, :])")),
    ("proof-linspace-array-ends", "memory",
     _body("x = np.linspace(np.zeros(20000), np.ones(20000), 20000)")),
    ("proof-linspace-num-keyword", "memory", _body("x = np.linspace(0.0, 1.0, num=10**9)")),
    ("proof-norm-ord-array", "time", _body("x = np.linalg.norm(np.ones((2000, 2000)), ord=2)")),
    ("proof-round-decimals-keyword", "time", _body("x = np.round(np.ones(10**7), decimals=3)")),
    ("proof-zeros-shape-keyword", "memory", _body("x = np.zeros(shape=(10**5, 10**5))")),
    ("proof-full-keywords", "memory",
     _body("x = np.full(shape=(10**5, 10**5), fill_value=1.0)")),
    ("proof-concatenate-axis", "memory",
     _body("a = np.ones(10**6)", "x = np.concatenate([a] * 3000, axis=0)")),
    ("proof-interp-broadcast", "memory",
     _body("x = np.interp(np.ones((20000, 20000)), [0.0, 1.0], [0.0, 1.0])")),
    ("proof-where-broadcast", "memory",
     _body("c = np.ones(20000) > 0", "x = np.where(c[:, None], np.ones(20000), 0.0)")),
    ("proof-diff-order", "time", _body("x = np.diff(np.ones(4096), 4095)")),
    ("proof-eye-huge", "memory", _body("x = np.eye(2**31)")),
    ("proof-arange-huge", "memory", _body("x = np.arange(0, 2**62)")),
    ("proof-outer-keywordless", "memory", _body("x = np.outer(np.ones(10**5), np.ones(10**5))")),
    ("proof-matmul-max-arrays", "time",
     _body("a = np.ones((4096, 4096))", "x = a @ a")),
    # -- conversions and literals ---------------------------------------------------------
    ("proof-int-hex-string", "time", _body("x = int('f' * 10**6, 16)")),
    ("proof-int-decimal-string", "time", _body("x = int('9' * 4000)", "y = x ** 30")),
    ("proof-float-long-string", "time", _body("x = float('1' * 10**7)")),
    ("proof-hex-literal", "time", _body("x = 0x" + "f" * 2400, "y = x * x * x")),
    ("proof-int-of-float-powers", "time", _body("x = int(1e308)", "y = x ** 3 * x ** 3")),
    ("proof-round-of-float-product", "time",
     _body("x = round(1.7e308)", "y = x * x * x * x", "z = y ** 4")),
    ("proof-floor-power", "time", _body("x = math.floor(1e308) ** 12")),
    ("proof-power-tower", "time", _body("x = 7 ** 7 ** 7")),
    ("proof-pow-three-args", "time", _body("x = pow(3, 2**9990, 2**9990 + 1)")),
    ("proof-divmod-big", "time", _body("x = (2**64) ** 150", "y = divmod(x ** 60, 7)")),
    ("proof-str-of-big-int", "time", _body("x = 2 ** 9000", "y = str(x)")),
    ("proof-floordiv-mod-big", "time",
     _body("x = 10 ** 4000", "y = x ** 20", "z = y // 7 + y % 11")),
    ("proof-item-then-power", "time", _body("x = np.ones(3).item()", "y = int(x) ** 10**6")),
    # -- comparisons over shared references ----------------------------------------------
    ("proof-count-shared-strings", "time", _body(_BIG, "L = [s] * 10**6", "x = L.count(s + '')")),
    ("proof-in-shared-strings", "time", _body(_BIG, "L = [s] * 10**6", "x = (s + 'b') in L")),
    ("proof-eq-shared-lists", "time",
     _body(_BIG, "t = s + ''", "L = [s] * 10**6", "M = [t] * 10**6", "x = L == M")),
    ("proof-index-shared-tuple", "time",
     _body(_BIG, "T = tuple([s] * 10**6)", "x = T.count(s + 'b')")),
    ("proof-strip-chars", "time", _body(_BIG, "x = s.strip('b' * 10**6)")),
    ("proof-startswith-tuple", "time",
     _body(_BIG, "x = (s + 'c').startswith(tuple([s + 'b'] * 10**5))")),
    ("proof-sorted-shared-strings", "time", _body(_BIG, "x = sorted([s + 'b', s] * 10**5)")),
    ("proof-tuple-lt-nested", "time",
     _body("t = (1.0,) * 4000", "x = [t] * 4000 < [t] * 4000")),
    ("proof-array-eq-list", "memory",
     _body("a = np.ones(20000)", "x = a == [a] * 20000")),
    ("proof-min-two-big-tuples", "time",
     _body("t = tuple(range(10**6))", "x = min([t] * 100, [t] * 100)")),
    # -- keyword arguments the table does not name ----------------------------------------
    ("proof-sorted-key", "time", _body("a = np.ones(10**6)", "x = sorted([a] * 2000, key=np.sum)")),
    ("proof-max-key", "time", _body(_BIG, "x = max([s] * 10**6, key=len)")),
    ("proof-print-sep", "memory", _body("print(1, 2, sep='-' * 10**8)")),
    ("proof-print-end", "memory", _body("print(1, end='-' * 10**8)")),
    ("proof-array-ndmin", "memory", _body("x = np.array([1.0], ndmin=10**6)")),
    ("proof-sum-dtype-object", "time", _body("x = np.sum(np.ones(10**6), dtype=object)")),
    # -- overflow in size arithmetic ------------------------------------------------------
    ("proof-repeat-list-wraps", "crash", _body("x = np.repeat(np.ones(4), [2**62] * 4)")),
    ("proof-repeat-tuple-wraps", "crash",
     _body("x = np.repeat(np.ones(4), (2**62, 2**62, 2**62, 2**62))")),
    ("proof-repeat-array-counts", "crash",
     _body("x = np.repeat(np.ones(2), np.array([2**62, 2**62]))")),
    ("proof-tile-product-wraps", "crash", _body("x = np.tile(np.ones(4), (2**32, 2**32))")),
    ("proof-zeros-shape-wraps", "crash", _body("x = np.zeros((2**32, 2**32, 2**2))")),
    ("proof-list-times-huge", "memory", _body("n = 2**62", "x = [0.0] * n")),
    ("proof-str-times-huge", "memory", _body("x = 'ab' * 2**62")),
    ("proof-tuple-times-numpy-int", "memory", _body("x = (1.0,) * np.int64(10**9)")),
    ("proof-str-times-numpy-int", "memory", _body("x = 'ab' * np.int64(10**9)")),
    ("proof-list-times-int-of-float", "memory", _body("x = [1.0] * int(1e10)")),
    ("proof-shape-times", "memory", _body("x = np.zeros(np.ones(4).shape * 10**6)")),
    ("proof-len-power", "memory", _body("t = (1.0,) * 1000", "x = np.ones(len(t) ** 4)")),
    ("proof-index-array-store", "memory",
     _body("a = np.ones(3)", "a[list(range(10**7))] = 1.0")),
    ("proof-broadcast-three-axes", "memory",
     _body("a = np.ones(4000)", "x = a[:, None, None] * a[None, :, None]")),
    ("proof-union-power", "time",
     _body("x = 2**62 if len('ab') > 1 else 1.5", "y = x ** 40", "z = y ** 40")),
    ("proof-bool-shift", "time", _body("x = True << 10**6", "y = x * x")),
    # -- growth the types must follow -----------------------------------------------------
    ("proof-tuple-growth-loop", "memory",
     _body("t = ()", "for i in range(4000):", "    t = t + (np.ones(4000),)")),
    ("proof-concatenate-doubling", "memory",
     _body("a = np.ones(2)", "for i in range(40):", "    a = np.concatenate([a, a])")),
    ("proof-string-doubling", "memory",
     _body("s = 'ab'", "for i in range(40):", "    s = s + s")),
    ("proof-int-squaring-loop", "time",
     _body("x = 3", "for i in range(40):", "    x = x * x")),
    ("proof-helper-doubling", "memory",
     "def h(x):\n    return (x, x)\n"
     + _body("y = " + "h(" * 30 + "1.0" + ")" * 30)),
    ("proof-nested-comprehension", "memory",
     _body("x = [[np.ones(4000) for i in range(100)] for j in range(100)]")),
    ("proof-loop-work", "time",
     _body("t = 0.0", "for i in range(10**4):", "    for j in range(10**4):",
           "        t = t + float(np.sum(np.ones(4096)))")),
    ("proof-alias-list-extend", "memory",
     _body("L = [0.0] * 1000", "M = L", "L += L", "N = M * 4", "K = N", "N += N", "P = K * 4",
           "Q = P", "P += P", "R = Q * 4", "x = np.array(R) + np.array(R)[:, None]")),
    ("proof-alias-list-extend-loop", "memory",
     _body("L = [0.0]", "M = L", "for i in range(24):", "    L += M")),
    # -- the proof's own cost -------------------------------------------------------------
    ("proof-nested-loops-analysis", "check",
     "def _compute_reward(self):\n    t = 0.0\n" + _NESTED_LOOPS + "    " * 26 + "t = t + 1.0\n"
     "    return t, False\n"),
    ("proof-many-helpers-analysis", "check",
     "".join(f"def f{i}(x):\n    return f{i - 1}(x) + f{i - 1}(x)\n" if i else
             "def f0(x):\n    return x\n" for i in range(9))
     + _body("y = f8(1.0) + f8(2) + f8(np.ones(3))")),
    # -- what def and module load run -----------------------------------------------------
    ("proof-default-allocates", "memory",
     "def h(x, y=np.ones(10**9)):\n    return x\n" + _body("z = h(1.0)")),
    ("proof-annotation-allocates", "memory",
     "X: np.ones(10**9) = 1.0\n" + _body(result="X, False")),
    ("proof-argument-annotation", "memory",
     "def h(x: np.ones(10**9)):\n    return x\n" + _body("z = h(1.0)")),
    # -- memory across calls (each case called 300 times) --------------------------------
    ("proof-module-array-300-calls", "memory",
     "A = np.ones(10**6)\n\n" + _body(result="float(A[0]), False"), 300),
    ("proof-module-list-300-calls", "memory",
     "KEEP = []\n\n" + _body("KEEP.append(np.ones(10**6))", result="float(len(KEEP)), False"),
     300),
    ("proof-helper-default-300-calls", "memory",
     "def h(x, cache=[]):\n    cache.append(np.ones(10**6))\n    return len(cache)\n"
     + _body(result="float(h(1)), False"), 300),
    ("proof-local-cycle-300-calls", "memory",
     _body("a = [np.ones(10**6)]", "a.append(a)", result="1.0, False"), 300),
    ("proof-raising-after-alloc-300-calls", "memory",
     _body("a = np.ones(10**6)", "x = a[10**7]"), 300),
    ("proof-proven-alloc-300-calls", "memory",
     _body("a = np.ones(4096)", "b = a * 2.0", result="float(b.sum()), False"), 300),
    # -- code the proof admits, at its bounds: it must stay within them in-process ---------
    ("proof-pressure-loop-10000", "time",
     _body("t = 0.0", "for i in range(10000):", "    t = t + float(i) * 0.5 - 1.0",
           result="t, t > 0")),
    ("proof-pressure-nested-loops", "time",
     _body("t = 0.0", "for i in range(100):", "    for j in range(100):",
           "        t += (i * j) % 7", result="float(t), False")),
    ("proof-pressure-max-array-chain", "memory",
     _body("a = np.ones(4096)", "b = a * 2.0 + 1.0 - 0.5 / 2.0", "c = np.sqrt(np.abs(b)) * 3.0",
           "d = np.cumsum(np.sort(c)) - 1.0", result="float(d.sum()), False")),
    ("proof-pressure-linalg-64", "time",
     _body("m = np.eye(64) * 2.0", "x = np.linalg.inv(m)", "y = np.linalg.det(m)",
           "z = np.linalg.norm(m, 2)", "w = np.linalg.solve(m, np.ones(64))",
           result="float(x.sum()) + float(z) + float(w.sum()), float(y) > 0")),
    ("proof-pressure-comprehension-4000", "memory",
     _body("xs = [float(i) * 2.0 for i in range(4000)]", "t = sum(xs)",
           result="t, False")),
    ("proof-pressure-helper-in-loop", "time",
     "def h(x):\n    return x * 2.0 + 1.0\n"
     + _body("t = 0.0", "for i in range(5000):", "    t = h(t) * 0.5",
             result="t, False")),
    ("proof-pressure-big-ints", "time",
     _body("x = int(1e308)", "y = x * x", "z = y // 3 + y % 7", "q = divmod(y, 11)",
           "r = round(1.7e308) * round(1e308)", result="float(z % 1000), q[1] < 11")),
    ("proof-pressure-string-compare", "time",
     _body("a = 'abc' * 80", "b = 'abc' * 80", "c = a == b and a.startswith('abc')",
           "d = a.upper() != b", result="1.0, c and d")),
    ("proof-pressure-tuple-compare", "time",
     _body("t = tuple(range(4000))", "u = tuple(range(4000))", "x = t < u or t == u",
           "y = 3999 in t", result="1.0, x and y")),
    ("proof-pressure-broadcast-64", "memory",
     _body("a = np.ones(64)", "m = a[:, None] * a[None, :]", "x = np.sum(m, axis=0) * 2.0",
           result="float(x.sum()), False")),
    ("proof-pressure-index-arrays", "memory",
     _body("a = np.arange(64)", "b = np.ones(64)", "b[a % 2 == 0] = 3.0",
           "c = b[a[::2]]", result="float(c.sum()), False")),
    ("proof-pressure-prints", "memory",
     _body("a = np.ones(4096)", "for i in range(3):", "    print(a, i)",
           result="1.0, False")),
    # -- legit code the proof admits, which must keep working ------------------------------
    ("legit-proof-numpy", "legit",
     _body("p = np.array([0.4, 0.0, 0.5])", "q = np.zeros(3)", "q[2] = 0.5",
           "d = float(np.linalg.norm(p - q))", "w = [0.5 * i for i in range(4)]",
           "t = 0.0", "for v in w:", "    t += v", "lo, hi = 0.0, 1.0",
           "f = (t - lo) / (hi - lo)", result="-d + min(f, 1.0), f > 0.5")),
    ("legit-proof-helpers", "legit",
     "SCALE = 2.0\n\ndef dist(a, b):\n    return float(np.linalg.norm(np.asarray(a) - "
     "np.asarray(b)))\n\n" + _body("x = dist([1.0, 0.0, 0.0], (0.0, 0.0, 0.0))",
                                 "y = abs(-3) + round(2.6) + divmod(7, 2)[0]",
                                 result="SCALE * x + y, x > 0.5")),
    ("legit-proof-300-calls", "legit",
     _body("a = np.ones(8)", "b = np.clip(a * 3.0, 0.0, 2.0)", result="float(b.sum()), True"),
     300),
]
"""The cases against the proof (rows; see the module docstring)."""
