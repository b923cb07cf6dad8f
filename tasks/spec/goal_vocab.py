"""What the rule reader understands: every word of a description must be one of these.

The reader returns a goal only when every word that could change the meaning was read; a
word outside this vocabulary (after the amounts are taken out) refuses, naming it, so that
"fill the kettle with water", "dispense two pumps of soap" or "unlock the safe" are never
read as something else. The vocabulary is the reader's verbs, state words, part words,
spatial words and amounts, the object's own names, and :data:`BENIGN`: words that change
nothing about which joint moves where.
"""

from __future__ import annotations

import re

from . import goal_words as W
from .goal_space import AXIS_WORDS, ORDINAL_NUMBERS

__all__ = ["BENIGN", "CATEGORY_WORDS", "NO_VERBS", "unknown_words"]

BENIGN = frozenset("""
a an the this that these those it its them they their there here is are was were be been being
has have had do does please can could would you will should now then first next after before
again back once also just so as at all both each every any either same own of from in into to
by with on off up down out over until till while when which where what robot arm gripper
gently carefully slowly quickly firmly smoothly softly steadily please kindly i we want need like try must row hand side one ones part parts limit end position
starts start started begins begin beginning remains remain stays stay sticks stick left been
leave keep dont not no never without touch touching untouched alone only than about
around roughly approximately
water soap frame hinge hinged control panel storage look looks inside sure then and but
its it's let's lets let it's whole itself themselves then first finally afterwards later
currently already still state place starting keeping leaving while whilst
someone somebody gap opening space unpressed unopened unmoved undisturbed
sits sit stands stand rests rest hangs hang lies wide open opened closed shut ajar pulled pushed set
""".split())
"""Words that change nothing about which joint moves where (function words, politeness,
the robot, "leave"/"keep"/"without" whose meaning the constraint reading takes)."""

CATEGORY_WORDS: dict[str, tuple[str, ...]] = {
    "Refrigerator": ("fridge", "refrigerator"),
    "StorageFurniture": ("cabinet", "cupboard", "dresser", "furniture", "storage", "wardrobe"),
    "TrashCan": ("bin", "trash", "can", "garbage", "rubbish", "wastebasket"),
    "Dispenser": ("dispenser", "soap"), "Faucet": ("faucet", "tap", "sink"),
    "Oven": ("oven", "stove", "cooker"), "Laptop": ("laptop", "computer", "notebook"),
    "FoldingChair": ("chair", "folding"), "ButtonPanel": ("panel", "button"),
    "Microwave": ("microwave",), "Toilet": ("toilet",), "Kettle": ("kettle",),
    "Lamp": ("lamp",), "Window": ("window",), "Door": ("door",), "Box": ("box",),
    "Safe": ("safe",),
}
"""Words that name the object itself, by category."""

NO_VERBS = frozenset({"adjust", "adjusts", "set", "sets", "move", "moves"})
"""Verbs that name no direction and no end state: read only with an explicit end position."""

_AMOUNT_WORDS = frozenset("""
percent per cent degree degrees deg radian radians rad cm mm m in inch inches centimetre
centimetres centimeter centimeters millimetre millimetres metre metres meter meters
""".split())


def _known() -> frozenset[str]:
    words = set(BENIGN) | set(W.ACTION_VERBS) | set(W.FINAL_STATES)
    words |= set(W.PART_WORDS) | set(W.ORDINALS) | set(W.DETERMINERS) | set(W.PREPOSITIONS)
    words |= set(W.KIND_WORDS) | set(AXIS_WORDS) | set(ORDINAL_NUMBERS) | _AMOUNT_WORDS
    words |= {"middle", "centre", "center", "half_open", "half_opened", "half_closed",
              "half_shut"} | {w for phrase in W.PHRASES for w in phrase.split()}
    return frozenset(words - NO_VERBS)


_KNOWN = _known()


def unknown_words(text: str, category: str, amount_text: str = "",
                  also: frozenset[str] = frozenset()) -> list[str]:
    """The words of ``text`` the reader does not understand, in order, each once.

    Args:
        text: The description (one clause or all of it).
        category: The object's category (its own names are known).
        amount_text: The amount's words, taken out first ("two thirds" is an amount,
            "two pumps" is not).
        also: More words known here (``other`` in a constraint: "and no other").
    """
    if amount_text:
        text = text.replace(amount_text, " ")
    own = {w.lower() for w in re.findall(r"[A-Z][a-z]*", category)}
    own |= set(CATEGORY_WORDS.get(category, ()))
    out: list[str] = []
    for token in W.words(text):
        if token in _KNOWN or token in own or token in also or token in out:
            continue
        out.append(token)
    return out
