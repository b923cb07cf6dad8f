"""Task specifications and the built-in task library.

A :class:`TaskSpec` is what a user (or an LLM proposer) starts from: a name, a
description, the object and its relevant links/joints, the scene, and — for
built-in tasks — a reference goal (success predicate and dense reward). The
library lives in ``tasks/library/<EnvId>.yaml``; each file is registered as the
Gymnasium id ``simjudge/<EnvId>``.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from simjudge.envs.errors import SimjudgeError
from simjudge.envs.goals import GoalSpec
from simjudge.envs.randomization import (
    Randomization,
    RandomizationError,
    default_randomization,
    merge_randomization,
)
from simjudge.envs.scene import SceneConfig, SceneConfigError, _format_validation_error
from simjudge.tasks import registration

__all__ = [
    "COMPOSED_DIR",
    "LIBRARY_DIR",
    "TaskSpec",
    "TaskSpecError",
    "builtin_ids",
    "composed_ids",
    "library_ids",
    "load_composed",
    "load_library",
    "load_task",
    "task_randomization",
]

LIBRARY_DIR = registration.LIBRARY_DIR
"""Folder of the built-in (single-stage) task YAML files."""

COMPOSED_DIR = registration.COMPOSED_DIR
"""Folder of the composed (long-horizon, 2–4 stage) built-in tasks: goal ``sequence``
(ordered stages) or ``all`` (unordered), with plans and milestone DAGs as in the library."""


class TaskSpecError(SimjudgeError, ValueError):
    """A task specification is invalid or unknown; the message says how to fix it."""


class TaskSpec(BaseModel):
    """A manipulation task.

    **Task Description** ``description``; **Randomizations** the per-seed world
    variation (``randomization``: placements, articulation start, robot posture, camera
    and light) plus whatever the scene leaves to the seed (free placements, ``random``
    joint values); **Success Conditions** the ``goal``.

    Attributes:
        env_id: Registered id without namespace, e.g. ``OpenDrawer-v0``.
        name: Human name, e.g. ``Open Drawer``.
        description: One or two sentences of what to do.
        object: Scene name of the main articulated object.
        asset: Catalogue id of the main object.
        relevant_links: Links the task is about (handles, doors ...).
        relevant_joints: Joints the task is about.
        scene: The scene.
        goal: Reference success predicate / progress / dense reward.
        horizon: Episode length in env steps.
        translation_mode: Action translation mode used by the reference solution.
        tags: Free labels (``open``, ``close``, ``rotate``, ``press``, ``pick-place``).
        plan: Reference plan as data (validated by ``simjudge.pipelines.plans.task_plan``).
        milestones: Critical milestones (a DAG) as data, read with ``plan``.
        randomization: The task file's ``randomization:`` section: None (absent) = the
            default ranges (:func:`~simjudge.envs.randomization.default_randomization`),
            ``"none"`` = the fixed start, or a mapping whose sections replace the default's
            (see :meth:`world_randomization`).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    env_id: str = Field(pattern=r"^[A-Za-z0-9]+-v\d+$")
    name: str
    description: str
    object: str
    asset: str
    relevant_links: tuple[str, ...] = ()
    relevant_joints: tuple[str, ...] = ()
    scene: SceneConfig
    goal: GoalSpec | None = None
    horizon: int = Field(default=100, ge=1)
    translation_mode: str = "delta-translation"
    tags: tuple[str, ...] = ()
    plan: dict[str, Any] | None = None
    milestones: tuple[dict[str, Any], ...] = ()
    randomization: Randomization | str | None = None

    @model_validator(mode="before")
    @classmethod
    def _written_goal(cls, data: Any) -> Any:
        """Compile a ``goal:`` written in the goal language to its env goal.

        The goal language is what ``--goal`` and solution files take (``targets: [...]``);
        stated starts must hold for the scene's ``joint_init``.
        """
        if not isinstance(data, dict) or not isinstance(data.get("goal"), dict):
            return data
        if "targets" not in data["goal"]:
            return data  # the env-goal form (kind: joint / place / all / sequence)
        from .goal import TaskGoal

        written = TaskGoal.model_validate({"task": data.get("name", ""), **data["goal"]})
        if written.unchanged:
            raise ValueError(
                "goal: unchanged parts are judged on a run's recorded states, which a task "
                "file's env goal does not see; put the goal with its unchanged parts in the "
                "solution file (goal:) or give it with --goal"
            )
        inits = {o.get("name"): o.get("joint_init") or {}
                 for o in (data.get("scene") or {}).get("objects", []) if isinstance(o, dict)}
        for start in written.starts:
            value = inits.get(start.object, {}).get(start.joint)
            if not isinstance(value, int | float) or not start.holds(float(value)):
                raise ValueError(
                    f"goal: the stated start {start.object}/{start.joint} in "
                    f"[{start.low}, {start.high}] is not where the scene's joint_init puts it "
                    f"({value!r}); set joint_init inside it"
                )
        return {**data, "goal": written.env_goal()}

    @field_validator("randomization", mode="before")
    @classmethod
    def _randomization(cls, value: Any) -> Any:
        if value is None or isinstance(value, Randomization):
            return value
        if isinstance(value, str):
            if value.strip().lower() != "none":
                raise ValueError(
                    f"randomization: {value!r} is not a section; write `randomization: none` for "
                    "the fixed start, or a mapping with objects / joints / robot_qpos / camera"
                )
            return "none"
        try:
            return Randomization.parse(value)
        except RandomizationError as exc:
            raise ValueError(str(exc)) from None

    @model_validator(mode="after")
    def _randomization_names(self) -> TaskSpec:
        if isinstance(self.randomization, Randomization):
            try:
                self.randomization.check_scene(self.scene)
            except RandomizationError as exc:
                raise ValueError(str(exc)) from None
        return self

    def world_randomization(self) -> Randomization | None:
        """The ranges this task's env varies the world by (None = the fixed start).

        The default ranges for this scene and goal, with the sections the task file gives
        replacing the default's; ``randomization: none`` gives None.

        The section's object names were checked against the scene when the task was read.
        """
        if self.randomization == "none":
            return None
        return merge_randomization(default_randomization(self.scene, self.goal), self.randomization)

    @classmethod
    def parse(cls, data: dict[str, Any], source: str = "task") -> TaskSpec:
        """Validate a dict; raise :class:`TaskSpecError` naming each bad field."""
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise TaskSpecError(_format_validation_error(exc, source)) from None
        except SceneConfigError as exc:  # pragma: no cover - nested validation
            raise TaskSpecError(str(exc)) from None

    @classmethod
    def from_yaml(cls, path: str | Path) -> TaskSpec:
        """Load a task YAML file."""
        from .bounded import read_yaml

        path = Path(path)
        return cls.parse(read_yaml(path), source=path.name)

    def to_yaml(self) -> str:
        """YAML text that :meth:`from_yaml` reads back."""
        return yaml.safe_dump(self.model_dump(mode="json", by_alias=True), sort_keys=False)

    def env_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for :class:`~simjudge.envs.SimEnv` that this task fixes."""
        return {
            "scene": self.scene,
            "goal": self.goal,
            "horizon": self.horizon,
            "translation_mode": self.translation_mode,
            "task_name": self.name,
            "randomization": self.world_randomization(),
        }


library_ids = registration.library_ids
composed_ids = registration.composed_ids
builtin_ids = registration.builtin_ids


@functools.cache
def _load_by_id(env_id: str) -> TaskSpec:
    path = registration.task_file(env_id)
    spec = TaskSpec.from_yaml(path)
    if spec.env_id != env_id:
        raise TaskSpecError(f"{path.name} declares env_id {spec.env_id!r}; rename one to match")
    return spec


def load_task(name: str) -> TaskSpec:
    """A built-in task by env id or by human name.

    The env id may come with or without the ``simjudge/`` namespace (``OpenDrawer-v0``); the
    human name is like ``Open Drawer``.
    """
    key = name.removeprefix("simjudge/")
    ids = builtin_ids()
    if key in ids:
        return _load_by_id(key)
    for env_id in ids:
        spec = _load_by_id(env_id)
        if spec.name.lower() == key.lower():
            return spec
    import difflib

    close = difflib.get_close_matches(key, ids, n=3)
    raise TaskSpecError(
        f"unknown task {name!r}; built-in tasks are {ids}"
        + (f". Did you mean {close}?" if close else "")
    )


def task_randomization(task: str, scene: SceneConfig | dict[str, Any]) -> Randomization | None:
    """A built-in task's world variation for ``scene`` if it is the task's scene, else None.

    For envs built from a solution's or a skill's scene (the executor, skill replays): the
    ranges name the task's objects and joints, so they apply to the task's own scene only;
    with ``SimEnv(scene_seed=seed)`` the world is the one ``reset(seed=seed)`` of the
    task's env draws.
    """
    try:
        spec = load_task(task)
    except TaskSpecError:
        return None
    if isinstance(scene, dict):
        try:
            scene = SceneConfig.parse(scene)
        except SceneConfigError:
            return None
    return spec.world_randomization() if scene == spec.scene else None


def load_library() -> list[TaskSpec]:
    """All built-in single-stage tasks, sorted by env id."""
    return [_load_by_id(env_id) for env_id in library_ids()]


def load_composed() -> list[TaskSpec]:
    """All built-in composed tasks, sorted by env id."""
    return [_load_by_id(env_id) for env_id in composed_ids()]
