"""One vocabulary of success predicates: what "a joint is in an interval" and "on / in" mean.

The env's goals (:mod:`simjudge.envs.goals`), the task goal
(:class:`~simjudge.tasks.spec.goal.TaskGoal`) and the plan milestones
(:mod:`simjudge.judges.predicates`) all judge success with the predicates defined here, so a
joint target or a placement means the same thing in each layer. The module sits in the
lowest layer (it knows the read-only :class:`~simjudge.envs.state_api.StateView` and nothing
of tasks or judges); the other layers build these types and call them.

Each predicate is a small frozen dataclass with :meth:`Predicate.holds` (on a view) and
:meth:`Predicate.describe`; predicates compose with :class:`AllOf`, :class:`AnyOf`,
:class:`Not` (or ``&``, ``|``, ``~``) and pickle. The math is in plain functions on floats
(:func:`range_fraction`, :func:`in_interval`, :func:`placed`, :func:`is_holding`) that the
predicates and the env goals' per-step fast paths share:

- **range fraction**: (q − lower) / (upper − lower), 0 = the lower limit (closed, released);
- **interval**: ``low − tol ≤ fraction ≤ high + tol``, a missing end (None) is open;
- **on**: the object's bounding-box centre strictly inside the place's xy footprint and
  ``|object bottom − place top| < tol`` (0.03 m);
- **in**: centre inside the footprint and ``place bottom − tol ≤ object bottom ≤ place top``
  (tol 0.01 m); **inside** (an enclosure) also needs the object's top ≤ the place's top.
  The place is the target's whole bounding box, or that of one of its links (``target_link``:
  a drawer of a cabinet, the cavity behind a door) where the goal names one.

Example:
    >>> p = JointIn("Cabinet", "joint_0", low=0.35, high=0.65) & ~Holding("Cabinet")
    >>> p.describe()
    '(JointIn(Cabinet.joint_0 in [0.35, 0.65]) and not Holding(Cabinet))'
    >>> JointIn("Cabinet", "joint_0", low=0.7).contains(0.71)
    True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from .state_api import StateView

__all__ = [
    "PLACE_TOLERANCE",
    "TARGET_TOLERANCE",
    "AllOf",
    "AnyOf",
    "Holding",
    "JointChange",
    "JointIn",
    "NearLink",
    "Not",
    "Placed",
    "Predicate",
    "Relation",
    "in_interval",
    "is_holding",
    "joint_fraction",
    "placed",
    "range_fraction",
]

Relation = Literal["on", "in", "inside"]
"""``on`` a surface, ``in`` an open container, ``inside`` an enclosure (top below its top)."""

PLACE_TOLERANCE: dict[str, float] = {"on": 0.03, "in": 0.01, "inside": 0.01}
"""Default height tolerance (m) of each relation (see :func:`placed`)."""

TARGET_TOLERANCE = 1e-9
"""Tolerance of a task target's interval ends: a fraction read a hair past an end counts."""


# -- the math, on plain floats (the env goals' fast paths call these) -----------------------
def range_fraction(value: float, lower: float, upper: float) -> float:
    """Joint position as a fraction of its range: (value − lower) / (upper − lower).

    A zero-width range is treated as 1e-9 wide (no division by zero).
    """
    return (value - lower) / max(upper - lower, 1e-9)


def in_interval(x: float, low: float | None, high: float | None, tolerance: float = 0.0) -> bool:
    """Whether ``low − tolerance ≤ x ≤ high + tolerance``; a None end is open (NaN: False)."""
    if low is not None and not x >= low - tolerance:
        return False
    return high is None or x <= high + tolerance


def placed(relation: str, obj_box: Sequence[float], place_box: Sequence[float],
           tolerance: float) -> bool:
    """Whether an object's box is ``on`` / ``in`` / ``inside`` a place's box.

    Args:
        relation: ``on``, ``in`` or ``inside``.
        obj_box: The object's world AABB as 6 floats ``(lo x, lo y, lo z, hi x, hi y, hi z)``.
        place_box: The place's AABB (the target, or its link), the same way.
        tolerance: Height tolerance (m): ``on``: ``|bottom − top| < tolerance``; ``in`` and
            ``inside``: the bottom may be ``tolerance`` below the place's bottom.
    """
    lx, ly, bottom, hx, hy, top = obj_box[:6]
    plx, ply, plz, phx, phy, phz = place_box[:6]
    cx, cy = (lx + hx) / 2.0, (ly + hy) / 2.0
    if not (cx > plx and cy > ply and cx < phx and cy < phy):
        return False
    if relation == "on":
        return abs(bottom - phz) < tolerance
    return plz - tolerance <= bottom <= phz and (relation != "inside" or top <= phz)


def is_holding(held: tuple[str, str] | None, obj: str, link: str | None = None) -> bool:
    """Whether suction's ``(object, link)`` (``StateView.grasped()``) is ``obj`` (and ``link``)."""
    return held is not None and held[0] == obj and link in (None, held[1])


def joint_fraction(view: StateView, obj: str, joint: str) -> float:
    """A joint's current :func:`range_fraction` on ``view``."""
    lo, hi = view.joint_limit(obj, joint)
    return range_fraction(view.joint_value(obj, joint), lo, hi)


def _initial_fraction(view: StateView, obj: str, joint: str) -> float:
    lo, hi = view.joint_limit(obj, joint)
    return range_fraction(view.initial_joint_value(obj, joint), lo, hi)


def _box(view: StateView, obj: str, link: str | None = None) -> list[float]:
    lo, hi = view.aabb(obj, link)
    return [*lo.tolist(), *hi.tolist()]


# -- predicates -----------------------------------------------------------------------------
class Predicate:
    """A boolean fact about the simulation; subclasses implement :meth:`holds`."""

    def holds(self, view: StateView) -> bool:  # pragma: no cover - abstract
        """Whether the fact holds on ``view``."""
        raise NotImplementedError

    def describe(self) -> str:
        """Short human-readable form, used in reasons."""
        return repr(self)

    def __call__(self, view: StateView) -> bool:
        """Whether the fact holds on ``view`` (a predicate is a success condition)."""
        return bool(self.holds(view))

    def __and__(self, other: Predicate) -> AllOf:
        return AllOf(self, other)

    def __or__(self, other: Predicate) -> AnyOf:
        return AnyOf(self, other)

    def __invert__(self) -> Not:
        return Not(self)


def _bound_text(low: float | None, high: float | None) -> str:
    if low is None and high is None:
        return "anywhere"
    if high is None:
        return f">= {low:g}"
    if low is None:
        return f"<= {high:g}"
    return f"in [{low:g}, {high:g}]"


@dataclass(frozen=True)
class JointIn(Predicate):
    """A joint's range fraction is inside ``[low, high]`` (None: that end is open).

    ``JointIn(o, j, low=0.7)`` is "open past 0.7", ``JointIn(o, j, high=0.15)`` "closed to
    0.15", ``JointIn(o, j, 0.35, 0.65)`` "halfway".

    Attributes:
        object: Scene object name.
        joint: Joint name.
        low: Least fraction (None: no lower end).
        high: Largest fraction (None: no upper end).
        tolerance: How far past an end still counts (a task target: :data:`TARGET_TOLERANCE`).
    """

    object: str
    joint: str
    low: float | None = None
    high: float | None = None
    tolerance: float = 0.0

    def __post_init__(self) -> None:
        if self.low is not None and self.high is not None and self.low > self.high:
            raise ValueError(f"low {self.low} is above high {self.high}; give low <= high")

    def contains(self, fraction: float) -> bool:
        """Whether a range fraction is inside the interval (:func:`in_interval`)."""
        return in_interval(fraction, self.low, self.high, self.tolerance)

    def holds(self, view: StateView) -> bool:
        """The joint's current fraction is inside the interval."""
        return self.contains(joint_fraction(view, self.object, self.joint))

    def describe(self) -> str:
        """``JointIn(obj.joint >= l)``, ``<= h`` or ``in [l, h]``."""
        return f"JointIn({self.object}.{self.joint} {_bound_text(self.low, self.high)})"


@dataclass(frozen=True)
class JointChange(Predicate):
    """A joint moved by a change in ``[low, high]`` of its range from where it started.

    The change is measured in ``direction``: ``open`` = fraction − initial fraction,
    ``close`` = initial − fraction ("open it slightly": a change of 0.05-0.35). An
    interval ``[−t, t]`` is "stayed within t of its start".

    Attributes:
        object: Scene object name.
        joint: Joint name.
        low: Least change.
        high: Largest change.
        direction: ``open`` (up) or ``close`` (down).
        tolerance: How far past an end still counts.
    """

    object: str
    joint: str
    low: float
    high: float
    direction: Literal["open", "close"] = "open"
    tolerance: float = 0.0

    def contains_change(self, initial: float, fraction: float) -> bool:
        """Whether moving from ``initial`` to ``fraction`` is a change inside the interval."""
        change = fraction - initial if self.direction == "open" else initial - fraction
        return in_interval(change, self.low, self.high, self.tolerance)

    def holds(self, view: StateView) -> bool:
        """The change from the scene's initial joint value is inside the interval."""
        return self.contains_change(_initial_fraction(view, self.object, self.joint),
                                    joint_fraction(view, self.object, self.joint))

    def describe(self) -> str:
        """``JointChange(obj.joint open by [l, h])``."""
        return (f"JointChange({self.object}.{self.joint} {self.direction} by "
                f"[{self.low:g}, {self.high:g}])")


@dataclass(frozen=True)
class Placed(Predicate):
    """An object is ``on`` / ``in`` / ``inside`` a target (or one of its links): :func:`placed`.

    Attributes:
        object: The object put somewhere.
        target: The object it must be on / in.
        relation: ``on``, ``in`` (an open container) or ``inside`` (an enclosure).
        target_link: A link of ``target`` whose box is the place (a drawer, a cavity);
            None: the target's whole body.
        tolerance: Height tolerance (m); None: :data:`PLACE_TOLERANCE` of the relation.
    """

    object: str
    target: str
    relation: Relation = "in"
    target_link: str | None = None
    tolerance: float | None = None

    @property
    def margin(self) -> float:
        """The height tolerance in use (m)."""
        return PLACE_TOLERANCE[self.relation] if self.tolerance is None else self.tolerance

    def holds(self, view: StateView) -> bool:
        """The object's box is placed on / in the place's box."""
        return placed(self.relation, _box(view, self.object),
                      _box(view, self.target, self.target_link), self.margin)

    def describe(self) -> str:
        """``Placed(a in b[.link])``."""
        where = self.target + (f".{self.target_link}" if self.target_link else "")
        return f"Placed({self.object} {self.relation} {where})"


@dataclass(frozen=True)
class Holding(Predicate):
    """Suction holds the object (and that link, if given)."""

    object: str
    link: str | None = None

    def holds(self, view: StateView) -> bool:
        """The grasped ``(object, link)`` matches (:func:`is_holding`)."""
        if self.link is None:
            view.base_pose(self.object)  # validates the name
        else:
            view.aabb(self.object, self.link)
        return is_holding(view.grasped(), self.object, self.link)

    def describe(self) -> str:
        """``Holding(obj[.link])``."""
        return f"Holding({self.object}{'.' + self.link if self.link else ''})"


@dataclass(frozen=True)
class NearLink(Predicate):
    """The suction point is within ``distance`` (m) of a link's bounding-box centre."""

    object: str
    link: str
    distance: float = 0.05

    def holds(self, view: StateView) -> bool:
        """‖eef − link centre‖ ≤ ``distance``."""
        eef, _ = view.eef_pose()
        lo, hi = view.aabb(self.object, self.link)
        return float(np.linalg.norm(eef - (lo + hi) / 2.0)) <= self.distance

    def describe(self) -> str:
        """``NearLink(obj.link, d)``."""
        return f"NearLink({self.object}.{self.link}, {self.distance:g})"


def _check_items(name: str, items: tuple) -> tuple[Predicate, ...]:
    if not items:
        raise ValueError(f"{name}() needs at least one predicate")
    bad = [type(p).__name__ for p in items if not isinstance(p, Predicate)]
    if bad:
        raise TypeError(f"{name}() takes predicates, got {bad}")
    return tuple(items)


@dataclass(frozen=True, init=False)
class AllOf(Predicate):
    """All of ``items`` hold (``And`` in the plan vocabulary)."""

    items: tuple[Predicate, ...]

    def __init__(self, *items: Predicate) -> None:
        object.__setattr__(self, "items", _check_items(type(self).__name__, items))

    def holds(self, view: StateView) -> bool:
        """Every item holds (short-circuit)."""
        return all(p(view) for p in self.items)

    def describe(self) -> str:
        """``(a and b ...)``."""
        return "(" + " and ".join(p.describe() for p in self.items) + ")"


@dataclass(frozen=True, init=False)
class AnyOf(Predicate):
    """At least one of ``items`` holds (``Or`` in the plan vocabulary)."""

    items: tuple[Predicate, ...]

    def __init__(self, *items: Predicate) -> None:
        object.__setattr__(self, "items", _check_items(type(self).__name__, items))

    def holds(self, view: StateView) -> bool:
        """Some item holds (short-circuit)."""
        return any(p(view) for p in self.items)

    def describe(self) -> str:
        """``(a or b ...)``."""
        return "(" + " or ".join(p.describe() for p in self.items) + ")"


@dataclass(frozen=True)
class Not(Predicate):
    """``item`` does not hold."""

    item: Predicate

    def holds(self, view: StateView) -> bool:
        """Negation."""
        return not self.item(view)

    def describe(self) -> str:
        """``not a``."""
        return f"not {self.item.describe()}"
