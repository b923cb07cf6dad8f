"""What the judge wrappers share: driving a judge alongside an env.

:class:`BaseJudgeWrapper` builds the :class:`~simjudge.judges.context.JudgeContext` (from
the env unless given), resets the judge on ``env.reset()``, observes the reset state
(step 0) and every step, and renders frames only for judges that need them.

Stacking: when wrappers are stacked around one env with the *same* judge instance
(``JudgeVerify(JudgeReward(env, judge), judge)``), the outer wrapper does not reset or
observe the judge again; it reads the signal of the innermost wrapper that runs it, so
each step is judged exactly once.
"""

from __future__ import annotations

from collections.abc import Callable
from time import perf_counter
from typing import Any, cast

import gymnasium as gym
import numpy as np

from .base import Judge
from .context import JudgeContext
from .signals import FastSignal, JudgeSignal, Transition

__all__ = ["BaseJudgeWrapper", "ContextSource", "put_info"]

ContextSource = JudgeContext | Callable[[gym.Env], JudgeContext] | None
"""A context, a function of the env returning one, or None (derive from the env)."""


def put_info(info: dict[str, Any], key: str, value: Any, owner: str, param: str = "key") -> None:
    """Add ``info[key]``; a key that is already there is a configuration error.

    Raises:
        ValueError: ``key`` is already in ``info`` (set by the env or another wrapper).
    """
    if key in info:
        raise ValueError(
            f"info already has the key {key!r} (set by the env or another wrapper); pass "
            f"{param}='<another name>' to {owner}"
        )
    info[key] = value


class BaseJudgeWrapper(gym.Wrapper):
    """Base of the judge wrappers: runs ``judge`` on every reset and step.

    Subclasses override ``reset``/``step`` and call :meth:`_judge_reset` /
    :meth:`_judge_step`, which return the judge's fast-path result
    (:data:`~simjudge.judges.signals.FastSignal`: reward, Φ, verdict code, note) of the new
    state; :attr:`last_signal` builds the full :class:`JudgeSignal` only when read. The judge
    call is timed once per step (into ``judge.stats["observe"]``), not once per judge.

    Attributes:
        judge: The judge.
        context: The current episode's context.
        episode: Index of the current episode (-1 before the first reset).
        step_index: Steps taken in the current episode.
        last_fast: The fast-path result of the latest transition.
    """

    def __init__(
        self,
        env: gym.Env,
        judge: Judge,
        context: ContextSource = None,
        success_every: int | None = None,
    ) -> None:
        super().__init__(env)
        if not isinstance(judge, Judge):
            raise TypeError(
                f"{type(self).__name__} needs a Judge, got {type(judge).__name__}; build one "
                "with make_judge('privileged') or a judge class"
            )
        self.judge = judge
        self._leader = self._find_leader()
        if self._leader is not None and (context is not None or success_every is not None):
            raise ValueError(
                f"{type(self._leader).__name__} below already runs this judge, so this wrapper "
                "reads its signals; pass context= and success_every= to the innermost wrapper"
            )
        if success_every is not None:
            judge.set_success_every(success_every)
        self._context_source = context
        self._base_context: JudgeContext | None = None
        self._base_context_key: Any = None
        self._armed_base: JudgeContext | None = None  # the base the judge was last fully reset on
        self._needs_transition = judge.needs_transition
        self._view: Any = None
        self._stats = judge.stats["observe"]
        self.context: JudgeContext | None = None
        self.episode = -1
        self.step_index = 0
        self.last_fast: FastSignal | None = None
        self._signal: JudgeSignal | None = None
        self._lean_observe: Any = None
        """The judge's fast path once a reset made the lean step possible, else None."""
        self._lean_counts = False
        """Whether the lean step counts the call (``_fast`` bound) or the judge does."""

    @property
    def last_signal(self) -> JudgeSignal | None:
        """The full signal of the latest transition (built on first read, then kept)."""
        if self._leader is not None:
            return self._leader.last_signal
        if self._signal is None and self.last_fast is not None:
            self._signal = self.judge.explain(self.last_fast)
        return self._signal

    def _find_leader(self) -> BaseJudgeWrapper | None:
        env = self.env
        leader = None
        while isinstance(env, gym.Wrapper):
            if isinstance(env, BaseJudgeWrapper) and env.judge is self.judge:
                leader = env
            env = env.env
        return leader

    def close(self) -> None:
        """Release the judge's resources (if this wrapper runs it), then close the env."""
        if self._leader is None:
            self.judge.close()
        super().close()

    # context --------------------------------------------------------------------------------
    def _base_context_now(self) -> JudgeContext:
        """The base context of the next episode (its copy for the episode: ``for_episode``)."""
        source = self._context_source
        if isinstance(source, JudgeContext):
            base = source
        elif callable(source):
            base = source(self.env)
        else:
            key = id(getattr(self.env.unwrapped, "scene", None))
            if self._base_context is None or key != self._base_context_key:
                self._base_context = JudgeContext.from_env(self.env)
                self._base_context_key = key
            base = self._base_context
        return base

    # driving the judge ------------------------------------------------------------------------
    def _transition(self, step: int, obs: Any, info: dict[str, Any], **kw: Any) -> Transition:
        frame = None
        judge = self.judge
        if judge.needs_frames and self.env.render_mode == "rgb_array":
            done = bool(kw.get("terminated") or kw.get("truncated"))
            if judge.wants_frame(step, done):  # e.g. vlm-step: its keyframes only
                frame = cast(np.ndarray, self.env.render())  # rgb_array: one frame array
        return Transition(step=step, view=self._view, obs=obs, info=info, frame=frame, **kw)

    def _follow_leader(self) -> FastSignal:
        """The result of the wrapper below that runs the same judge (it went first)."""
        assert self._leader is not None
        fast = self._leader.last_fast
        assert fast is not None, "the leading wrapper observed this step before us"
        self.last_fast = fast
        return fast

    def _observe(
        self, step: int, info: dict[str, Any], done: bool, transition: Transition | None
    ) -> FastSignal:
        """One timed fast-path call of the judge."""
        start = perf_counter()
        fast = self.last_fast = self.judge.observe_fast(step, self._view, info, done, transition)
        self._stats.seconds += perf_counter() - start
        self._signal = None
        return fast

    def _judge_reset(self, obs: Any, info: dict[str, Any], seed: int | None) -> FastSignal:
        self.episode += 1
        self.step_index = 0
        if self._leader is not None:
            self.context = self._leader.context
            return self._follow_leader()
        previous, judge = self.context, self.judge
        base = self._base_context_now()
        self.context = context = base.for_episode(seed, self.episode)
        unwrapped = self.env.unwrapped
        view = getattr(unwrapped, "view", None)
        if (
            previous is not None
            and judge.context is previous  # nobody reset the judge since our last episode
            and view is self._view
            and base is self._armed_base  # the same base context: the same setup
        ):
            judge.rearm(context)
        else:
            self._view = view
            judge.claim(unwrapped)
            judge.reset(context)
            self._armed_base = base
        self._stats = judge.stats["observe"]
        transition = self._transition(0, obs, info) if self._needs_transition else None
        fast = self._observe(0, info, False, transition)
        # steps without a leader or a transition take the lean path (see JudgeRecord.step)
        self._bind_lean()
        return fast

    def _bind_lean(self) -> None:
        """The lean step's call: the judge's ``_fast`` where ``observe_fast`` adds only checks.

        After the reset above the judge has a context, and a judge that checks every step
        repeats nothing, so what :meth:`Judge.observe_fast` adds is the call count, which
        :meth:`_lean_step` keeps; a judge that checks every k steps goes through it.
        """
        judge = self.judge
        if self._needs_transition:
            self._lean_observe, self._lean_counts = None, False
        elif judge.success_every <= 1:
            self._lean_observe, self._lean_counts = judge._fast, True
        else:
            self._lean_observe, self._lean_counts = judge.observe_fast, False

    def _lean_step(self, observe: Any, info: dict[str, Any], done: bool) -> FastSignal:
        """One timed lean-path call of the judge (one timing pair per wrapper step)."""
        self.step_index = step = self.step_index + 1
        stats = self._stats
        if self._lean_counts:
            stats.calls += 1
        start = perf_counter()
        fast = self.last_fast = observe(step, self._view, info, done, None)
        stats.seconds += perf_counter() - start
        self._signal = None
        return fast

    def _judge_step(
        self,
        obs: Any,
        action: Any,
        reward: float,
        terminated: bool,
        truncated: bool,
        info: dict[str, Any],
    ) -> FastSignal:
        # the hot path of every judged step: one timing pair, no per-step objects here
        if self.last_fast is None:
            raise gym.error.ResetNeeded(
                f"{type(self).__name__}.step() called before reset(); call env.reset() first"
            )
        observe = self._lean_observe
        if observe is not None:
            return self._lean_step(observe, info, terminated or truncated)
        self.step_index = step = self.step_index + 1
        if self._leader is not None:
            if self._leader.step_index != step:  # pragma: no cover - defensive
                raise RuntimeError("stacked judge wrappers are out of step; reset the env")
            return self._follow_leader()
        transition = self._transition(
            step,
            obs,
            info,
            action=np.asarray(action),
            reward=float(reward),
            terminated=bool(terminated),
            truncated=bool(truncated),
        )
        return self._observe(step, info, bool(terminated or truncated), transition)
