"""How far: the amounts a task's words state, read without a default.

:func:`read_amount` finds the one amount of a clause — a percentage, a fraction word, an
angle (degrees or radians), a length (mm, cm, m, inches), a vague size word with an agreed
band, or a plain verb's "substantially" — or says which words name no band (``refuse``).
:func:`amount_target` turns it into a target interval of the part's range fraction:

==========================  =================================================  ============
words                       reading                                            interval
==========================  =================================================  ============
(a plain verb)              substantially (:data:`PLAIN_OPEN`, :data:`CLOSED`)  calibrated
fully, all the way, wide    the limit                                          ``[0.9, 1]``
N %, halfway, a quarter,    an end position, of the range from the lower       ``x ± 0.1``
two thirds, three-quarters  limit
N degrees / rad, N cm / in  an end position (the joint's limits convert it)    ``x ± 0.1``
close ... by N              a change of N from the start                       relative
about halfway               near the middle                                    ``[0.35, 0.65]``
partway, partly             strictly between the ends                          ``[0.1, 0.9]``
slightly, a bit, a crack    a change of 5-35 % of the range, from the start    relative
upright (a lid, a screen)   pi/2 rad from closed                               ``x ± 0.1``
==========================  =================================================  ============

Words of size with no agreed band (``a good amount``, ``most of the way``, ``somewhat``,
``some more``, ``toward its upper limit``) and amounts beyond the joint's range refuse.

Example:
    >>> read_amount("open the door 45 degrees").kind, read_amount("open it a good amount").kind
    ('angle', 'refuse')
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

__all__ = ["CLOSED", "PLAIN_DEFAULT", "PLAIN_OPEN", "SMALL_CHANGE", "TOLERANCE", "Amount",
           "amount_target", "read_amount", "spelled_numbers"]

TOLERANCE = 0.1
"""Half-width of an explicit amount's interval (range fraction)."""

SMALL_CHANGE = (0.05, 0.35)
"""A small move ("slightly", "a bit", "a crack"): a change of 5-35 % of the range."""

PLAIN_OPEN: dict[str, float] = {"door": 0.65, "drawer": 0.775, "lid": 0.9, "screen": 0.9,
                                "head": 0.9, "handle": 0.9, "button": 0.9, "knob": 0.9}
"""Least range fraction a plain "open" / "press" reaches, by part: the median of the
thresholds RoboGen's example substeps state for that part (``bench/goal_calibration.py``,
``tests/fixtures/robogen_thresholds.json``; the table is in docs/goals.md). Parts RoboGen
states none for use :data:`PLAIN_DEFAULT`."""

PLAIN_DEFAULT = 0.9
"""Plain "open" of a part without a calibrated threshold: near the upper limit."""

CLOSED = 0.1
"""Largest range fraction a plain "close" ends at."""

_NUM = r"(\d+(?:\.\d+)?)"
_FRACTIONS = (
    (r"\babout half[\s-]?way\b|\babout half\b|\broughly half[\s-]?way\b", "about", 0.5),
    (r"\btwo[\s-]thirds?\b", "fraction", 2 / 3),
    (r"\bthree[\s-]quarters?\b", "fraction", 0.75),
    (r"\b(?:one|a) third\b", "fraction", 1 / 3),
    (r"\bhalf a turn\b", "fraction", 0.5),
    (r"\b(?:a|one) quarter(?:[\s-]turn)?\b|\bquarter[\s-]turn\b", "fraction", 0.25),
    (r"\bhalf[\s-]?way\b|\bhalf of the way\b|\bhalf open\b|\bto half\b|\bhalf\b", "fraction", 0.5),
)
_REFUSE = re.compile(
    r"\b(?:a good amount|most of the way|mostly|somewhat|some more|a lot|a fair bit|"
    r"considerably|significantly|a little more|towards?|enough|more|further|wider|"
    r"a few degrees|several|nearly|almost)\b")
_SMALL = re.compile(
    r"\b(?:a little further|a bit further|a bit wider|a little wider|just a little|just a bit|"
    r"a tiny bit|a little bit|just slightly|very slightly|ever so slightly|"
    r"by a small amount|a small amount|a few centimetres|a few centimeters|a few cm|"
    r"slightly|a crack|a bit|a little|a tad|a touch|barely|ajar)\b")
_FULLY = re.compile(r"\b(?:fully|completely|all the way|the whole way|wide|entirely|full turn|"
                    r"as far as (?:it|they) (?:can|will) go|to the limit|full)\b")
_PARTWAY = re.compile(r"\b(?:partly|partially|part[\s-]?way|part of the way)\b")
_LENGTH = re.compile(rf"\b{_NUM}\s*(mm|millimet(?:re|er)s?|cm|centimet(?:re|er)s?|m|"
                     r"met(?:re|er)s?|in|inch|inches|\")(?![a-z])")
_UNIT = {"mm": 0.001, "cm": 0.01, "m": 1.0, "in": 0.0254, "inch": 0.0254, "inches": 0.0254,
         '"': 0.0254}


@dataclass(frozen=True)
class Amount:
    """One amount in a clause.

    Attributes:
        kind: ``plain``, ``fully``, ``fraction``, ``angle`` (value in rad), ``length``
            (value in m), ``about``, ``partway``, ``small``, ``upright`` or ``refuse``.
        value: The number (fraction, rad or m), when there is one.
        text: The words it was read from.
        by: The words say "by" (a change), or neither "to" nor "until" (an end position):
            only a closing reads it, as a move down from where the joint is.
        by_word: The words say "by" itself ("close it by 20%": a fraction as a change too).
    """

    kind: str
    value: float | None = None
    text: str = ""
    by: bool = False
    by_word: bool = False


def _unit(word: str) -> float:
    if word.startswith("milli"):
        return 0.001
    if word.startswith("centi"):
        return 0.01
    if word.startswith("met"):
        return 1.0
    return _UNIT[word]


_OF_THE_WAY = re.compile(r"\s+of\s+(?:the|its)\s+(?:way|range|travel|swing|opening|turn)\b")


_UNITS_WORDS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen "
                "fourteen fifteen sixteen seventeen eighteen nineteen").split()
_TENS_WORDS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_SPELLED = re.compile(
    rf"\b(?:(a|one) hundred(?: and)?\s*)?(?:({'|'.join(_TENS_WORDS)})(?:[\s-]({'|'.join(_UNITS_WORDS[1:10])}))?"
    rf"|({'|'.join(_UNITS_WORDS)}))?(?<=\w)(?=\s+(?:percent|per cent|degrees?|radians?|cm|mm|"
    r"centimet|millimet|inch|inches|met(?:re|er)s?)\b)")


def _spelled(match: re.Match[str]) -> str:
    if not match.group(0).strip():
        return match.group(0)
    value = 100 if match.group(1) else 0
    if match.group(2):
        value += 10 * (_TENS_WORDS.index(match.group(2)) + 2)
        value += _UNITS_WORDS.index(match.group(3)) if match.group(3) else 0
    elif match.group(4):
        value += _UNITS_WORDS.index(match.group(4))
    return str(value)


def spelled_numbers(text: str) -> str:
    """Number words before a unit as digits: "ninety degrees" -> "90 degrees"."""
    return _SPELLED.sub(_spelled, text)


def read_amount(text: str) -> Amount:
    """The amount a clause states (``plain`` when it states none)."""
    text = spelled_numbers(text.lower())
    text = re.sub(r"\b(the|a|an|its|this|that)\s+half[\s-](?:open|opened|closed|shut)\b", r"\1",
                  text.lower())  # "the half-open door": how it starts, not how far
    amount = _read_amount(text)
    if amount.text and amount.kind not in ("refuse", "plain"):
        at = text.lower().find(amount.text)
        tail = _OF_THE_WAY.match(text.lower(), at + len(amount.text)) if at >= 0 else None
        if tail is not None:
            return Amount(amount.kind, amount.value, amount.text + tail.group(0), amount.by,
                          amount.by_word)
    return amount


def _read_amount(text: str) -> Amount:
    low = text.lower()
    if m := _REFUSE.search(low):
        if not _SMALL.search(low):  # "a little further": small, "further": no band
            return Amount("refuse", text=m.group(0))
    by_word = bool(re.search(r"\bby\b", low))
    by = by_word or not re.search(r"\b(?:to|until|till|at)\b", low)
    if m := re.search(rf"{_NUM}\s*(?:%|percent\b|per cent\b)", low):
        return Amount("fraction", float(m.group(1)) / 100, m.group(0), by, by_word)
    if m := re.search(rf"{_NUM}\s*(?:°|degrees?\b|deg\b)", low):
        return Amount("angle", math.radians(float(m.group(1))), m.group(0), by)
    if m := re.search(rf"\b(?:{_NUM}|one|a)\s*(?:radians?|rad)\b", low):
        return Amount("angle", float(m.group(1) or 1.0), m.group(0), by)
    if m := _LENGTH.search(low):
        return Amount("length", float(m.group(1)) * _unit(m.group(2)), m.group(0), by)
    if m := _SMALL.search(low):
        return Amount("small", text=m.group(0))
    for pattern, kind, value in _FRACTIONS:
        if m := re.search(pattern, low):
            return Amount(kind, value, m.group(0), by, by_word)
    if m := _FULLY.search(low):
        return Amount("fully", 1.0, m.group(0))
    if m := _PARTWAY.search(low):
        return Amount("partway", text=m.group(0))
    if m := re.search(r"\bupright\b", low):
        return Amount("upright", math.pi / 2, m.group(0))
    return Amount("plain")


def amount_target(amount: Amount, direction: str, semantic: str, span: float,
                  prismatic: bool, previous_end: float | None = None
                  ) -> tuple[float, float, bool, str | None]:
    """``(low, high, relative, refusal)`` of an amount for one part.

    Args:
        amount: What the words state.
        direction: ``open`` or ``close``.
        semantic: The part's semantic (``door``) for the plain thresholds.
        span: The joint's range (rad or m).
        prismatic: The joint slides (a length applies, an angle does not).
        previous_end: Where an earlier step left the joint (``close it by 20 degrees``
            after ``open it fully``), if known.

    Returns:
        The interval, whether it is a change from the start, and None — or a refusal
        saying why no interval can be read.
    """
    kind = amount.kind
    if kind == "plain":
        if direction == "close":
            return 0.0, CLOSED, False, None
        return PLAIN_OPEN.get(semantic, PLAIN_DEFAULT), 1.0, False, None
    if kind == "fully":
        return (0.9, 1.0, False, None) if direction == "open" else (0.0, CLOSED, False, None)
    if kind == "small":
        if previous_end is None:
            return SMALL_CHANGE[0], SMALL_CHANGE[1], True, None
        sign = 1.0 if direction == "open" else -1.0  # a small move from where a step left it
        ends = sorted(previous_end + sign * c for c in SMALL_CHANGE)
        return round(max(0.0, ends[0]), 4), round(min(1.0, ends[1]), 4), False, None
    if kind == "partway":
        return 0.1, 0.9, False, None
    if kind == "about":
        return 0.35, 0.65, False, None
    if kind in ("angle", "upright") and prismatic:
        return 0.0, 1.0, False, f"'{amount.text}' is an angle but the part slides"
    if kind == "length" and not prismatic:
        return 0.0, 1.0, False, f"'{amount.text}' is a length but the part turns on a hinge"
    fraction = float(amount.value or 0.0)
    if kind in ("angle", "upright", "length"):
        fraction = fraction / span if span > 0 else math.inf
    if fraction > 1.0 + 0.02:
        return 0.0, 1.0, False, (f"'{amount.text}' is beyond the joint's range "
                                 f"({fraction:.2f} of it); give an amount inside the range")
    fraction = min(fraction, 1.0)
    if direction == "close" and amount.by and (kind != "fraction" or amount.by_word):
        if previous_end is None:
            return max(0.0, fraction - TOLERANCE), fraction + TOLERANCE, True, None
        fraction = max(0.0, previous_end - fraction)
    return (round(max(0.0, fraction - TOLERANCE), 4), round(min(1.0, fraction + TOLERANCE), 4),
            False, None)
