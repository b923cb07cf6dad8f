"""Tolerant parsing of LLM judge replies, and test-time-scaling aggregation.

Why tolerant: small local models rarely follow an output format exactly. A reply that
carries a score in some recognisable form (a bare number, ``score: 1``, JSON, a word such
as "incorrect", ``Score: 7/10``, a ``<score>`` tag without its closing tag) is used; a
reply without one is recorded as *invalid* — never guessed — so benchmarks can count it as
wrong. ``format_ok`` says whether the reply also followed the requested format exactly.

Aggregation (EQA-RM test-time scaling): drop invalid samples, then ``mean`` or ``vote``
(the mode of the scores rounded to the scale's step; ties go to the mode closest to the
median, then to the lower one). The spread (population std of the valid samples) is an
uncertainty signal.

Example:
    >>> parse_plan_score("Score: 0.5").score, parse_plan_score("The code is incorrect.").score
    (0.5, 0.0)
    >>> p = parse_episode_score("<critique>Drawer opened.</critique><score>8</score>")
    >>> p.score, p.format_ok, p.critique
    (8.0, True, 'Drawer opened.')
    >>> aggregate_scores([8.0, None, 6.0], "mean").score
    7.0
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "PLAN_SCORES",
    "SUPPORTED_AGGREGATES",
    "AggregateScore",
    "ParsedScore",
    "aggregate_scores",
    "parse_episode_score",
    "parse_plan_score",
]

PLAN_SCORES: tuple[float, ...] = (0.0, 0.5, 1.0)
"""The VERGSA plan judge's scale: 0 = errors, 0.5 = genuinely uncertain, 1 = no errors."""

SUPPORTED_AGGREGATES: tuple[str, ...] = ("mean", "vote")
"""Aggregations of K sampled judgements."""

_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)"
_LABELLED = re.compile(
    rf"\b(?:score|answer|rating|output|verdict|result|judg(?:e)?ment)\b\W{{0,4}}"
    rf"(?:(?:is|of|was|=)\s*)?({_NUMBER})",
    re.IGNORECASE,
)
_LEADING = re.compile(r"^[\s`*_]*(0(?:\.0|\.5)?|1(?:\.0)?|\.5)(?!\d|\.\s|\.$|\))")
_ANY_NUMBER = re.compile(rf"(?<![\w.]){_NUMBER}(?![\w])")
_JSON_OBJECT = re.compile(r"\{[^{}]*\}", re.DOTALL)
_JSON_KEYS = ("score", "answer", "rating", "verdict", "result", "output")
# order matters: negated and negative phrases before the positive ones they contain
_PLAN_WORDS: tuple[tuple[re.Pattern[str], float], ...] = (
    (re.compile(r"\b(?:no|zero|without|free of)\s+(?:\w+\s+)?errors?\b", re.I), 1.0),
    (re.compile(r"\b(?:incorrect|not\s+correct|wrong|invalid|erroneous|has\s+errors?|"
                r"contains?\s+(?:an?\s+)?errors?|errors?\s+found|buggy)\b", re.I), 0.0),
    (re.compile(r"\b(?:uncertain|unsure|not\s+sure|unclear|can(?:not|'t)\s+tell)\b", re.I), 0.5),
    (re.compile(r"\b(?:correct|valid|looks\s+good|fine|no\s+issues?)\b", re.I), 1.0),
)
_CRITIQUE = re.compile(r"<critique>(.*?)(?:</critique>|<score>|$)", re.IGNORECASE | re.DOTALL)
_SCORE_TAG = re.compile(rf"<score>\s*({_NUMBER})\s*(?:/\s*(\d+))?", re.IGNORECASE)
_SCORE_TAG_CLOSED = re.compile(rf"<score>\s*{_NUMBER}\s*</score>", re.IGNORECASE)
_OUT_OF = re.compile(rf"({_NUMBER})\s*(?:/|out\s+of)\s*(\d+)\b", re.IGNORECASE)


@dataclass(frozen=True)
class ParsedScore:
    """One parsed reply.

    Attributes:
        score: The score on the judge's scale, or None when no score could be read.
        format_ok: The reply followed the requested format exactly (and was in range).
        critique: The critique text (episode judges), "" if none.
        clipped: The number read was outside the scale and was clipped to it.
        how: Which rule found the score (``json``, ``tag``, ``labelled``, ``bare``,
            ``leading``, ``word``, ``fraction``, ``number``) or ``invalid``.
    """

    score: float | None
    format_ok: bool = False
    critique: str = ""
    clipped: bool = False
    how: str = "invalid"

    @property
    def valid(self) -> bool:
        """Whether a score was read."""
        return self.score is not None


def _float(text: str) -> float | None:
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def _snap_plan(value: float | None) -> float | None:
    """Nearest of 0 / 0.5 / 1 for a value in [0, 1] (ties go to 0.5); None outside."""
    if value is None or not 0.0 <= value <= 1.0:
        return None
    return min(PLAN_SCORES, key=lambda s: (abs(s - value), s != 0.5))


def _json_object(text: str) -> dict | None:
    """The first flat JSON object in ``text`` (None if there is none)."""
    for block in _JSON_OBJECT.findall(text):
        try:
            data = json.loads(block)
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict):
            return data
    return None


def _json_score(text: str) -> float | str | None:
    data = _json_object(text)
    if data is None:
        return None
    for key in _JSON_KEYS:
        if key in data and not isinstance(data[key], bool | dict | list):
            return data[key]
    return None


def _plan_word(text: str) -> float | None:
    for pattern, value in _PLAN_WORDS:
        if pattern.search(text):
            return value
    return None


def parse_plan_score(text: str) -> ParsedScore:
    """The VERGSA plan judge's 1 / 0 / 0.5 from a reply, tolerantly.

    Rules, first match wins: the whole reply is a number; it starts with 0, 0.5 or 1
    (not an enumeration such as ``1.``); JSON with a ``score``-like key
    (number or word); a labelled number (``score: 1``, ``Answer = 0``); a word
    ("incorrect", "no errors", "uncertain", "correct"); the last number in [0, 1]
    anywhere. Numbers in [0, 1] snap to the nearest of 0 / 0.5 / 1; others are ignored.
    ``format_ok`` is True only for a reply that is exactly one of the three numbers.
    """
    stripped = str(text).strip().strip("`*_ .\n").strip()
    bare = _snap_plan(_float(stripped))
    if bare is not None:
        return ParsedScore(bare, _float(stripped) in PLAN_SCORES, how="bare")
    leading = _LEADING.match(str(text))
    if leading:
        return ParsedScore(float(leading.group(1)), how="leading")
    value = _json_score(text)
    if value is not None:
        score = _snap_plan(_float(str(value)))
        if score is None and isinstance(value, str):
            score = _plan_word(value)
        if score is not None:
            return ParsedScore(score, how="json")
    for match in _LABELLED.finditer(text):
        score = _snap_plan(_float(match.group(1)))
        if score is not None:
            return ParsedScore(score, how="labelled")
    word = _plan_word(text)
    if word is not None:
        return ParsedScore(word, how="word")
    numbers = [_snap_plan(_float(m)) for m in _ANY_NUMBER.findall(text)]
    numbers = [n for n in numbers if n is not None]
    if numbers:
        return ParsedScore(numbers[-1], how="number")
    return ParsedScore(None)


def _on_scale(value: float, denominator: str | None, high: float) -> float:
    if denominator:
        den = _float(denominator)
        if den and den > 0 and den != high:
            return value / den * high
    return value


def parse_episode_score(text: str, low: float = 0.0, high: float = 10.0) -> ParsedScore:
    """The EQA-RM ``<critique>…</critique><score>N</score>`` reply, tolerantly.

    A JSON object with a numeric ``score`` (the judges' ``json_mode``) is read first
    (``format_ok`` when it also has a ``critique``). Otherwise the score comes from a
    ``<score>`` tag (closing tag optional, ``<score>7/10`` allowed), else from a labelled
    ``Score: 7/10`` / ``score = 7`` (the last one), else from a trailing ``N/10`` or
    ``N out of 10``. A fraction over another denominator is rescaled
    (``4/5`` → 8). Values outside [low, high] are clipped (``clipped`` = True,
    ``format_ok`` = False). ``format_ok`` needs both tags, closed, and the score in range.
    """
    text = str(text)
    data = _json_object(text)
    value: float | None = None
    if data is not None and _float(str(data.get("score"))) is not None:
        value = float(data["score"])
        clipped = not low <= value <= high
        critique = str(data.get("critique", ""))
        return ParsedScore(min(max(value, low), high), "critique" in data and not clipped,
                           critique, clipped, "json")
    critique_match = _CRITIQUE.search(text)
    critique = critique_match.group(1).strip() if critique_match else ""
    value = None
    how = "invalid"
    tag = _SCORE_TAG.search(text)
    if tag:
        value, how = _on_scale(float(tag.group(1)), tag.group(2), high), "tag"
    else:
        labelled = [m for m in _LABELLED.finditer(text) if _float(m.group(1)) is not None]
        if labelled:
            last = labelled[-1]
            after = _OUT_OF.match(text, last.start(1))
            den = after.group(2) if after else None
            value, how = _on_scale(float(last.group(1)), den, high), "labelled"
        else:
            fractions = _OUT_OF.findall(text)
            if fractions:
                num, den = fractions[-1]
                value, how = _on_scale(float(num), den, high), "fraction"
    if value is None or not math.isfinite(value):
        return ParsedScore(None, critique=critique)
    clipped = not low <= value <= high
    value = min(max(value, low), high)
    format_ok = bool(critique_match and "</critique>" in text.lower()
                     and _SCORE_TAG_CLOSED.search(text) and not clipped)
    if not critique:
        critique = _SCORE_TAG.split(text)[0].strip() if tag else ""
    return ParsedScore(value, format_ok, critique, clipped, how)


@dataclass(frozen=True)
class AggregateScore:
    """K sampled judgements combined.

    Attributes:
        score: The aggregate, or None when no sample was valid.
        samples: Every sample's score (None = invalid), in sampling order.
        n_valid: Number of valid samples.
        spread: Population standard deviation of the valid samples (0 for fewer than 2).
        method: ``mean`` or ``vote``.
    """

    score: float | None
    samples: tuple[float | None, ...]
    n_valid: int
    spread: float
    method: str


def aggregate_scores(
    samples: Sequence[float | None], method: str = "mean", step: float = 1.0
) -> AggregateScore:
    """Combine sampled scores (EQA-RM): drop invalid ones, then mean or majority vote.

    Args:
        samples: Per-sample scores, None for invalid replies.
        method: One of :data:`SUPPORTED_AGGREGATES`.
        step: Rounding step of the vote (1 for 0–10 scores, 0.5 for 1 / 0.5 / 0).

    Raises:
        ValueError: Unknown method or non-positive step.
    """
    if method not in SUPPORTED_AGGREGATES:
        raise ValueError(f"aggregate={method!r} is not supported; use one of "
                         f"{list(SUPPORTED_AGGREGATES)}")
    if not step > 0:
        raise ValueError(f"step must be > 0, got {step}")
    valid = [float(s) for s in samples if s is not None]
    spread = _std(valid)
    if not valid:
        return AggregateScore(None, tuple(samples), 0, 0.0, method)
    if method == "mean":
        score = sum(valid) / len(valid)
    else:
        rounded = [round(v / step) * step for v in valid]
        counts = Counter(rounded)
        top = max(counts.values())
        modes = sorted(v for v, c in counts.items() if c == top)
        median = _median(valid)
        score = min(modes, key=lambda v: (abs(v - median), v))
    return AggregateScore(float(score), tuple(samples), len(valid), spread, method)


def _median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2.0


def _std(values: Sequence[float]) -> float:
    if len(values) < 2:
        return 0.0
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
