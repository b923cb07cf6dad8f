"""LLM-written match reasons: a short critique of a verdict from both sides' judge signals.

The preference always comes from the evaluator (:func:`~.evaluator.judge_match`); a
critique only replaces the reason's *text*. :class:`ReasonWriter` shows an LLM
(:mod:`simjudge.llm`: embedded llama.cpp, an OpenAI-compatible server, or recorded
exchanges) the decided verdict, the templated reason and, per side, a text summary of
the judge signals stored in the verdict's ``details``:

* outcome (goal reached at step k, or not) and episode length;
* the progress curve, sampled (:func:`~.evaluator.signal_summary`);
* milestones: first step at which progress reached 25 / 50 / 75 / 100 %;
* a failure fingerprint of the single episode from its OPD metrics (:func:`episode_pattern`:
  ``regression`` when it fell back from its peak, ``stagnation`` when progress stood
  still most of the time, ``inefficient`` when it wandered, ``stalled early``, or
  ``steady progress``).

The reply is cleaned (:func:`clean_critique`: plain text, at most two sentences and
:data:`MAX_CHARS`); an empty reply, an echo of the instructions, a loop or a text calling
the other side better keeps the templated reason (:func:`unusable_because`). The result
records where the text came from under ``details["reason"]`` (``source``, ``model``,
``request_hash``, ``cached``, ``templated``, ``llm_text``). With a replay cache (:class:`~simjudge.llm.ReplayClient`)
a resumed or repeated run gets the same critiques, and ``replay`` mode needs no model.

Example:
    >>> from simjudge.llm import ScriptedClient
    >>> from .evaluator import SideSignals, judge_match
    >>> v = judge_match(SideSignals([0, .5, 1.0], True, 2), SideSignals([0, .4, .3], False))
    >>> value = {"preference": v.preference, "rule": v.rule, "reason": v.reason,
    ...          "details": v.details, "progress_a": v.progress_a, "progress_b": v.progress_b}
    >>> writer = ReasonWriter(ScriptedClient(["A opened it by step 2; B gave back progress."]))
    >>> out = writer.apply(value, task="OpenDrawer-v0")
    >>> out["preference"], out["reason"], out["details"]["reason"]["source"]
    ('A', 'A opened it by step 2; B gave back progress.', 'llm')
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["MAX_CHARS", "REASON_MODES", "ReasonWriter", "clean_critique", "critique_messages",
           "describe_side", "episode_pattern", "make_reason_writer", "unusable_because"]

REASON_MODES: tuple[str, ...] = ("template", "llm")
"""``template``: the evaluator's sentence; ``llm``: a critique written by an LLM."""
MAX_CHARS = 400
"""Longest stored critique (characters)."""
MAX_TOKENS = 96
"""Default token budget of one critique."""

SYSTEM = ("You review robot manipulation episodes. A judge panel has already decided which of "
          "two policies, A or B, did better; that verdict is final and you must not change it. "
          "Explain the verdict in at most two short sentences of plain text, citing the "
          "progress, milestones and failure patterns you are given.")


def episode_pattern(side: Mapping[str, Any]) -> str:
    """A one-episode failure fingerprint from the side's details (OPD metrics, signals).

    Args:
        side: ``details["A"]`` or ``details["B"]`` of a verdict.
    """
    opd = side.get("opd") or {}
    signals = side.get("signals") or {}
    peak, final = 100.0 * float(opd.get("MP", 0.0)), float(signals.get("final", 0.0))
    if side.get("success"):
        return "succeeded"
    if peak - final >= 10.0:
        return f"regression (peaked at {peak:.0f}, fell back to {final:.0f})"
    if float(opd.get("STR", 0.0)) >= 0.6:
        return f"stagnation (progress stood still in {100 * float(opd['STR']):.0f}% of steps)"
    if peak < 25.0:
        return f"stalled early (never passed {peak:.0f})"
    if float(opd.get("PPL", 1.0)) < 0.5 * final / 100.0:
        return "inefficient (progress wandered back and forth)"
    return f"steady progress, unfinished (reached {peak:.0f})"


def describe_side(label: str, side: Mapping[str, Any]) -> str:
    """One paragraph of judge signals for side ``label`` (``A`` or ``B``)."""
    signals = side.get("signals") or {}
    steps = int(side.get("steps", 0))
    if side.get("success"):
        outcome = f"reached the goal at step {side.get('steps_to_success')} of {steps}"
    else:
        outcome = f"did not reach the goal in {steps} steps"
    curve = ", ".join(f"step {k}: {v:.0f}" for k, v in signals.get("curve", []))
    milestones = ", ".join(f"{q}% {'at step ' + str(k) if k is not None else 'never'}"
                           for q, k in (signals.get("milestones") or {}).items())
    return (f"Policy {label}: {outcome}. Progress (0-100) over time: {curve or 'unknown'}. "
            f"Milestones: {milestones or 'unknown'}. Pattern: {episode_pattern(side)}.")


def critique_messages(value: Mapping[str, Any], task: str = "") -> list[dict[str, str]]:
    """The chat messages asking for a critique of one played match.

    Args:
        value: The match's result (``preference``, ``reason``, ``details``).
        task: The task id shown to the model.
    """
    details = value.get("details") or {}
    preference = str(value["preference"])
    verdict = ("it is a tie" if preference == "tie"
               else f"{preference} did better than {'B' if preference == 'A' else 'A'}")
    opening = "It is a tie because" if preference == "tie" else f"{preference} was better because"
    user = (f"Task: {task or 'unknown'}. Both policies started from the same state.\n"
            f"{describe_side('A', details.get('A') or {})}\n"
            f"{describe_side('B', details.get('B') or {})}\n"
            f"Final verdict: {verdict} (judge's note: {value.get('reason', '')}).\n"
            f"Write one or two sentences that start with \"{opening}\".")
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def clean_critique(text: str, limit: int = MAX_CHARS) -> str:
    """Plain text of a reply: no markup or labels, at most two sentences and ``limit`` chars."""
    text = re.sub(r"[*_`#>]+", "", text)
    text = re.sub(r"^\s*(critique|explanation|answer|reason)\s*:\s*", "", text, flags=re.I)
    text = " ".join(text.split())
    sentences = re.findall(r"[^.!?]+[.!?]+|[^.!?]+$", text)
    text = " ".join(s.strip() for s in sentences[:2]).strip()
    if len(text) > limit:
        text = text[:limit - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"
    return text


def unusable_because(text: str, preference: str) -> str:
    """Why a cleaned critique cannot stand as the reason ("" when it can).

    Refused: an empty or near-empty reply, an echo of the instructions, a loop (a
    four-word phrase three times), or a text that names the other side (or, for a tie, either side) as the better one; the stored reason
    then stays the templated sentence, and the preference is the evaluator's either way.
    """
    if len(text) < 12:
        return "empty LLM reply"
    if re.search(r"one or two sentences|start with", text, flags=re.I):
        return "the LLM echoed its instructions"
    words = re.findall(r"\w+", text.lower())
    phrases = Counter(tuple(words[k:k + 4]) for k in range(len(words) - 3))
    if phrases and max(phrases.values()) >= 3:
        return "the LLM repeated itself"
    better = r"\s+(?:was|is|did|performed)\s+(?:clearly\s+)?(?:better|preferred|superior)"
    others = "AB" if preference == "tie" else ("B" if preference == "A" else "A")
    if re.search(rf"\b[{others}]{better}", text):
        return "the LLM contradicted the verdict"
    return ""


class ReasonWriter:
    """Writes match reasons with an LLM client (the verdict is never touched).

    Args:
        client: Any :class:`~simjudge.llm.LLMClient` (wrap it in a
            :class:`~simjudge.llm.ReplayClient` to cache and replay).
        spec: How the client was specified (recorded with each reason).
        max_tokens: Token budget per critique.
        seed: Sampling seed (decoding is greedy at temperature 0).
    """

    def __init__(self, client: Any, spec: str = "", *, max_tokens: int = MAX_TOKENS,
                 seed: int = 0) -> None:
        self.client = client
        self.spec = spec or f"{client.backend}:{client.model}"
        self.max_tokens = int(max_tokens)
        self.seed = int(seed)

    def apply(self, value: Mapping[str, Any], task: str = "") -> dict[str, Any]:
        """``value`` (a played match's result) with the reason replaced by a critique.

        ``preference``, progress scores and ``rule`` are copied unchanged; the templated
        reason moves to ``details["reason"]["templated"]``.
        """
        reply = self.client.complete(critique_messages(value, task), temperature=0.0,
                                     max_tokens=self.max_tokens, seed=self.seed)
        templated = str(value.get("reason", ""))
        text = clean_critique(reply.text)
        refused = unusable_because(text, str(value["preference"]))
        source = {"source": f"template ({refused})" if refused else "llm", "model": self.spec,
                  "request_hash": reply.request_hash, "cached": bool(reply.cached),
                  "templated": templated, "llm_text": text}
        details = {**dict(value.get("details") or {}), "reason": source}
        return {**dict(value), "reason": templated if refused else text, "details": details}

    def close(self) -> None:
        """Release the client (an embedded model's memory)."""
        self.client.close()


def make_reason_writer(spec: str | None, out: str | Path, *, cache_dir: str | Path | None = None,
                       mode: str = "auto", max_tokens: int = MAX_TOKENS,
                       seed: int = 0) -> ReasonWriter:
    """A :class:`ReasonWriter` on the client ``spec``, cached and logged in the run ``out``.

    Args:
        spec: ``llamacpp:MODEL`` (embedded; ``smollm2-135m`` is fast, the default
            ``qwen2.5-coder-1.5b`` writes better) or ``openai:MODEL`` (an OpenAI-compatible
            server, ``$SIMJUDGE_LLM_BASE_URL``); None = ``$SIMJUDGE_LLM`` or the default.
        out: The run directory (``llm_cache/`` and ``llm_log.jsonl`` go there).
        cache_dir: Replay cache folder instead of ``out/llm_cache``.
        mode: ``auto`` (serve from the cache, else ask and store), ``record`` or ``replay``
            (cache only; a miss is an error naming the request).
        max_tokens: Token budget per critique.
        seed: Sampling seed.
    """
    from simjudge.llm import make_client
    from simjudge.llm.factory import DEFAULT_SPEC

    spec = spec or os.environ.get("SIMJUDGE_LLM") or DEFAULT_SPEC
    kwargs: dict[str, Any] = {"progress": False} if spec.startswith("llamacpp") else {}
    client = make_client(spec, cache_dir=cache_dir or Path(out) / "llm_cache", mode=mode,
                         log=Path(out) / "llm_log.jsonl", **kwargs)
    return ReasonWriter(client, spec, max_tokens=max_tokens, seed=seed)
