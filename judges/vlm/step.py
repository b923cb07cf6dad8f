"""``vlm-step``: a server VLM's 0–100 progress estimate of keyframes, as a potential Φ.

Every ``every`` steps (and on the step that ends the episode) the judge sends the current
exterior RGB frame — with the episode's first frame as a reference unless
``reference=False`` — and the task text to an OpenAI-compatible server, and reads a
``{"progress": 0-100, "reason": ...}`` reply tolerantly (:func:`.parse.parse_progress`).
Φ = estimate / 100, held between keyframes (and kept when every sample of a keyframe was
unparseable, which the details then say). With ``k > 1`` the estimate is the mean (or vote)
of ``k`` samples and the details carry each sample and their spread (EQA-RM test-time
scaling). The judge wrappers render a frame only on keyframe steps
(:meth:`VLMStepJudge.wants_frame`); between them no frame is rendered or read.

Details (same keys on every step): ``score`` (0–100 or None), ``samples``, ``valid``,
``invalid``, ``spread``, ``format_ok``, ``parsed_by``, ``reasons``, ``judged_step`` (the
keyframe the Φ comes from), ``held`` (bool), ``every``, ``reference`` and the sampling
settings (:meth:`.base.VLMJudgeBase.common_details`).

Example (any client with ``complete``; a real server in use, see the README):
    >>> import numpy as np
    >>> from simjudge.llm import ScriptedClient
    >>> judge = VLMStepJudge(ScriptedClient(['{"progress": 30, "reason": "ajar"}']), every=5)
    >>> judge.reset(JudgeContext(task="Open the drawer"))
    >>> judge.observe(Transition(step=0, frame=np.zeros((8, 8, 3), np.uint8))).phi
    0.3
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..context import JudgeContext
from ..llm.parse import aggregate_scores
from ..signals import JudgeSignal, Transition
from .base import VLMJudgeBase
from .images import shrink
from .parse import parse_progress
from .prompts import PROGRESS_SCHEMA, step_messages

__all__ = ["VLMStepJudge"]


class VLMStepJudge(VLMJudgeBase):
    """Φ from a server VLM's progress estimate of keyframes (module docstring).

    Args:
        client: An LLM client (``complete(messages, ...)``); or name one with ``server``,
            ``base_url``, ``cache``, ``replay``, ``log`` (:mod:`.base`).
        every: Ask on steps 0, every, 2·every … and on the episode's last step.
        reference: Also show the episode's first frame as "the start".
        k: Samples per keyframe (test-time scaling).
        temperature: Sampling temperature (default 0 for k = 1, else 0.8).
        aggregate: ``mean`` or ``vote``.
        max_tokens: Reply budget per sample.
        seed: Seed of the first sample.
        json_mode: Send :data:`~.prompts.PROGRESS_SCHEMA` as ``response_format``.
        size: Long side of the images sent (px); None = as rendered.
    """

    name = "vlm-step"
    provides_potential = True
    needs_frames = True
    max_reward = 1.0

    def __init__(
        self,
        client: Any = None,
        every: int = 10,
        reference: bool = True,
        k: int = 1,
        temperature: float | None = None,
        aggregate: str = "mean",
        max_tokens: int = 96,
        seed: int = 0,
        json_mode: bool = False,
        size: int | None = 224,
        server: str | None = None,
        base_url: str | None = None,
        cache: str | None = None,
        replay: str | None = None,
        log: str | None = None,
    ) -> None:
        super().__init__(client, server=server, base_url=base_url, cache=cache, replay=replay,
                         log=log, k=k, temperature=temperature, aggregate=aggregate,
                         max_tokens=max_tokens, seed=seed, json_mode=json_mode, size=size)
        if int(every) < 1:
            raise ValueError(f"every (steps between keyframes) must be >= 1, got {every}")
        self.every = int(every)
        self.reference = bool(reference)
        self._held: JudgeSignal | None = None
        self._first: np.ndarray | None = None
        self._task = ""

    def _reset(self, context: JudgeContext) -> None:
        self._held = None
        self._first = None
        self._task = context.task or context.task_name

    def estimate(self, frame: Any, reference: Any = None) -> tuple[JudgeSignal, list[str]]:
        """Ask about one frame now (after :meth:`reset`); the signal and the raw replies."""
        messages = step_messages(self._task, frame, reference, self.size)
        parsed, replies = self.ask(messages, parse_progress, PROGRESS_SCHEMA)
        agg = aggregate_scores([p.score for p in parsed], self.aggregate, 1.0)
        details: dict[str, Any] = {
            "score": agg.score,
            "samples": list(agg.samples),
            "valid": agg.n_valid,
            "invalid": len(parsed) - agg.n_valid,
            "spread": agg.spread,
            "format_ok": [p.format_ok for p in parsed],
            "parsed_by": [p.how for p in parsed],
            "reasons": [p.critique[:200] for p in parsed],
            **self.common_details(replies),
        }
        if agg.score is None:
            phi = self._held.phi if self._held is not None and self._held.phi is not None else 0.0
            reason = (f"no parseable 0-100 progress in {self.k} repl"
                      f"{'y' if self.k == 1 else 'ies'}; Φ kept at {phi:.2f}")
            return JudgeSignal(phi, phi, reason=reason, details=details), replies
        phi = agg.score / 100.0
        spread = f" ± {agg.spread:.1f}" if self.k > 1 else ""
        first = next((p.critique for p in parsed if p.valid and p.critique), "")
        why = f": {first[:100]}" if first else ""
        reason = f"VLM progress {agg.score:.0f}/100{spread} ({agg.n_valid}/{self.k} valid){why}"
        return JudgeSignal(phi, phi, reason=reason, details=details), replies

    def wants_frame(self, step: int, done: bool) -> bool:
        """Keyframes only: steps 0, every, 2·every …, the last step, and until one was judged."""
        return step % self.every == 0 or done or self._held is None

    def _observe(self, transition: Transition) -> JudgeSignal:
        done = bool(transition.terminated or transition.truncated)
        if not self.wants_frame(transition.step, done):  # Φ held: no frame is read (or rendered)
            return self._held_signal(transition.step)
        frame = shrink(transition.frame, self.size)  # raises VLMFrameError without a frame
        if transition.step == 0 or self._first is None:
            self._first = frame
        reference = self._first if self.reference and transition.step > 0 else None
        signal, _ = self.estimate(frame, reference)
        details = {**signal.details, "judged_step": transition.step, "held": False,
                   "every": self.every, "reference": reference is not None}
        self._held = JudgeSignal(signal.reward, signal.phi, signal.verdict, signal.reason,
                                 details)
        return self._held

    def _held_signal(self, step: int) -> JudgeSignal:
        held = self._held
        assert held is not None
        if held.details.get("held"):
            return held
        details = {**held.details, "held": True}
        self._held = JudgeSignal(held.reward, held.phi, held.verdict,
                                 f"{held.reason} (held from step {details['judged_step']})",
                                 details)
        return self._held
