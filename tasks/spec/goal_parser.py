"""Derive a task's :class:`~simjudge.tasks.spec.goal.TaskGoal` from its name and description.

A deterministic reader of the task's words against the object's articulation tree,
separate from any proposal (it never sees one):

1. **Placement** — a placement verb (put, place, stack ...), two of the scene's objects
   and a relation word (in / into / on / onto) give a :class:`PlaceTarget`.
2. **Clauses** — the description (else the name) is split into clauses (``,`` ``;``
   ``and`` ``then``); each clause names an action (open / close / press / turn, from its
   verb, its final-state words such as ``open`` / ``closed`` / ``shut`` / ``on`` / ``off``,
   and the start-state adjectives it skips such as ``the open lid``), an amount
   (:data:`~simjudge.tasks.spec.goal.AMOUNTS`) and the part to move.
3. **Parts** — a part word (with plurals and synonyms, :data:`~.goal_words.PART_WORDS`)
   picks the movable joints whose **own child link** carries that semantic
   (``link_0 slider drawer``); a fixed part (a handle) names the joint that moves it.
   Parts after a preposition are locators (``the dial on the safe's door``: the knob whose
   parent is the door) or grips (``by its handle``). With no part word, the action picks
   the object's only openable / pressable / turnable part.
4. **Which one** — several matches need an ordinal (``top``/``bottom`` by height,
   ``left``/``right`` from the viewer facing the object's front, ``first``/``second`` in the
   tree's order; positions from the asset's URDF), a plural or ``both``/``all`` (then
   every match is a target: a conjunction), or the scene's start state (``the open
   drawer`` is the one the scene starts open). Otherwise the ambiguity is reported and no
   goal is returned — the parser never guesses.

Example:
    >>> d = derive_goal("Open Drawer", "Pull the bottom drawer of the cabinet open.",
    ...                 "StorageFurniture-0")
    >>> t = d.goal.targets[0]
    >>> (t.joint, t.link, t.low, t.high, t.direction)
    ('joint_0', 'link_1', 0.775, 1.0, 'open')
    >>> derive_goal("Open Drawer", "Open the drawer.", "StorageFurniture-0").goal is None
    True
"""

from __future__ import annotations

import functools
import math
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from simjudge.envs.articulation import ArticulationTree, urdf_joint_link
from simjudge.envs.catalogue import AssetEntry, UnknownAssetError, default_catalogue
from simjudge.envs.errors import SimjudgeError
from simjudge.envs.transforms import rpy_matrix

from . import goal_words as W
from .goal import JointTarget, PlaceTarget, Target, TaskGoal, amount_interval

if TYPE_CHECKING:
    from simjudge.envs.scene import SceneConfig

    from .task import TaskSpec

__all__ = ["GoalDerivation", "GoalParseError", "Part", "derive_goal", "goal_for_spec",
           "object_parts"]


class GoalParseError(SimjudgeError, ValueError):
    """The parser's inputs are unusable (an unknown asset); the message says the fix."""


@dataclass(frozen=True)
class GoalDerivation:
    """What the parser derived and why.

    Attributes:
        goal: The derived goal, or None when none can be derived without guessing.
        reasons: How each target was chosen (words, tree facts, positions).
        ambiguities: What is ambiguous or missing; a goal is None when this is not
            empty, and each entry says how to resolve it.
    """

    goal: TaskGoal | None
    reasons: list[str] = field(default_factory=list)
    ambiguities: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether a goal was derived."""
        return self.goal is not None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: ``goal`` (or None), ``reasons``, ``ambiguities``."""
        goal = None if self.goal is None else self.goal.model_dump(mode="json")
        return {"goal": goal, "reasons": list(self.reasons), "ambiguities": list(self.ambiguities)}


@dataclass(frozen=True)
class Part:
    """A movable part of an articulated object: one movable joint and its child link.

    Attributes:
        joint: The joint's name.
        link: The child link the joint moves.
        semantic: The child link's semantic (``drawer``, ``door``, ``knob`` ...).
        kind: How it moves (``hinge``, ``slider``, ``free``).
        parent: The joint's parent link.
        grip: The link to reach or grasp: a fixed handle / knob / button on the part, else
            the part itself.
        spring: The joint springs back when released.
        span: The joint's range (rad or m).
        joint_type: ``revolute``, ``prismatic`` or ``continuous``.
        position: The part's centre in the object's frame with all joints closed (m),
            when the asset's URDF is known.
        order: Index among the tree's movable joints.
    """

    joint: str
    link: str
    semantic: str
    kind: str
    parent: str
    grip: str
    spring: bool
    span: float
    joint_type: str
    position: tuple[float, float, float] | None
    order: int

    def label(self) -> str:
        """``link_0 (joint_0, slider drawer, z=0.17 m)``."""
        where = ""
        if self.position is not None:
            x, y, z = self.position
            where = f", y={y:+.2f} m, z={z:.2f} m"
        return f"{self.link} ({self.joint}, {self.kind} {self.semantic}{where})"


# -- the object's parts -----------------------------------------------------------------
def _origin(elem: ET.Element | None) -> np.ndarray:
    t = np.eye(4)
    if elem is not None:
        t[:3, :3] = rpy_matrix([float(v) for v in elem.get("rpy", "0 0 0").split()])
        t[:3, 3] = [float(v) for v in elem.get("xyz", "0 0 0").split()]
    return t


@functools.lru_cache(maxsize=256)
def _link_centres(urdf: str) -> dict[str, tuple[float, float, float]]:
    """Each link's geometric centre in the base frame with every joint at zero, from the URDF.

    A centre is the mean of the link's collision/visual origins.
    """
    root = ET.parse(urdf).getroot()
    local: dict[str, np.ndarray] = {}
    for link in root.findall("link"):
        origins = [_origin(e.find("origin"))[:3, 3] for e in link.findall("collision")]
        origins = origins or [_origin(e.find("origin"))[:3, 3] for e in link.findall("visual")]
        local[link.get("name", "")] = np.mean(origins, axis=0) if origins else np.zeros(3)
    joints = {urdf_joint_link(j, "child"): (urdf_joint_link(j, "parent"), _origin(j.find("origin")))
              for j in root.findall("joint")}
    poses: dict[str, np.ndarray] = {}

    def pose(name: str) -> np.ndarray:
        if name not in poses:
            parent = joints.get(name)
            poses[name] = np.eye(4) if parent is None else pose(parent[0]) @ parent[1]
        return poses[name]

    centres = {}
    for name, centre in local.items():
        world = pose(name) @ np.append(centre, 1.0)
        centres[name] = (float(world[0]), float(world[1]), float(world[2]))
    return centres


def _entry_for(asset: AssetEntry | ArticulationTree | str | None) -> tuple[
        ArticulationTree | None, AssetEntry | None]:
    """The tree and (when known) the catalogue entry of an asset id, category, entry or tree."""
    if asset is None:
        return None, None
    if isinstance(asset, AssetEntry):
        return asset.tree, asset
    catalogue = default_catalogue()
    if isinstance(asset, ArticulationTree):
        entry = catalogue.get(asset.asset_id) if asset.asset_id in catalogue else None
        return asset, entry
    try:
        entry = catalogue.get(asset) if asset in catalogue else catalogue.by_category(asset)[0]
    except UnknownAssetError as exc:
        raise GoalParseError(str(exc)) from None
    return entry.tree, entry


def object_parts(asset: AssetEntry | ArticulationTree | str | None) -> list[Part]:
    """The movable parts of an articulated asset, with grips and (from its URDF) positions.

    Raises:
        GoalParseError: ``asset`` is not in the catalogue.
    """
    tree, entry = _entry_for(asset)
    if tree is None:
        return []
    centres = _link_centres(str(entry.urdf_path)) if entry is not None else {}
    parts = []
    for order, joint in enumerate(tree.movable_joints):
        link = tree.link(joint.child)
        fixed = [j.child for j in tree.joints if j.parent == joint.child and j.type == "fixed"]
        grips = [c for c in fixed if tree.link(c).semantic in ("handle", "knob", "button")]
        position = centres.get(joint.child)
        parts.append(Part(joint=joint.name, link=joint.child, semantic=link.semantic,
                          kind=link.kind, parent=joint.parent, grip=grips[0] if grips else joint.child,
                          spring=joint.spring, span=joint.upper - joint.lower,
                          joint_type=joint.type, position=position, order=order))
    return parts


def _ancestors(tree: ArticulationTree, link: str) -> list[str]:
    out: list[str] = []
    current = link
    for _ in range(len(tree.joints) + 1):
        joint = tree.joint_of_link(current)
        if joint is None:
            return out
        current = joint.parent
        out.append(current)
    return out


# -- reading one clause -----------------------------------------------------------------
@dataclass
class _Mention:
    """A part word in a clause."""

    index: int
    word: str
    semantics: tuple[str, ...]
    plural: bool = False
    ordinal: str | None = None
    kind: str | None = None
    start: str | None = None
    role: str = "target"  # target | locator | grip


@dataclass
class _Clause:
    """What one clause says."""

    text: str
    action: str | None = None
    direction: str | None = None
    cue: str = ""
    amount: tuple[str, float | None, str] | None = None
    mentions: list[_Mention] = field(default_factory=list)
    all_of: bool = False

    @property
    def targets(self) -> list[_Mention]:
        return [m for m in self.mentions if m.role == "target"]


_SPLIT = re.compile(r"[.;,:!?]+|\band then\b|\bthen\b|\band\b")


def _clauses(text: str) -> list[_Clause]:
    return [_read_clause(piece.strip()) for piece in _SPLIT.split(text) if piece.strip()]


def _read_clause(text: str) -> _Clause:
    clause = _Clause(text=text, amount=W.find_amount(text))
    tokens = W.words(text)
    _read_mentions(clause, tokens)
    _read_action(clause, tokens)
    clause.all_of = any(t in ("both", "all", "every", "each") for t in tokens)
    return clause


def _start_adjectives(tokens: list[str]) -> set[int]:
    """Indices of start-state adjectives.

    ``open`` in ``the open drawer`` (a determiner before, a word after) says how the part
    starts, not where it must end.
    """
    return {i for i, t in enumerate(tokens)
            if i and i + 1 < len(tokens) and tokens[i - 1] in W.DETERMINERS
            and t.replace("half_", "half ") in W.START_STATES}


def _read_mentions(clause: _Clause, tokens: list[str]) -> None:
    pending: dict[str, Any] = {}
    starts = _start_adjectives(tokens)
    for i, token in enumerate(tokens):
        previous = tokens[i - 1] if i else ""
        if token in W.ORDINALS and (token != "lower" or previous in W.DETERMINERS):
            pending["ordinal"] = token
        elif token in W.KIND_WORDS:
            pending["kind"] = W.KIND_WORDS[token]
        elif i in starts:
            pending["start"] = token.replace("half_", "half ")
        semantics = W.part_semantics(token)
        if not semantics or (i == 0 and token in W.ACTION_VERBS):
            continue  # "Pump the dispenser", "Switch on the lamp": verbs, not parts
        if clause.mentions and clause.mentions[-1].index == i - 1:
            continue  # "window sash": one part named twice
        clause.mentions.append(_Mention(index=i, word=token, semantics=semantics,
                                        plural=token in W.PLURALS, role=_role(tokens, i),
                                        **pending))
        pending = {}


def _role(tokens: list[str], i: int) -> str:
    """``target`` unless a preposition comes first within the noun phrase before ``i``.

    A particle right after a verb (``turn on the tap``) is not a preposition.
    """
    for back in range(i - 1, max(-1, i - 5), -1):
        token = tokens[back]
        if token in W.ACTION_VERBS or W.part_semantics(token):
            return "target"
        if token in W.PREPOSITIONS and not (back and tokens[back - 1] in W.ACTION_VERBS):
            return "grip" if token in ("by", "with") else "locator"
    return "target"


_PARTICLES = frozenset({"on", "off", "in", "out", "up", "down"})


def _read_action(clause: _Clause, tokens: list[str]) -> None:
    """Read the clause's action and direction.

    The action is its first verb; then a final-state adjective (``open``, ``closed``,
    ``shut``) overrides the verb's direction, and a particle
    (``on``/``off``/``in``/``out``/``up``/``down``) fills it when the verb leaves it open
    (``slide``, ``swing``) or turns something on or off.
    """
    skip = _start_adjectives(tokens)
    at = -1
    for i, token in enumerate(tokens):
        if (token in W.ACTION_VERBS and i not in skip
                and not (token == "lower" and i and tokens[i - 1] in W.DETERMINERS)):
            clause.action, clause.direction = W.ACTION_VERBS[token]
            clause.cue, at = token, i
            break
    if clause.action == "press":
        return
    strong = [i for i, t in enumerate(tokens)
              if t in W.FINAL_STATES and t not in _PARTICLES and i not in skip and i != at]
    if strong:
        word = tokens[strong[-1]]
        clause.direction = W.FINAL_STATES[word]
        clause.action = clause.action or ("open" if clause.direction == "open" else "close")
        clause.cue = f"{clause.cue} ... {word}" if clause.cue else word
        return
    particles = [i for i, t in enumerate(tokens) if t in _PARTICLES
                 and (i == len(tokens) - 1 or (at >= 0 and i == at + 1)
                      or (i and W.part_semantics(tokens[i - 1]) and t in ("up", "down", "out")))]
    if not particles:
        return
    word = tokens[particles[-1]]
    turning = clause.action == "turn" and word in ("on", "off", "up", "down")
    if clause.direction is None or turning:
        clause.direction = W.FINAL_STATES[word]
        clause.action = clause.action or ("open" if clause.direction == "open" else "close")
        clause.cue = f"{clause.cue} {word}".strip()


# -- resolving parts --------------------------------------------------------------------
@dataclass
class _Context:
    """Everything a resolution reads."""

    object_name: str
    tree: ArticulationTree
    parts: list[Part]
    scene_init: dict[str, float]
    reasons: list[str]
    ambiguities: list[str]
    round_trips: list[str] = field(default_factory=list)
    """Joints a task moves one way and then back (``open ..., then close ...``)."""
    resolved: dict[str, list[str]] = field(default_factory=dict)
    """Semantic -> joints another reading resolved the task to (RoboGen's converter)."""


def _candidates(ctx: _Context, mention: _Mention) -> list[Part]:
    """Movable parts whose own child link carries the named semantic (in preference order).

    Else the moving parts that carry a fixed link of that semantic (a handle).
    """
    for semantic in mention.semantics:
        own = [p for p in ctx.parts if p.semantic == semantic]
        if own:
            return own
    for semantic in mention.semantics:
        fixed = [j.child for j in ctx.tree.joints
                 if j.type == "fixed" and ctx.tree.link(j.child).semantic == semantic]
        carriers = [p for p in ctx.parts if any(p.link in [f, *_ancestors(ctx.tree, f)]
                                                 for f in fixed)]
        if carriers:
            ctx.reasons.append(f"'{mention.word}' is a fixed {semantic}: the part it is "
                               f"fixed to moves ({', '.join(p.link for p in carriers)})")
            return carriers
    return []


def _by_ordinal(ctx: _Context, parts: list[Part], word: str) -> list[Part]:
    axis, index = W.ORDINALS[word]
    if axis == "order":
        ordered = sorted(parts, key=lambda p: p.order)
    else:
        if any(p.position is None for p in parts):
            ctx.ambiguities.append(f"'{word}' needs the parts' positions, which are unknown for "
                                   "this tree (pass the catalogue asset, not only its tree)")
            return []
        k = 2 if axis == "z" else 1  # +y is the viewer's left: the largest y is leftmost
        ordered = sorted(parts, key=lambda p: p.position[k])  # type: ignore[index]
    if index >= len(ordered) or -index > len(ordered):
        ctx.ambiguities.append(f"'{word}' asks for part {index} of only {len(ordered)}")
        return []
    chosen = ordered[index]
    axis_text = {"z": "height", "y": "side", "order": "tree order"}[axis]
    ctx.reasons.append(f"'{word}' picks {chosen.label()} by {axis_text} among "
                       f"{', '.join(p.link for p in ordered)}")
    return [chosen]


def _by_locators(ctx: _Context, parts: list[Part], locators: list[_Mention]) -> list[Part]:
    for locator in locators:
        holders = {p.link for p in _candidates(ctx, locator)}
        if not holders:
            continue
        inside = [p for p in parts if holders & set(_ancestors(ctx.tree, p.link))]
        if inside:
            ctx.reasons.append(f"'{locator.word}' locates it: {', '.join(p.link for p in inside)} "
                               f"sits on {', '.join(sorted(holders))}")
            parts = inside
    return parts


def _by_start(ctx: _Context, parts: list[Part], start: str) -> list[Part]:
    wanted_open = W.START_STATES[start] > 0.2
    matching = [p for p in parts if p.joint in ctx.scene_init
                and (ctx.scene_init[p.joint] > 0.2) == wanted_open]
    if len(matching) == 1:
        ctx.reasons.append(f"'the {start} {matching[0].semantic}': the scene starts "
                           f"{matching[0].joint} at {ctx.scene_init[matching[0].joint]:.2f}")
        return matching
    return parts


def _resolve(ctx: _Context, clause: _Clause, mention: _Mention | None) -> list[Part]:
    """The parts one clause's target mention names (or, with none, its action implies)."""
    if mention is None:
        return _fallback(ctx, clause)
    parts = _candidates(ctx, mention)
    if not parts:
        ctx.ambiguities.append(f"'{mention.word}' names no part of {ctx.tree.asset_id} "
                               f"(its movable parts: {', '.join(p.label() for p in ctx.parts)})")
        return []
    if mention.kind:
        parts = [p for p in parts if p.kind == mention.kind] or parts
    locators = [m for m in clause.mentions if m.role == "locator"]
    parts = _by_locators(ctx, parts, locators)
    if len(parts) > 1 and mention.start and ctx.scene_init:
        parts = _by_start(ctx, parts, mention.start)
    if len(parts) > 1 and mention.ordinal:
        return _by_ordinal(ctx, parts, mention.ordinal)
    if len(parts) > 1 and (mention.plural or clause.all_of):
        ctx.reasons.append(f"'{mention.word}' (all of them): {', '.join(p.label() for p in parts)}")
        return parts
    if len(parts) > 1:
        options = ", ".join(p.label() for p in parts)
        hint = _ordinal_hint(parts)
        ctx.ambiguities.append(f"'{mention.word}' matches {len(parts)} parts: {options}; say "
                               f"which ({hint}), or 'both'/'all' for every one")
        return []
    ctx.reasons.append(f"'{mention.word}' is {parts[0].label()}")
    return parts


def _ordinal_hint(parts: list[Part]) -> str:
    """The ordinals that tell ``parts`` apart: by height, by side, by the tree's order."""
    words = []
    if all(p.position is not None for p in parts):
        for k, pair in ((2, "top/bottom"), (1, "left/right")):
            values = [p.position[k] for p in parts]  # type: ignore[index]
            if max(values) - min(values) > 0.02:
                words.append(pair)
    return "/".join([*words, "first/second"])


def _fallback(ctx: _Context, clause: _Clause) -> list[Part]:
    """With no part word: the object's only part that the action can move."""
    action = clause.action or "open"
    wanted = {"press": W.PRESSABLE_PARTS, "turn": W.TURNABLE_PARTS}.get(action, W.OPENABLE_PARTS)
    if action == "turn" and clause.cue.endswith((" on", " off")):
        wanted = ("knob", "handle")  # "turn on the lamp": a knob or tap, else its switch
        if not any(p.semantic in wanted for p in ctx.parts):
            clause.action, wanted = "press", W.PRESSABLE_PARTS
            action = "press"
    parts = [p for p in ctx.parts if p.semantic in wanted]
    if action == "press":
        parts = parts or [p for p in ctx.parts if p.spring]
    if len(parts) == 1:
        ctx.reasons.append(f"no part named: '{clause.cue or action}' moves the object's only "
                           f"{'/'.join(wanted)} part, {parts[0].label()}")
        return parts
    if not parts and len(ctx.parts) == 1:
        ctx.reasons.append(f"no part named: {ctx.tree.asset_id} has one movable part, "
                           f"{ctx.parts[0].label()}")
        return list(ctx.parts)
    options = ", ".join(p.label() for p in (parts or ctx.parts)) or "none"
    ctx.ambiguities.append(f"no part named and '{clause.cue or action}' fits {len(parts)} parts "
                           f"of {ctx.tree.asset_id} ({options}); name the part (door, drawer, "
                           "knob, button ...)")
    return []


# -- amounts and targets ----------------------------------------------------------------
def _interval(ctx: _Context, part: Part, direction: str, action: str,
              amount: tuple[str, float | None, str] | None) -> tuple[float, float, str]:
    """``(low, high, amount word)`` for a part, from the clause's amount and action."""
    if amount is None:
        word = {"press": "press", "turn": "turn"}.get(action, "open")
        word = "close" if direction == "close" else word
        low, high = amount_interval(word, direction, part.semantic)  # type: ignore[arg-type]
        return low, high, word
    name, number, _ = amount
    if name == "percent" and number is not None:
        return max(0.0, number - 0.1), min(1.0, number + 0.1), f"{number * 100:g}%"
    if name == "degrees" and number is not None:
        if part.joint_type == "prismatic" or part.span <= 0:
            ctx.ambiguities.append(f"'{amount[2]}' is an angle but {part.joint} slides")
            return 0.0, 1.0, amount[2]
        fraction = min(1.0, math.radians(number) / part.span)
        if direction == "close":
            fraction = 1.0 - fraction
        return max(0.0, fraction - 0.1), min(1.0, fraction + 0.1), f"{number:g} degrees"
    low, high = amount_interval(name, direction, part.semantic)  # type: ignore[arg-type]
    return low, high, name


def _target(ctx: _Context, part: Part, clause: _Clause, start_hint: str | None) -> JointTarget:
    action = clause.action or "open"
    direction = "open" if action in ("press", "turn") and clause.direction != "close" else (
        clause.direction or "open")
    amount = clause.amount
    if amount is None and clause.cue.startswith("nudge"):
        amount = ("slightly", None, "nudge")  # a nudge is a small move
    low, high, word = _interval(ctx, part, direction, action, amount)
    low, high = round(low, 4), round(high, 4)
    start = ctx.scene_init.get(part.joint)
    if start is None and start_hint is not None:
        start = W.START_STATES[start_hint]
        if not (low <= start <= high):
            ctx.reasons.append(f"'{start_hint}' start: {part.joint} starts at {start:.2f}")
        else:
            start = None
    ctx.reasons.append(f"{part.joint}: {direction} ({clause.cue or action}), amount '{word}' "
                       f"-> [{low:.2f}, {high:.2f}] of its range; grip {part.grip}")
    return JointTarget(object=ctx.object_name, joint=part.joint, part=part.link, link=part.grip,
                       semantic=f"{part.kind} {part.semantic}", low=low, high=high,
                       direction=direction, amount=word,  # type: ignore[arg-type]
                       requires_grasp=action != "press" and part.semantic not in W.PRESSABLE_PARTS,
                       spring=part.spring, start=start)


def _joint_targets(ctx: _Context, clauses: list[_Clause]) -> list[JointTarget]:
    targets: list[JointTarget] = []
    for clause in clauses:
        mentions: list[_Mention] | list[None] = clause.targets or ([None] if clause.action else [])
        for mention in mentions:
            for part in _resolve(ctx, clause, mention):
                # steps in sequence ("open the drawer, ..., then close it"): the last one
                # on a joint is where it must end
                target = _target(ctx, part, clause, mention.start if mention else None)
                if any(t.joint == part.joint and t.direction != target.direction
                       for t in targets):
                    ctx.round_trips.append(f"{part.joint} ({part.semantic} {part.link})")
                targets = [t for t in targets if t.joint != part.joint] + [target]
    return targets


def _inherit(clauses: list[_Clause], fallback: list[_Clause]) -> None:
    """Fill a clause without a verb from the clause before it, then from the other text.

    The clause before gives action, direction and amount (``open the door and the drawer``);
    the other text is the name, for the description. A clause with its own verb takes only a
    missing amount from the name.
    """
    previous: _Clause | None = None
    backup = next((c for c in fallback if c.action), None)
    named = next((c.amount for c in fallback if c.amount), None)
    for clause in clauses:
        if (clause.action is None and not clause.mentions
                and W.PLACE_VERBS & set(W.words(clause.text))):
            continue  # "places an object inside": a placement step, no joint to move
        source = previous if previous is not None and previous.action else backup
        if clause.action is None and source is not None:
            clause.action, clause.direction, clause.cue = source.action, source.direction, source.cue
            clause.amount = clause.amount or source.amount or named
        elif clause.amount is None and (backup is None or backup.action == clause.action):
            clause.amount = named
        previous = clause


# -- placement --------------------------------------------------------------------------
def _object_words(scene: SceneConfig) -> dict[str, str]:
    """Lower-case words naming each scene object (its name and its asset's category)."""
    out: dict[str, str] = {}
    for obj in scene.objects:
        category = obj.asset.split("-")[0]
        for name in {obj.name, category}:
            out[" ".join(re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", name)).lower()] = obj.name
            out[name.lower()] = obj.name
    return out


def _placement(text: str, scene: SceneConfig | None, reasons: list[str]) -> PlaceTarget | None:
    tokens = W.words(text)
    if scene is None or len(scene.objects) < 2 or not W.PLACE_VERBS & set(tokens):
        return None
    names = _object_words(scene)
    joined = " ".join(tokens)
    spans = [(m.start(), m.end(), names[w]) for w in names
             for m in re.finditer(rf"\b{re.escape(w)}\b", joined)]
    found = sorted((start, name) for start, end, name in spans  # longest name wins:
                   if not any(s <= start and end <= e and (s, e) != (start, end)
                              for s, e, _ in spans))  # "trash can" is not "trash"
    relation = next(((m.start(), W.PLACE_RELATIONS[m.group(1)]) for m in
                     re.finditer(r"\b(into|inside|within|onto|atop|upon|in|on)\b", joined)
                     if any(pos > m.start() for pos, _ in found)), None)
    if relation is None or len({n for _, n in found}) < 2:
        return None
    before = [n for pos, n in found if pos < relation[0]]
    after = [n for pos, n in found if pos > relation[0]]
    target = after[0]
    moved = next((n for n in before if n != target), None)
    if moved is None:
        return None
    reasons.append(f"placement: put {moved} {relation[1]} {target} (from '{text.strip()}')")
    return PlaceTarget(object=moved, target=target, relation=relation[1])  # type: ignore[arg-type]


# -- the entry point ----------------------------------------------------------------------
def _scene_init(scene: SceneConfig | None, object_name: str) -> dict[str, float]:
    if scene is None:
        return {}
    obj = next((o for o in scene.objects if o.name == object_name), None)
    if obj is None:
        return {}
    return {j: float(v) for j, v in obj.joint_init.items() if isinstance(v, int | float)}


def _texts(name: str, description: str, category: str) -> tuple[str, str]:
    """Name and description with the object's multi-word category removed.

    Otherwise ``button panel`` would name a button.
    """
    phrase = " ".join(re.findall(r"[A-Z][a-z]*", category)).lower()
    if " " not in phrase:
        return name, description
    strip = re.compile(rf"\b{re.escape(phrase)}\b", re.IGNORECASE)
    return strip.sub(" ", name), strip.sub(" ", description)


def _direction_conflict(primary: list[_Clause], name_clauses: list[_Clause]) -> str | None:
    first = next((c for c in primary if c.direction), None)
    named = next((c for c in name_clauses if c.direction), None)
    if first is None or named is None or first is named or first.direction == named.direction:
        return None
    if first.action in ("press", "turn") or named.action in ("press", "turn"):
        return None
    return (f"the name says '{named.cue}' ({named.direction}) but the description says "
            f"'{first.cue}' ({first.direction}); make them agree")


def derive_goal(
    name: str,
    description: str = "",
    asset_or_tree: AssetEntry | ArticulationTree | str | None = None,
    object_name: str | None = None,
    scene: SceneConfig | None = None,
    resolved: dict[str, list[str]] | None = None,
) -> GoalDerivation:
    """Derive a task's goal from its name and description against the object's tree.

    Args:
        name: Task name (``Nudge Drawer Halfway Shut``).
        description: Task description; the name is read when it says nothing.
        asset_or_tree: The main object: a catalogue id (``StorageFurniture-0``), a
            category (instance 0), an :class:`~simjudge.envs.catalogue.AssetEntry` or an
            :class:`~simjudge.envs.articulation.ArticulationTree` (positions, and so
            top/bottom/left/right, need the catalogue asset). None for placement tasks.
        object_name: The main object's scene name (default: the asset's category).
        scene: The task's own scene (never a proposal's): its other objects for placement
            tasks and its ``joint_init`` for ``the open drawer``.
        resolved: Semantic -> joints another reading already resolved the task to (a
            RoboGen task's converter mapping); where the words fit several parts, those win.

    Returns:
        The goal (``source="parser"``) with reasons, or None with the ambiguities.

    Raises:
        GoalParseError: ``asset_or_tree`` names no catalogue asset.
    """
    tree, entry = _entry_for(asset_or_tree)
    object_name = object_name or (tree.category if tree is not None else "")
    reasons: list[str] = []
    text = f"{name}. {description}"
    place = _placement(description, scene, reasons) or _placement(name, scene, reasons)
    if place is not None:
        both: list[Target] = [place, *_joint_steps(name, description, asset_or_tree,
                                                   object_name, scene, reasons)]
        return GoalDerivation(TaskGoal(task=name, targets=tuple(both), source="parser",
                                       explanation="; ".join(reasons)), reasons, [])
    if tree is None or not tree.movable_joints:
        what = "no articulated object" if tree is None else f"{tree.asset_id} has no movable joint"
        return GoalDerivation(None, reasons, [f"{what}, and '{text.strip()}' is not a placement "
                                              "between two scene objects"])
    name_text, desc_text = _texts(name, description, tree.category)
    name_clauses = _clauses(name_text)
    desc_clauses = _clauses(desc_text) if description.strip() else []
    primary = desc_clauses if any(c.mentions or c.action for c in desc_clauses) else name_clauses
    _inherit(primary, name_clauses if primary is desc_clauses else [])
    ctx = _Context(object_name, tree, object_parts(asset_or_tree), _scene_init(scene, object_name),
                   reasons, [], resolved=resolved or {})
    from .goal_reader import read_joints, simple_description

    simple = not description.strip() or simple_description(desc_text, tree.category)
    conflict = _direction_conflict(primary, name_clauses) if simple else None
    if conflict:
        ctx.ambiguities.append(conflict)

    urdf = str(entry.urdf_path) if entry is not None else None
    reading = read_joints(ctx, desc_text if description.strip() else name_text, tree.category,
                          urdf)
    if reading is None or ctx.ambiguities:
        return GoalDerivation(None, reasons, ctx.ambiguities)
    goal = TaskGoal(task=name, targets=tuple(reading.targets), source="parser",
                    explanation="; ".join(reasons), unchanged=tuple(reading.unchanged),
                    starts=tuple(reading.starts))
    return GoalDerivation(goal, reasons, [])


def _joint_steps(name: str, description: str, asset_or_tree: Any, object_name: str | None,
                 scene: SceneConfig | None, reasons: list[str]) -> list[JointTarget]:
    """The joint targets of a placement task's other steps (``..., and close the door``).

    Only the description's clauses that are not the placement itself are read; a step that
    is ambiguous or names no part is left out, and the reasons say so.
    """
    tree, _ = _entry_for(asset_or_tree)
    if tree is None or not tree.movable_joints or not description.strip():
        return []
    _, desc_text = _texts(name, description, tree.category)
    steps = [c for c in _clauses(desc_text)
             if c.action in ("open", "close") and c.mentions
             and not W.PLACE_VERBS & set(W.words(c.text))]
    if not steps:
        return []
    ctx = _Context(object_name or tree.category, tree, object_parts(asset_or_tree),
                   _scene_init(scene, object_name or tree.category), reasons, [])
    targets = _joint_targets(ctx, steps)
    if ctx.ambiguities:
        reasons.append("not checked (ambiguous): " + "; ".join(ctx.ambiguities))
        return []
    return targets


def goal_for_spec(spec: TaskSpec) -> GoalDerivation:
    """The parser's goal for a task spec (its name, description, asset and own scene)."""
    return derive_goal(spec.name, spec.description, spec.asset, spec.object, spec.scene)
