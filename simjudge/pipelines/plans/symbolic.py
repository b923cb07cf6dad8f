"""The symbolic tier: a precondition/effect table per skill, run instantly.

The abstract state holds what the milestone predicates read: what the hand holds (scene
object and link), each joint's position as a fraction of its range, and where free objects
were placed. :func:`bind_step` resolves a step's names against the task's plan objects
(shared with the physical tier); :func:`run_symbolic` applies each step's preconditions
and effects (the table in :mod:`~simjudge.pipelines.plans.schema`) and re-reads the
milestones after every atomic effect, so ``open(drawer)`` first holds the handle, then
opens the joint, and the DAG order "grasped before opened" is kept.

A held *part* (a handle) is let go before a skill touches something else, as the suction
primitives do; a held *free object* is not, and touching anything else while holding it is
a physics violation (pick while holding).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from simjudge.judges.predicates import (
    And,
    Holding,
    JointIn,
    Not,
    Or,
    Placed,
    Predicate,
)

from .groundtruth import PlanObject, TaskPlan
from .matching import direction_of, resolve_object, split_location
from .records import Completion, DagTracker, StepRecord
from .schema import JOINT_SKILLS, SKILLS, PlanNode

__all__ = [
    "OPENING_FRACTION",
    "Binding",
    "SymbolicState",
    "bind_step",
    "initial_state",
    "run_symbolic",
    "symbolic_holds",
]

OPENING_FRACTION = 0.3
"""A container's opening (a box's lid) must be open this far to put something in."""

HAND_SKILLS = frozenset({"pick_up", "grasp"}) | JOINT_SKILLS


@dataclass(frozen=True)
class Binding:
    """A step with its names resolved.

    Attributes:
        node: The step.
        obj: The plan object acted on (None for ``release``/``move_to`` without one).
        target: ``place``'s target plan object.
        relation: ``place``'s relation, ``in`` or ``on``.
        direction: Joint skills: ``open`` or ``close``.
        label: Error label when the step cannot be bound ("" = bound).
        reason: Why not.
    """

    node: PlanNode
    obj: PlanObject | None = None
    target: PlanObject | None = None
    relation: str = ""
    direction: str = ""
    label: str = ""
    reason: str = ""


def _fail(node: PlanNode, label: str, reason: str) -> Binding:
    return Binding(node=node, label=label, reason=reason)


def bind_step(plan: TaskPlan, node: PlanNode) -> Binding:
    """Resolve a step's object, target and direction; label what cannot be bound."""
    if not node.known:
        return _fail(node, "impossible_action",
                     f"{node.skill!r} is not a skill; skills are {sorted(SKILLS)}")
    obj = None
    if node.object:
        obj, _ = resolve_object(plan, node.object)
        if obj is None:
            return _fail(node, "wrong_object", f"{node.object!r} names nothing in the scene")
    elif node.skill not in ("release", "move_to"):
        return _fail(node, "impossible_action", f"{node.skill} needs an object")
    if node.skill in ("grasp", "move_to") and obj is not None and obj.link is None and not obj.movable:
        parts = [o for o in plan.plan.objects if o.part_of == obj.name and o.link and o.grasp]
        if len(parts) != 1:
            return _fail(node, "wrong_object", f"{obj.name} has no single part to {node.skill}")
        obj = parts[0]  # grasp(cabinet) on a whole with one handle means that handle
    if node.skill == "pick_up" and obj is not None and not obj.movable:
        return _fail(node, "impossible_action", f"{obj.name} cannot be picked up (not a free object)")
    if node.skill in JOINT_SKILLS and obj is not None:
        if obj.joint is None:
            parts = [o for o in plan.plan.objects if o.part_of == obj.name and o.joint]
            if len(parts) != 1:
                return _fail(node, "wrong_object", f"{obj.name} has no single moving part to {node.skill}")
            obj = parts[0]
        direction = "open" if not obj.grasp else direction_of(node.skill, node.params)
        return Binding(node=node, obj=obj, direction=direction)
    if node.skill == "place":
        if not node.params:
            return _fail(node, "impossible_action", "place needs a location, e.g. place(cube, in_box)")
        relation, name = split_location(" ".join(node.params))
        target, _ = resolve_object(plan, name) if name else (None, 0.0)
        if target is None:
            return _fail(node, "wrong_object", f"place target {name!r} names nothing in the scene")
        return Binding(node=node, obj=obj, target=target, relation=relation or "on")
    return Binding(node=node, obj=obj)


@dataclass
class SymbolicState:
    """The abstract state the milestone predicates read.

    Attributes:
        holding: ``(scene object, link or None)`` held, or None.
        joints: ``(scene object, joint) -> range fraction``.
        placed: Free scene object -> ``(relation, target scene object)``.
        free: Scene objects that are free (can be picked up).
    """

    holding: tuple[str, str | None] | None = None
    joints: dict[tuple[str, str], float] = field(default_factory=dict)
    placed: dict[str, tuple[str, str]] = field(default_factory=dict)
    free: frozenset[str] = frozenset()

    def copy(self) -> SymbolicState:
        """An independent copy."""
        return replace(self, joints=dict(self.joints), placed=dict(self.placed))

    def key(self) -> tuple:
        """Hashable summary (to detect steps that change nothing)."""
        return (self.holding, tuple(sorted(self.joints.items())), tuple(sorted(self.placed.items())))

    def holds_free_object(self) -> bool:
        """Whether a free object is in the hand."""
        return self.holding is not None and self.holding[0] in self.free


def initial_state(plan: TaskPlan) -> SymbolicState:
    """The reset state from the task's scene config (joint_init fractions, default 0)."""
    inits = {o.name: o.joint_init for o in plan.spec.scene.objects}
    joints = {}
    for o in plan.plan.objects:
        if o.joint:
            value = inits.get(o.object, {}).get(o.joint, 0.0)
            joints[(o.object, o.joint)] = 0.5 if value == "random" else float(value)
    free = frozenset(o.object for o in plan.plan.objects if o.movable)
    return SymbolicState(joints=joints, free=free)


def symbolic_holds(predicate: Predicate, state: SymbolicState) -> bool:
    """Evaluate a milestone predicate on the symbolic state."""
    p = predicate
    if isinstance(p, Holding):
        return state.holding is not None and state.holding[0] == p.object and (
            p.link is None or state.holding[1] == p.link)
    if isinstance(p, JointIn):  # JointOpen, JointClosed, Pressed: the shared interval test
        return p.contains(state.joints.get((p.object, p.joint), 0.0))
    if isinstance(p, Placed):  # On, Inside
        rel = "on" if p.relation == "on" else "in"
        return state.placed.get(p.object) == (rel, p.target)
    if isinstance(p, And):
        return all(symbolic_holds(i, state) for i in p.items)
    if isinstance(p, Or):
        return any(symbolic_holds(i, state) for i in p.items)
    if isinstance(p, Not):
        return not symbolic_holds(p.item, state)
    raise TypeError(f"the symbolic tier cannot read {type(p).__name__}")


def precondition(plan: TaskPlan, b: Binding, state: SymbolicState) -> str:
    """Why the step may not run now ("" = it may); a physics violation."""
    skill, obj = b.node.skill, b.obj
    if skill in HAND_SKILLS and state.holds_free_object():
        held = state.holding[0] if state.holding else ""
        if not (obj is not None and obj.object == held and skill in ("pick_up", "grasp")):
            return f"{skill} while holding {held} (free the hand first)"
    if skill == "place" and obj is not None:
        if state.holding is None or state.holding[0] != obj.object:
            return f"place {obj.name} while not holding it"
        target = b.target
        opening = plan.object_named(target.opening) if target and target.opening else None
        if b.relation == "in" and opening is not None and opening.joint:
            if state.joints.get((opening.object, opening.joint), 0.0) < OPENING_FRACTION:
                return f"place into {target.name if target else '?'} while its {opening.name} is closed"
    if skill == "release" and state.holding is None:
        return ""
    return ""


def effects(b: Binding, state: SymbolicState) -> list[SymbolicState]:
    """The states after each atomic effect of the step (empty: no effect)."""
    skill, obj, out = b.node.skill, b.obj, []
    s = state.copy()
    if skill in HAND_SKILLS and s.holding is not None and not s.holds_free_object():
        if obj is None or s.holding != (obj.object, obj.link):
            s.holding = None  # a held part is let go first
    if skill in ("pick_up", "grasp") and obj is not None:
        s.holding = (obj.object, None if obj.movable or obj.link is None else obj.link)
        s.placed.pop(obj.object, None)
        out.append(s)
    elif skill == "release":
        s.holding = None
        out.append(s)
    elif skill == "place" and obj is not None and b.target is not None:
        s.placed[obj.object] = (b.relation, b.target.object)
        s.holding = None
        out.append(s)
    elif skill in JOINT_SKILLS and obj is not None and obj.joint:
        if obj.grasp and skill != "press":
            s.holding = (obj.object, obj.link)
            out.append(s)
            s = s.copy()
        s.joints[(obj.object, obj.joint)] = obj.open_to if b.direction == "open" else obj.close_to
        out.append(s)
    return out


def run_symbolic(plan: TaskPlan, nodes: list[PlanNode]) -> Completion:
    """Execute a plan on the precondition/effect table; milestones after every effect."""
    state = initial_state(plan)
    tracker = DagTracker(plan.milestones)
    built = {m.name: m.predicate.build() for m in plan.milestones}

    def read(s: SymbolicState) -> dict[str, bool]:
        return {name: symbolic_holds(p, s) for name, p in built.items()}

    tracker.observe(read(state), 0)
    tick, records = 0, []
    for i, node in enumerate(nodes):
        b = bind_step(plan, node)
        record = StepRecord(index=i, text=node.text or str(node), skill=node.skill)
        records.append(record)
        if b.label:
            record.ok, record.label, record.reason = False, b.label, b.reason
            continue
        why = precondition(plan, b, state)
        if why:
            record.ok, record.label, record.reason = False, "physics_violation", why
            continue
        before = state.key()
        for new in effects(b, state):
            tick += 1
            state = new
            record.reached += tracker.observe(read(state), tick)
        if state.key() == before and not record.reached and node.skill != "move_to":
            record.label, record.reason = "redundant_step", "changed nothing"
    return tracker.completion("symbolic", records)
