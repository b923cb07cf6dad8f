"""Equality of recorded outputs up to the last bits of their floats.

Why: recorded rollouts (episode files, step rows, trajectories) are compared with what the
code gives now. On the machine that recorded them the two are bit for bit equal; on another
CPU or library build numpy's SIMD kernels and OpenBLAS pick other code paths, so a float64
value can differ in its last bits (seen: within 6e-12 relative on an AVX-512 Xeon against a
recording made elsewhere). A behaviour change moves values by far more than that, and every
key, length, flag, string and integer must still be equal exactly.
"""

from __future__ import annotations

import math

FLOAT_RTOL = 1e-9
FLOAT_ATOL = 1e-15


def first_difference(got: object, expected: object, where: str = "") -> str | None:
    """Where two JSON-like trees differ (beyond float last bits), or ``None`` if they do not.

    >>> first_difference({"a": [1, 0.1 + 0.2]}, {"a": [1, 0.3]}) is None
    True
    >>> first_difference({"a": [1, 0.31]}, {"a": [1, 0.3]})
    '/a[1]: 0.31 != 0.3'
    >>> first_difference({"a": 1.0}, {"a": 1})
    '/a: 1.0 != 1'
    """
    if isinstance(expected, dict):
        if not isinstance(got, dict) or got.keys() != expected.keys():
            return f"{where}: keys {sorted(got) if isinstance(got, dict) else got!r} != {sorted(expected)}"
        for key, value in expected.items():
            found = first_difference(got[key], value, f"{where}/{key}")
            if found is not None:
                return found
        return None
    if isinstance(expected, list | tuple):
        if not isinstance(got, list | tuple) or len(got) != len(expected):
            return f"{where}: {got!r} != {expected!r}"
        for index, (a, b) in enumerate(zip(got, expected, strict=True)):
            found = first_difference(a, b, f"{where}[{index}]")
            if found is not None:
                return found
        return None
    if isinstance(expected, float) and type(got) is float:
        if got == expected or (math.isnan(got) and math.isnan(expected)):
            return None
        if math.isclose(got, expected, rel_tol=FLOAT_RTOL, abs_tol=FLOAT_ATOL):
            return None
        return f"{where}: {got!r} != {expected!r}"
    if type(got) is not type(expected) or got != expected:
        return f"{where}: {got!r} != {expected!r}"
    return None


def assert_same(got: object, expected: object, where: str = "") -> None:
    """Raise ``AssertionError`` naming the first place ``got`` and ``expected`` differ."""
    found = first_difference(got, expected, where)
    assert found is None, found
