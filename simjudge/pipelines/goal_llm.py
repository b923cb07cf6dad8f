"""A second, independent goal reader: an LLM writes the typed goal, K samples must agree.

The rule reader (:func:`~simjudge.tasks.spec.derive_goal`) reads words with a fixed
vocabulary. This reader shows an LLM (the embedded model, or any OpenAI-compatible server)
the task's words and the object's movable parts (joint, what the part is, how it moves,
its range, where it sits in the world frame, the calibrated plain thresholds) and asks for
the goal as schema-constrained JSON: targets (joint, end interval as range fractions,
direction, change-from-start, a first step to reach), parts that must stay unchanged, and
stated starts; or a refusal with the words it could not read. It is never shown a proposal.

``K`` samples (temperature 0.7, seeds ``seed..seed+K-1``; one greedy sample when K = 1) are
read into canonical goals; the reader gives a goal only when a strict majority of the
samples give the same one (numbers compared to the nearest 0.05), otherwise it refuses and
shows the readings. Samples stop early once a majority is reached or impossible.

:func:`read_goal` is the one entry point of ``--goal-reader rule|llm|both``: ``both``
accepts a goal only when the two readers agree (:func:`same_meaning`: the same joints, the
same directions, end intervals within 0.15, the same unchanged parts and stated starts) and
then returns the rule reader's goal (its thresholds are the calibrated ones); when they
disagree it refuses with both readings shown.

Example (a scripted client stands in for the model):
    >>> from simjudge.llm import ScriptedClient
    >>> reply = ('{"refuse": false, "reason": "", "targets": [{"joint": "joint_0", '
    ...          '"low": 0.775, "high": 1.0, "direction": "open", "relative": false, '
    ...          '"reached": null}], "unchanged": [], "starts": []}')
    >>> reader = LLMGoalReader(ScriptedClient([reply]), k=1)
    >>> d = reader.derive("Open Drawer", "Open the bottom drawer.", "StorageFurniture-0")
    >>> d.goal.targets[0].joint, d.goal.targets[0].low, d.goal.source
    ('joint_0', 0.775, 'llm')
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from simjudge.tasks.spec import TaskGoal, derive_goal
from simjudge.tasks.spec.goal import JointTarget
from simjudge.tasks.spec.goal_amounts import CLOSED, PLAIN_DEFAULT, PLAIN_OPEN, SMALL_CHANGE
from simjudge.tasks.spec.goal_parser import GoalDerivation, Part, _entry_for, object_parts
from simjudge.tasks.spec.goal_parts import StartCondition, UnchangedPart
from simjudge.tasks.spec.goal_words import PRESSABLE_PARTS

__all__ = ["GOAL_READERS", "LLMGoalReader", "canonical", "read_goal", "same_meaning"]

GOAL_READERS: tuple[str, ...] = ("rule", "llm", "both")
"""The values of ``--goal-reader``."""

AGREE_TOLERANCE = 0.15
"""Largest difference of interval ends for ``both`` to call two readings the same."""

_SYSTEM = """You turn a robot task description into a typed goal over the joints of one \
articulated object. Positions are FRACTIONS of a joint's range: 0 = lower limit (closed, \
pushed in, released), 1 = upper limit (fully open). World frame: +y is LEFT, -y is RIGHT, \
+z is UP, -x is the FRONT (the robot stands in front at -x).

Rules:
- targets: each joint the task moves, with the interval [low, high] it must END in and the \
direction it moves (open = towards 1, close = towards 0).
- A plain verb with no amount: open/press uses the part's "plain open" value as low and 1.0 \
as high; close uses low 0.0, high {closed}.
- fully / all the way: [0.9, 1.0] (close: [0.0, 0.1]). An explicit amount (50 %, halfway, \
45 degrees, 10 cm) is that end position +- 0.1 (convert angles and lengths with the range).
- slightly / a bit / a crack: relative = true, low {small_lo}, high {small_hi} (a change from \
the start).
- Two steps on one joint ("open it fully, then close it halfway"): one target for the END \
state, with reached = the fraction the first step had to reach (else null).
- unchanged: joints the words say must stay where they are (leave X shut, without touching \
Y, only X).
- starts: states the words say the task STARTS in ("the door starts open"): joint, low, \
high. A stated start is not an action.
- refuse = true when any word that changes the meaning cannot be read: a vague amount \
(a good amount, most of the way, more, enough), a part you cannot pick out uniquely, a verb \
that names no joint state. Never guess; give the words in reason."""

_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "refuse": {"type": "boolean"},
        "reason": {"type": "string"},
        "targets": {"type": "array", "items": {
            "type": "object",
            "properties": {
                "joint": {"type": "string"},
                "low": {"type": "number", "minimum": 0, "maximum": 1},
                "high": {"type": "number", "minimum": 0, "maximum": 1},
                "direction": {"type": "string", "enum": ["open", "close"]},
                "relative": {"type": "boolean"},
                "reached": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
            },
            "required": ["joint", "low", "high", "direction", "relative", "reached"],
        }},
        "unchanged": {"type": "array", "items": {"type": "string"}},
        "starts": {"type": "array", "items": {
            "type": "object",
            "properties": {"joint": {"type": "string"},
                           "low": {"type": "number", "minimum": 0, "maximum": 1},
                           "high": {"type": "number", "minimum": 0, "maximum": 1}},
            "required": ["joint", "low", "high"],
        }},
    },
    "required": ["refuse", "reason", "targets", "unchanged", "starts"],
}


def _part_line(part: Part) -> str:
    moves = "slides" if part.joint_type == "prismatic" else "turns"
    span = (f"{100 * part.span:.0f} cm" if part.joint_type == "prismatic"
            else f"{part.span * 57.29578:.0f} degrees")
    where = ""
    if part.position is not None:
        x, y, z = part.position
        where = f", centre x={x:+.2f} y={y:+.2f} z={z:.2f} m"
    plain = PLAIN_OPEN.get(part.semantic, PLAIN_DEFAULT)
    spring = ", springs back when released" if part.spring else ""
    return (f"- {part.joint}: {part.kind} {part.semantic} ({part.link}), {moves} over {span}"
            f"{where}, plain open {plain}{spring}")


def _prompt(name: str, description: str, category: str, parts: list[Part]) -> list[dict[str, str]]:
    system = _SYSTEM.format(closed=CLOSED, small_lo=SMALL_CHANGE[0], small_hi=SMALL_CHANGE[1])
    lines = "\n".join(_part_line(p) for p in parts)
    user = (f"Object: {category}. Its movable parts:\n{lines}\n\nTask name: {name}\n"
            f"Task description: {description or name}\n\nWrite the goal.")
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def _q(x: float | None) -> float | None:
    return None if x is None else round(round(float(x) / 0.05) * 0.05, 2)


def canonical(goal: TaskGoal | None) -> tuple[Any, ...] | None:
    """A hashable form of a joint goal's meaning, numbers to the nearest 0.05 (None: none)."""
    if goal is None:
        return None
    targets = tuple(sorted((t.joint, t.direction, _q(t.low), _q(t.high), t.relative,
                            _q(t.reached)) for t in goal.joint_targets))
    unchanged = tuple(sorted(u.joint for u in goal.unchanged))
    starts = tuple(sorted((s.joint, _q(s.low), _q(s.high)) for s in goal.starts))
    return targets, unchanged, starts


def same_meaning(a: TaskGoal, b: TaskGoal, tolerance: float = AGREE_TOLERANCE) -> bool:
    """Whether two joint goals say the same.

    The same joints and directions, interval ends within ``tolerance``, the same
    change-from-start and first steps, unchanged parts and stated starts.
    """
    if len(a.joint_targets) != len(a.targets) or len(b.joint_targets) != len(b.targets):
        return False  # placements: compared by the rule reader only
    ta = sorted(a.joint_targets, key=lambda t: t.joint)
    tb = sorted(b.joint_targets, key=lambda t: t.joint)
    if [t.joint for t in ta] != [t.joint for t in tb]:
        return False
    for x, y in zip(ta, tb, strict=True):
        if (x.direction, x.relative) != (y.direction, y.relative):
            return False
        if abs(x.low - y.low) > tolerance or abs(x.high - y.high) > tolerance:
            return False
        if (x.reached is None) != (y.reached is None) or (
                x.reached is not None and y.reached is not None
                and abs(x.reached - y.reached) > tolerance):
            return False
    if sorted(u.joint for u in a.unchanged) != sorted(u.joint for u in b.unchanged):
        return False
    sa = sorted(a.starts, key=lambda s: s.joint)
    sb = sorted(b.starts, key=lambda s: s.joint)
    return [s.joint for s in sa] == [s.joint for s in sb] and all(
        abs(x.low - y.low) <= tolerance and abs(x.high - y.high) <= tolerance
        for x, y in zip(sa, sb, strict=True))


class LLMGoalReader:
    """Reads a task's goal with an LLM; K samples must agree (see the module docstring).

    Args:
        client: Any :class:`~simjudge.llm.LLMClient` (wrap it in the replay cache to record).
        k: Samples per task (a strict majority must agree).
        temperature: Sampling temperature when ``k > 1`` (``k == 1`` is greedy).
        seed: Seed of the first sample.
        max_tokens: Token budget of one sample.
    """

    def __init__(self, client: Any, k: int = 3, temperature: float = 0.7, seed: int = 0,
                 max_tokens: int = 400) -> None:
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        self.client, self.k, self.temperature = client, k, temperature
        self.seed, self.max_tokens = seed, max_tokens

    def _sample(self, messages: list[dict[str, str]], i: int) -> dict[str, Any] | str:
        from simjudge.llm.structured import StructuredOutputError, complete_structured

        greedy = self.k == 1
        try:
            value, _ = complete_structured(
                self.client, messages, _SCHEMA, retries=1, max_tokens=self.max_tokens,
                temperature=0.0 if greedy else self.temperature, seed=self.seed + i)
        except StructuredOutputError as exc:
            return f"sample {i}: no valid JSON ({exc.attempts[-1].error})"
        return value if isinstance(value, dict) else f"sample {i}: not a JSON object"

    def _to_goal(self, name: str, reply: dict[str, Any], parts: dict[str, Part],
                 object_name: str) -> TaskGoal | str:
        """The typed goal of one reply, or why it gives none."""
        if reply.get("refuse"):
            return f"refused: {reply.get('reason') or 'no reason given'}"
        targets = []
        for t in reply.get("targets") or []:
            part = parts.get(str(t.get("joint")))
            if part is None:
                return f"names joint {t.get('joint')!r}, which {object_name} does not have"
            low, high = float(t["low"]), float(t["high"])
            if low > high:
                return f"{part.joint}: low {low} above high {high}"
            press = part.semantic in PRESSABLE_PARTS
            targets.append(JointTarget(
                object=object_name, joint=part.joint, part=part.link, link=part.grip,
                semantic=f"{part.kind} {part.semantic}", low=low, high=high,
                direction=t["direction"], amount="llm", requires_grasp=not press,
                spring=part.spring, relative=bool(t.get("relative")),
                reached=None if t.get("reached") is None else float(t["reached"]),
                words=name))
        if not targets:
            return "no target"
        unchanged = []
        for joint in reply.get("unchanged") or []:
            part = parts.get(str(joint))
            if part is None:
                return f"unchanged names joint {joint!r}, which {object_name} does not have"
            unchanged.append(UnchangedPart(object=object_name, joint=part.joint, part=part.link,
                                           semantic=f"{part.kind} {part.semantic}",
                                           spring=part.spring))
        starts = []
        for s in reply.get("starts") or []:
            if str(s.get("joint")) not in parts or float(s["low"]) > float(s["high"]):
                return f"start {s!r} names no joint of {object_name} or an empty interval"
            starts.append(StartCondition(object=object_name, joint=str(s["joint"]),
                                         low=float(s["low"]), high=float(s["high"])))
        if {t.joint for t in targets} & {u.joint for u in unchanged}:
            return "a joint is both a target and unchanged"
        return TaskGoal(task=name, targets=tuple(targets), unchanged=tuple(unchanged),
                        starts=tuple(starts), source="llm",
                        explanation=f"read by {self.client.backend}:{self.client.model}")

    def derive(self, name: str, description: str, asset: str, object_name: str | None = None
               ) -> GoalDerivation:
        """The goal of a joint task on ``asset`` (a catalogue id or category), or a refusal."""
        tree, _ = _entry_for(asset)
        if tree is None or not tree.movable_joints:
            return GoalDerivation(None, [], [f"{asset}: no articulated object with movable "
                                             "joints; the LLM reader reads joint goals only"])
        object_name = object_name or tree.category
        parts = {p.joint: p for p in object_parts(asset)}
        messages = _prompt(name, description, tree.category, list(parts.values()))
        readings: list[TaskGoal | str] = []
        votes: Counter[Any] = Counter()
        need = self.k // 2 + 1
        for i in range(self.k):
            reply = self._sample(messages, i)
            reading = reply if isinstance(reply, str) else self._to_goal(
                name, reply, parts, object_name)
            readings.append(reading)
            votes[canonical(reading) if isinstance(reading, TaskGoal) else "none"] += 1
            top, count = votes.most_common(1)[0]
            if count >= need or count + (self.k - i - 1) < need:
                break
        top, count = votes.most_common(1)[0]
        shown = [r.describe() if isinstance(r, TaskGoal) else r for r in readings]
        if top != "none" and count >= need:
            goal = next(r for r in readings if isinstance(r, TaskGoal) and canonical(r) == top)
            return GoalDerivation(goal, [f"{count} of {len(readings)} samples agree"], [])
        why = ("the samples disagree" if top != "none" or count < need
               else "the model refused or gave no valid goal")
        return GoalDerivation(None, [], [f"LLM reader: {why}: " + " | ".join(shown)])


def read_goal(reader: str, name: str, description: str, asset: str,
              llm: LLMGoalReader | None = None, **rule_args: Any) -> GoalDerivation:
    """The goal by ``reader`` (``rule``, ``llm`` or ``both``; see the module docstring).

    Raises:
        ValueError: Unknown reader, or ``llm``/``both`` without an :class:`LLMGoalReader`.
    """
    if reader not in GOAL_READERS:
        raise ValueError(f"unknown goal reader {reader!r}; choose one of {', '.join(GOAL_READERS)}")
    if reader == "rule":
        return derive_goal(name, description, asset, **rule_args)
    if llm is None:
        raise ValueError(f"--goal-reader {reader} needs an LLM: pass --llm SPEC "
                         "(e.g. llamacpp:qwen2.5-coder-1.5b or openai:MODEL)")
    by_llm = llm.derive(name, description, asset, rule_args.get("object_name"))
    if reader == "llm":
        return by_llm
    by_rule = derive_goal(name, description, asset, **rule_args)
    if by_rule.goal is not None and by_llm.goal is not None and same_meaning(by_rule.goal,
                                                                             by_llm.goal):
        return GoalDerivation(by_rule.goal, [*by_rule.reasons, "the LLM reader agrees: "
                                             + by_llm.goal.describe()], [])
    rule_text = by_rule.goal.describe() if by_rule.goal else "refused: " + "; ".join(
        by_rule.ambiguities)
    llm_text = by_llm.goal.describe() if by_llm.goal else "; ".join(by_llm.ambiguities)
    return GoalDerivation(None, by_rule.reasons, [
        "the two readers do not agree, so no goal is given; write the goal (--goal FILE) "
        f"or reword the task. rule reader: {rule_text} || LLM reader: {llm_text}"])

