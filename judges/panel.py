"""Panels: several judges as one (weighted reward and Φ, voted verdict).

Why: no single judge is trusted everywhere — a code judge knows the proposal's intent, the
privileged judge the ground truth, a rule judge the code's hygiene, an LLM judge the
semantics. A :class:`JudgePanel` runs them on the same transitions (or plans, or episodes)
and combines: reward = Σ wᵢ·rᵢ, Φ = Σ wᵢ·Φᵢ / Σ wᵢ over the judges that give a Φ, and a
verdict by vote.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .base import Judge
from .context import JudgeContext
from .episode import EpisodeRecord
from .signals import (
    FAILURE,
    FAILURE_CODE,
    SUCCESS,
    SUCCESS_CODE,
    UNDECIDED,
    UNDECIDED_CODE,
    FastSignal,
    JudgeSignal,
    Transition,
    Verdict,
    _check_phi,
)

__all__ = ["SUPPORTED_VOTES", "JudgePanel"]

SUPPORTED_VOTES: tuple[str, ...] = ("majority", "any", "all")
"""Vote rules of :class:`JudgePanel`."""


class JudgePanel(Judge):
    """Run several judges and combine their signals.

    Votes (weighted by ``weights``; W = total weight of the voting judges):

    - ``majority``: a verdict wins with more than W/2 of the weight; else ``undecided``;
    - ``any``: ``success`` if any judge says success, else ``failure`` if any says failure;
    - ``all``: a verdict only if every judge gives it.

    Details: one entry per judge name with its ``reward``, ``phi``, ``verdict``, ``reason``
    and its own ``details``. ``judge_plan`` / ``judge_episode`` use the members that support
    them (NotImplementedError if none does).

    Example:
        >>> from simjudge.judges.degraded import DegradedQuantizedJudge
        >>> from simjudge.judges.privileged import PrivilegedProgressJudge
        >>> panel = JudgePanel({"truth": PrivilegedProgressJudge(),
        ...                     "coarse": DegradedQuantizedJudge(levels=4)}, weights=[3, 1])
        >>> sorted(panel.judges)
        ['coarse', 'truth']

    Args:
        judges: Judges by name, or a sequence (named by ``judge.name``, deduplicated).
        weights: Weight per judge (same order), default 1 each.
        vote: One of :data:`SUPPORTED_VOTES`.
    """

    name = "panel"
    _bound_to: tuple[tuple[int, int], ...] = ()  # set by _bind; the default serves old pickles

    def __init__(
        self,
        judges: Mapping[str, Judge] | Sequence[Judge],
        weights: Sequence[float] | None = None,
        vote: str = "majority",
    ) -> None:
        super().__init__()
        self.judges = _named(judges)
        if vote not in SUPPORTED_VOTES:
            raise ValueError(f"vote={vote!r} is not supported; use one of {list(SUPPORTED_VOTES)}")
        weights = [1.0] * len(self.judges) if weights is None else [float(w) for w in weights]
        if len(weights) != len(self.judges) or any(w < 0 for w in weights) or not sum(weights):
            raise ValueError(
                f"weights must be {len(self.judges)} non-negative numbers with a positive sum, "
                f"got {weights}"
            )
        self.weights = dict(zip(self.judges, weights, strict=True))
        self.vote = vote
        self._total_weight = sum(weights)
        self._votes: tuple[tuple[float, float, float], dict[int, dict[int, int]]] | None = None
        self._bind()

    @property
    def provides_potential(self) -> bool:  # type: ignore[override]
        """True if any member gives Φ."""
        return any(j.provides_potential for j in self.judges.values())

    @property
    def needs_frames(self) -> bool:  # type: ignore[override]
        """True if any member needs frames."""
        return any(j.needs_frames for j in self.judges.values())

    @property
    def max_reward(self) -> float | None:  # type: ignore[override]
        """Σ wᵢ·max_rewardᵢ (None if a member's bound is unknown)."""
        bounds = [j.max_reward for j in self.judges.values()]
        known = [b for b in bounds if b is not None]
        if len(known) != len(bounds):
            return None
        return sum(self.weights[n] * b for n, b in zip(self.judges, known, strict=True))

    def wants_frame(self, step: int, done: bool) -> bool:
        """True if any member reads a frame on this step."""
        return any(j.wants_frame(step, done) for j in self.judges.values())

    def _bind(self) -> None:
        """Bind the hot loop's members, their weights in order and the pair case."""
        self._observers = self._bind_observers()
        self._weight_order = tuple(w for _, w, _ in self._observers)
        self._pair = self._bind_pair()
        self._bound_to = self._binding_key()

    def _binding_key(self) -> tuple[tuple[int, int], ...]:
        """What the binding reads of the members: each one's ``success_every`` and stats object.

        The stats by ``id`` (CallStats compare by value): the bound ones are alive, held by
        the binding, so another live stats object cannot have the same id.
        """
        return tuple((j.success_every, id(j.stats["observe"])) for j in self.judges.values())

    def _bind_observers(self) -> tuple[tuple[Any, float, Any], ...]:
        """(fast path, weight, call stats or None) per member, in order: the panel's hot loop.

        A member that judges every step is called through its ``_fast`` and the panel counts
        the call in its stats (what :meth:`Judge.observe_fast` does around ``_fast`` once the
        panel's reset has given it a context); a member that checks only every k steps goes
        through ``observe_fast`` (which counts and skips itself).
        """
        return tuple(
            (j._fast, self.weights[n], j.stats["observe"]) if j.success_every <= 1
            else (j.observe_fast, self.weights[n], None)
            for n, j in self.judges.items()
        )

    def _bind_pair(self) -> tuple[Any, float, Any, Any, float, Any, float, Any] | None:
        """What :meth:`_fast`'s pair case needs, or None when it does not apply.

        The two members' (fast path, weight, stats), their weights' sum as the general
        combination adds it, and the vote's outcome for each pair of member verdicts (the
        weights are fixed once bound, so the vote is a table made by the general combination
        itself). None unless the panel is the common two-member, majority-vote panel whose
        members both judge every step.
        """
        observers = self._observers
        if len(observers) != 2 or self.vote != "majority":
            return None
        (first, w1, stats1), (second, w2, stats2) = observers
        if stats1 is None or stats2 is None:
            return None
        votes = self._votes
        if votes is None or votes[0] != (w1, w2, self._total_weight):  # made once per weights
            codes = (SUCCESS_CODE, FAILURE_CODE, UNDECIDED_CODE)
            table = {
                c1: {c2: self._combined([FastSignal(0.0, None, c1, None),
                                     FastSignal(0.0, None, c2, None)]).code
                     for c2 in codes}
                for c1 in codes
            }
            votes = self._votes = ((w1, w2, self._total_weight), table)
        return (first, w1, stats1, second, w2, stats2, 0.0 + w1 + w2, votes[1])

    @property
    def needs_transition(self) -> bool:
        """True if any member needs the full transition on the fast path."""
        return any(j.needs_transition for j in self.judges.values())

    def set_success_every(self, every: int) -> None:
        """Set ``success_every`` on every success-type member (see :class:`Judge`)."""
        super().set_success_every(every)
        for judge in self.judges.values():
            judge.set_success_every(every)
        self._bind()

    def _reset(self, context: JudgeContext) -> None:
        for judge in self.judges.values():
            judge._owner = self._owner  # members read what the panel's env computed
            judge.reset(context)
        self._rebind_if_changed()

    def _rearm(self, context: JudgeContext) -> None:
        for judge in self.judges.values():
            judge.rearm(context)  # the same setup: each member keeps what it derived from it
        self._rebind_if_changed()

    def _rebind_if_changed(self) -> None:
        """Bind again when what the binding read of the members changed (else: as it was)."""
        if self._bound_to != self._binding_key():
            self._bind()

    def close(self) -> None:
        """Close every member."""
        for judge in self.judges.values():
            judge.close()

    def _observe(self, transition: Transition) -> JudgeSignal:
        return self.combine({n: j.observe(transition) for n, j in self.judges.items()})

    def _fast(
        self,
        step: int,
        view: Any,
        info: Mapping[str, Any],
        done: bool,
        transition: Transition | None,
    ) -> FastSignal:
        pair = self._pair
        if pair is not None:  # two members, majority vote: _combined's arithmetic, unrolled
            first, w1, stats1, second, w2, stats2, weight, votes = pair
            stats1.calls += 1
            one = first(step, view, info, done, transition)
            stats2.calls += 1
            two = second(step, view, info, done, transition)
            p1, p2 = one[1], two[1]
            if p1 is not None and p2 is not None:
                # _combined's sums, in member order from 0.0 (0.0 + x is its 0 + x)
                phi = (0.0 + w1 * p1 + w2 * p2) / weight
                if not (0.0 <= phi <= 1.0):
                    phi = _check_phi(phi)
                verdicts = votes.get(one[2])
                code = verdicts.get(two[2]) if verdicts is not None else None
                if code is not None:
                    return FastSignal(float(0.0 + w1 * one.reward + w2 * two.reward), phi, code, (one, two))
            return self._combined([one, two])  # a member without Φ, or an unknown verdict code
        results: list[FastSignal] = []
        for observe, _, stats in self._observers:
            if stats is not None:
                stats.calls += 1
            results.append(observe(step, view, info, done, transition))
        return self._combined(results)

    def _combined(self, results: list[FastSignal]) -> FastSignal:
        """The panel's numbers from its members' (in member order).

        The arithmetic of :meth:`combine` and :meth:`_vote` on the members' numbers, in member
        order, so the explained signal (combine of the explained members) has exactly these
        numbers.
        """
        # float sums from 0.0: weights are floats, so each sum is what sum() would give
        reward = phi_sum = phi_weight = success = failure = 0.0
        # one result per member by construction (strict=True costs a check per step)
        for result, w in zip(results, self._weight_order, strict=False):
            r, p, code, _ = result
            reward += w * r
            if p is not None:
                phi_sum += w * p
                phi_weight += w
            if code == SUCCESS_CODE:
                success += w
            elif code == FAILURE_CODE:
                failure += w
        phi: float | None
        if phi_weight:
            phi = phi_sum / phi_weight
            if not (0.0 <= phi <= 1.0):
                phi = _check_phi(phi)
        else:  # no Φ, or all Φ-giving members have weight 0
            phis = [r[1] for r in results if r[1] is not None]
            phi = _check_phi(sum(phis) / len(phis)) if phis else None
        vote = self.vote
        if vote == "majority":
            half = self._total_weight / 2
            code = (
                SUCCESS_CODE if success > half else FAILURE_CODE if failure > half
                else UNDECIDED_CODE
            )
        else:
            codes = {r[2] for r in results}
            if vote == "all":
                code = codes.pop() if len(codes) == 1 else UNDECIDED_CODE
            else:  # any: a member's verdict counts whatever its weight
                code = (
                    SUCCESS_CODE if SUCCESS_CODE in codes else FAILURE_CODE if FAILURE_CODE in codes
                    else UNDECIDED_CODE
                )
        return FastSignal(float(reward), phi, code, results)

    def _explain(self, fast: FastSignal) -> JudgeSignal:
        results = fast.note
        return self.combine(
            {n: j.explain(r) for (n, j), r in zip(self.judges.items(), results, strict=True)}
        )

    def _judge_plan(self, kind: str, code: str, context: JudgeContext) -> JudgeSignal:
        return self._over_members("judge_plan", lambda j: j.judge_plan(kind, code, context))

    def _judge_episode(self, record: EpisodeRecord) -> JudgeSignal:
        return self._over_members("judge_episode", lambda j: j.judge_episode(record))

    def _over_members(self, entry: str, call: Callable[[Judge], JudgeSignal]) -> JudgeSignal:
        signals = {n: call(j) for n, j in self.judges.items() if entry in j.supported()}
        if not signals:
            raise self._unsupported(entry)
        return self.combine(signals)

    def combine(self, signals: Mapping[str, JudgeSignal]) -> JudgeSignal:
        """Weighted reward and Φ, voted verdict, per-judge details."""
        # One pass over the members (this runs on every step of a live panel); sums are
        # taken in member order exactly as sum() over the members would.
        weights = self.weights
        reward: float = 0
        phi_sum: float = 0
        phi_weight: float = 0
        phis: list[float] = []
        details: dict[str, Any] = {}
        for n, s in signals.items():
            w = weights[n]
            reward += w * s.reward
            if s.phi is not None:
                phi_sum += w * s.phi
                phi_weight += w
                phis.append(s.phi)
            details[n] = {
                "reward": s.reward,
                "phi": s.phi,
                "verdict": s.verdict,
                "reason": s.reason,
                "details": dict(s.details),
            }
        phi = phi_sum / phi_weight if phi_weight else None
        if phis and not phi_weight:  # all Φ-giving members have weight 0
            phi = sum(phis) / len(phis)
        verdict = self._vote(signals, weights)
        agree = [n for n, s in signals.items() if s.verdict == verdict]
        reason = f"{verdict} by {self.vote} vote ({', '.join(agree) or 'none'})"
        return JudgeSignal(reward=reward, phi=phi, verdict=verdict, reason=reason, details=details)

    def _vote(self, signals: Mapping[str, JudgeSignal], weights: Mapping[str, float]) -> Verdict:
        if self.vote == "any":
            verdicts = {s.verdict for s in signals.values()}
            for wanted in (SUCCESS, FAILURE):
                if wanted in verdicts:
                    return wanted
            return UNDECIDED
        if self.vote == "all":
            values = {s.verdict for s in signals.values()}
            return values.pop() if len(values) == 1 else UNDECIDED
        total: float = 0
        success: float = 0
        failure: float = 0
        for n, s in signals.items():
            w = weights[n]
            total += w
            if s.verdict == SUCCESS:
                success += w
            elif s.verdict == FAILURE:
                failure += w
        if success > total / 2:
            return SUCCESS
        if failure > total / 2:
            return FAILURE
        return UNDECIDED


def _named(judges: Mapping[str, Judge] | Sequence[Judge]) -> dict[str, Judge]:
    if isinstance(judges, Mapping):
        named = dict(judges)
    else:
        named = {}
        for judge in judges:
            name, k = judge.name, 2
            while name in named:
                name, k = f"{judge.name}-{k}", k + 1
            named[name] = judge
    if not named:
        raise ValueError("a panel needs at least one judge")
    bad = [n for n, j in named.items() if not isinstance(j, Judge)]
    if bad:
        raise TypeError(f"panel members must be Judges; not judges: {bad}")
    if len({id(j) for j in named.values()}) != len(named):
        raise ValueError("a panel member appears twice; clone it (judge.clone()) to use it twice")
    return named
