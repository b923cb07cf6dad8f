"""The judge protocol: :class:`Judge`, the base class every judge derives from.

Template method (as SB3's ``BaseCallback.on_step`` -> ``_on_step``): the public entry points
:meth:`Judge.reset`, :meth:`Judge.observe`, :meth:`Judge.judge_plan` and
:meth:`Judge.judge_episode` do the bookkeeping (call counts, wall time, checks) and then
delegate to the hooks ``_reset``, ``_observe``, ``_judge_plan`` and ``_judge_episode``.
Subclasses override hooks only. A judge that does not support an entry point leaves its hook
alone and callers get a :class:`NotImplementedError` naming the judge and what it supports.

Life cycle of a live judge: ``reset(context)``, then ``observe(transition)`` for the reset
state (step 0, ``action=None``) and for every step after it.

**Fast path** (what the wrappers use on every step): :meth:`Judge.observe_fast` returns a
:data:`~simjudge.judges.signals.FastSignal` ``(reward, phi, verdict code, note)``; the full
:class:`JudgeSignal` (reason, details) is built from it only when asked for
(:meth:`Judge.explain`: episode files, ``info["judge"]``). A judge with a cheap way to its
numbers overrides ``_fast`` and ``_explain`` (and keeps ``_observe`` giving the same signal);
any other judge gets a default ``_fast`` that calls ``_observe`` and keeps its signal as the
note. Success-type judges (``success_type``) may check only every ``success_every`` steps
(always on the episode's last step), repeating their last signal in between.

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
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, cast

from simjudge.envs.errors import SimjudgeError

from .context import JudgeContext
from .signals import CODE_OF_VERDICT, FastSignal, JudgeSignal, Transition

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
        success_type: Whether the judge is a success check (a binary verdict that may be
            checked every ``success_every`` steps), not a Φ or a reward.
        success_every: Check every k steps (success-type judges; see
            :meth:`set_success_every`).
        max_reward: Upper bound of the reward term (None = unknown); JudgeReward's
            ``normalized`` mode divides by it.
        context: The context of the current episode (None before ``reset``).
        stats: ``{"observe" | "plan" | "episode": CallStats}``.
        spec: The registry string the judge was made from (``"noisy:sigma=0.05"``), if any.
    """

    name: ClassVar[str] = "judge"
    provides_potential: ClassVar[bool] = False
    needs_frames: ClassVar[bool] = False
    success_type: ClassVar[bool] = False
    max_reward: float | None = 1.0
    success_every: int = 1
    _last_fast: FastSignal | None = None  # instance attribute; the class default serves old pickles
    _transient: ClassVar[tuple[str, ...]] = ()

    def __init__(self) -> None:
        self.context: JudgeContext | None = None
        self.stats: dict[str, CallStats] = _fresh_stats()
        self.spec: str | None = None
        self._owner: Any = None
        self._last_fast: FastSignal | None = None

    # public entry points ------------------------------------------------------------------
    def reset(self, context: JudgeContext | None = None) -> None:
        """Start an episode: forget per-episode state, remember ``context``."""
        self.context = context if context is not None else JudgeContext()
        self._last_fast = None
        self._reset(self.context)

    def rearm(self, context: JudgeContext) -> None:
        """:meth:`reset` for another episode of the setup the last reset made.

        The caller vouches that ``context`` is the same setup as the current one (the same
        base context for another episode, :meth:`JudgeContext.for_episode`) and the judge
        serves the same env: what a judge derives from the setup alone (bindings, compiled
        code, goals) can then be kept, and :meth:`_rearm` clears only per-episode state. Why:
        a wrapper resets its judge on every episode, right after the env's reset, when all
        that re-deriving runs cold (~40 µs an episode for a panel, ~0.15 % of a judged step).
        """
        self.context = context
        self._last_fast = None
        self._rearm(context)

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

    def observe_fast(
        self,
        step: int,
        view: Any,
        info: Mapping[str, Any],
        done: bool = False,
        transition: Transition | None = None,
    ) -> FastSignal:
        """Judge one step on the fast path: ``(reward, phi, verdict code, note)``.

        The same numbers as :meth:`observe` on the same transition; the full signal is
        ``judge.explain(result)``. Counts the call (the wrapper times the whole step once,
        not each judge). A ``success_type`` judge with ``success_every = k > 1`` checks on
        steps 0, k, 2k, ... and whenever ``done``, and repeats its last result in between.

        Args:
            step: Index within the judged episode (0 = reset state).
            view: The env's state view (or None).
            info: The env's ``info`` of this step.
            done: Whether the env ended the episode on this step (terminated or truncated).
            transition: The full transition, for judges without a fast path
                (:attr:`needs_transition`); None otherwise.

        Raises:
            JudgeResetNeeded: ``reset(context)`` was not called first.
        """
        if self.context is None:
            raise JudgeResetNeeded(
                f"{self.label}.observe_fast() called before reset(context); call "
                "judge.reset(JudgeContext(...)) first (wrappers do this on env.reset())"
            )
        self.stats["observe"].calls += 1
        every = self.success_every
        if every > 1:
            last = self._last_fast
            if last is not None and not done and step % every:
                return last
            last = self._last_fast = self._fast(step, view, info, done, transition)
            return last
        return self._fast(step, view, info, done, transition)

    def explain(self, fast: FastSignal) -> JudgeSignal:
        """The full :class:`JudgeSignal` of a fast-path result (reason and details made now)."""
        note = fast.note
        if isinstance(note, JudgeSignal):
            return note
        return self._explain(fast)

    def wants_frame(self, step: int, done: bool) -> bool:
        """Whether the judge reads ``transition.frame`` on this step (wrappers render only then).

        Asked by the wrappers just before :meth:`observe` of the same step. The default is
        :attr:`needs_frames` on every step; a judge that reads frames only on some steps
        (``vlm-step``'s keyframes) says which, and gets ``frame=None`` on the others.

        Args:
            step: Index within the judged episode (0 = reset state).
            done: Whether the env ended the episode on this step.
        """
        return self.needs_frames

    @property
    def needs_transition(self) -> bool:
        """Whether the fast path needs the full :class:`Transition` (no ``_fast`` of its own)."""
        return type(self)._fast is Judge._fast or self.needs_frames

    def set_success_every(self, every: int) -> None:
        """Check a success-type judge only every ``every`` steps (and on the last step).

        Judges that are not success-type (Φ, rewards) ignore it: they judge every step.

        Raises:
            ValueError: ``every`` is not an int ≥ 1.
        """
        if isinstance(every, bool) or not isinstance(every, int) or every < 1:
            raise ValueError(f"success_every must be an int >= 1, got {every!r}")
        if self.success_type:
            self.success_every = every

    def judge_plan(self, kind: str, code: str, context: JudgeContext | None = None) -> JudgeSignal:
        """Judge a subtask's code before execution (``kind`` = primitive/reward/success)."""
        return self._timed("plan", self._judge_plan, kind, code, context or JudgeContext())

    def judge_episode(self, record: EpisodeRecord) -> JudgeSignal:
        """Judge a whole recorded episode."""
        return self._timed("episode", self._judge_episode, record)

    # hooks ---------------------------------------------------------------------------------
    def _reset(self, context: JudgeContext) -> None:
        """Hook: reset per-episode state (default: nothing)."""

    def _rearm(self, context: JudgeContext) -> None:
        """Hook: :meth:`rearm`'s reset, for the same setup (default: the full :meth:`_reset`)."""
        self._reset(context)

    def _observe(self, transition: Transition) -> JudgeSignal:
        """Hook: the signal for one transition."""
        raise self._unsupported("observe")

    def _fast(
        self,
        step: int,
        view: Any,
        info: Mapping[str, Any],
        done: bool,
        transition: Transition | None,
    ) -> FastSignal:
        """Hook: the fast-path result; by default ``_observe`` with its signal as the note."""
        if transition is None:
            transition = Transition(step=step, view=view, info=info)
        signal = self._observe(transition)
        if type(signal) is not JudgeSignal:
            self._check_signal(signal, "observe")
        return FastSignal(signal.reward, signal.phi, CODE_OF_VERDICT[signal.verdict], signal)

    def _explain(self, fast: FastSignal) -> JudgeSignal:
        """Hook: the full signal of a result of an overridden ``_fast`` (its note)."""
        raise NotImplementedError(
            f"{self.label} overrides _fast but not _explain; judges with a fast path must "
            "build their full signal from its note"
        )

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
            self._check_signal(signal, entry)
        return cast(JudgeSignal, signal)

    def _check_signal(self, signal: Any, entry: str) -> None:
        if not isinstance(signal, JudgeSignal):
            raise TypeError(
                f"{self.label} returned {type(signal).__name__} from {entry}; hooks must "
                "return a JudgeSignal"
            )

    def claim(self, owner: Any) -> None:
        """Bind the judge to one env; using it from another live env is an error.

        Why: a judge keeps per-episode state, so two envs (e.g. the workers of a vector env)
        sharing one instance would corrupt each other silently.

        Raises:
            ValueError: The judge already serves another live env.
        """
        current = self._owner() if self._owner is not None else None
        if current is owner:  # already bound to it (every reset asks again)
            return
        if current is not None:
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
        new._last_fast = None
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
