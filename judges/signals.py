"""What flows through a judge: a :class:`Transition` in, a :class:`JudgeSignal` out.

Why two small frozen records instead of loose tuples: every judge (state-based, code,
predicate, degraded, LLM) and every wrapper (reward shaping, verification, recording) speak
the same language, so judges compose (panels, votes) and swap without touching the wrappers.
A signal carries four things a rollout needs from a judge: a reward term, a progress
potential Φ ∈ [0, 1] (or None when the judge has no notion of progress), a verdict
(``success`` / ``failure`` / ``undecided``) and structured details.

Example:
    >>> s = JudgeSignal(reward=0.5, phi=0.5, verdict="undecided", reason="halfway")
    >>> s.decided, s.to_dict()["phi"]
    (False, 0.5)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from simjudge.envs.state_api import StateView

__all__ = [
    "CODE_OF_VERDICT",
    "FAILURE",
    "FAILURE_CODE",
    "SUCCESS",
    "SUCCESS_CODE",
    "UNDECIDED",
    "UNDECIDED_CODE",
    "VERDICT_OF_CODE",
    "FastSignal",
    "VERDICTS",
    "JudgeSignal",
    "Transition",
    "Verdict",
    "to_jsonable",
]

Verdict = Literal["success", "failure", "undecided"]
SUCCESS: Verdict = "success"
FAILURE: Verdict = "failure"
UNDECIDED: Verdict = "undecided"
VERDICTS: tuple[str, ...] = (SUCCESS, FAILURE, UNDECIDED)
"""Every valid verdict, in the order wrappers document them."""

SUCCESS_CODE = 1
"""Verdict code of ``success`` on the fast path (:meth:`Judge.observe_fast`)."""
FAILURE_CODE = -1
"""Verdict code of ``failure``: ``float(code)`` is the sparse reward of the verdict."""
UNDECIDED_CODE = 0
"""Verdict code of ``undecided``."""
VERDICT_OF_CODE: tuple[Verdict, Verdict, Verdict] = (UNDECIDED, SUCCESS, FAILURE)
"""Verdict by code: ``VERDICT_OF_CODE[code]`` (index -1 is ``failure``)."""
CODE_OF_VERDICT: dict[str, int] = {SUCCESS: SUCCESS_CODE, FAILURE: FAILURE_CODE, UNDECIDED: 0}
"""Code by verdict."""

class FastSignal(NamedTuple):
    """What a judge's fast path returns: ``(reward, phi, code, note)``, read by name.

    The note is whatever the judge needs to build the full :class:`JudgeSignal` later
    (:meth:`Judge.explain`): reason and details are made only when someone asks for them.
    """

    reward: float
    """The judge's reward term."""
    phi: float | None
    """Progress Φ ∈ [0, 1], or None for judges without a potential."""
    code: int
    """The verdict code (:data:`SUCCESS_CODE`, :data:`FAILURE_CODE`, :data:`UNDECIDED_CODE`)."""
    note: Any
    """What :meth:`Judge.explain` builds the full signal from."""

_PHI_SLACK = 1e-9
"""Φ within this of [0, 1] is clipped (float round-off), further out is an error."""

_BAD_VERDICT = "verdict {value!r} is not valid; use one of {valid}"
_BAD_REWARD = "reward term {value!r} is not a finite number; a judge must return finite rewards"
_BAD_PHI = (
    "phi = {value!r} is not a progress potential; Φ must be a finite number in [0, 1] or None "
    "(no potential): clip it with min(max(phi, 0.0), 1.0)"
)


@dataclass(frozen=True)
class JudgeSignal:
    """A judge's answer for one transition (or for a whole plan or episode).

    Attributes:
        reward: Reward term (float, finite). Potential judges use Φ itself; code judges
            the generated reward; see each judge for its range (``Judge.max_reward``).
        phi: Progress potential Φ ∈ [0, 1], or None if the judge has none.
        verdict: ``success``, ``failure`` or ``undecided``.
        reason: One line a person (or an LLM proposer) can act on.
        details: Judge-specific structured facts; the key set is the same on every step.
    """

    reward: float = 0.0
    phi: float | None = None
    verdict: Verdict = UNDECIDED
    reason: str = ""
    details: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Hot path (every judge, every step): plain floats in range and str reasons are
        # left as they are, which is what the conversions below would produce anyway.
        if self.verdict not in VERDICTS:
            raise ValueError(_BAD_VERDICT.format(value=self.verdict, valid=list(VERDICTS)))
        reward = self.reward
        if type(reward) is not float:
            try:
                reward = float(reward)
            except (TypeError, ValueError):
                raise ValueError(_BAD_REWARD.format(value=self.reward)) from None
            object.__setattr__(self, "reward", reward)
        if not math.isfinite(reward):
            raise ValueError(_BAD_REWARD.format(value=self.reward))
        phi = self.phi
        if phi is not None and not (type(phi) is float and 0.0 <= phi <= 1.0):
            object.__setattr__(self, "phi", _check_phi(phi))
        if type(self.reason) is not str:
            object.__setattr__(self, "reason", str(self.reason))

    @property
    def decided(self) -> bool:
        """Whether the verdict is ``success`` or ``failure``."""
        return self.verdict != UNDECIDED

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (``phi`` None stays None)."""
        return {
            "reward": self.reward,
            "phi": self.phi,
            "verdict": self.verdict,
            "reason": self.reason,
            "details": to_jsonable(dict(self.details)),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> JudgeSignal:
        """Inverse of :meth:`to_dict`."""
        return cls(
            reward=data.get("reward", 0.0),
            phi=data.get("phi"),
            verdict=data.get("verdict", UNDECIDED),
            reason=data.get("reason", ""),
            details=dict(data.get("details") or {}),
        )


def _check_phi(value: Any) -> float:
    try:
        phi = float(value)
    except (TypeError, ValueError):
        raise ValueError(_BAD_PHI.format(value=value)) from None
    if not math.isfinite(phi) or not -_PHI_SLACK <= phi <= 1.0 + _PHI_SLACK:
        raise ValueError(_BAD_PHI.format(value=value))
    return min(max(phi, 0.0), 1.0)


@dataclass(frozen=True, eq=False)
class Transition:
    """One step of a rollout as a judge sees it.

    The reset state is step 0 with ``action=None``: judges observe it too, so that Φ_0 is
    known (reward shaping and the OPD metrics need it).

    Attributes:
        step: Index within the judged episode (0 = reset state), not the env's
            ``elapsed_steps`` (a chained subtask may start mid-episode).
        view: The env's read-only :class:`~simjudge.envs.state_api.StateView` (what
            state-based judges read), or None for envs without one.
        obs: The observation after the step.
        action: The action taken (None at reset).
        reward: The env's own reward (0.0 at reset).
        info: The env's ``info`` dict (SimEnv: ``success``, ``fail``, goal facts,
            ``progress`` = privileged Φ, ``state``).
        terminated: The env's ``terminated`` flag.
        truncated: The env's ``truncated`` flag.
        frame: Rendered RGB frame ``(H, W, 3) uint8`` for judges with ``needs_frames``.
    """

    step: int
    view: StateView | None = None
    obs: Any = None
    action: np.ndarray | None = None
    reward: float = 0.0
    info: Mapping[str, Any] = field(default_factory=dict)
    terminated: bool = False
    truncated: bool = False
    frame: np.ndarray | None = None

    @property
    def is_reset(self) -> bool:
        """Whether this is the reset state (no action taken yet)."""
        return self.action is None


def _plain(value: Any) -> bool:
    """Whether ``to_jsonable(value)`` is ``value`` itself (None, str, bool, int, finite float)."""
    kind = type(value)
    return (
        value is None
        or kind is str
        or kind is bool
        or kind is int
        or (kind is float and math.isfinite(value))
    )


def to_jsonable(value: Any) -> Any:
    """Plain JSON data from numpy arrays, scalars, tuples and nested containers.

    Non-finite floats become None (JSON has no NaN); unknown objects become their ``str``.
    """
    # Fast path for the exact built-in types that recorders meet on every step (state
    # summaries, actions); subclasses and numpy types take the general path below.
    kind = type(value)
    if kind is float:
        return value if math.isfinite(value) else None
    if kind is str or kind is bool or kind is int:
        return value
    if kind is list or kind is tuple:
        return [v if _plain(v) else to_jsonable(v) for v in value]
    if kind is dict:
        return {
            k if type(k) is str else str(k): v if _plain(v) else to_jsonable(v)
            for k, v in value.items()
        }
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        value = float(value)
        return value if math.isfinite(value) else None
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.ndarray):
        return to_jsonable(value.tolist())
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [to_jsonable(v) for v in value]
    if hasattr(value, "model_dump"):
        return to_jsonable(value.model_dump(mode="json"))
    return str(value)
