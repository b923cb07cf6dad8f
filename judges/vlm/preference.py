"""``preference``: which of two episodes of one task (same start) is better — A, B or tie.

Two sources, one answer shape (:meth:`PreferenceJudge.judge_pair`):

* **From any Φ judge** (no client): each side's Φ trace — given as numbers, as an
  :class:`~simjudge.judges.episode.EpisodeRecord` recorded with that judge (its per-step
  ``signal.phi``), or computed now by running ``phi_judge`` (a frame-reading judge such as
  ``vlm-step`` or ``image-progress``) over a :class:`~.episode.FramedEpisodeRecord`'s
  frames — is reduced to one number by ``statistic``: ``final`` (Φ_T), ``area`` (the mean
  of Φ_0..Φ_T, the normalised area under the curve) or ``max`` (max Φ). **Tie margin**:
  the higher side wins only when the two numbers differ by at least ``margin`` (default
  0.05 = 5 progress points); otherwise it is a tie.
* **From a server VLM** (``client=`` or ``server=``…): both keyframe strips (``keyframes``
  per side, evenly spread, first and last included) go in one request, A first; the reply
  ``{"preference": "A"|"B"|"tie", "reason"}`` is parsed tolerantly. ``k`` samples are
  majority-voted (a draw between A and B is a tie); ``swap=True`` also asks each sample
  with B shown first and maps the answer back, so a position-biased model cancels out.

The signal: reward +1 (A), −1 (B), 0 (tie); no Φ; verdict ``undecided``; details
``preference`` (``A``/``B``/``tie``), ``mode`` (``phi``/``vlm``) and the evidence (the two
statistics and the margin, or the votes, their agreement and the replies).

Example:
    >>> judge = PreferenceJudge(statistic="final", margin=0.05)
    >>> signal = judge.judge_pair([0.0, 0.4, 0.9], [0.0, 0.6, 0.5], task="Open the drawer")
    >>> signal.details["preference"], signal.reason
    ('A', 'A preferred: A ends at Φ 0.90, B at 0.50 (final Φ; tie margin 0.05)')
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..base import Judge
from ..context import JudgeContext
from ..episode import EpisodeRecord
from ..llm.prompts import keyframe_indices
from ..signals import JudgeSignal, Transition
from .base import VLMJudgeBase
from .images import VLMFrameError
from .parse import ParsedPreference, parse_preference
from .prompts import PREFERENCE_SCHEMA, preference_messages

__all__ = ["PREFERENCE_STATISTICS", "PreferenceJudge", "phi_trace"]

PREFERENCE_STATISTICS: tuple[str, ...] = ("final", "area", "max")
"""How a Φ trace becomes one number: Φ_T, mean Φ (area under the curve), max Φ."""

_WORDING = {"final": ("ends at Φ", "final Φ"), "area": ("has mean Φ", "area under Φ"),
            "max": ("peaks at Φ", "max Φ")}
_SIGN = {"A": 1.0, "B": -1.0, "tie": 0.0}
_SWAP = {"A": "B", "B": "A", "tie": "tie"}


def phi_trace(judge: Judge, frames: Sequence[Any], task: str) -> list[float]:
    """Run a frame-reading Φ judge over an episode's frames (step 0 first); its Φ per step.

    Raises:
        ValueError: The judge gave no Φ on some step.
    """
    judge.reset(JudgeContext(task=task))
    trace = []
    for step, frame in enumerate(frames):
        last = step == len(frames) - 1
        phi = judge.observe(Transition(step=step, frame=frame, truncated=last)).phi
        if phi is None:
            raise ValueError(f"{judge.label} gave no Φ on step {step}; a preference from Φ "
                             "needs a potential judge")
        trace.append(float(phi))
    return trace


class _PreferenceAsker(VLMJudgeBase):
    """The server-VLM half of :class:`PreferenceJudge` (sampling, parsing)."""

    name = "preference"


class PreferenceJudge(Judge):
    """A / B / tie between two episodes, from Φ traces or a server VLM (module docstring).

    Args:
        statistic: Φ mode: one of :data:`PREFERENCE_STATISTICS`.
        margin: Φ mode: smallest difference of the statistic that is not a tie.
        phi_judge: Φ mode: a registered judge spec (or a Judge) run over each side's frames
            when a side is given as a :class:`~.episode.FramedEpisodeRecord`.
        client: VLM mode: an LLM client; or name one with ``server``, ``base_url``,
            ``cache``, ``replay``, ``log``.
        keyframes: VLM mode: keyframes per side.
        swap: VLM mode: also ask with B first and map back (cancels position bias).
        k: VLM mode: samples (majority vote).
        temperature: VLM mode: sampling temperature (default 0 for k = 1, else 0.8).
        max_tokens: VLM mode: reply budget per sample.
        seed: VLM mode: seed of the first sample.
        json_mode: VLM mode: send :data:`~.prompts.PREFERENCE_SCHEMA` as ``response_format``.
        size: VLM mode: long side of the images sent (px).
    """

    name = "preference"
    provides_potential = False
    max_reward = 1.0

    def __init__(
        self,
        statistic: str = "final",
        margin: float = 0.05,
        phi_judge: Any = None,
        client: Any = None,
        keyframes: int = 4,
        swap: bool = False,
        k: int = 1,
        temperature: float | None = None,
        max_tokens: int = 128,
        seed: int = 0,
        json_mode: bool = False,
        size: int | None = 224,
        server: str | None = None,
        base_url: str | None = None,
        cache: str | None = None,
        replay: str | None = None,
        log: str | None = None,
    ) -> None:
        super().__init__()
        if statistic not in PREFERENCE_STATISTICS:
            raise ValueError(f"statistic={statistic!r} is not supported; use one of "
                             f"{list(PREFERENCE_STATISTICS)}")
        if not 0.0 <= float(margin) <= 1.0:
            raise ValueError(f"margin (tie margin on Φ) must be in [0, 1], got {margin}")
        if int(keyframes) < 1:
            raise ValueError(f"keyframes must be >= 1, got {keyframes}")
        self.statistic = statistic
        self.margin = float(margin)
        self.keyframes = int(keyframes)
        self.swap = bool(swap)
        if isinstance(phi_judge, str):
            from ..registry import make_judge

            phi_judge = make_judge(phi_judge)
        self.phi_judge: Judge | None = phi_judge
        self.vlm: _PreferenceAsker | None = None
        if client is not None or server or base_url or cache:
            self.vlm = _PreferenceAsker(
                client, server=server, base_url=base_url, cache=cache, replay=replay, log=log,
                k=k, temperature=temperature, aggregate="vote", max_tokens=max_tokens,
                seed=seed, json_mode=json_mode, size=size)

    @property
    def mode(self) -> str:
        """``vlm`` with a client, else ``phi``."""
        return "vlm" if self.vlm is not None else "phi"

    def judge_pair(self, a: Any, b: Any, task: str = "") -> JudgeSignal:
        """A / B / tie for episodes ``a`` and ``b`` of one task from the same start.

        Args:
            a: Episode A: a Φ trace (numbers), an EpisodeRecord, a FramedEpisodeRecord or
                (VLM mode) a list of frames.
            b: Episode B, the same kinds.
            task: Task text (default: the records' context).

        Raises:
            ValueError: A side has no Φ trace (Φ mode) or no frames (VLM mode).
        """
        task = task or _task_of(a) or _task_of(b)
        return self._timed("episode", self._pair, a, b, task)

    def _pair(self, a: Any, b: Any, task: str) -> JudgeSignal:
        if self.vlm is not None:
            return self._vlm_pair(_frames_of(a, "A"), _frames_of(b, "B"), task)
        return self._phi_pair(self._trace(a, "A", task), self._trace(b, "B", task))

    # Φ mode ------------------------------------------------------------------------------
    def _trace(self, side: Any, name: str, task: str) -> list[float]:
        if self.phi_judge is not None and getattr(side, "frames", None):
            return phi_trace(self.phi_judge, side.frames, task)
        if isinstance(side, EpisodeRecord):
            recorded = side.phi
            if not recorded or any(v is None for v in recorded):
                raise ValueError(
                    f"episode {name} has no Φ on every step: record it with a potential judge "
                    "(JudgeRecord(env, make_judge('privileged'|'obs-progress'|'vlm-step'))), "
                    "or pass phi_judge= with a FramedEpisodeRecord")
            return [float(v) for v in recorded if v is not None]
        values = np.asarray(side, dtype=float).ravel()
        if values.size == 0 or not np.all(np.isfinite(values)):
            raise ValueError(f"episode {name}'s Φ trace must be non-empty finite numbers")
        return [float(v) for v in values]

    def statistic_of(self, trace: Sequence[float]) -> float:
        """The trace reduced by :attr:`statistic`."""
        values = np.asarray(trace, dtype=float)
        if self.statistic == "final":
            return float(values[-1])
        return float(values.mean() if self.statistic == "area" else values.max())

    def _phi_pair(self, trace_a: list[float], trace_b: list[float]) -> JudgeSignal:
        sa, sb = self.statistic_of(trace_a), self.statistic_of(trace_b)
        verb, label = _WORDING[self.statistic]
        if abs(sa - sb) < self.margin:
            pref = "tie"
            reason = (f"tie: A {verb} {sa:.2f}, B {sb:.2f}, within the tie margin "
                      f"{self.margin:g} ({label})")
        else:
            pref = "A" if sa > sb else "B"
            reason = (f"{pref} preferred: A {verb} {sa:.2f}, B at {sb:.2f} ({label}; tie margin "
                      f"{self.margin:g})")
        details = {"preference": pref, "mode": "phi", "statistic": self.statistic,
                   "margin": self.margin, "value_a": sa, "value_b": sb,
                   "steps_a": len(trace_a) - 1, "steps_b": len(trace_b) - 1,
                   "phi_judge": getattr(self.phi_judge, "label", None)}
        return JudgeSignal(_SIGN[pref], None, reason=reason, details=details)

    # VLM mode ----------------------------------------------------------------------------
    def _vlm_pair(self, frames_a: list[Any], frames_b: list[Any], task: str) -> JudgeSignal:
        assert self.vlm is not None
        vlm = self.vlm
        strip_a = [frames_a[i] for i in keyframe_indices(len(frames_a), self.keyframes)]
        strip_b = [frames_b[i] for i in keyframe_indices(len(frames_b), self.keyframes)]
        parsed, replies = vlm.ask(preference_messages(task, strip_a, strip_b, vlm.size),
                                  parse_preference, PREFERENCE_SCHEMA)
        if self.swap:
            swapped, more = vlm.ask(preference_messages(task, strip_b, strip_a, vlm.size),
                                    parse_preference, PREFERENCE_SCHEMA)
            parsed += [ParsedPreference(_SWAP[p.choice] if p.choice else None, p.reason,
                                        p.format_ok, p.how) for p in swapped]
            replies += more
        votes = [p.choice for p in parsed if p.choice is not None]
        counts = Counter(votes)
        pref, agreement = "tie", 0.0
        if votes:
            top = max(counts.values())
            leaders = [c for c in ("A", "B", "tie") if counts[c] == top]
            pref = leaders[0] if len(leaders) == 1 else "tie"
            agreement = top / len(votes)
        details = {"preference": pref, "mode": "vlm", "votes": [p.choice for p in parsed],
                   "counts": {c: counts[c] for c in ("A", "B", "tie")}, "valid": len(votes),
                   "invalid": len(parsed) - len(votes), "agreement": agreement,
                   "swap": self.swap, "format_ok": [p.format_ok for p in parsed],
                   "parsed_by": [p.how for p in parsed],
                   "reasons": [p.reason[:300] for p in parsed],
                   "keyframes": self.keyframes, **vlm.common_details(replies)}
        if not votes:
            reason = f"tie: no parseable A/B/tie in {len(parsed)} VLM replies"
        elif counts[pref] < max(counts.values()):
            reason = (f"tie: the VLM's votes split (A {counts['A']}, B {counts['B']}, tie "
                      f"{counts['tie']})")
        else:
            why = next((p.reason for p in parsed if p.choice == pref and p.reason), "")
            reason = (f"VLM prefers {pref} ({counts[pref]}/{len(votes)} votes)"
                      + (f": {why[:160]}" if why else ""))
        return JudgeSignal(_SIGN[pref], None, reason=reason, details=details)

    def close(self) -> None:
        """Close the Φ judge."""
        if self.phi_judge is not None:
            self.phi_judge.close()


def _task_of(side: Any) -> str:
    if isinstance(side, EpisodeRecord):
        context = side.context or {}
        return str(context.get("task") or context.get("task_name") or side.task_name)
    return ""


def _frames_of(side: Any, name: str) -> list[Any]:
    frames = getattr(side, "frames", None)
    if frames is None and isinstance(side, list | tuple) and side and np.ndim(side[0]) == 3:
        frames = side
    if not frames:
        raise VLMFrameError(f"episode {name} has no frames for the VLM preference: pass a "
                            "FramedEpisodeRecord (TerminalReward / render_mode='rgb_array') "
                            "or a list of RGB frames")
    return list(frames)
