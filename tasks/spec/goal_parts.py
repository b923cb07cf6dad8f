"""The parts of a task goal besides its targets: parts that must stay put, and stated starts.

- :class:`UnchangedPart`: a joint the words forbid to move ("leave the right door shut",
  "without turning the dial", "the top door only"). It must end within ``tolerance`` of
  where it started; a spring joint (a button, a pump) springs back, so for it the episode's
  largest fraction tells: it must never have been pressed past ``tolerance``.
- :class:`StartCondition`: a start the words state ("the fridge door starts open", "the
  drawer is pulled out halfway"). It is not an action: the task is meaningful only from an
  initial state inside ``[low, high]``, and the start repair sets the scene inside it.

Both are measured in fractions of the joint's range (0 = the lower limit = closed), as the
targets of :class:`~simjudge.tasks.spec.goal.TaskGoal` are.

Example:
    >>> UnchangedPart(object="Fridge", joint="joint_0", words="leave the left door shut").holds(
    ...     initial=0.0, final=0.6, maximum=0.6)
    False
    >>> StartCondition(object="Door", joint="joint_0", low=0.5, high=1.0, words="starts open"
    ...                ).holds(0.9)
    True
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from simjudge.envs.success import TARGET_TOLERANCE, JointChange, in_interval

__all__ = ["UNCHANGED_TOLERANCE", "StartCondition", "UnchangedPart"]

UNCHANGED_TOLERANCE = 0.1
"""How far (range fraction) a part that must stay put may end from its start."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class UnchangedPart(_Strict):
    """A joint that must end where it started (a spring joint: must never be pressed).

    Attributes:
        kind: ``unchanged``.
        object: Scene object name.
        joint: The joint that must stay put.
        part: The link it moves (for the card).
        semantic: What the part is (``hinge door``).
        tolerance: Largest allowed distance from the start (range fraction).
        spring: The joint springs back when released: judged by the episode's largest
            fraction instead of its final one.
        words: The words that said so.
    """

    kind: Literal["unchanged"] = "unchanged"
    object: str
    joint: str
    part: str = ""
    semantic: str = ""
    tolerance: float = Field(default=UNCHANGED_TOLERANCE, gt=0.0, le=0.5)
    spring: bool = False
    words: str = ""

    @property
    def key(self) -> str:
        """``<object>/<joint>``."""
        return f"{self.object}/{self.joint}"

    def holds(self, initial: float, final: float, maximum: float) -> bool:
        """Whether the part stayed put: final (spring: largest) within tolerance of the start."""
        if self.spring:  # never pressed past the tolerance: only the upper end counts
            return in_interval(maximum - initial, None, self.tolerance, TARGET_TOLERANCE)
        return self.success_predicate().contains_change(initial, final)

    def success_predicate(self) -> JointChange:
        """Ended within ``tolerance`` of its start: a change in ``[-tolerance, tolerance]``.

        The shared predicate (:class:`~simjudge.envs.success.JointChange`); a spring joint
        is judged on the episode's largest fraction instead (:meth:`holds`).
        """
        return JointChange(self.object, self.joint, -self.tolerance, self.tolerance, "open",
                           tolerance=TARGET_TOLERANCE)

    def describe(self) -> str:
        """One line for a prompt, a report or the goal card."""
        what = f"{self.semantic} {self.part}".strip() or self.joint
        how = ("must never be pressed" if self.spring
               else f"must end within {self.tolerance:.2f} of where it started")
        said = f" ('{self.words}')" if self.words else ""
        return f"{self.object} {self.joint} ({what}) {how}{said}"


class StartCondition(_Strict):
    """A start the words state: the joint starts inside ``[low, high]``.

    Attributes:
        kind: ``start``.
        object: Scene object name.
        joint: The joint whose start is stated.
        low: Lower end of the stated start (range fraction).
        high: Upper end.
        at: Where the start repair puts it (inside ``[low, high]``).
        words: The words that stated it.
    """

    kind: Literal["start"] = "start"
    object: str
    joint: str
    low: float = Field(ge=0.0, le=1.0)
    high: float = Field(ge=0.0, le=1.0)
    at: float | None = Field(default=None, ge=0.0, le=1.0)
    words: str = ""

    @model_validator(mode="after")
    def _ordered(self) -> StartCondition:
        if self.low > self.high:
            raise ValueError(f"low {self.low} is above high {self.high}; give low <= high")
        if self.at is not None and not self.low <= self.at <= self.high:
            raise ValueError(f"at {self.at} is outside [{self.low}, {self.high}]")
        return self

    @property
    def key(self) -> str:
        """``<object>/<joint>``."""
        return f"{self.object}/{self.joint}"

    def start_at(self) -> float:
        """Where the scene starts the joint: ``at``, else the middle of the stated band."""
        return self.at if self.at is not None else round((self.low + self.high) / 2, 4)

    def holds(self, initial: float) -> bool:
        """Whether an initial fraction is inside the stated start."""
        return self.low - 1e-9 <= initial <= self.high + 1e-9

    def describe(self) -> str:
        """One line for a prompt, a report or the goal card."""
        said = f" ('{self.words}')" if self.words else ""
        return (f"{self.object} {self.joint} starts between {self.low:.2f} and "
                f"{self.high:.2f} of its range{said}")
