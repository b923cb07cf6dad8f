r"""The rule reader of joint goals: it abstains instead of guessing.

A description is read segment by segment (sentences, then ``,`` ``but`` ``then`` ``and``
``without``), each one of three kinds:

- **start** ("the fridge doors start open", "the drawer is pulled out halfway"): a
  :class:`~.goal_parts.StartCondition`, never an action;
- **constraint** ("leave the right one shut", "without pressing any buttons", "don't
  touch the knobs", "and no other", "... only"): :class:`~.goal_parts.UnchangedPart`\\ s;
- **action**: a :class:`~.goal.JointTarget` per part, its interval from the amount
  (:mod:`~.goal_amounts`); a later step on the same joint is where it ends, and an opening
  before a closing is kept as ``reached`` (the episode's largest fraction shows it).

Parts are named by part words, by ``it`` / ``them`` / ``the left one`` (the parts of the
segment before), or, with none, by the action (the object's only openable part); spatial
words pick by world-frame position (:mod:`~.goal_space`). Every word must be understood
(:mod:`~.goal_vocab`); an amount with no agreed band, a part that does not resolve, a verb
with no direction or an unknown word refuse, and the refusal says what to write instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from . import goal_words as W
from .goal import JointTarget
from .goal_amounts import Amount, amount_target, read_amount, spelled_numbers
from .goal_parser import (
    Part,
    _by_locators,
    _by_start,
    _candidates,
    _Clause,
    _Context,
    _fallback,
    _read_clause,
)
from .goal_parts import StartCondition, UnchangedPart
from .goal_space import AXIS_WORDS, ORDINAL_NUMBERS, Spatial, pick, world_centres
from .goal_vocab import CATEGORY_WORDS, NO_VERBS, unknown_words

__all__ = ["Reading", "read_joints", "simple_description"]


@dataclass
class Reading:
    """What the reader read: targets, parts that must stay put, stated starts."""

    targets: list[JointTarget] = field(default_factory=list)
    unchanged: list[UnchangedPart] = field(default_factory=list)
    starts: list[StartCondition] = field(default_factory=list)


_CONSTRAINT = re.compile(r"^(?:(?:while|whilst)\s+)?(?:leave|leaving|keep|keeping|dont|never|not|"
                         r"without|no other|and no other)\b|"
                         r"\b(?:stay|stays|staying|remain|remains|remaining)\b|"
                         r"\b(?:alone|untouched|where it is|where they are|as it is|no other)\b")
_STATE_VERB = re.compile(r"\b(?:starts?|started|begins?|is|are|was|were|has been|have been|"
                         r"sticks?|sits?|stands?|rests?|hangs?|lies|"
                         r"(?<!the )(?<!a )left(?= (?:it|them|the|open|closed|shut|ajar|up|down|out|"
                         r"halfway|partly|slightly)\b))\b")
_PRONOUNS = {"it", "them", "one", "ones"}
_OTHER = frozenset({"other", "others"})
_CARRY = frozenset({"lift", "lifts", "lifting", "carry", "carries", "raise", "raises", "pick",
                    "picks", "move", "moves", "hold", "holds"})


def _rewrite(text: str, category: str) -> str:
    """Lower-case text with the object's own verbs made plain.

    A folding chair folds up by opening its joint (its lower limit is the seat down); an
    oven door folds down when it opens.
    """
    t = spelled_numbers(text.lower().replace("’", "'"))
    t = re.sub(r"\b(?:don't|do not|dont|doesn't|does not)\b", "dont", t)
    t = re.sub(r"\b(left|right)[\s-]hand\b", r"\1", t)
    t = re.sub(r"\b(left|right|top|bottom|front|back)-most\b", r"\1most", t)
    t = re.sub(r"\b(front|back)[\s-](left|right)\b", r"\1 \2", t)
    if category == "FoldingChair":
        t = re.sub(r"\bunfold(?:s|ed|ing)?\b", "close", t)
        t = re.sub(r"\bfolded\b", "open", t)
        t = re.sub(r"\bfold(?:s|ing)?\b", "open", t)
    if category == "Oven":
        t = re.sub(r"\blower(s|ed|ing)?\b(?=[^.;,]*\bdoor)", "open", t)
        t = re.sub(r"\braise(s|d)?\b(?=[^.;,]*\bdoor)", "close", t)
    return t


def _segments(text: str) -> list[tuple[str, str]]:
    """``(kind, text)`` of each segment: ``start``, ``constraint`` or ``action``."""
    out = []
    for sentence in _in_order(re.split(r"[.;!?](?:\s|$)|\.$", text)):
        pieces = re.split(r",|\bbut\b|\band then\b|\bthen\b|(?=\bwithout\b)|"
                          r"(?=\band no other\b)|(?=\bwhile\b|\bwhilst\b)|\band\b(?! no other)", sentence)
        for piece in (p.strip() for p in pieces):
            if not piece or not W.words(piece):
                continue
            if _CONSTRAINT.search(piece):
                out.append(("constraint", piece))
            elif _is_start(piece):
                out.append(("start", piece))
            else:
                out.append(("action", piece))
    return out


def _in_order(sentences: list[str]) -> list[str]:
    """Sentences with ``X after Y`` / ``after Y, X`` turned into ``Y, then X``."""
    out = []
    for sentence in sentences:
        lead = re.match(r"\s*after\s+(.+?),\s*(.+)$", sentence)
        if lead:
            sentence = f"{lead.group(1)} then {lead.group(2)}"
        elif m := re.match(r"(.+?)\s+after\s+(.+)$", sentence):
            sentence = f"{m.group(2)} then {m.group(1)}"
        out.append(sentence)
    return out


def _is_start(piece: str) -> bool:
    """A state verb ("is", "starts", "has been") before any action verb: a stated start.

    Also ``with the door open`` and ``starting from a closed door``.
    """
    if re.match(r"\s*(?:with|starting (?:from|with)|from)\b", piece):
        return True
    state = _STATE_VERB.search(piece) or re.search(r"\bto begin with\b", piece)
    if state is None:
        return False
    before = W.words(piece[:state.start()])
    return not any(w in W.ACTION_VERBS or w in NO_VERBS for w in before)


def simple_description(text: str, category: str) -> bool:
    """One action segment with a plain amount: its direction may be compared with the name's."""
    segments = _segments(_rewrite(text, category))
    return (len(segments) == 1 and segments[0][0] == "action"
            and read_amount(segments[0][1]).kind == "plain")


def _spatial(tokens: list[str]) -> tuple[list[Spatial], str | None]:
    """The spatial requests of a segment, and a bare ordinal (one no side is named for)."""
    requests: list[Spatial] = []
    bare = None
    used: set[int] = set()
    for i, tok in enumerate(tokens):
        if tok in ORDINAL_NUMBERS:
            side = next((j for j in range(i + 1, min(len(tokens), i + 6))
                         if tokens[j] in AXIS_WORDS and tokens[j - 1] in ("the", "from")), None)
            if side is not None and "from" in tokens[i + 1:side]:
                requests.append(Spatial(tokens[side], ORDINAL_NUMBERS[tok]))
                used.add(side)
            elif i + 1 < len(tokens) and (W.part_semantics(tokens[i + 1]) or tokens[i + 1] in (
                    "one", "row")):
                bare = tok
    for i, tok in enumerate(tokens):
        if i in used:
            continue
        before = tokens[i - 1] if i else ""
        after = tokens[i + 1] if i + 1 < len(tokens) else ""
        if tok in ("far", "very") and after in ("left", "right", "top", "bottom", "back", "front"):
            continue  # "the far left": the leftmost
        if tok in ("middle", "centre", "center"):
            requests.append(Spatial("middle"))
        elif tok in AXIS_WORDS and i > 0 and before not in ("been", "was", "is", "were", "be"):
            nounish = (W.part_semantics(after) or after in ("one", "ones", "row", "side")
                       or after in AXIS_WORDS or after == "middle")
            if before in W.DETERMINERS or before in ("from", "in") or nounish or before in AXIS_WORDS:
                requests.append(Spatial(tok))
    return requests, bare


@dataclass
class _State:
    ctx: _Context
    category: str
    where: dict[str, tuple[float, float, float]]
    reading: Reading = field(default_factory=Reading)
    last_parts: list[Part] = field(default_factory=list)
    last_word: str = ""
    last_action: _Clause | None = None
    only: list[Part] = field(default_factory=list)
    category_words: frozenset[str] = frozenset()

    def refuse(self, why: str) -> list[Part]:
        self.ctx.ambiguities.append(why)
        return []


def _resolve(st: _State, clause: _Clause, tokens: list[str], kind: str) -> list[Part]:
    """The parts a segment names (a part word, a pronoun, or the action's only part)."""
    ctx = st.ctx
    mentions = clause.targets
    requests, bare = _spatial(tokens)
    if bare is not None:
        return st.refuse(f"'{bare}' counts from no side; say from which (e.g. '{bare} from the "
                         "left', 'the top one')")
    if not mentions:
        pronoun = _PRONOUNS & set(tokens)
        if pronoun and st.last_parts:
            if not requests:
                return list(st.last_parts)
            parts = [p for p in ctx.parts if p.semantic in {q.semantic for q in st.last_parts}]
        elif kind == "start" or clause.action is not None:
            probe = clause if kind != "start" else _Clause(text=clause.text, action="open")
            if requests and clause.action is None:
                return st.refuse(f"'{clause.text}' names a position but no part")
            return _fallback(ctx, probe)
        else:
            return st.refuse(f"'{clause.text}' names no part")
    else:
        mention = mentions[0]
        parts = _candidates(ctx, mention)
        if not parts:
            return st.refuse(f"'{mention.word}' names no part of {ctx.tree.asset_id} (its "
                             f"movable parts: {', '.join(p.label() for p in ctx.parts)})")
        if mention.kind:
            parts = [p for p in parts if p.kind == mention.kind] or parts
        parts = _by_locators(ctx, parts, [m for m in clause.mentions if m.role == "locator"])
        if len(parts) > 1 and mention.start and ctx.scene_init:
            parts = _by_start(ctx, parts, mention.start)
        st.last_word = mention.word
        pick_one = re.search(r"\b(?:any|either|one|some|a few)\b(?: of)?", clause.text)
        if pick_one and kind != "constraint" and (mention.plural or "of" in tokens
                                                  or pick_one.group(0).startswith(("any", "either"))):
            return st.refuse(f"'{clause.text}' names one of several parts without saying which")
        many = mention.plural or clause.all_of or "any" in tokens
        if len(parts) > 1 and many and not requests:
            ctx.reasons.append(f"'{mention.word}' (all of them): "
                               f"{', '.join(p.label() for p in parts)}")
            return parts
    return _narrow(st, clause, parts, requests)


def _narrow(st: _State, clause: _Clause, parts: list[Part], requests: list[Spatial]
            ) -> list[Part]:
    """The one part of ``parts`` the spatial words (or the converter's mapping) pick."""
    ctx = st.ctx
    mentions = clause.targets
    mapped = [p for p in parts if p.joint in ctx.resolved.get(p.semantic, [])]
    if len(mapped) == 1 and (len(parts) > 1 or requests):  # the converter read the code
        ctx.reasons.append(f"'{clause.text}': the converter mapped the task's "
                           f"{mapped[0].semantic} to {mapped[0].joint}")
        return mapped
    if requests:
        kept, notes = pick(parts, {p: st.where[p.link] for p in parts}, requests)
        if not kept:
            return st.refuse(f"'{clause.text}': {notes[-1]}")
        ctx.reasons.append(f"'{clause.text}': {'; '.join(notes)} -> "
                           f"{', '.join(p.label() for p in kept)}")
        parts = kept
    if len(parts) > 1:
        return st.refuse(f"'{clause.text}' fits {len(parts)} parts "
                         f"({', '.join(p.label() for p in parts)}); say which (top/bottom, "
                         "left/right, front/back), or 'both'/'all'")
    if mentions and not requests:
        ctx.reasons.append(f"'{mentions[0].word}' is {parts[0].label()}")
    return parts


_START_BANDS = (
    (r"\b(?:wide open|fully open|all the way open|open all the way)\b", (0.6, 1.0)),
    (r"\b(?:ajar|slightly open|a little open|a crack open|cracked open|a bit open)\b",
     (0.02, 0.45)),
    (r"\b(?:partly|partially|part[\s-]?way) open\b", (0.02, 0.98)),
    (r"\bhalf[\s_-]?(?:way)?\s*open(?:ed)?\b|\bhalfway\b|\bhalf[\s-]?way out\b", (0.05, 0.95)),
    (r"\b(?:open|opened|up|out|pulled out|on|raised|lifted)\b", (0.05, 1.0)),
    (r"\b(?:closed|shut|down|in|off|lowered)\b", (0.0, 0.05)),
)


def _start_band(text: str, amount: Amount, part: Part) -> tuple[float, float] | None:
    """The band of a stated start (range fractions), or None when the words give none."""
    if amount.kind in ("angle", "length", "fraction", "about"):
        _, _, _, refusal = amount_target(amount, "open", part.semantic, part.span,
                                         part.joint_type == "prismatic")
        if refusal:
            return None
        centre = float(amount.value or 0.0)
        if amount.kind in ("angle", "length"):
            centre /= part.span
        return max(0.02, centre - 0.45), min(1.0, centre + 0.45)
    for pattern, band in _START_BANDS:
        if re.search(pattern, text):
            return band
    return None


def _do_start(st: _State, text: str, clause: _Clause, amount: Amount, tokens: list[str]) -> None:
    parts = _resolve(st, clause, tokens, "start")
    for part in parts:
        band = _start_band(text, amount, part)
        if band is None:
            st.refuse(f"'{text}' states a start the reader cannot place (say 'starts open', "
                      "'starts closed', 'is halfway open', or an amount)")
            return
        st.reading.starts.append(StartCondition(object=st.ctx.object_name, joint=part.joint,
                                                low=band[0], high=band[1], words=text))
        st.ctx.reasons.append(f"start condition from '{text}': {part.joint} in "
                              f"[{band[0]:.2f}, {band[1]:.2f}]")
    st.last_parts = parts or st.last_parts


def _do_constraint(st: _State, text: str, clause: _Clause, tokens: list[str]) -> None:
    if _OTHER & set(tokens):
        if not st.last_parts:
            st.refuse(f"'{text}': no part to compare 'other' with")
            return
        kinds = ({p.semantic for p in _candidates(st.ctx, clause.targets[0])} if clause.targets
                 else {p.semantic for p in st.last_parts})
        parts = [p for p in st.ctx.parts if p.semantic in kinds and p not in st.last_parts]
    else:
        parts = _resolve(st, clause, tokens, "constraint")
    for part in parts:
        st.reading.unchanged.append(UnchangedPart(
            object=st.ctx.object_name, joint=part.joint, part=part.link,
            semantic=f"{part.kind} {part.semantic}", spring=part.spring, words=text))
        st.ctx.reasons.append(f"'{text}': {part.joint} must stay where it starts")


def _nominal_end(target: JointTarget) -> float | None:
    if target.relative:
        return None
    if target.high >= 1.0:
        return 1.0
    if target.low <= 0.0:
        return 0.0
    return (target.low + target.high) / 2


def _direction(st: _State, clause: _Clause, amount: Amount, cue: str) -> str | None:
    if clause.direction is not None:
        return clause.direction
    if clause.action in ("press", "turn"):
        return "open"
    if amount.kind in ("fraction", "angle", "length", "upright"):
        return "open"  # an end position: measured from the lower limit
    st.refuse(f"'{cue}' names no direction and no end state; say 'open', 'close' or where it "
              "ends (e.g. 'to 50%')")
    return None


def _do_action(st: _State, text: str, clause: _Clause, amount: Amount, tokens: list[str],
               own: frozenset[str]) -> None:
    ctx = st.ctx
    if (clause.action is None and not clause.targets and not _PRONOUNS & set(tokens)
            and amount.kind == "plain"):
        ctx.reasons.append(f"'{text}': no part and no action, nothing to check")
        return  # "looks inside": a step that moves nothing
    inherited = False
    if clause.action is None and st.last_action is not None and not (
            W.FINAL_STATES.keys() & set(tokens) and clause.direction):
        clause.action, clause.cue = st.last_action.action, st.last_action.cue
        clause.direction = clause.direction or st.last_action.direction
        inherited = True
    if inherited and not clause.targets and st.last_parts:
        tokens = [*tokens, "it"]  # "open the bottom door halfway, then fully": the same door
    if clause.action is None:
        st.refuse(f"no action in '{text}'")
        return
    if set(tokens) & NO_VERBS and amount.kind not in ("fraction", "angle", "length"):
        st.refuse(f"'{text}' names no direction and no end state; say where it must end")
        return
    if (not clause.targets and not _PRONOUNS & set(tokens) and _CARRY & set(tokens)
            and own & set(tokens)):
        st.refuse(f"'{text}' moves the object itself (a placement), not one of its parts; "
                  "name the part, or say where the object must end up")
        return
    parts = _resolve(st, clause, tokens, "action")
    direction = _direction(st, clause, amount, clause.cue or clause.action) if parts else None
    if direction is None:
        return
    st.last_action = clause
    for part in parts:
        _add_target(st, part, clause, amount, direction, text)
    st.last_parts = parts
    if "only" in tokens:
        st.only.extend(parts)


def _add_target(st: _State, part: Part, clause: _Clause, amount: Amount, direction: str,
                text: str) -> None:
    previous = next((t for t in st.reading.targets if t.joint == part.joint), None)
    press = clause.action == "press" or part.semantic in W.PRESSABLE_PARTS
    if part.spring and re.search(r"\b(?:turn|turns|turning|switch|switches|switching)\b.*"
                                 r"\b(?:on|off)\b|\b(?:on|off)\b", text) and not press_words(text):
        st.refuse(f"'{text}': {part.joint} is a spring button, so on / off is a state it toggles "
                  "and joint state cannot show; say 'press the switch' to check a press")
        return
    if part.joint_type == "continuous" and amount.kind == "plain" and re.search(
            r"\b(?:on|off)\b", text):
        st.refuse(f"'{text}': {part.joint} turns all the way round, so 'on' / 'off' is no "
                  "position of it; say how far to turn it (a quarter turn, 90 degrees)")
        return
    if part.spring and direction == "close":
        if not re.search(r"\b(?:push|pushes|pushing|depress\w*)\b|\bdown\b", text):
            st.refuse(f"'{text}': {part.joint} springs back when released, so its off / "
                      "closed state is where it always rests: joint state cannot show it")
            return
        direction, press = "open", True  # "push the pump down": a press
    if part.joint_type == "continuous" and amount.kind in ("angle", "fraction", "fully") and (
            float(amount.value or 0.0) / (part.span if amount.kind == "angle" else 1.0) >= 0.98):
        st.refuse(f"'{text}': a full turn brings {part.joint} back to where it started; give "
                  "less than a full turn")
        return
    low, high, relative, refusal = amount_target(
        amount, direction, part.semantic, part.span, part.joint_type == "prismatic",
        _nominal_end(previous) if previous is not None else None)
    if refusal:
        st.refuse(refusal)
        return
    if (amount.kind == "plain" and clause.action == "turn"
            and not re.search(r"\b(?:on|off|up|down|open|opened|closed|shut)\b", text)):
        st.refuse(f"'{text}': a plain '{clause.cue or 'turn'}' names no amount and no end "
                  "state; say how far (a quarter turn, 90 degrees, halfway) or 'on'/'off'")
        return
    reached = None
    if previous is not None and previous.direction == "open" and not previous.relative:
        if high < previous.low or direction == "close":
            reached = previous.low
    word = amount.text or amount.kind
    if amount.kind == "plain":  # the plain verb's word, as in AMOUNTS
        word = "close" if direction == "close" else "press" if press else (
            "turn" if clause.action == "turn" else "open")
    target = JointTarget(
        object=st.ctx.object_name, joint=part.joint, part=part.link, link=part.grip,
        semantic=f"{part.kind} {part.semantic}", low=low, high=min(1.0, high),
        direction=direction, amount=word, requires_grasp=not press,  # type: ignore[arg-type]
        spring=part.spring, relative=relative, reached=reached, words=text,
        start=st.ctx.scene_init.get(part.joint))
    st.reading.targets = [t for t in st.reading.targets if t.joint != part.joint] + [target]
    st.ctx.reasons.append(f"{part.joint}: {direction} ('{text}'), amount "
                          f"'{amount.text or amount.kind}' -> [{low:.2f}, {high:.2f}]"
                          f"{' change from the start' if relative else ''}"
                          f"{f', after reaching {reached:.2f}' if reached is not None else ''}")


def press_words(text: str) -> bool:
    """Whether the words press (press, push, depress, pump, flush, click), not switch."""
    return bool(re.search(r"\b(?:press|presses|pressing|push|pushes|pushing|depress\w*|pump\w*|"
                          r"flush\w*|click\w*|hit)\b", text))


def _clause_text(text: str, amount: Amount, tokens: list[str]) -> str:
    """The segment with an amount's state word dropped when the verb names the direction.

    ``close the door to 20% open``: the ``open`` is part of the amount.
    """
    verb = next((t for t in tokens if t in W.ACTION_VERBS), None)
    if amount.text and verb is not None and W.ACTION_VERBS[verb][1] is not None:
        after = re.search(rf"\b{re.escape(verb)}\b", text)
        at = text.find(amount.text)
        if after is not None and at > after.start():  # "close it to 20% open", not "partly open it"
            text = re.sub(rf"{re.escape(amount.text)}\s+(?:open|opened|closed|shut)\b",
                          amount.text, text)
    return text


def read_joints(ctx: _Context, text: str, category: str, urdf: str | None) -> Reading | None:
    """Read a description's joint goal; None (with ``ctx.ambiguities``) when it cannot.

    Args:
        ctx: The parser's context (object, tree, parts, reasons, ambiguities).
        text: The description (else the task name).
        category: The object's category (its own words, its verbs).
        urdf: The asset's URDF, for world-frame positions.
    """
    text = _rewrite(text, category)
    where = world_centres(urdf) if urdf else {p.link: p.position or (0.0, 0.0, 0.0)
                                              for p in ctx.parts}
    st = _State(ctx, category, where, category_words=frozenset(
        {w.lower() for w in re.findall(r"[A-Z][a-z]*", category)}
        | set(CATEGORY_WORDS.get(category, ()))))
    own = frozenset(w.lower() for w in re.findall(r"[A-Z]?[a-z]+", ctx.object_name)) | {
        ctx.object_name.lower()}  # the scene's own name for it ("DishWasher")
    for kind, seg in _segments(text):
        amount = read_amount(seg)
        unknown = unknown_words(seg, category, amount.text,
                                (_OTHER if kind == "constraint" else frozenset()) | own)
        if unknown:
            ctx.ambiguities.append(f"could not read {', '.join(repr(w) for w in unknown)} in "
                                   f"'{seg}'; say it with open/close/press/turn, a part and an "
                                   "amount (e.g. 'open the left door halfway')")
            continue
        if amount.kind == "refuse":
            ctx.ambiguities.append(f"'{amount.text}' in '{seg}' names no agreed amount; give "
                                   "one (50%, 30 degrees, 5 cm, fully, slightly, halfway)")
            continue
        tokens = W.words(seg)
        clause = _read_clause(_clause_text(seg, amount, tokens))
        if kind == "start":
            _do_start(st, seg, clause, amount, tokens)
        elif kind == "constraint":
            _do_constraint(st, seg, clause, tokens)
        else:
            _do_action(st, seg, clause, amount, tokens, own | st.category_words)
    return _finish(st)


def _finish(st: _State) -> Reading | None:
    ctx, reading = st.ctx, st.reading
    if st.only:
        kinds = {p.semantic for p in st.only}
        targets = {t.joint for t in reading.targets}
        for part in ctx.parts:
            if part.semantic in kinds and part.joint not in targets:
                reading.unchanged.append(UnchangedPart(
                    object=ctx.object_name, joint=part.joint, part=part.link,
                    semantic=f"{part.kind} {part.semantic}", spring=part.spring, words="only"))
    moved = {t.joint for t in reading.targets}
    clash = [u.joint for u in reading.unchanged if u.joint in moved]
    if clash:
        ctx.ambiguities.append(f"{', '.join(clash)} must both move and stay put; say which")
    if not reading.targets and not ctx.ambiguities:
        ctx.ambiguities.append("no action found: say what to open, close, press or turn")
    if ctx.ambiguities:
        return None
    starts = {c.joint: c for c in reading.starts}
    reading.targets = [t.model_copy(update={"start": starts[t.joint].start_at()})
                       if t.joint in starts else t for t in reading.targets]
    return reading
