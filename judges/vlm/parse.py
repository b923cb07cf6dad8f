"""Tolerant parsing of server-VLM replies: a 0–100 progress estimate, an A/B/tie preference.

Why tolerant: replies of small or unconstrained models rarely follow a format exactly. A
reply carrying an answer in a recognisable form is used; a reply without one is *invalid*
(never guessed), so aggregation drops it and benchmarks can count it as wrong.
``format_ok`` says whether the reply was exactly the requested JSON.

Progress (:func:`parse_progress`), first rule that matches wins:

1. a JSON object with a numeric ``progress`` (or ``estimate``, ``percent``, ``score``);
2. a labelled number: ``progress: 45``, ``Progress = 45%``, ``estimate is 45``;
3. a percentage ``45%`` or a fraction ``45/100`` / ``4 out of 10`` (rescaled to 0–100);
4. the whole reply is one number.

Values outside 0–100 are clipped (``clipped`` = True, ``format_ok`` = False). A value
such as ``0.45`` is read as 0.45 on the 0–100 scale, not as 45: the prompt asks for
0–100, and guessing the scale would hide a model that does not follow it.

Preference (:func:`parse_preference`): a JSON ``preference`` (or ``winner``, ``better``,
``answer``) of ``A``/``B``/``tie``; else a labelled ``Preference: B`` / ``Winner: A``;
else one unambiguous phrase (``episode A is better``, ``B made more progress``, ``tie``,
``equal``). Anything else, or both A and B claimed, is invalid.

Example:
    >>> p = parse_progress('{"progress": 40, "reason": "drawer half open"}')
    >>> p.score, p.format_ok, p.critique
    (40.0, True, 'drawer half open')
    >>> parse_progress("Progress: 75%").score
    75.0
    >>> parse_preference('{"preference": "B", "reason": "B opened it"}').choice
    'B'
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ..llm.parse import ParsedScore
from ..llm.parse import _json_object as json_object

__all__ = ["PREFERENCES", "ParsedPreference", "parse_preference", "parse_progress"]

PREFERENCES: tuple[str, ...] = ("A", "B", "tie")
"""The answers of a preference judgement."""

_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)"
_PROGRESS_KEYS = ("progress", "estimate", "percent", "percentage", "score", "value")
_REASON_KEYS = ("reason", "explanation", "rationale", "critique", "why")
_LABELLED = re.compile(
    rf"\b(?:progress|estimate|percent(?:age)?|completion|score)\b\W{{0,4}}"
    rf"(?:(?:is|of|was|=|at|about|around)\s*)?({_NUMBER})\s*(%|/\s*\d+|out\s+of\s+\d+)?",
    re.IGNORECASE,
)
_PERCENT = re.compile(rf"(?<![\w.])({_NUMBER})\s*%")
_FRACTION = re.compile(rf"(?<![\w.])({_NUMBER})\s*(?:/|out\s+of)\s*(\d+)\b", re.IGNORECASE)
_PREF_KEYS = ("preference", "winner", "better", "answer", "choice", "verdict")
_PREF_LABEL = re.compile(
    r"\b(?:preference|winner|better|answer|choice|verdict)\b\W{0,4}(?:(?:is|=)\s*)?"
    r"(?:episode\s+)?\"?(A|B|tie|draw|equal|neither|none)\b",
    re.IGNORECASE,
)
_PREF_PHRASE = re.compile(
    r"\b(?:episode\s+)?\b([AB])\b\s+(?:is\s+better|made\s+more\s+progress|wins|is\s+preferred|"
    r"performed\s+better|did\s+better)",
    re.IGNORECASE,
)
_TIE = re.compile(r"\b(?:tie|draw|equally|equal|same\s+progress|neither)\b", re.IGNORECASE)
_TIE_WORDS = {"tie", "draw", "equal", "neither", "none", "same", "equally"}


def _float(text: object) -> float | None:
    try:
        value = float(str(text).strip().rstrip("%"))
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def _rescale(value: float, unit: str | None) -> float:
    unit = (unit or "").strip().lower()
    digits = re.findall(r"\d+", unit)
    if digits:
        den = float(digits[0])
        if den > 0 and den != 100:
            return value / den * 100.0
    return value


def _reason_of(data: dict | None, text: str) -> str:
    if data is not None:
        for key in _REASON_KEYS:
            if isinstance(data.get(key), str):
                return str(data[key]).strip()
        return ""
    return " ".join(text.split())[:300]


def _scored(value: float, how: str, reason: str, format_ok: bool = False) -> ParsedScore:
    clipped = not 0.0 <= value <= 100.0
    return ParsedScore(min(max(value, 0.0), 100.0), format_ok and not clipped, reason, clipped,
                       how)


def parse_progress(text: str) -> ParsedScore:
    """A 0–100 progress estimate and its reason from a reply (module docstring rules).

    The reason is in ``critique`` (JSON ``reason``; otherwise the reply's text, shortened).
    """
    text = str(text)
    data = json_object(text)
    if data is not None:
        for key in _PROGRESS_KEYS:
            value = _float(data.get(key)) if not isinstance(data.get(key), bool) else None
            if value is not None:
                reason = _reason_of(data, text)
                return _scored(value, "json", reason, key == "progress" and bool(reason))
    labelled = [m for m in _LABELLED.finditer(text) if _float(m.group(1)) is not None]
    if labelled:
        last = labelled[-1]
        value = _rescale(float(last.group(1)), last.group(2) if last.group(2) != "%" else None)
        return _scored(value, "labelled", _reason_of(None, text))
    percent = _PERCENT.findall(text)
    if percent:
        return _scored(float(percent[-1]), "percent", _reason_of(None, text))
    fractions = _FRACTION.findall(text)
    if fractions:
        num, den = fractions[-1]
        return _scored(_rescale(float(num), f"/{den}"), "fraction", _reason_of(None, text))
    bare = _float(text.strip().strip("`*_ .\n"))
    if bare is not None:
        return _scored(bare, "bare", "")
    return ParsedScore(None, critique=_reason_of(None, text))


@dataclass(frozen=True)
class ParsedPreference:
    """One parsed preference reply.

    Attributes:
        choice: ``A``, ``B``, ``tie``, or None when the reply had no readable answer.
        reason: The reason given (JSON ``reason``, else the reply's text, shortened).
        format_ok: The reply was the requested JSON with a valid ``preference`` and reason.
        how: Which rule read it (``json``, ``labelled``, ``phrase``, ``tie``) or ``invalid``.
    """

    choice: str | None
    reason: str = ""
    format_ok: bool = False
    how: str = "invalid"

    @property
    def valid(self) -> bool:
        """Whether an answer was read."""
        return self.choice is not None


def _choice(word: object) -> str | None:
    text = str(word).strip().strip("\"'.").lower()
    text = text.removeprefix("episode").strip()
    if text in ("a", "b"):
        return text.upper()
    return "tie" if text in _TIE_WORDS else None


def parse_preference(text: str) -> ParsedPreference:
    """``A`` / ``B`` / ``tie`` and the reason from a reply (module docstring rules)."""
    text = str(text)
    data = json_object(text)
    if data is not None:
        for key in _PREF_KEYS:
            choice = _choice(data.get(key)) if key in data else None
            if choice is not None:
                reason = _reason_of(data, text)
                return ParsedPreference(choice, reason, key == "preference" and bool(reason),
                                        "json")
    reason = _reason_of(None, text)
    label = _PREF_LABEL.search(text)
    if label:
        return ParsedPreference(_choice(label.group(1)), reason, how="labelled")
    phrases = {m.upper() for m in _PREF_PHRASE.findall(text)}
    if len(phrases) == 1:
        return ParsedPreference(phrases.pop(), reason, how="phrase")
    if not phrases and _TIE.search(text):
        return ParsedPreference("tie", reason, how="tie")
    bare = _choice(text)
    if bare is not None:
        return ParsedPreference(bare, "", how="bare")
    return ParsedPreference(None, reason)
