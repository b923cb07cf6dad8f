"""The judge protocol: :class:`Judge`, the base class every judge derives from.

Template method (as SB3's ``BaseCallback.on_step`` -> ``_on_step``): the public entry points
:meth:`Judge.reset`, :meth:`Judge.observe`, :meth:`Judge.judge_plan` and
:meth:`Judge.judge_episode` do the bookkeeping (call counts, wall time, checks) and then
delegate to the hooks ``_reset``, ``_observe``, ``_judge_plan`` and ``_judge_episode``.
Subclasses override hooks only. A judge that does not support an entry point leaves its hook
alone and callers get a :class:`NotImplementedError` naming the judge and what it supports.

Life cycle of a live judge: ``reset(context)``, then ``observe(transition)`` for the reset
state (step 0, ``action=None``) and for every step after it.

Judges must survive pickling (SB3 ``SubprocVecEnv`` ships env factories to workers; records
are replayed elsewhere): attributes named in ``_transient`` (compiled code, worker handles)
are dropped by ``__getstate__`` and rebuilt lazily.

Example:
    >>> class Halfway(Judge):
    ...     name = "halfway"
    ...     provides_potential = True
    ...     def _observe(self, transition):
    ...         return JudgeSignal(reward=0.5, phi=0.5)
    >>> judge = Halfway()
    >>> judge.reset(JudgeContext())
    >>> judge.observe(Transition(step=0)).phi, judge.stats["observe"].calls
    (0.5, 1)
"""

from __future__ import annotations

import copy
import time
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from simjudge.envs.errors import SimjudgeError

from .context import JudgeContext
from .signals import JudgeSignal, Transition

if TYPE_CHECKING:  # pragma: no cover
    from .episode import EpisodeRecord

__all__ = ["CallStats", "Judge", "JudgeResetNeeded"]

_UNSUPPORTED = "{judge} does not support {entry}; it supports {supported}. {hint}"
_HINTS = {
    "observe": "Live judges are wrapped around envs with JudgeReward / JudgeVerify.",
    "judge_plan": "Use RuleJudge (or an LLM judge) to check code before execution.",
    "judge_episode": "Use a judge that scores whole EpisodeRecords (e.g. DegradedPairwiseJudge).",
}


class JudgeResetNeeded(SimjudgeError, RuntimeError):
    """``observe`` was called before ``reset(context)``."""


@dataclass
class CallStats:
    """Calls and wall time of one entry point.

    Attributes:
        calls: Number of calls.
        seconds: Total wall time inside the hook (s).
    """

    calls: int = 0
    seconds: float = 0.0

    @property
    def mean_ms(self) -> float:
        """Mean wall time per call (ms); 0 before the first call."""
        return 1000.0 * self.seconds / self.calls if self.calls else 0.0


def _fresh_stats() -> dict[str, CallStats]:
    return {"observe": CallStats(), "plan": CallStats(), "episode": CallStats()}


class Judge:
    """Base class of every judge.

    A subclass sets the class attributes ``name``, ``provides_potential``, ``needs_frames``
    and ``max_reward``, and lists in ``_transient`` the attribute names that are not pickled
    (rebuilt lazily).

    Attributes:
        name: Registry-style name (``"privileged"``, ``"rule"`` ...), used in reasons,
            panels and records (class attribute).
        provides_potential: Whether signals carry Φ (reward shaping and OPD need it).
        needs_frames: Whether ``observe`` needs ``transition.frame`` (wrappers then render).
        max_reward: Upper bound of the reward term (None = unknown); JudgeReward's
            ``normalized`` mode divides by it.
        context: The context of the current episode (None before ``reset``).
        stats: ``{"observe" | "plan" | "episode": CallStats}``.
        spec: The registry string the judge was made from (``"noisy:sigma=0.05"``), if any.
    """

    name: ClassVar[str] = "judge"
    provides_potential: ClassVar[bool] = False
    needs_frames: ClassVar[bool] = False
    max_reward: float | None = 1.0
    _transient: ClassVar[tuple[str, ...]] = ()

    def __init__(self) -> None:
        self.context: JudgeContext | None = None
        self.stats: dict[str, CallStats] = _fresh_stats()
        self.spec: str | None = None
        self._owner: Any = None

    # public entry points ------------------------------------------------------------------
    def reset(self, context: JudgeContext | None = None) -> None:
        """Start an episode: forget per-episode state, remember ``context``."""
        self.context = context if context is not None else JudgeContext()
        self._reset(self.context)

    def observe(self, transition: Transition) -> JudgeSignal:
        """Judge one transition (step 0 = the reset state); counts and times the call.

        Raises:
            JudgeResetNeeded: ``reset(context)`` was not called first.
            NotImplementedError: The judge does not judge live transitions.
        """
        if self.context is None:
            raise JudgeResetNeeded(
                f"{self.label}.observe() called before reset(context); call "
                "judge.reset(JudgeContext(...)) first (wrappers do this on env.reset())"
            )
        return self._timed("observe", self._observe, transition)

    def judge_plan(self, kind: str, code: str, context: JudgeContext | None = None) -> JudgeSignal:
        """Judge a subtask's code before execution (``kind`` = primitive/reward/success)."""
        return self._timed("plan", self._judge_plan, kind, code, context or JudgeContext())

    def judge_episode(self, record: EpisodeRecord) -> JudgeSignal:
        """Judge a whole recorded episode."""
        return self._timed("episode", self._judge_episode, record)

    # hooks ---------------------------------------------------------------------------------
    def _reset(self, context: JudgeContext) -> None:
        """Hook: reset per-episode state (default: nothing)."""

    def _observe(self, transition: Transition) -> JudgeSignal:
        """Hook: the signal for one transition."""
        raise self._unsupported("observe")

    def _judge_plan(self, kind: str, code: str, context: JudgeContext) -> JudgeSignal:
        """Hook: the signal for a subtask's code."""
        raise self._unsupported("judge_plan")

    def _judge_episode(self, record: EpisodeRecord) -> JudgeSignal:
        """Hook: the signal for a recorded episode."""
        raise self._unsupported("judge_episode")

    # helpers ----------------------------------------------------------------------------------
    @property
    def label(self) -> str:
        """Class name and registry name, for messages: ``PrivilegedProgressJudge('privileged')``."""
        return f"{type(self).__name__}({self.name!r})"

    def supported(self) -> tuple[str, ...]:
        """Entry points this judge implements (``observe``, ``judge_plan``, ``judge_episode``)."""
        hooks = {
            "observe": "_observe",
            "judge_plan": "_judge_plan",
            "judge_episode": "_judge_episode",
        }
        return tuple(
            entry
            for entry, hook in hooks.items()
            if getattr(type(self), hook) is not getattr(Judge, hook)
        )

    def _unsupported(self, entry: str) -> NotImplementedError:
        supported = ", ".join(self.supported()) or "nothing"
        return NotImplementedError(
            _UNSUPPORTED.format(
                judge=self.label, entry=entry, supported=supported, hint=_HINTS[entry]
            )
        )

    def _timed(self, entry: str, hook: Any, *args: Any) -> JudgeSignal:
        start = time.perf_counter()
        try:
            signal = hook(*args)
        finally:
            stats = self.stats[entry]
            stats.calls += 1
            stats.seconds += time.perf_counter() - start
        if not isinstance(signal, JudgeSignal):
            raise TypeError(
                f"{self.label} returned {type(signal).__name__} from {entry}; hooks must "
                "return a JudgeSignal"
            )
        return signal

    def claim(self, owner: Any) -> None:
        """Bind the judge to one env; using it from another live env is an error.

        Why: a judge keeps per-episode state, so two envs (e.g. the workers of a vector env)
        sharing one instance would corrupt each other silently.

        Raises:
            ValueError: The judge already serves another live env.
        """
        current = self._owner() if self._owner is not None else None
        if current is not None and current is not owner:
            raise ValueError(
                f"{self.label} is already used by another env; give each env its own judge "
                "(judge.clone(), or make_judge(spec) inside the env factory)"
            )
        try:
            self._owner = weakref.ref(owner)
        except TypeError:  # objects without weakref support cannot be tracked
            self._owner = None

    def close(self) -> None:
        """Release resources (subprocess workers); the judge stays usable (default: nothing)."""

    def clone(self) -> Judge:
        """A fresh copy with the same configuration: no context, zero stats, no owner."""
        new = copy.deepcopy(self)
        new.context = None
        new.stats = _fresh_stats()
        return new

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_owner"] = None
        for attr in self._transient:
            if attr in state:
                state[attr] = None
        return state

    def __repr__(self) -> str:
        return f"<{type(self).__name__} name={self.name!r}>"
