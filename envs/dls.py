"""The arm's damped-least-squares IK step in plain Python floats.

This is the IK step every control step runs (the action's target pose to arm joint
targets). It needs no compiler: every sum runs in a fixed order on IEEE doubles (Python
floats, no fused multiply-adds), so the step is bit-identical on every CPU. The optional
compiled accelerator ``simjudge.envs._dls`` (built from ``envs/_dls.c`` when a C compiler
is there at install time) does the same arithmetic in the same order;
``tests/envs/test_dls_step.py`` checks the two agree bit for bit.

The step (see :meth:`simjudge.envs.robot.PandaSuction.differential_ik` for the why):

- ``e`` = [position error capped at 5 cm, rotation vector capped at 0.3 rad];
- ``G = J J^T + d^2 I`` (``J``: 6x7, ``d`` > 0, so ``G`` is positive definite);
- ``q = q0 + J^T G^-1 e``;
- near a limit (any ``q0`` outside ``[near_lo, near_hi]``):
  ``q += p - J^T G^-1 J p`` with ``p = gain (home - q0)``, a null-space pull home;
- if ``q`` leaves ``[lo, hi]``: the joints that would leave are held at their limit and the
  rest solve again for the error they leave over (up to 7 passes).

NaN inputs give NaN joint targets (the env reports the physics error that follows).

Example:
    >>> import numpy as np
    >>> jac = np.zeros((6, 7)); jac[0, 0] = 1.0
    >>> bounds = np.array([[-2.0] * 7, [2.0] * 7, [-3.0] * 7, [3.0] * 7, [0.0] * 7])
    >>> out = np.empty(7)
    >>> step(jac, np.zeros(7), (0, 0, 0), (0, 0, 0, 1), (0.01, 0, 0), (0, 0, 0, 1),
    ...      0.05, bounds, 0.1, out)
    >>> round(float(out[0]), 6)
    0.009975
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["step"]

_ROWS = 6
_ARM = 7
_ALL = (True,) * _ARM


def _cholesky(g: list[list[float]]) -> list[list[float]]:
    """Lower Cholesky factor of a positive-definite 6x6 matrix."""
    lo = [[0.0] * _ROWS for _ in range(_ROWS)]
    for i in range(_ROWS):
        li = lo[i]
        for j in range(i + 1):
            lj = lo[j]
            s = g[i][j]
            for k in range(j):
                s -= li[k] * lj[k]
            li[j] = math.sqrt(s) if i == j else s / lj[j]
    return lo


def _solve(lo: list[list[float]], b: Sequence[float]) -> list[float]:
    """``x = (L L^T)^-1 b``."""
    y = [0.0] * _ROWS
    for i in range(_ROWS):
        li = lo[i]
        s = b[i]
        for k in range(i):
            s -= li[k] * y[k]
        y[i] = s / li[i]
    x = [0.0] * _ROWS
    for i in range(_ROWS - 1, -1, -1):
        s = y[i]
        for k in range(i + 1, _ROWS):
            s -= lo[k][i] * x[k]
        x[i] = s / lo[i][i]
    return x


def _gram(j: list[list[float]], use: Sequence[bool], d2: float) -> list[list[float]]:
    """``G`` = sum over the joints in use of ``J[:, k] J[:, k]^T``, plus ``d^2`` on the diagonal."""
    g = [[0.0] * _ROWS for _ in range(_ROWS)]
    for r in range(_ROWS):
        jr = j[r]
        for c in range(_ROWS):
            jc = j[c]
            s = 0.0
            for k in range(_ARM):
                if use[k]:
                    s += jr[k] * jc[k]
            g[r][c] = s + d2 if r == c else s
    return g


def _pose_error(p: Sequence[float], o: Sequence[float], t: Sequence[float],
                to: Sequence[float]) -> list[float]:
    """Position error capped at 5 cm, then the rotation vector capped at 0.3 rad."""
    dx, dy, dz = t[0] - p[0], t[1] - p[1], t[2] - p[2]
    norm = math.sqrt(dx * dx + dy * dy + dz * dz)
    if not norm <= 0.05:
        scale = 0.05 / norm
        dx, dy, dz = dx * scale, dy * scale, dz * scale
    x1, y1, z1, w1 = to[0], to[1], to[2], to[3]
    x2, y2, z2, w2 = -o[0], -o[1], -o[2], o[3]
    w = w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2
    x = w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2
    y = w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2
    z = w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2
    if w < 0.0:
        x, y, z, w = -x, -y, -z, -w
    sine = math.sqrt(x * x + y * y + z * z)
    if sine < 1e-12:
        return [dx, dy, dz, 0.0, 0.0, 0.0]
    angle = 2.0 * math.atan2(sine, w)
    if angle > 0.3:
        angle = 0.3
    scale = angle / sine
    return [dx, dy, dz, x * scale, y * scale, z * scale]


def _outside(q: Sequence[float], lo: Sequence[float], hi: Sequence[float]) -> bool:
    return any(q[k] < lo[k] or q[k] > hi[k] for k in range(_ARM))


def _clamp(v: float, lo: float, hi: float) -> float:
    """``min(max(v, lo), hi)`` as numpy's clip: NaN stays NaN, the upper bound wins if lo > hi."""
    m = lo if v < lo else v
    return hi if m > hi else m


def _back(j: list[list[float]], solution: Sequence[float], k: int) -> float:
    """``(J^T solution)[k]``, summed over the rows in order."""
    s = 0.0
    for r in range(_ROWS):
        s += j[r][k] * solution[r]
    return s


def _clamped_step(j: list[list[float]], e: Sequence[float], q0: Sequence[float], d2: float,
                  lo: Sequence[float], hi: Sequence[float], q: list[float]) -> None:
    """Joints that would leave their range held at it; the free ones solve for the rest."""
    held = [q[k] < lo[k] or q[k] > hi[k] for k in range(_ARM)]
    for _ in range(_ARM):  # each pass holds at least one more joint
        for k in range(_ARM):
            q[k] = _clamp(q[k], lo[k], hi[k])
        free = [not h for h in held]
        if not any(free):
            break
        rest = []
        for r in range(_ROWS):
            jr = j[r]
            s = 0.0
            for k in range(_ARM):
                if held[k]:
                    s += jr[k] * (q[k] - q0[k])
            rest.append(e[r] - s)
        solution = _solve(_cholesky(_gram(j, free, d2)), rest)
        any_out = False
        for k in range(_ARM):
            if free[k]:
                q[k] = q0[k] + _back(j, solution, k)
            if q[k] < lo[k] or q[k] > hi[k]:
                held[k] = any_out = True
        if not any_out:
            return
    for k in range(_ARM):
        q[k] = _clamp(q[k], lo[k], hi[k])


def _vector(values: Any, n: int, name: str) -> list[float]:
    """``n`` floats from a sequence of numbers, or the error the compiled step raises."""
    try:
        items = list(values)
    except TypeError:
        raise TypeError(f"{name} must be a sequence of {n} numbers") from None
    if len(items) != n:
        raise ValueError(f"{name} must hold {n} numbers, not {len(items)}")
    try:
        return [float(v) for v in items]
    except (TypeError, ValueError):
        raise TypeError(f"{name} must hold numbers") from None


def _matrix(obj: Any, ndim: int, rows: int, min_cols: int, name: str,
            writable: bool = False) -> np.ndarray:
    """A float64 array of the given dimensions, or the error the compiled step raises."""
    if not isinstance(obj, np.ndarray) or (writable and not obj.flags.writeable):
        raise TypeError(f"{name} must be a{' writable' if writable else ''} float64 numpy array")
    ok = obj.dtype == np.float64 and obj.ndim == ndim
    if ok and ndim == 1:
        ok = obj.shape[0] >= min_cols
    if ok and ndim == 2:
        ok = obj.shape[0] == rows and obj.shape[1] >= min_cols
    if not ok:
        if ndim == 1:
            raise ValueError(f"{name} must be a 1-D float64 array of at least {min_cols} values")
        raise ValueError(f"{name} must be a {rows}-row 2-D float64 array with at least "
                         f"{min_cols} columns")
    return obj


def step(jacobian: Any, q: Any, position: Any, orientation: Any, target: Any,
         target_orientation: Any, damping: float, bounds: Any, gain: float, out: Any) -> None:
    """One damped-least-squares IK step of the arm, written into ``out`` (7 float64).

    Args:
        jacobian: 6 x n float64 array (n >= 7; the first 7 columns are the arm's).
        q: The joint positions (float64, the first 7 used).
        position: The link's position now (3).
        orientation: The link's orientation now (4, x y z w).
        target: The position wanted (3).
        target_orientation: The orientation wanted (4, x y z w).
        damping: The damping of the least-squares solve (> 0).
        bounds: 5 x 7 float64 array of rows near-lower, near-upper, lower, upper limit and
            home posture.
        gain: The share of the way home a step near a limit adds.
        out: A writable float64 array of at least 7 values.

    Raises:
        ValueError: ``damping`` is not positive, or a vector has the wrong length.
    """
    p = _vector(position, 3, "position")
    o = _vector(orientation, 4, "orientation")
    t = _vector(target, 3, "target")
    to = _vector(target_orientation, 4, "target_orientation")
    damping, gain = float(damping), float(gain)
    if not damping > 0.0:
        raise ValueError(f"damping must be > 0 (got {damping!r}): the damped step solves "
                         "J J^T + damping^2 I")
    j = _matrix(jacobian, 2, _ROWS, _ARM, "jacobian")[:, :_ARM].tolist()
    q0 = _matrix(q, 1, 0, _ARM, "q")[:_ARM].tolist()
    near_lo, near_hi, lo, hi, home = _matrix(bounds, 2, 5, _ARM, "bounds")[:, :_ARM].tolist()
    _matrix(out, 1, 0, _ARM, "out", writable=True)
    d2 = damping * damping
    e = _pose_error(p, o, t, to)
    chol = _cholesky(_gram(j, _ALL, d2))
    solution = _solve(chol, e)
    qn = [q0[k] + _back(j, solution, k) for k in range(_ARM)]
    if _outside(q0, near_lo, near_hi):
        pull = [gain * (home[k] - q0[k]) for k in range(_ARM)]
        jp = []
        for r in range(_ROWS):
            jr = j[r]
            s = 0.0
            for k in range(_ARM):
                s += jr[k] * pull[k]
            jp.append(s)
        back = _solve(chol, jp)
        for k in range(_ARM):
            qn[k] += pull[k] - _back(j, back, k)
    if _outside(qn, lo, hi):
        _clamped_step(j, e, q0, d2, lo, hi, qn)
    out[:_ARM] = qn
