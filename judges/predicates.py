"""Declarative checkers over simulator state (RoboBench's milestone predicates).

Each predicate is a small frozen dataclass called on a read-only
:class:`~simjudge.envs.state_api.StateView`; predicates compose with :class:`And`,
:class:`Or`, :class:`Not` (or ``&``, ``|``, ``~``) and pickle. Joint predicates compare the
joint position as a fraction of its range, (q − lower) / (upper − lower), where the lower
limit is the closed / natural state.

Example:
    >>> p = JointOpen("Cabinet", "joint_0", 0.5) & ~Holding("Cabinet")
    >>> p.describe()
    '(JointOpen(Cabinet.joint_0 >= 0.5) and not Holding(Cabinet))'
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simjudge.envs.state_api import StateView, get_link_state

__all__ = [
    "And",
    "Holding",
    "Inside",
    "JointClosed",
    "JointOpen",
    "NearLink",
    "Not",
    "On",
    "Or",
    "Predicate",
    "Pressed",
    "joint_fraction",
]


def joint_fraction(view: StateView, obj: str, joint: str) -> float:
    """Joint position as a fraction of its range (0 = lower = closed, 1 = upper)."""
    lo, hi = view.joint_limit(obj, joint)
    return (view.joint_value(obj, joint) - lo) / max(hi - lo, 1e-9)


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

    def __and__(self, other: Predicate) -> And:
        return And(self, other)

    def __or__(self, other: Predicate) -> Or:
        return Or(self, other)

    def __invert__(self) -> Not:
        return Not(self)


@dataclass(frozen=True)
class JointOpen(Predicate):
    """The joint is at least ``fraction`` of its range open."""

    object: str
    joint: str
    fraction: float = 0.5

    def holds(self, view: StateView) -> bool:
        """fraction(q) ≥ ``fraction``."""
        return joint_fraction(view, self.object, self.joint) >= self.fraction

    def describe(self) -> str:
        """``JointOpen(obj.joint >= f)``."""
        return f"JointOpen({self.object}.{self.joint} >= {self.fraction:g})"


@dataclass(frozen=True)
class JointClosed(Predicate):
    """The joint is at most ``fraction`` of its range open."""

    object: str
    joint: str
    fraction: float = 0.1

    def holds(self, view: StateView) -> bool:
        """fraction(q) ≤ ``fraction``."""
        return joint_fraction(view, self.object, self.joint) <= self.fraction

    def describe(self) -> str:
        """``JointClosed(obj.joint <= f)``."""
        return f"JointClosed({self.object}.{self.joint} <= {self.fraction:g})"


@dataclass(frozen=True)
class Pressed(JointOpen):
    """A button's joint is pushed in past ``fraction`` of its travel.

    Buttons rest at their lower limit, so this is :class:`JointOpen` under the name tasks use.
    """

    def describe(self) -> str:
        """``Pressed(obj.joint >= f)``."""
        return f"Pressed({self.object}.{self.joint} >= {self.fraction:g})"


@dataclass(frozen=True)
class Holding(Predicate):
    """Suction holds the object (and that link, if given)."""

    object: str
    link: str | None = None

    def holds(self, view: StateView) -> bool:
        """The grasped ``(object, link)`` matches."""
        if self.link is None:
            view.base_pose(self.object)  # validates the name
        else:
            view.aabb(self.object, self.link)
        held = view.grasped()
        return held is not None and held[0] == self.object and self.link in (None, held[1])

    def describe(self) -> str:
        """``Holding(obj[.link])``."""
        return f"Holding({self.object}{'.' + self.link if self.link else ''})"


def _xy_inside(centre: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> bool:
    return bool(np.all(centre[:2] > lo[:2]) and np.all(centre[:2] < hi[:2]))


@dataclass(frozen=True)
class On(Predicate):
    """``a`` rests on top of ``b``: centred over b's footprint, bottom at b's top."""

    a: str
    b: str
    tolerance: float = 0.03

    def holds(self, view: StateView) -> bool:
        """Centre of a within b's xy box and |a.bottom − b.top| < tolerance."""
        a_lo, a_hi = view.aabb(self.a)
        b_lo, b_hi = view.aabb(self.b)
        centre = (a_lo + a_hi) / 2.0
        return _xy_inside(centre, b_lo, b_hi) and abs(a_lo[2] - b_hi[2]) < self.tolerance

    def describe(self) -> str:
        """``On(a, b)``."""
        return f"On({self.a}, {self.b})"


@dataclass(frozen=True)
class Inside(Predicate):
    """``a`` is inside ``b``: centred within b's footprint, bottom between b's bottom and top."""

    a: str
    b: str
    tolerance: float = 0.01

    def holds(self, view: StateView) -> bool:
        """Centre of a within b's xy box and b.bottom − tol ≤ a.bottom ≤ b.top."""
        a_lo, a_hi = view.aabb(self.a)
        b_lo, b_hi = view.aabb(self.b)
        centre = (a_lo + a_hi) / 2.0
        return _xy_inside(centre, b_lo, b_hi) and b_lo[2] - self.tolerance <= a_lo[2] <= b_hi[2]

    def describe(self) -> str:
        """``Inside(a, b)``."""
        return f"Inside({self.a}, {self.b})"


@dataclass(frozen=True)
class NearLink(Predicate):
    """The suction point is within ``distance`` (m) of a link's bounding-box centre."""

    object: str
    link: str
    distance: float = 0.05

    def holds(self, view: StateView) -> bool:
        """‖eef − link centre‖ ≤ ``distance``."""
        eef, _ = view.eef_pose()
        return (
            float(np.linalg.norm(eef - get_link_state(view, self.object, self.link)))
            <= self.distance
        )

    def describe(self) -> str:
        """``NearLink(obj.link, d)``."""
        return f"NearLink({self.object}.{self.link}, {self.distance:g})"


@dataclass(frozen=True, init=False)
class And(Predicate):
    """All of ``items`` hold."""

    items: tuple[Predicate, ...]

    def __init__(self, *items: Predicate) -> None:
        object.__setattr__(self, "items", _check_items("And", items))

    def holds(self, view: StateView) -> bool:
        """Every item holds (short-circuit)."""
        return all(p(view) for p in self.items)

    def describe(self) -> str:
        """``(a and b ...)``."""
        return "(" + " and ".join(p.describe() for p in self.items) + ")"


@dataclass(frozen=True, init=False)
class Or(Predicate):
    """At least one of ``items`` holds."""

    items: tuple[Predicate, ...]

    def __init__(self, *items: Predicate) -> None:
        object.__setattr__(self, "items", _check_items("Or", items))

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


def _check_items(name: str, items: tuple) -> tuple[Predicate, ...]:
    if not items:
        raise ValueError(f"{name}() needs at least one predicate")
    bad = [type(p).__name__ for p in items if not isinstance(p, Predicate)]
    if bad:
        raise TypeError(f"{name}() takes predicates, got {bad}")
    return tuple(items)
