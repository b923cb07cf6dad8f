"""Which catalogue category stands for each PartNet-Mobility category RoboGen uses.

RoboGen's tasks name PartNet-Mobility objects (``Oven``, ``Dishwasher``, ``Globe``, ...);
simjudge's catalogue (:func:`simjudge.envs.catalogue.default_catalogue`) has 17
articulated categories and four rigid ones. A category that the catalogue has maps to
itself. A category it lacks maps to **stand-ins**: catalogue categories whose parts
move the way the task needs (a dishwasher's front door and buttons -> an oven's), in
order of preference; the part-level remap (:mod:`simjudge.pipelines.robogen.parts`) then
picks the instance whose parts fit the task's substeps best. Every stand-in is
reported, and ``strict=True`` refuses them.

Objects RoboGen loads as meshes (Objaverse items: ``Item``, ``Food``, ``Dish``, ...)
become rigid catalogue objects chosen by keywords of their name and ``lang``.

Example:
    >>> CATEGORY_MAP["Oven"], CATEGORY_MAP["Dishwasher"]
    (('Oven',), ('Oven', 'Microwave'))
    >>> rigid_category("Bowl of soup", "a bowl of tomato soup")
    'Bowl'
"""

from __future__ import annotations

import re

__all__ = [
    "CATALOGUE_ARTICULATED",
    "CATALOGUE_RIGID",
    "CATEGORY_MAP",
    "MISSING_CATEGORIES",
    "STAND_IN_REASONS",
    "UNSUPPORTED_CATEGORIES",
    "category_table",
    "is_exact",
    "rigid_category",
]

CATALOGUE_ARTICULATED: tuple[str, ...] = (
    "StorageFurniture", "Microwave", "Oven", "Refrigerator", "Safe", "Box", "TrashCan",
    "Kettle", "Dispenser", "Toilet", "Faucet", "Lamp", "Laptop", "ButtonPanel", "Door",
    "Window", "FoldingChair",
)  # fmt: skip
"""The catalogue's articulated categories (``simjudge assets list``)."""

CATALOGUE_RIGID: tuple[str, ...] = ("Cube", "Cylinder", "Bowl", "Bread")
"""The catalogue's rigid object categories."""

# PartNet-Mobility category -> catalogue categories, best first. A category whose first
# entry is itself is in the catalogue; later entries are fallbacks when a task needs a
# part the catalogue's instances lack (a Box with a drawer -> a StorageFurniture drawer).
CATEGORY_MAP: dict[str, tuple[str, ...]] = {
    # in the catalogue
    "StorageFurniture": ("StorageFurniture",),
    "Microwave": ("Microwave",),
    "Oven": ("Oven",),
    "Refrigerator": ("Refrigerator",),
    "Safe": ("Safe",),
    "Box": ("Box", "StorageFurniture"),
    "TrashCan": ("TrashCan",),
    "Kettle": ("Kettle",),
    "Dispenser": ("Dispenser",),
    "Toilet": ("Toilet",),
    "Faucet": ("Faucet",),
    "Lamp": ("Lamp",),
    "Laptop": ("Laptop",),
    "Door": ("Door",),
    "Window": ("Window",),
    "FoldingChair": ("FoldingChair",),
    # missing from the catalogue: stand-ins whose parts move as the tasks need
    "Switch": ("ButtonPanel",),
    "Table": ("StorageFurniture",),
    "Dishwasher": ("Oven", "Microwave"),
    "WashingMachine": ("Microwave", "Oven"),
    "Display": ("Laptop",),
    "Chair": ("FoldingChair",),
    "Stapler": ("Box", "Kettle"),
    "Printer": ("ButtonPanel",),
    "Keyboard": ("ButtonPanel",),
    "Remote": ("ButtonPanel",),
    "Phone": ("ButtonPanel",),
    "Toaster": ("ButtonPanel",),
    "CoffeeMachine": ("Microwave", "Oven", "Faucet"),
    "Clock": ("Safe", "Oven"),
    "Globe": ("Safe", "Oven"),
    "Fan": ("Safe", "Oven"),
    "Suitcase": ("StorageFurniture",),
    "Scissors": ("Laptop",),
    "Bucket": ("Kettle",),
    "KitchenPot": ("Kettle", "Box"),
    "Bottle": ("Kettle",),
    "Cart": ("Bowl",),
}

STAND_IN_REASONS: dict[str, str] = {
    "Table": "a table's doors and drawers are a storage cabinet's",
    "Dishwasher": "a front door hinged at the bottom and control buttons, as an oven's",
    "WashingMachine": "a front door and controls, as a microwave's",
    "Display": "a screen on a hinge, as a laptop's",
    "Chair": "a seat on a hinge, as a folding chair's",
    "Stapler": "a lid on a hinge, as a box's",
    "Printer": "push buttons, as a button panel's",
    "Switch": "a push switch, as a button panel's buttons",
    "Keyboard": "push buttons, as a button panel's",
    "Remote": "push buttons, as a button panel's",
    "Phone": "push buttons, as a button panel's",
    "Toaster": "push buttons, as a button panel's",
    "CoffeeMachine": "knobs and buttons (a microwave's, an oven's) or a lever (a faucet's)",
    "Clock": "a part that turns freely about one axis: a safe's dial",
    "Globe": "a part that turns freely about one axis: a safe's dial",
    "Fan": "a part that turns freely about one axis: a safe's dial",
    "Suitcase": "a part pulled out on a slide, as a drawer",
    "Scissors": "two parts opening on a hinge, as a laptop's screen",
    "Bucket": "a movable vessel with a handle, as a kettle",
    "KitchenPot": "a movable vessel with a lid and a handle, as a kettle",
    "Bottle": "a movable vessel with a lid, as a kettle",
    "Cart": "an open container to take things out of, as a bowl",
}
"""Why each stand-in was chosen (shown in the conversion report)."""

UNSUPPORTED_CATEGORIES: tuple[str, ...] = (
    "Camera", "Eyeglasses", "Knife", "Lighter", "Mouse", "Pen", "Pliers", "USB",
)  # fmt: skip
"""PartNet-Mobility categories of RoboGen with neither a catalogue category nor a stand-in:
a task object of one of them is refused with that reason (no example task has one; some
distractors do, and a distractor becomes a rigid stand-in)."""

MISSING_CATEGORIES: tuple[str, ...] = tuple(
    sorted(name for name, cats in CATEGORY_MAP.items() if cats[0] != name)
)
"""PartNet-Mobility categories that the catalogue does not have (stand-ins only)."""

# keyword -> rigid catalogue category, first match wins (name and lang, lower-cased)
_RIGID_KEYWORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Bowl", ("bowl", "soup", "dish", "plate", "saucer")),
    ("Bread", ("bread", "food", "apple", "fruit", "banana", "orange", "sandwich", "toast",
               "cake", "snack", "loaf", "bun", "meat", "cheese", "egg")),
    ("Cylinder", ("bottle", "can", "cup", "mug", "jar", "glass", "cylinder", "tube",
                  "water", "soda", "beer", "juice", "coffee")),
    ("Cube", ("box", "cube", "block", "book", "toy", "brick", "bar", "package", "parcel",
              "item", "object", "trash", "paper", "waste", "phone", "remote")),
)  # fmt: skip


def is_exact(category: str) -> bool:
    """Whether the catalogue has the PartNet-Mobility category itself."""
    cats = CATEGORY_MAP.get(category, ())
    return bool(cats) and cats[0] == category


def rigid_category(name: str, lang: str = "") -> str:
    """The rigid catalogue category standing for a mesh object (default ``Cube``)."""
    words = set(re.findall(r"[a-z]+", f"{name} {lang}".lower()))
    words |= {w[:-1] for w in words if w.endswith("s")}
    for category, keywords in _RIGID_KEYWORDS:
        if words & set(keywords):
            return category
    return "Cube"


def category_table() -> list[dict[str, str]]:
    """The category map as rows: PartNet category, catalogue categories, match, why."""
    rows = []
    for name, cats in sorted(CATEGORY_MAP.items()):
        exact = cats[0] == name
        rows.append(
            {
                "partnet": name,
                "catalogue": ", ".join(cats),
                "match": "exact" if exact else "stand-in (missing from the catalogue)",
                "why": "" if exact else STAND_IN_REASONS.get(name, ""),
            }
        )
    return rows
