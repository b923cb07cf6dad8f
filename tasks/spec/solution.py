"""Solutions: a scene plus ordered subtask supervision (RoboGen / VERGSA).

A proposer (an LLM, or the template baseline) turns a task into a
:class:`Solution`: the scene configuration followed by subtasks, each either a
``primitive`` block (motion-planning calls such as
``rgbs, final_state = grasp_object_link(self, "Cabinet", "link_1")`` then
``success = check_grasped(self, "Cabinet", "link_1")``) or a ``reward`` block
(``def _compute_reward(self): ... return reward, success``) learned with SAC.
Validation errors give the field's path, e.g.
``solution.subtasks[2].kind must be 'primitive' or 'reward', got 'rl'``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from simjudge.envs.errors import SimjudgeError
from simjudge.envs.scene import SceneConfig, _format_validation_error

from .goal import TaskGoal

__all__ = [
    "ACTION_SPACES",
    "COMPOSED_SOLUTIONS_DIR",
    "REFERENCE_SOLUTIONS_DIR",
    "SUBTASK_KINDS",
    "Solution",
    "SolutionError",
    "Subtask",
    "load_solution",
]

SUBTASK_KINDS: tuple[str, ...] = ("primitive", "reward")
ACTION_SPACES: tuple[str, ...] = ("delta-translation", "normalized-direct-translation")
REFERENCE_SOLUTIONS_DIR = Path(__file__).resolve().parent.parent / "library" / "solutions"
"""Hand-written reference solutions of built-in tasks, ``<EnvId>.yaml``."""
COMPOSED_SOLUTIONS_DIR = REFERENCE_SOLUTIONS_DIR.parent / "composed" / "solutions"
"""Reference solutions of the composed (long-horizon) built-in tasks."""


class _ReadableDumper(yaml.SafeDumper):
    """Writes multi-line strings (code) as literal blocks so solution files read like code."""


def _str_representer(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_ReadableDumper.add_representer(str, _str_representer)


class SolutionError(SimjudgeError, ValueError):
    """A solution is malformed; the message gives each field path and the fix."""


class Subtask(BaseModel):
    """One step of a solution.

    Attributes:
        name: Short imperative name (``grasp the drawer handle``).
        kind: ``primitive`` (motion planning) or ``reward`` (RL with SAC).
        code: The primitive block or the reward function source.
        action_space: Translation mode for ``reward`` subtasks.
        description: Optional free text.
        budget_steps: Env-step budget for ``reward`` subtasks (SAC); None = default.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    kind: str
    code: str = Field(min_length=1)
    action_space: str = "delta-translation"
    description: str = ""
    budget_steps: int | None = Field(default=None, ge=1)

    @field_validator("kind")
    @classmethod
    def _kind(cls, value: str) -> str:
        if value not in SUBTASK_KINDS:
            raise ValueError(f"must be 'primitive' or 'reward', got {value!r}")
        return value

    @field_validator("action_space")
    @classmethod
    def _action_space(cls, value: str) -> str:
        if value not in ACTION_SPACES:
            raise ValueError(f"must be one of {list(ACTION_SPACES)}, got {value!r}")
        return value


class Solution(BaseModel):
    """A proposed way to do a task.

    Attributes:
        task: Task name the solution is for.
        description: Task description.
        scene: Scene configuration.
        subtasks: Ordered subtasks; each starts from the previous one's end state.
        provenance: Where it came from (proposer, model, temperature, seed, exemplars).
        goal: The goal the run is verified against, written in the goal language
            (:class:`~simjudge.tasks.spec.TaskGoal`, docs/goals.md): it wins over any goal
            derived from the words or the built-in task's; ``execute --goal`` wins over it.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    task: str
    description: str = ""
    scene: SceneConfig
    subtasks: tuple[Subtask, ...] = Field(min_length=1)
    provenance: dict[str, Any] = Field(default_factory=dict)
    goal: TaskGoal | None = None

    @classmethod
    def parse(cls, data: dict[str, Any]) -> Solution:
        """Validate a dict; raise :class:`SolutionError` naming every bad field."""
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise SolutionError(_format_validation_error(exc, "solution")) from None

    @classmethod
    def from_yaml(cls, source: str | Path) -> Solution:
        """Load from a YAML file or YAML text."""
        from .bounded import load_yaml, read_text_bounded

        is_file = isinstance(source, Path) or (
            "\n" not in str(source) and Path(str(source)).exists())
        text = read_text_bounded(source) if is_file else str(source)
        data = load_yaml(text, str(source) if is_file else "solution YAML text")
        if not isinstance(data, dict):
            raise SolutionError("a solution YAML must be a mapping with scene and subtasks")
        return cls.parse(data)

    def to_yaml(self) -> str:
        """YAML text that :meth:`from_yaml` reads back."""
        data = self.model_dump(mode="json", by_alias=True)
        if data.get("goal") is None:  # a solution without a written goal reads as before
            data.pop("goal", None)
        return yaml.dump(data, Dumper=_ReadableDumper, sort_keys=False, width=100)

    def prefix(self, k: int) -> Solution:
        """The solution truncated to its first ``k`` subtasks (VERGSA prefixes)."""
        if not 1 <= k <= len(self.subtasks):
            raise ValueError(f"prefix length must be in [1, {len(self.subtasks)}], got {k}")
        return self.model_copy(update={"subtasks": self.subtasks[:k]})


def load_solution(source: str | Path) -> Solution:
    """A solution from a YAML path, or the reference solution of a built-in task id.

    Raises:
        FileNotFoundError: Neither a file nor a task with a reference solution; the
            message lists the reference solutions there are. A folder (e.g. a RoboGen
            task folder, which the pipelines convert) is not a solution file.
    """
    path = Path(source)
    if path.is_dir():
        raise FileNotFoundError(
            f"{source!r} is a folder, not a solution YAML; a RoboGen task folder is accepted "
            "by `simjudge execute` and `simjudge import-robogen` "
            "(simjudge.pipelines.robogen.load_solution_or_robogen)"
        )
    if path.exists():
        return Solution.from_yaml(path)
    name = f"{str(source).removeprefix('simjudge/')}.yaml"
    for folder in (REFERENCE_SOLUTIONS_DIR, COMPOSED_SOLUTIONS_DIR):
        if (folder / name).exists():
            return Solution.from_yaml(folder / name)
    known = sorted(p.stem for d in (REFERENCE_SOLUTIONS_DIR, COMPOSED_SOLUTIONS_DIR)
                   for p in d.glob("*.yaml"))
    raise FileNotFoundError(
        f"{source!r} is neither a solution YAML file nor a task with a reference solution "
        f"(reference solutions: {known})"
    )
