"""Ground-truth plans and milestone DAGs, as data in each task's YAML.

Every built-in task carries two sections next to its goal::

    plan:
      task_summary: Pull the bottom drawer of the storage cabinet open.
      objects:                       # the names a plan may use, bound to the scene
      - {name: drawer, object: StorageFurniture, link: link_1, joint: joint_0,
         aliases: [bottom drawer, drawer handle], category: drawer, part_of: cabinet}
      - {name: cabinet, object: StorageFurniture, aliases: [storage cabinet]}
      steps:                         # the reference plan; alternatives count as the same node
      - {step: grasp(drawer), achieves: [drawer grasped]}
      - {step: open(drawer), alternatives: ['pull(drawer, open)'], achieves: [drawer opened]}
      - {step: release(drawer)}
    milestones:                      # critical object state changes; after = DAG edges
    - {name: drawer grasped, predicate: {kind: holding, object: StorageFurniture}}
    - name: drawer opened
      predicate: {kind: joint_open, object: StorageFurniture, joint: joint_0, fraction: 0.6}
      after: [drawer grasped]

:func:`task_plan` validates both (names, DAG, parseable steps) into a :class:`TaskPlan`.
Milestone predicates are those of :mod:`simjudge.judges.predicates`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from simjudge.envs.errors import SimjudgeError
from simjudge.judges.milestones import Milestone, MilestoneJudge
from simjudge.judges.predicates import (
    Holding,
    Inside,
    JointClosed,
    JointOpen,
    On,
    Predicate,
    Pressed,
)
from simjudge.tasks.spec import COMPOSED_DIR, TaskSpec, builtin_ids, load_task
from simjudge.tasks.spec import composed_ids as _composed_ids

from .schema import PlanError, PlanNode, parse_node

__all__ = [
    "COMPOSED_DIR",
    "GroundTruthPlan",
    "GroundTruthStep",
    "MilestonePredicate",
    "MilestoneSpec",
    "PlanObject",
    "TaskPlan",
    "TaskPlanError",
    "composed_ids",
    "load_plan_task",
    "plan_task_ids",
    "task_plan",
]



class TaskPlanError(SimjudgeError, ValueError):
    """A task's ``plan:`` / ``milestones:`` section is invalid; the message names the fix."""


class _Data(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PlanObject(_Data):
    """A name a plan may use for something in the scene.

    Attributes:
        name: The canonical name (``drawer``).
        object: Scene object name (``StorageFurniture``).
        link: The link a skill touches (handle, button), if a part.
        joint: The joint that moves the part, if any.
        aliases: Other names meaning exactly this (score 1).
        category: Kind of thing (``door``, ``button``); another object of the same category
            scores 0.5.
        part_of: Name of the plan object this is a part of (part/whole scores 0.5).
        grasp: Joint parts: actuated through a suction grasp (False: pushed, e.g. buttons).
        movable: A free object that can be picked up and placed.
        open_to: Range fraction the joint skills drive the joint to when opening.
        close_to: Range fraction the joint skills drive the joint to when closing.
        opening: For containers: ``"<plan object>"`` whose joint must be open to put
            things in (a box's lid).
    """

    name: str = Field(min_length=1)
    object: str = Field(min_length=1)
    link: str | None = None
    joint: str | None = None
    aliases: tuple[str, ...] = ()
    category: str = ""
    part_of: str | None = None
    grasp: bool = True
    movable: bool = False
    open_to: float = Field(default=0.9, ge=0.0, le=1.0)
    close_to: float = Field(default=0.05, ge=0.0, le=1.0)
    opening: str | None = None

    @property
    def scene_id(self) -> str:
        """Strict id: ``Object/link`` or ``Object``."""
        return f"{self.object}/{self.link}" if self.link else self.object


class GroundTruthStep(_Data):
    """One reference step.

    Attributes:
        step: The node, ``skill(object[, parameter])``.
        alternatives: Other writings that count as this node (``pull(drawer, open)``).
        achieves: Milestones this step is meant to reach (for the next-step frontier).
    """

    step: str
    alternatives: tuple[str, ...] = ()
    achieves: tuple[str, ...] = ()

    @field_validator("step", "alternatives")
    @classmethod
    def _parseable(cls, value: Any) -> Any:
        for text in (value,) if isinstance(value, str) else value:
            parse_node(text)
        return value

    def nodes(self) -> list[PlanNode]:
        """The step and its alternatives, parsed."""
        return [parse_node(t) for t in (self.step, *self.alternatives)]


class GroundTruthPlan(_Data):
    """A task's reference plan and the names it binds.

    Attributes:
        task_summary: One sentence.
        objects: The plan objects.
        steps: The reference steps, in order.
    """

    task_summary: str
    objects: tuple[PlanObject, ...] = Field(min_length=1)
    steps: tuple[GroundTruthStep, ...] = Field(min_length=1)

    @field_validator("steps", mode="before")
    @classmethod
    def _plain_steps(cls, value: Any) -> Any:
        if isinstance(value, list | tuple):
            return [{"step": v} if isinstance(v, str) else v for v in value]
        return value


class MilestonePredicate(_Data):
    """A milestone's predicate (:mod:`simjudge.judges.predicates`) as data.

    Attributes:
        kind: ``holding``, ``joint_open``, ``joint_closed``, ``pressed``, ``on``, ``inside``.
        object: Scene object (for ``on``/``inside``: the object put somewhere).
        link: For ``holding``: the link that must be held (None: any link).
        joint: For joint kinds: the joint.
        fraction: For joint kinds: the threshold as a fraction of the joint range.
        target: For ``on``/``inside``: the object it must be on / in.
    """

    kind: Literal["holding", "joint_open", "joint_closed", "pressed", "on", "inside"]
    object: str
    link: str | None = None
    joint: str | None = None
    fraction: float | None = Field(default=None, ge=0.0, le=1.0)
    target: str | None = None

    def build(self) -> Predicate:
        """The predicate object."""
        if self.kind == "holding":
            return Holding(self.object, self.link)
        if self.kind in ("on", "inside"):
            if not self.target:
                raise ValueError(f"a {self.kind!r} milestone needs target: <scene object>")
            return (On if self.kind == "on" else Inside)(self.object, self.target)
        if not self.joint or self.fraction is None:
            raise ValueError(f"a {self.kind!r} milestone needs joint: and fraction:")
        cls = {"joint_open": JointOpen, "joint_closed": JointClosed, "pressed": Pressed}[self.kind]
        return cls(self.object, self.joint, self.fraction)


class MilestoneSpec(_Data):
    """A critical milestone: a predicate and the milestones that must come first.

    Attributes:
        name: Unique name (``drawer opened``).
        predicate: When it is reached.
        after: DAG edges: names of earlier milestones.
    """

    name: str = Field(min_length=1)
    predicate: MilestonePredicate
    after: tuple[str, ...] = ()

    def to_milestone(self) -> Milestone:
        """The :class:`~simjudge.judges.milestones.Milestone`."""
        return Milestone(self.name, self.predicate.build(), self.after)


@dataclass(frozen=True)
class TaskPlan:
    """A task with its validated reference plan and milestone DAG.

    Attributes:
        spec: The task.
        plan: The reference plan.
        milestones: The milestones, in topological order.
    """

    spec: TaskSpec
    plan: GroundTruthPlan
    milestones: tuple[MilestoneSpec, ...]

    @property
    def env_id(self) -> str:
        """The task's id."""
        return self.spec.env_id

    def reference_steps(self) -> list[str]:
        """The reference plan's steps (first writings)."""
        return [s.step for s in self.plan.steps]

    def object_named(self, name: str) -> PlanObject | None:
        """The plan object with this canonical name."""
        return next((o for o in self.plan.objects if o.name == name), None)

    def milestone_judge(self) -> MilestoneJudge:
        """A fresh judge over the milestones (strict DAG order)."""
        return MilestoneJudge([m.to_milestone() for m in self.milestones])

    def describe_objects(self) -> list[str]:
        """One line per plan object, for prompts."""
        lines = []
        for o in self.plan.objects:
            extra = [f"part of {o.part_of}"] if o.part_of else []
            extra += ["can be picked up"] if o.movable else []
            extra += [f"moves on {o.joint}"] if o.joint else []
            lines.append(f"- {o.name} (id {o.scene_id}{'; ' if extra else ''}{'; '.join(extra)})")
        return lines


def _check(spec: TaskSpec, plan: GroundTruthPlan, milestones: tuple[MilestoneSpec, ...]) -> None:
    scene = {o.name for o in spec.scene.objects}
    names = [o.name for o in plan.objects]
    if len(set(names)) != len(names):
        raise ValueError(f"plan object names repeat: {sorted(n for n in set(names) if names.count(n) > 1)}")
    for o in plan.objects:
        if o.object not in scene:
            raise ValueError(f"plan object {o.name!r} binds {o.object!r}, not in the scene {sorted(scene)}")
        for ref in (o.part_of, o.opening):
            if ref and ref not in names:
                raise ValueError(f"plan object {o.name!r} refers to {ref!r}; objects are {names}")
    known = {m.name for m in milestones}
    for m in milestones:
        m.predicate.build()
        for obj in (m.predicate.object, m.predicate.target):
            if obj and obj not in scene:
                raise ValueError(f"milestone {m.name!r} names {obj!r}, not in the scene {sorted(scene)}")
    for s in plan.steps:
        missing = [a for a in s.achieves if a not in known]
        if missing:
            raise ValueError(f"step {s.step!r} achieves unknown milestones {missing}; known {sorted(known)}")
    MilestoneJudge([m.to_milestone() for m in milestones])  # unique names, DAG


def task_plan(spec: TaskSpec) -> TaskPlan:
    """The validated reference plan and milestones of a task.

    Raises:
        TaskPlanError: The task has no ``plan:``/``milestones:`` section, or one is invalid
            (the message names the field and the fix).
    """
    if spec.plan is None or not spec.milestones:
        raise TaskPlanError(f"task {spec.env_id} has no plan: and milestones: sections; add "
                            "them to its YAML (see simjudge.pipelines.plans.groundtruth)")
    try:
        plan = GroundTruthPlan.model_validate(spec.plan)
        milestones = tuple(MilestoneSpec.model_validate(m) for m in spec.milestones)
        _check(spec, plan, milestones)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
        raise TaskPlanError(f"{spec.env_id}: invalid plan/milestones: {problems}") from None
    except (ValueError, PlanError) as exc:
        raise TaskPlanError(f"{spec.env_id}: invalid plan/milestones: {exc}") from None
    judge = MilestoneJudge([m.to_milestone() for m in milestones])
    ordered = tuple(sorted(milestones, key=lambda m: judge.order.index(m.name)))
    return TaskPlan(spec=spec, plan=plan, milestones=ordered)


def composed_ids() -> list[str]:
    """Env ids of the composed tasks (built-in, in ``tasks/library/composed/``)."""
    return _composed_ids()


def plan_task_ids() -> list[str]:
    """Every task plan evaluation knows: the built-in library, then the composed tasks."""
    return builtin_ids()


def load_plan_task(name: str) -> TaskSpec:
    """A task by built-in id or name, composed-task id, or path of a task YAML file.

    Raises:
        TaskSpecError: Unknown name (the message lists the built-in and composed ids).
    """
    if name.endswith((".yaml", ".yml")) and Path(name).is_file():
        return TaskSpec.from_yaml(name)
    return load_task(name)
