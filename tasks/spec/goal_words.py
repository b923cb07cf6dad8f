"""The words the goal parser reads: verbs, final states, amounts, parts and ordinals.

One vocabulary for everything that reads a task's text — the goal parser
(:mod:`simjudge.tasks.spec.goal_parser`) and the template proposer — so that a
word means the same thing wherever it is read. All matching is on whole lower-case
words (``knobs`` matches ``knob``, ``folding`` does not match ``fold``).
"""

from __future__ import annotations

import re

__all__ = [
    "ACTION_VERBS",
    "AMOUNT_PATTERNS",
    "DETERMINERS",
    "OPENABLE_PARTS",
    "ORDINALS",
    "PART_WORDS",
    "PLACE_RELATIONS",
    "PLACE_VERBS",
    "PREPOSITIONS",
    "PRESSABLE_PARTS",
    "TURNABLE_PARTS",
    "find_amount",
    "part_semantics",
    "words",
]

ACTION_VERBS: dict[str, tuple[str, str | None]] = {
    # word: (action, direction); action is open | close | press | turn; None = from context
    "open": ("open", "open"), "opens": ("open", "open"), "opening": ("open", "open"),
    "unfold": ("open", "open"), "unfolding": ("open", "open"),
    "lift": ("open", "open"), "lifting": ("open", "open"),
    "raise": ("open", "open"), "raising": ("open", "open"),
    "extend": ("open", "open"), "uncover": ("open", "open"), "unlatch": ("open", "open"),
    "pull": ("open", "open"), "pulling": ("open", "open"),
    "swing": ("open", None), "slide": ("open", None), "sliding": ("open", None),
    "move": ("open", None), "nudge": ("open", None), "set": ("open", None),
    "close": ("close", "close"), "closes": ("close", "close"), "closing": ("close", "close"),
    "shut": ("close", "close"), "shutting": ("close", "close"),
    "lower": ("close", "close"), "lowering": ("close", "close"),
    "fold": ("close", "close"), "folding": ("close", "close"), "slam": ("close", "close"),
    "push": ("close", "close"), "pushing": ("close", "close"),
    "press": ("press", "open"), "pressing": ("press", "open"), "depress": ("press", "open"),
    "flush": ("press", "open"), "pump": ("press", "open"), "click": ("press", "open"),
    "hit": ("press", "open"), "activate": ("press", "open"),
    "turn": ("turn", "open"), "turning": ("turn", "open"), "rotate": ("turn", "open"),
    "rotating": ("turn", "open"), "twist": ("turn", "open"), "twisting": ("turn", "open"),
    "spin": ("turn", "open"), "tilt": ("turn", "open"), "tilting": ("turn", "open"),
    "adjust": ("turn", "open"), "swivel": ("turn", "open"), "crank": ("turn", "open"),
    "switch": ("press", "open"),
    "flushing": ("press", "open"), "pumping": ("press", "open"), "clicking": ("press", "open"),
    "depressing": ("press", "open"),
    "pop": ("open", None), "flip": ("open", None), "put": ("open", None),
    "draw": ("open", "open"), "reopen": ("open", "open"), "retract": ("close", "close"),
    "yank": ("open", "open"), "tug": ("open", "open"), "shove": ("close", "close"),
}
"""Verb -> (action, direction). ``push`` presses a button or pump and closes anything
else; ``pull``/``lift`` open, ``lower``/``fold`` close; ``turn``/``rotate`` turn up from
the lower limit. Final-state words (:data:`FINAL_STATES`) override a verb's direction."""

FINAL_STATES: dict[str, str] = {
    "open": "open", "opened": "open", "out": "open", "on": "open", "up": "open",
    "unfolded": "open", "ajar": "open",
    "closed": "close", "close": "close", "shut": "close", "off": "close", "in": "close",
    "folded": "close", "down": "close",
}
"""Words after the part that say where it must end (``pull the drawer open``,
``until it is closed``, ``turn the water on``). ``down`` does not change a press."""

DETERMINERS = frozenset({"the", "a", "an", "its", "their", "this", "that", "each", "both",
                         "all", "every", "one", "his", "her", "our", "your"})
"""Words before a start-state adjective (``the open drawer``)."""

START_STATES: dict[str, float] = {
    "open": 0.9, "opened": 0.9, "half open": 0.5, "partly open": 0.5, "closed": 0.0,
    "shut": 0.0, "folded": 0.0, "unfolded": 0.9,
}
"""Start-state adjectives (after a determiner, before the part) -> start fraction hint."""

PREPOSITIONS = frozenset({"on", "of", "in", "at", "by", "with", "from", "near", "beside",
                          "under", "above", "below", "behind", "inside", "onto", "into"})
"""Words that make the following part a locator or a grip (``the dial on the door``,
``by its handle``), not the part to move."""

PART_WORDS: dict[str, tuple[str, ...]] = {
    "door": ("door",), "doors": ("door",), "gate": ("door",), "gates": ("door",),
    "drawer": ("drawer",), "drawers": ("drawer",),
    "lid": ("lid", "screen"), "lids": ("lid", "screen"), "cover": ("lid",),
    "covers": ("lid",), "cap": ("lid",),
    "screen": ("screen", "lid"), "screens": ("screen", "lid"), "display": ("screen", "lid"),
    "monitor": ("screen", "lid"),
    "knob": ("knob",), "knobs": ("knob",), "dial": ("knob",), "dials": ("knob",),
    "burner": ("knob",),
    "handle": ("handle",), "handles": ("handle",), "lever": ("handle", "button"),
    "levers": ("handle", "button"),
    "faucet": ("handle",), "faucets": ("handle",), "tap": ("handle",), "taps": ("handle",),
    "spout": ("handle",),
    "button": ("button",), "buttons": ("button",), "switch": ("button", "handle"),
    "switches": ("button", "handle"), "key": ("button",),
    "pump": ("pump",), "pumps": ("pump",), "plunger": ("pump",), "nozzle": ("pump",),
    "seat": ("seat",), "seats": ("seat",),
    "window": ("window",), "windows": ("window",), "sash": ("window",), "pane": ("window",),
    "head": ("head",), "heads": ("head",), "lampshade": ("head",), "shade": ("head",),
}
"""Word -> link semantics it names, in order of preference (a laptop's ``lid`` is its
``screen``; a faucet or tap is turned by its ``handle``)."""

def _third_person(verb: str) -> str:
    """``turn`` -> ``turns``, ``push`` -> ``pushes``."""
    return verb + ("es" if verb.endswith(("s", "sh", "ch", "x")) else "s")


ACTION_VERBS.update({
    _third_person(verb): meaning for verb, meaning in list(ACTION_VERBS.items())
    if not verb.endswith("ing") and (verb.endswith("ss") or not verb.endswith("s"))
    and _third_person(verb) not in PART_WORDS
})  # fmt: skip
# Third-person forms ("the arm turns off the faucet") of every base verb, except those that
# are also plural part words ("switches", "pumps").

PLURALS = frozenset(w for w in PART_WORDS if w.endswith("s") and w[:-1] in PART_WORDS)
"""Plural part words (``doors``, ``knobs``): all the matching parts."""

PHRASES: dict[str, str] = {
    "flush lever": "button", "flush handle": "button", "flush button": "button",
    "switch button": "button", "power button": "button", "start button": "button",
    "window sash": "window", "faucet handle": "handle", "tap handle": "handle",
    "control knob": "knob", "oven knob": "knob", "stove knob": "knob",
    "lamp head": "head", "lamp shade": "head",
}
"""Two-word part names, merged into one word before matching (``flush lever`` is a button)."""

OPENABLE_PARTS = ("door", "drawer", "lid", "screen", "seat", "window")
"""Parts an ``open``/``close`` task moves when the text names none (``Open the safe``)."""

PRESSABLE_PARTS = ("button", "pump")
"""Parts a ``press`` task moves when the text names none (``Flush the toilet``)."""

TURNABLE_PARTS = ("knob", "handle", "head")
"""Parts a ``turn`` task moves when the text names none (``Turn on the faucet``)."""

ORDINALS: dict[str, tuple[str, int]] = {
    "top": ("z", -1), "upper": ("z", -1), "uppermost": ("z", -1), "topmost": ("z", -1),
    "highest": ("z", -1), "bottom": ("z", 0), "lower": ("z", 0), "lowest": ("z", 0),
    "bottommost": ("z", 0), "left": ("y", -1), "leftmost": ("y", -1), "right": ("y", 0),
    "rightmost": ("y", 0), "first": ("order", 0), "second": ("order", 1),
    "third": ("order", 2), "fourth": ("order", 3), "fifth": ("order", 4), "last": ("order", -1),
    "middle": ("z", 1), "centre": ("z", 1), "center": ("z", 1),
}
"""Ordinal word -> (axis, index after sorting ascending). Positions are in the object's
frame with its front facing the viewer: ``z`` up, ``y`` to the viewer's left (the robot
faces the object's front, so its left is the object's +y); ``order`` is the tree's order.
``middle`` is index 1 of three along ``z``."""

KIND_WORDS: dict[str, str] = {"hinged": "hinge", "swinging": "hinge", "sliding": "slider",
                              "rotating": "free", "spinning": "free"}
"""Adjectives that name how a part moves (``the hinged door``) -> tree link kind."""

PLACE_VERBS = frozenset({"put", "place", "stack", "drop", "insert", "set", "move", "pick",
                         "transfer", "store", "load"})
"""Verbs of a placement task (with two scene objects and a relation word)."""

PLACE_VERBS = PLACE_VERBS | {_third_person(verb) for verb in PLACE_VERBS}
"""... and their third-person forms (``the arm places the bowl in the microwave``)."""

PLACE_RELATIONS: dict[str, str] = {"into": "in", "in": "in", "inside": "in", "within": "in",
                                   "onto": "on", "on": "on", "atop": "on", "upon": "on"}
"""Relation word -> placement relation."""

_NUMBER = r"(\d+(?:\.\d+)?)"
AMOUNT_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("percent", re.compile(rf"\b{_NUMBER}\s*(?:%|percent\b|per cent\b)")),
    ("degrees", re.compile(rf"\b{_NUMBER}\s*(?:°|degrees?\b|deg\b)")),
    ("three quarters", re.compile(r"\bthree[\s-]quarters?\b")),
    ("halfway", re.compile(r"\b(?:half[\s-]?way|half a turn|half of the way|half)\b")),
    ("a quarter", re.compile(r"\b(?:a quarter|quarter[\s-]turn|quarter of|quarter)\b")),
    ("fully", re.compile(r"\b(?:fully|completely|all the way|wide|entirely|full turn|"
                         r"as far as (?:it|they) (?:can|will) go|to the limit|full)\b")),
    ("slightly", re.compile(r"\b(?:slightly|a crack|a bit|a little|a tad|ajar|barely|"
                            r"just a little|a few centimetres|a few centimeters)\b")),
    ("partly", re.compile(r"\b(?:partly|partially|part[\s-]?way|part of the way)\b")),
)
"""Amount patterns in order of precedence (the first that matches wins)."""


def words(text: str) -> list[str]:
    """Lower-case words of ``text``.

    Possessives are dropped, hyphens split, two-word part names (:data:`PHRASES`) merged into
    their part word.
    """
    lowered = text.lower().replace("’", "'")
    lowered = re.sub(r"'s\b", "", lowered)
    lowered = re.sub(r"half[\s-]+(open|opened|closed|shut)", r"half_\1", lowered)
    tokens = re.findall(r"[a-z_]+|\d+(?:\.\d+)?|%|°", lowered)
    out: list[str] = []
    for token in tokens:
        if out and f"{out[-1]} {token}" in PHRASES:
            out[-1] = PHRASES[f"{out[-1]} {token}"]
            continue
        out.append(token)
    return out


def part_semantics(word: str) -> tuple[str, ...]:
    """The link semantics a word names (``knobs`` -> ``("knob",)``); empty if none."""
    return PART_WORDS.get(word, ())


def find_amount(text: str) -> tuple[str, float | None, str] | None:
    """The first amount in ``text``: ``(amount, number or None, matched text)`` or None.

    ``number`` is the percentage (0-1) or the angle in degrees for ``percent`` /
    ``degrees``; the amount is a key of :data:`~simjudge.tasks.spec.goal.AMOUNTS` otherwise.
    """
    lowered = re.sub(r"half[\s-]+(open|opened|closed|shut)", " ", text.lower())
    for amount, pattern in AMOUNT_PATTERNS:
        match = pattern.search(lowered)
        if match is None:
            continue
        if amount == "percent":
            return amount, float(match.group(1)) / 100.0, match.group(0)
        if amount == "degrees":
            return amount, float(match.group(1)), match.group(0)
        return amount, None, match.group(0)
    return None
