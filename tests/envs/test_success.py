"""The shared success vocabulary's math: intervals, placements, composition, pickling."""

from __future__ import annotations

import math
import pickle

import pytest

from simjudge.envs.success import (
    AllOf,
    AnyOf,
    Holding,
    JointChange,
    JointIn,
    Not,
    Placed,
    in_interval,
    is_holding,
    placed,
    range_fraction,
)


def test_range_fraction_and_intervals():
    assert range_fraction(0.25, 0.0, 0.5) == 0.5
    assert range_fraction(1.0, 1.0, 1.0) == 0.0  # a zero-width range does not divide by zero
    assert in_interval(0.7, 0.7, None) and not in_interval(0.6999, 0.7, None)
    assert in_interval(0.7 - 1e-10, 0.7, None, tolerance=1e-9)
    assert in_interval(-5.0, None, 0.15) and not in_interval(0.16, None, 0.15)
    assert not in_interval(math.nan, 0.0, 1.0) and not in_interval(math.nan, None, 1.0)
    with pytest.raises(ValueError, match="above high"):
        JointIn("A", "j", 0.8, 0.2)
    change = JointChange("A", "j", 0.05, 0.35, "close")
    assert change.contains_change(0.9, 0.7) and not change.contains_change(0.9, 0.95)


def test_placements():
    bowl = (0.0, 0.0, 0.0, 0.2, 0.2, 0.1)
    assert placed("in", (0.05, 0.05, 0.005, 0.15, 0.15, 0.2), bowl, 0.01)
    assert not placed("inside", (0.05, 0.05, 0.005, 0.15, 0.15, 0.2), bowl, 0.01)  # sticks out
    assert placed("on", (0.05, 0.05, 0.11, 0.15, 0.15, 0.2), bowl, 0.03)
    assert not placed("in", (0.25, 0.05, 0.005, 0.35, 0.15, 0.05), bowl, 0.01)  # beside it
    assert Placed("a", "b", "on").margin == 0.03 and Placed("a", "b").margin == 0.01
    assert is_holding(("a", "base"), "a") and not is_holding(("a", "base"), "a", "lid")
    assert not is_holding(None, "a")


def test_composition_describes_and_pickles():
    p = AnyOf(JointIn("C", "j", high=0.1), Placed("x", "C", "in", "link_0")) & ~Holding("x")
    assert isinstance(p, AllOf) and isinstance(p.items[1], Not)
    assert p.describe() == ("((JointIn(C.j <= 0.1) or Placed(x in C.link_0)) "
                            "and not Holding(x))")
    assert pickle.loads(pickle.dumps(p)) == p
    with pytest.raises(TypeError, match="predicates"):
        AllOf(JointIn("C", "j"), "open")
