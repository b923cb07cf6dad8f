"""Remap PartNet-Mobility link and joint names onto a catalogue instance, by meaning.

RoboGen's code names parts by their PartNet-Mobility ids (``get_joint_state(self,
"Oven", "joint_1")``), which mean nothing for simjudge's generated assets. What a part
*is* can be read from the task itself:

- the substep's name (``grasp the temperature knob`` grasps a knob),
- the variable the code stores the part in (``knob_pos = get_link_state(...)``),
- the class file's comments (``# link_3 is the body of the microwave``; ``joint_0
  connects link_1``, which pairs a joint with another link than its own),
- the spatial relation that uses it (``in, item, refrigerator, link_2``: a container's
  body), and, as a tie-breaker only, the object's ``lang`` and the task's description.

Each word votes for a catalogue part meaning (``door``, ``drawer``, ``lid``, ``knob``,
``button``, ``handle``, ``screen``, ``seat``, ``head``, ``window``, ``pump``, or
``body`` = the base link) and sometimes a motion (``slide`` -> a slider, ``rotate`` ->
a hinge). :func:`match_object` then picks, over the catalogue categories that stand for
the object (:mod:`~simjudge.pipelines.robogen.categories`), the instance and the one-to-one
assignment of parts that explains the evidence best: first the number of parts whose
meaning matches, then the fewest matched parts that another part of the same meaning
would make ambiguous ("the drawer" of a cabinet with one drawer), then the total vote. A part the code drives through a joint must land
on a movable joint.
"""

from __future__ import annotations

import itertools
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from simjudge.envs.catalogue import AssetCatalogue, AssetEntry

from .reader import RobogenImportError

__all__ = [
    "MOTION_WORDS",
    "PART_WORDS",
    "Candidate",
    "ObjectMatch",
    "PartEvidence",
    "PartMatch",
    "candidates",
    "match_object",
    "words_of",
]

# word -> {catalogue part meaning: weight}
PART_WORDS: dict[str, dict[str, float]] = {
    "door": {"door": 1.0}, "gate": {"door": 0.8}, "flap": {"door": 0.6},
    "drawer": {"drawer": 1.0}, "tray": {"drawer": 0.6}, "rack": {"drawer": 0.6},
    "lid": {"lid": 1.0}, "cover": {"lid": 0.8}, "cap": {"lid": 0.7},
    "knob": {"knob": 1.0}, "dial": {"knob": 1.0}, "timer": {"knob": 0.8},
    "temperature": {"knob": 0.5}, "rotor": {"knob": 0.8}, "fan": {"knob": 0.4},
    "globe": {"knob": 0.8}, "hand": {"knob": 0.8}, "minute": {"knob": 0.5},
    "hour": {"knob": 0.5}, "wheel": {"knob": 0.6}, "blade": {"knob": 0.5},
    "button": {"button": 1.0}, "toggle": {"button": 0.8}, "press": {"button": 0.5},
    "flush": {"button": 0.6}, "start": {"button": 0.3}, "power": {"button": 0.3},
    "key": {"button": 0.5},
    "handle": {"handle": 1.0}, "lever": {"handle": 0.8, "button": 0.4},
    "tap": {"handle": 0.5}, "grip": {"handle": 0.5},
    "switch": {"handle": 0.7, "button": 0.7, "knob": 0.4},
    "screen": {"screen": 1.0}, "display": {"screen": 0.6}, "monitor": {"screen": 0.6},
    "seat": {"seat": 1.0}, "chair": {"seat": 0.4},
    "head": {"head": 1.0}, "shade": {"head": 0.6}, "lampshade": {"head": 0.8},
    "window": {"window": 1.0}, "sash": {"window": 0.8}, "pane": {"window": 0.8},
    "pump": {"pump": 1.0}, "nozzle": {"pump": 0.6},
    "body": {"body": 1.0}, "base": {"body": 1.0}, "frame": {"body": 0.6},
    "interior": {"body": 0.8}, "inside": {"body": 0.5}, "cavity": {"body": 0.8},
    "shelf": {"body": 0.5}, "compartment": {"body": 0.6}, "container": {"body": 0.4},
}  # fmt: skip
"""Word -> the catalogue part meanings it votes for, with weights."""

MOTION_WORDS: dict[str, str] = {
    "slide": "slider", "slider": "slider", "sliding": "slider", "prismatic": "slider",
    "translation": "slider", "translate": "slider", "extend": "slider",
    "extendable": "slider", "linear": "slider", "retract": "slider",
    "rotate": "rotary", "rotation": "rotary", "turn": "rotary", "hinge": "rotary",
    "tilt": "rotary", "swing": "rotary", "revolute": "rotary", "spin": "rotary",
}  # fmt: skip
"""Word -> the motion it implies (``slider`` or ``rotary``)."""

def words_of(text: str) -> list[str]:
    """Lower-case words of ``text`` (singular forms added for plurals we know)."""
    out = []
    for word in re.findall(r"[a-z]+", text.lower().replace("_", " ")):
        out.append(word)
        if word.endswith("s") and word[:-1] in PART_WORDS:
            out.append(word[:-1])
    return out


@dataclass
class PartEvidence:
    """What the task says about one PartNet part of one object.

    Attributes:
        obj: The object's scene name.
        index: The PartNet index ``N`` (``link_N``; its joint, usually ``joint_N``).
        links: Link names the task uses for this part.
        joints: Joint names the task uses for this part.
        needs_joint: Substep code reads or drives one of its joints.
        meaning: Catalogue part meaning -> vote.
        motion: ``slider``/``rotary`` -> vote.
        why: Short quotes of the evidence, for the report.
    """

    obj: str
    index: int
    links: set[str] = field(default_factory=set)
    joints: set[str] = field(default_factory=set)
    needs_joint: bool = False
    meaning: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    motion: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    why: list[str] = field(default_factory=list)

    def add_text(self, text: str, weight: float, why: str | None = None) -> None:
        """Let every known word of ``text`` vote with ``weight``."""
        voted = False
        for word in words_of(text):
            for meaning, w in PART_WORDS.get(word, {}).items():
                self.meaning[meaning] += w * weight
                voted = True
            if word in MOTION_WORDS:
                self.motion[MOTION_WORDS[word]] += weight
        if voted and why and why not in self.why:
            self.why.append(why)

    @property
    def label(self) -> str:
        """``link_1/joint_1`` as the task names the part."""
        return "/".join(sorted(self.links) + sorted(self.joints)) or f"part {self.index}"

    @property
    def best_meaning(self) -> str | None:
        """The meaning with the most votes, if any."""
        if not self.meaning:
            return None
        return max(sorted(self.meaning), key=lambda m: self.meaning[m])


@dataclass(frozen=True)
class Candidate:
    """A part of a catalogue instance that a RoboGen part may become.

    Attributes:
        link: Catalogue link name (``base`` for the body).
        joint: The movable joint that moves it, or None.
        meaning: Its meaning (``door``, ``knob``, ..., ``body``).
        motion: ``slider``, ``rotary`` or ``static``.
        text: How the catalogue describes it (``link_2 free knob``).
        grip: The handle fixed to it, if it has one: what a grasp of the part holds.
    """

    link: str
    joint: str | None
    meaning: str
    motion: str
    text: str
    grip: str | None = None


@dataclass(frozen=True)
class PartMatch:
    """One RoboGen part and the catalogue part it became.

    Attributes:
        evidence: The RoboGen part.
        candidate: The catalogue part.
        by_meaning: The meanings agree (else only the motion, or nothing, matched).
        score: The vote.
    """

    evidence: PartEvidence
    candidate: Candidate
    by_meaning: bool
    score: float

    def renames(self) -> dict[str, str]:
        """RoboGen link/joint name -> catalogue name, for this part."""
        out = {link: self.candidate.link for link in self.evidence.links}
        if self.candidate.joint is not None:
            out.update({joint: self.candidate.joint for joint in self.evidence.joints})
        return out

    def grasp_renames(self) -> dict[str, str]:
        """RoboGen link name -> the link a *grasp* of it targets.

        A PartNet-Mobility door or drawer link includes its handle's geometry; a catalogue
        handle is a separate link fixed to the part, and it is what suction should hold.
        """
        target = self.candidate.grip or self.candidate.link
        return {link: target for link in self.evidence.links}


@dataclass(frozen=True)
class ObjectMatch:
    """The catalogue instance chosen for a RoboGen object and its parts' remap.

    Attributes:
        entry: The catalogue entry.
        parts: One match per RoboGen part the task uses.
        category_rank: Position of the entry's category in the object's category list.
    """

    entry: AssetEntry
    parts: tuple[PartMatch, ...]
    category_rank: int

    @property
    def renames(self) -> dict[str, str]:
        """Every RoboGen link/joint name of this object -> its catalogue name."""
        out: dict[str, str] = {}
        for part in self.parts:
            out.update(part.renames())
        return out

    @property
    def grasp_renames(self) -> dict[str, str]:
        """RoboGen link name -> the catalogue link that grasping it targets (its handle)."""
        out: dict[str, str] = {}
        for part in self.parts:
            out.update(part.grasp_renames())
        return out


def candidates(entry: AssetEntry) -> list[Candidate]:
    """The parts of a catalogue instance: movable parts, static handles, then the body."""
    tree = entry.tree
    out: list[Candidate] = []
    if tree is not None:
        handles = {
            j.parent: j.child
            for j in tree.joints
            if j.type == "fixed" and tree.link(j.child).semantic == "handle"
        }
        for joint in tree.movable_joints:
            link = tree.link(joint.child)
            motion = "slider" if link.kind == "slider" else "rotary"
            grip = handles.get(joint.child)
            text = f"{link.name} {link.kind} {link.semantic}"
            if grip is not None:
                text += f" (handle {grip})"
            out.append(
                Candidate(joint.child, joint.name, link.semantic, motion, text, grip)
            )
        for link in tree.links:
            if link.kind == "static":
                out.append(Candidate(link.name, None, link.semantic, "static",
                                     f"{link.name} static {link.semantic}"))  # fmt: skip
    semantic = tree.link("base").semantic if tree is not None else "body"
    out.append(Candidate("base", None, "body", "static", f"base ({semantic})"))
    return out


def _score(part: PartEvidence, cand: Candidate) -> tuple[bool, float] | None:
    """``(meaning matches, vote)``, or None if the candidate cannot be this part."""
    if part.needs_joint and cand.joint is None:
        return None
    meaning = part.meaning.get(cand.meaning, 0.0)
    motion = part.motion.get(cand.motion, 0.0)
    return meaning > 0, 3.0 * meaning + min(motion, 2.0)


def _assign(
    parts: Sequence[PartEvidence], cands: Sequence[Candidate]
) -> tuple[int, float, tuple[PartMatch, ...]] | None:
    """The best one-to-one assignment (the body may take several parts)."""
    best: tuple[int, float, tuple[int, ...]] | None = None
    options = []
    for part in parts:
        scored = []
        for i, cand in enumerate(cands):
            s = _score(part, cand)
            if s is not None:
                scored.append((i, s))
        if not scored:
            return None
        options.append(scored)
    for combo in itertools.product(*options):
        used = [i for i, _ in combo if cands[i].link != "base"]
        if len(used) != len(set(used)):
            continue
        n_meaning = sum(1 for _, (ok, _) in combo if ok)
        total = sum(s for _, (_, s) in combo)
        order = tuple(i for i, _ in combo)
        key = (n_meaning, round(total, 9), tuple(-i for i in order))
        if best is None or key > (best[0], round(best[1], 9), tuple(-i for i in best[2])):
            best = (n_meaning, total, order)
    if best is None:
        return None
    n_meaning, total, order = best
    matches = []
    for part, i in zip(parts, order, strict=True):
        ok, score = _score(part, cands[i])  # type: ignore[misc]
        matches.append(PartMatch(part, cands[i], ok, score))
    return n_meaning, total, tuple(matches)


def _ambiguous(matches: Sequence[PartMatch], cands: Sequence[Candidate]) -> int:
    """Matched parts whose meaning another, unmatched movable part shares.

    RoboGen's "the drawer" names one drawer: an instance where the matched drawer is the
    only one keeps the task as unambiguous as RoboGen wrote it.
    """
    taken = {m.candidate.link for m in matches}
    count = 0
    for m in matches:
        if m.candidate.joint is None:
            continue
        if any(c.meaning == m.candidate.meaning and c.joint is not None and c.link not in taken
               for c in cands):  # fmt: skip
            count += 1
    return count


def match_object(
    parts: Sequence[PartEvidence],
    categories: Iterable[str],
    catalogue: AssetCatalogue,
    *,
    what: str,
) -> ObjectMatch:
    """The catalogue instance and part assignment that fit the evidence best.

    Args:
        parts: The RoboGen parts the task uses for this object.
        categories: Catalogue categories standing for it, best first.
        catalogue: The asset catalogue.
        what: How to name the object in errors.

    Raises:
        RobogenImportError: No instance of those categories has parts for what the code
            does (e.g. it drives joints and only rigid stand-ins exist).
    """
    best: tuple[tuple, ObjectMatch] | None = None
    categories = list(categories)
    for rank, category in enumerate(categories):
        try:
            entries = catalogue.by_category(category)
        except LookupError:
            continue
        for entry in entries:
            cands = candidates(entry)
            assigned = _assign(parts, cands)
            if assigned is None:
                continue
            n_meaning, total, matches = assigned
            key = (n_meaning, -_ambiguous(matches, cands), round(total, 9), -rank)
            if best is None or key > best[0]:
                best = (key, ObjectMatch(entry, matches, rank))
    if best is None:
        needs = [p.label for p in parts if p.needs_joint]
        raise RobogenImportError(
            f"{what}: no instance of {categories} has movable parts for what the substeps "
            f"drive ({', '.join(needs) or 'its parts'}); the catalogue lacks such an object"
        )
    return best[1]
