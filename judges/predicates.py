"""Declarative checkers over simulator state (RoboBench's milestone predicates).

The plan vocabulary of :mod:`simjudge.envs.success`, the one definition of success
predicates that the env goals and the task goal use too: every predicate here *is* one of
those types (:class:`JointOpen` is a :class:`~simjudge.envs.success.JointIn` with only a lower
end, :class:`On` a :class:`~simjudge.envs.success.Placed` with ``relation="on"``, :class:`And`
is :class:`~simjudge.envs.success.AllOf`), under the names plan files and milestones use.
Predicates are small frozen dataclasses called on a read-only
:class:`~simjudge.envs.state_api.StateView`; they compose with :class:`And`, :class:`Or`,
:class:`Not` (or ``&``, ``|``, ``~``) and pickle. Joint predicates compare the joint
position as a fraction of its range, (q − lower) / (upper − lower), where the lower limit is
the closed / natural state.

Example:
    >>> p = JointOpen("Cabinet", "joint_0", 0.5) & ~Holding("Cabinet")
    >>> p.describe()
    '(JointOpen(Cabinet.joint_0 >= 0.5) and not Holding(Cabinet))'
    >>> from simjudge.envs.success import JointIn
    >>> isinstance(p.items[0], JointIn), p.items[0].contains(0.5)
    (True, True)
"""

from __future__ import annotations

from simjudge.envs.success import (
    AllOf,
    AnyOf,
    Holding,
    JointChange,
    JointIn,
    NearLink,
    Not,
    Placed,
    Predicate,
    joint_fraction,
)

__all__ = [
    "AllOf",
    "And",
    "AnyOf",
    "Holding",
    "Inside",
    "JointChange",
    "JointClosed",
    "JointIn",
    "JointOpen",
    "NearLink",
    "Not",
    "On",
    "Or",
    "Placed",
    "Predicate",
    "Pressed",
    "joint_fraction",
]

And = AllOf
"""All of the items hold: :class:`~simjudge.envs.success.AllOf`."""

Or = AnyOf
"""At least one of the items holds: :class:`~simjudge.envs.success.AnyOf`."""


class JointOpen(JointIn):
    """The joint is at least ``fraction`` of its range open: ``JointIn(low=fraction)``."""

    def __init__(self, object: str, joint: str, fraction: float = 0.5) -> None:  # noqa: A002
        JointIn.__init__(self, object, joint, low=float(fraction), high=None)

    @property
    def fraction(self) -> float:
        """The threshold (range fraction)."""
        assert self.low is not None
        return self.low

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(object={self.object!r}, joint={self.joint!r}, "
                f"fraction={self.fraction!r})")

    def describe(self) -> str:
        """``JointOpen(obj.joint >= f)``."""
        return f"{type(self).__name__}({self.object}.{self.joint} >= {self.fraction:g})"


class JointClosed(JointIn):
    """The joint is at most ``fraction`` of its range open: ``JointIn(high=fraction)``."""

    def __init__(self, object: str, joint: str, fraction: float = 0.1) -> None:  # noqa: A002
        JointIn.__init__(self, object, joint, low=None, high=float(fraction))

    @property
    def fraction(self) -> float:
        """The threshold (range fraction)."""
        assert self.high is not None
        return self.high

    def __repr__(self) -> str:
        return (f"JointClosed(object={self.object!r}, joint={self.joint!r}, "
                f"fraction={self.fraction!r})")

    def describe(self) -> str:
        """``JointClosed(obj.joint <= f)``."""
        return f"JointClosed({self.object}.{self.joint} <= {self.fraction:g})"


class Pressed(JointOpen):
    """A button's joint is pushed in past ``fraction`` of its travel.

    Buttons rest at their lower limit, so this is :class:`JointOpen` under the name tasks use.
    """


class _Between(Placed):
    """A placement named by its two objects, ``a`` and ``b`` (the plan vocabulary)."""

    @property
    def a(self) -> str:
        """The object put somewhere."""
        return self.object

    @property
    def b(self) -> str:
        """The object it is put on / in."""
        return self.target

    def __repr__(self) -> str:
        return f"{type(self).__name__}(a={self.a!r}, b={self.b!r}, tolerance={self.margin!r})"

    def describe(self) -> str:
        """``On(a, b)`` / ``Inside(a, b)``."""
        return f"{type(self).__name__}({self.a}, {self.b})"


class On(_Between):
    """``a`` rests on top of ``b``: ``Placed(a, b, relation="on")``.

    Centred over b's footprint, |a.bottom − b.top| < ``tolerance``.
    """

    def __init__(self, a: str, b: str, tolerance: float = 0.03) -> None:
        Placed.__init__(self, a, b, relation="on", tolerance=tolerance)


class Inside(_Between):
    """``a`` is inside ``b``: ``Placed(a, b, relation="in")``.

    Centred within b's footprint, b.bottom − ``tolerance`` ≤ a.bottom ≤ b.top.
    """

    def __init__(self, a: str, b: str, tolerance: float = 0.01) -> None:
        Placed.__init__(self, a, b, relation="in", tolerance=tolerance)
