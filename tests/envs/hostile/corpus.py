"""The hostile corpus: generated code written to break the sandbox, one case per attack.

Each :class:`Case` is a complete reward source (``SENTINEL`` in it is replaced by a path
in a fresh directory that must stay empty). Categories follow issue 16: ``time`` (work
that escapes the clock), ``memory`` (allocations that escape the size guards), ``crash``
(interpreter crashes), ``check`` (sources that attack the static checker), ``untyped``
(failures that used to surface as raw exceptions), ``escape`` (file, process, interpreter
access) and ``legit`` (ordinary code that must keep working). The old corpus of the
sandbox tests is included as ``old-*`` cases. A case passes when it is rejected at check
time, stopped with a typed error, or finishes, within the harness's outer time and memory
bounds and without side effects (see ``harness.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CASES", "Case", "by_id"]


@dataclass(frozen=True)
class Case:
    """One hostile program."""

    id: str
    category: str
    source: str
    calls: int = 1
    """How many times the child calls the compiled reward (memory across calls)."""


def body(*lines: str, result: str = "0.0, False") -> str:
    """A reward function with ``lines`` as its body."""
    text = "".join(f"    {line}\n" for line in lines)
    return f"def _compute_reward(self):\n{text}    return {result}\n"


def _fanout(levels: int, width: int) -> str:
    defs = "def f0():\n    return 1\n"
    for i in range(1, levels + 1):
        calls = " + ".join([f"f{i - 1}()"] * width)
        defs += f"def f{i}():\n    return {calls}\n"
    return defs + f"def _compute_reward(self):\n    return float(f{levels}()), False\n"


def _repeat(line: str, times: int, *before: str) -> str:
    return body(*before, *([line] * times))


_NEW: list[Case] = [
    # -- time -----------------------------------------------------------------------------
    Case("fanout-2x40", "time", _fanout(40, 2)),
    Case("fanout-3x12", "time", _fanout(12, 3)),
    Case("fanout-2x9-in-loop", "time",
         _fanout(9, 2).replace("return float(f9()), False",
                               "t = 0\n    for i in range(10**6):\n        t += f9()\n"
                               "    return float(t), False")),
    Case("fanout-helpers-in-comprehension", "time",
         "def h(x):\n    return x + 1\n" + body("y = [h(i) for i in range(10**6)]")),
    Case("np-diff-huge-n", "time", body("x = np.diff(np.ones(10), 10**9)")),
    Case("np-diff-float-n", "time", body("x = np.diff(np.ones(10), 1e9)")),
    Case("norm-nuc-1000", "time", body("x = np.linalg.norm(np.ones((1000, 1000)), 'nuc')")),
    Case("norm-2-matrix", "time", body("x = np.linalg.norm(np.ones((1500, 1500)), 2)")),
    Case("inv-1000", "time", body("x = np.linalg.inv(np.eye(1000) * 2.0)")),
    Case("det-stack", "time", body("x = np.linalg.det(np.ones((100, 300, 300)))")),
    Case("solve-1000", "time", body("a = np.eye(1000)", "x = np.linalg.solve(a, np.ones(1000))")),
    Case("matmul-1000", "time", body("a = np.ones((1000, 1000))", "b = a @ a")),
    Case("dot-1000", "time", body("a = np.ones((1000, 1000))", "b = np.dot(a, a)")),
    Case("method-dot-1000", "time", body("a = np.ones((1000, 1000))", "b = a.dot(a)")),
    Case("sort-megabyte-strings", "time",
         body("s = 'a' * 999990", "items = [s + 'b', s + 'c'] * 100000", "items.sort()")),
    Case("sorted-megabyte-strings", "time",
         body("s = 'a' * 999990", "x = sorted([s + 'b', s + 'c'] * 100000)")),
    Case("max-megabyte-strings", "time",
         body("s = 'a' * 999990", "x = max([s + 'b', s + 'c'] * 100000)")),
    Case("sorted-shared-tuples", "time",
         body("t = tuple(range(10**6))", "x = sorted([t] * 10000)")),
    Case("set-range-huge-step", "time", body("x = set(range(0, 10**30, 10**24))")),
    Case("set-range-big-ints", "time", body("x = set(range(2**9000, 2**9000 + 10**6))")),
    Case("sum-of-big-arrays", "time", body("a = np.ones(10**6)", "s = sum([a] * 10**6)")),
    Case("key-np-sum-big", "time", body("a = np.ones(10**6)", "x = sorted([a] * 1000, key=np.sum)")),
    Case("pow-mod-big", "time", body("x = pow(3, 2**9990, 2**9990 + 1)")),
    Case("in-list-loop", "time",
         body("x = list(range(10**6))", "for i in range(10**6):", "    y = -1 in x")),
    Case("nested-comprehension", "time",
         body("x = [i * j for i in range(10**4) for j in range(10**4)]")),
    Case("while-true", "time", body("while True:", "    pass")),
    Case("count-huge-list", "time", body("x = [0] * 10**6", "n = x.count(1)", "m = x.index(0)")),
    # -- memory ---------------------------------------------------------------------------
    Case("extend-reversed-doubling", "memory",
         _repeat("a.extend(reversed(a))", 30, "a = [0] * 1000")),
    Case("extend-enumerate-self", "memory", body("a = [0]", "a.extend(enumerate(a))")),
    Case("extend-zip-self-doubling", "memory",
         _repeat("a.extend(zip(a, a))", 30, "a = [0] * 100")),
    Case("slice-assign-doubling", "memory", _repeat("a[:0] = a", 30, "a = [0] * 1000")),
    Case("slice-augassign-doubling", "memory", _repeat("a[:0] += a", 30, "a = [0] * 1000")),
    Case("star-unpack-ranges", "memory",
         body("x = [" + ", ".join(["*range(10**6)"] * 30) + "]")),
    Case("star-unpack-lines", "memory",
         _repeat("x = x + [*range(10**6)]", 30, "x = []")),
    Case("list-range-lines", "memory",
         body(*[f"x{i} = list(range(10**6))" for i in range(30)])),
    Case("fstring-megabyte", "memory",
         body("s = 'a' * 10**6", "x = f'{s}{s}{s}{s}{s}{s}{s}{s}{s}{s}{s}{s}{s}{s}{s}{s}'")),
    Case("fstring-too-many-fields", "memory",
         body("s = 'a'", "x = f'" + "{s}" * 40 + "'")),
    Case("fstring-repr-list", "memory", body("x = [0] * 10**6", "y = f'{x!r}'")),
    Case("str-of-shared-strings", "memory", body("s = 'a' * 10**6", "y = str([s] * 1000)")),
    Case("np-full-string", "memory", body("x = np.full(10**6, 'a' * 1000)")),
    Case("np-full-like-string", "memory", body("x = np.full_like(np.ones(10**6), 'abc')")),
    Case("np-tile-string", "memory", body("x = np.tile('abc' * 1000, 10**3)")),
    Case("np-array-strings", "memory", body("x = np.array(['a' * 10**6] * 1000)")),
    Case("structured-dtype-subarray", "memory",
         body("x = np.zeros(1, dtype=('f8', (12000, 12000)))")),
    Case("structured-dtype-fields", "memory",
         body("x = np.zeros(2, dtype=[('a', 'f8', (5000, 5000))])")),
    Case("astype-subarray", "memory", body("x = np.ones(2).astype(('f8', (10000, 10000)))")),
    Case("ones-positional-dtype", "memory", body("x = np.ones(3, ('f8', (10000, 10000)))")),
    Case("in-broadcast-list", "memory",
         body("a = np.ones((10**5, 1))", "b = [np.ones(10**5)]", "x = a in b")),
    Case("eq-broadcast-tuples", "memory",
         body("a = np.ones((10**5, 1))", "b = np.ones(10**5)", "x = (a,) == (b,)")),
    Case("list-count-broadcast", "memory",
         body("a = np.ones((10**5, 1))", "b = [np.ones(10**5)]", "x = b.count(a)")),
    Case("max-broadcast-arrays", "memory",
         body("a = np.ones((10**5, 1))", "b = np.ones(10**5)", "x = max([a, b])")),
    Case("key-ndarray", "memory", body("x = sorted([10**9, 10**9], key=np.ndarray)")),
    Case("key-list", "memory", body("s = 'a' * 10**6", "x = sorted([s] * 1000, key=list)")),
    Case("key-np-tile", "memory", body("x = max([1, 2], key=np.ones)")),
    Case("print-star", "memory", body("s = 'a' * 10**6", "print(*[s] * 1000)")),
    Case("print-big-list", "memory", body("x = [0.5] * 10**6", "print(x, x, x, x)")),
    Case("api-huge-list", "memory",
         body("x = in_bbox(self, list(range(10**6)), [0, 0, 0], [1, 1, 1])")),
    Case("api-huge-name", "memory",
         body("x = get_joint_state(self, 'a' * 10**6, 'joint_0')")),
    Case("tolist-lines", "memory", body(*[f"x{i} = np.ones(10**6).tolist()" for i in range(30)])),
    Case("dict-zip-lines", "memory",
         body(*[f"d{i} = dict(zip(range(10**6), range(10**6)))" for i in range(20)])),
    Case("enumerate-big-start", "memory", body("x = list(enumerate(range(10**6), 2**9000))")),
    Case("nested-list-to-numpy", "memory",
         body("x = [0.0] * 10**6", "y = np.array([x] * 1000)")),
    Case("np-concatenate-shared", "memory",
         body("a = np.ones(10**6)", "y = np.concatenate([a] * 1000)")),
    Case("np-repeat-list", "memory", body("y = np.repeat(np.ones(10), [10**6] * 10)")),
    Case("append-loop", "memory",
         body("keep = []", "for i in range(10**6):", "    keep.append(np.ones(10**4) + i)")),
    Case("string-doubling-loop", "memory",
         body("s = 'ab'", "for i in range(64):", "    s = s + s")),
    Case("list-mult-nested", "memory", body("x = [[0] * 10**6] * 10**6", "y = x * 2")),
    # -- crash ----------------------------------------------------------------------------
    Case("deep-tuple-set", "crash",
         body("t = 1", "for i in range(300000):", "    t = (t,)", "s = {t}")),
    Case("deep-tuple-dict-key", "crash",
         body("t = 1", "for i in range(300000):", "    t = (t,)", "d = {}", "d[t] = 1")),
    Case("deep-tuple-in-set", "crash",
         body("t = 1", "for i in range(300000):", "    t = (t,)", "x = t in {1, 2}")),
    Case("deep-tuple-set-builtin", "crash",
         body("t = 1", "for i in range(300000):", "    t = (t,)", "x = set([t])")),
    Case("deep-tuple-dict-builtin", "crash",
         body("t = 1", "for i in range(300000):", "    t = (t,)", "x = dict([(t, 1)])")),
    Case("deep-tuple-setcomp", "crash",
         body("t = 1", "for i in range(300000):", "    t = (t,)", "x = {t for i in range(2)}")),
    Case("deep-tuple-dict-get", "crash",
         body("t = 1", "for i in range(300000):", "    t = (t,)", "x = {1: 2}.get(t)")),
    Case("deep-list-str", "crash",
         body("a = []", "for i in range(300000):", "    a = [a]", "s = str(a)")),
    Case("deep-list-eq", "crash",
         body("a = []", "b = []", "for i in range(300000):", "    a = [a]", "    b = [b]",
              "x = a == b")),
    Case("deep-list-numpy", "crash",
         body("a = [1.0]", "for i in range(100000):", "    a = [a]", "x = np.array(a)")),
    Case("deep-dict-str", "crash",
         body("d = {}", "for i in range(300000):", "    d = {'k': d}", "s = f'{d}'")),
    Case("deep-tuple-set-1000", "crash",
         body("t = 1", "for i in range(1000):", "    t = (t,)", "s = {t}")),
    Case("deep-tuple-dict-key-1000", "crash",
         body("t = 1", "for i in range(1000):", "    t = (t,)", "d = {}", "d[t] = 1")),
    Case("deep-tuple-in-dict-1000", "crash",
         body("t = 1", "for i in range(1000):", "    t = (t,)", "x = t in {1: 2}")),
    Case("deep-tuple-dict-builtin-1000", "crash",
         body("t = 1", "for i in range(1000):", "    t = (t,)", "x = dict([(t, 1)])")),
    Case("deep-tuple-del-1000", "crash",
         body("t = 1", "for i in range(1000):", "    t = (t,)", "d = {1: 2}", "del d[t]")),
    Case("deep-tuple-return", "crash",
         body("t = 1.0", "for i in range(300000):", "    t = (t,)", result="t, False")),
    # -- check-time attacks ---------------------------------------------------------------
    Case("check-4000-assignments", "check",
         body(*[f"x{i} = {i}" for i in range(4000)])),
    Case("check-1900-assignments", "check",
         body(*[f"x{i} = x{i - 1} + 1" if i else "x0 = 1" for i in range(1900)])),
    Case("check-1900-unknown-names", "check", body(*[f"x{i} = y{i}" for i in range(1900)])),
    Case("check-600-term-sum", "untyped", body("x = " + " + ".join(["1.0"] * 600))),
    Case("check-deep-calls", "untyped", body("x = " + "abs(" * 150 + "1" + ")" * 150)),
    Case("check-nested-parens", "check", body("x = " + "(" * 300 + "1" + ")" * 300)),
    Case("check-nested-ifs", "check",
         "def _compute_reward(self):\n"
         + "".join("    " * (i + 1) + "if True:\n" for i in range(100))
         + "    " * 101 + "pass\n    return 0.0, False\n"),
    Case("check-nested-lists", "check", body("x = " + "[" * 150 + "]" * 150)),
    Case("check-1400-functions", "check",
         "".join(f"def f{i}():\n    return f{i + 1}()\n" for i in range(1400))
         + "def f1400():\n    return 1\n"
         + "def _compute_reward(self):\n    return float(f0()), False\n"),
    Case("check-null-byte", "untyped", body("x = 1\x00")),
    Case("check-huge-source", "check", "x = 1\n" * 60000),
    Case("check-long-string-literal", "check", body("x = '" + "a" * 49000 + "'")),
    Case("check-many-issues", "check", body(*[f"import os{i}" for i in range(1500)])),
    # -- escapes (side effects must not happen; SENTINEL is a fresh path) ----------------
    Case("escape-open", "escape", body("f = open('SENTINEL', 'w')")),
    Case("escape-import-os", "escape", body("__import__('os').system('touch SENTINEL')")),
    Case("escape-np-save", "escape", body("np.save('SENTINEL', np.zeros(3))")),
    Case("escape-tofile", "escape", body("np.zeros(3).tofile('SENTINEL')")),
    Case("escape-print-file", "escape", body("print('x', file='SENTINEL')")),
    Case("escape-class-walk", "escape",
         body("x = [c for c in ().__class__.__base__.__subclasses__()]")),
    Case("escape-builtin-self", "escape", body("x = print.__self__")),
    Case("escape-np-globals", "escape", body("x = np.sum.__globals__")),
    Case("escape-ndarray-ctypes", "escape", body("x = np.ones(3).ctypes")),
    Case("escape-format-attr", "escape", body("x = '{0.__class__}'.format(1)")),
    Case("escape-float-hex", "escape", body("x = (1.5).hex()")),
    Case("escape-key-open", "escape", body("x = sorted(['SENTINEL'], key=open)")),
    Case("escape-isinstance-classinfo", "escape", body("x = isinstance(1, ().__class__)")),
    Case("escape-np-ndarray-new", "escape", body("x = np.ndarray(5)")),
    Case("escape-token-attr", "escape",
         "def helper(v):\n    return v.__class__\n" + body("x = helper(self)")),
    Case("escape-dict-values-token", "escape",
         body("d = {'v': self}", "x = list(d.values())[0].copy()")),
    # -- legit code that must keep working -----------------------------------------------
    Case("legit-robogen", "legit",
         body("eef = get_eef_pos(self)[0]", "a = get_joint_state(self, 'Door', 'joint_0')",
              "lo, hi = get_joint_limit(self, 'Door', 'joint_0')",
              "d = float(np.linalg.norm(eef - np.array([0.5, 0.0, 0.5])))",
              "r = -d + (a - lo) / (hi - lo)", result="r, a > 0.9 * hi")),
    Case("legit-loops-and-sorts", "legit",
         body("pts = [np.array([i, 0.0, 1.0]) for i in range(100)]",
              "ds = sorted([float(np.linalg.norm(p)) for p in pts])",
              "names = sorted(['b', 'a', 'c'], key=len)", "m = max(ds, key=abs)",
              "d = {('a', 1): 2.0}", "x = d.get(('a', 1), 0.0)",
              "s = {1, 2, 3}", "ok = 2 in s and 'a' in names", result="m + x, ok")),
]

_OLD_STATIC = [
    "x = ().__class__.__bases__[0].__subclasses__()", "x = __import__('os')", "import os",
    "x = open('/etc/passwd')", "x = eval('1')", "exec('x = 1')", "x = getattr(np, 'load')",
    "x = np.load('weights.npy')", "x = np.fromfile('x.bin')", "x = np.ctypeslib",
    "x = self.__dict__", "x = globals()", "x = type(1)", "x = f'{1:>{10**9}}'",
    "x = np.ndarray((10**9,))", "x = math.factorial(100000)",
    "x = get_position(self, 'a').tofile('f')",
]
_OLD_RUNTIME = [
    ("n = 10", "x = [0] * n**10"), ("x = np.zeros(10**10)",), ("n = 9", "x = 'a' * 10**n"),
    ("x = 2", "for i in range(40):", "    x = x * x"),
    ("x = [0]", "for i in range(64):", "    x = x + x"),
    ("a = np.ones(100000)", "b = a[:, None] - a[None, :]"),
    ("a = np.ones(100000)", "b = a[:, None] < a"),
    ("idx = np.zeros(1000000, dtype=int)", "b = np.ones((1000, 1000))[idx]"),
    ("x = np.array([np.ones(1000)] * 10000)",), ("x = np.arange(0, 1e12)",),
    ("x = np.outer(np.ones(10**5), np.ones(10**5))",), ("a = np.ones((10**5, 1))", "x = a @ a.T"),
    ("n = 12", "for i in range(10**n):", "    pass"), ("x = list(range(10**9))",),
    ("x = [1]", "x.extend(x * 999999)", "x.extend(x)"), ("x = np.tile(np.ones(1000), 10**4)",),
    ("x = pow(3, 10**6)",), ("x = np.zeros(10, dtype='U100000')",),
    ("x = np.array([1, 2]).astype(object)",), ("x = round(5, -10**9)",),
]
_OLD: list[Case] = [
    *(Case(f"old-static-{i}", "escape", body(s)) for i, s in enumerate(_OLD_STATIC)),
    *(Case(f"old-runtime-{i}", "memory", body(*lines)) for i, lines in enumerate(_OLD_RUNTIME)),
]

from .corpus_proof import PROOF_CASES  # noqa: E402 - the cases against the cost proof

_PROOF: list[Case] = [Case(*row) for row in PROOF_CASES]  # type: ignore[arg-type]

CASES: tuple[Case, ...] = (*_NEW, *_OLD, *_PROOF)
"""Every case, new ones first (then the old corpus, then the cases against the proof)."""


def by_id(case_id: str) -> Case:
    """The case named ``case_id``."""
    for case in CASES:
        if case.id == case_id:
            return case
    raise KeyError(f"no hostile case {case_id!r}")
