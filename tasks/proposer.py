"""The proposer protocol and the task request every proposer starts from.

A proposer turns a task into candidate :class:`~simjudge.tasks.spec.Solution`
objects: ``propose(task, exemplars, n) -> list[Solution]`` (DESIGN.md). Backends:
an LLM (:mod:`simjudge.tasks.llm_proposer`) and the deterministic
:class:`~simjudge.tasks.template_proposer.TemplateProposer` baseline.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from simjudge.envs.articulation import ArticulationTree
from simjudge.envs.catalogue import default_catalogue

from .spec import Solution, TaskSpec, TaskSpecError, library_ids, load_task

__all__ = ["Exemplar", "Proposer", "TaskRequest"]


@dataclass(frozen=True)
class TaskRequest:
    """What a proposer is asked to solve.

    Attributes:
        name: Task name (``Open Drawer``).
        description: One or two sentences.
        object_name: Scene name of the main object.
        asset: Catalogue id of the main object.
        tree: Its articulation tree (None for rigid objects).
        relevant_links: Links the task is about, if known.
        relevant_joints: Joints the task is about, if known.
        builtin: The built-in task spec when the request names one (its goal judges
            the final state); None for new tasks.
    """

    name: str
    description: str
    object_name: str
    asset: str
    tree: ArticulationTree | None
    relevant_links: tuple[str, ...] = ()
    relevant_joints: tuple[str, ...] = ()
    builtin: TaskSpec | None = field(default=None, compare=False)

    @classmethod
    def from_spec(cls, spec: TaskSpec) -> TaskRequest:
        """A request for a built-in task."""
        entry = default_catalogue().get(spec.asset)
        return cls(
            name=spec.name,
            description=spec.description,
            object_name=spec.object,
            asset=spec.asset,
            tree=entry.tree,
            relevant_links=tuple(spec.relevant_links),
            relevant_joints=tuple(spec.relevant_joints),
            builtin=spec,
        )

    @classmethod
    def resolve(cls, name: str, description: str = "", asset: str | None = None) -> TaskRequest:
        """A request by task name: a built-in task, or a new task on ``asset``.

        Raises:
            TaskSpecError: Not a built-in task and no ``asset`` given.
        """
        try:
            spec = load_task(name)
        except TaskSpecError:
            spec = None
        if spec is not None and asset in (None, spec.asset):
            request = cls.from_spec(spec)
            if description:
                request = cls(**{**request.__dict__, "description": description})
            return request
        if asset is None:
            raise TaskSpecError(
                f"{name!r} is not a built-in task; give the object to use with --object ASSET "
                f"(see `simjudge assets list`). Built-in tasks: {library_ids()}"
            )
        entry = default_catalogue().get(asset)
        return cls(
            name=name,
            description=description or name,
            object_name=entry.category,
            asset=entry.asset_id,
            tree=entry.tree,
        )

    def prompt_text(self) -> str:
        """The task as shown to a proposer: name, description, tree, relevant parts."""
        lines = [f"Task name: {self.name}", f"Description: {self.description}"]
        lines.append(f"Object: {self.object_name} (asset {self.asset})")
        if self.tree is not None:
            lines.append(self.tree.to_text().replace(self.tree.category, self.object_name, 1))
        if self.relevant_links:
            lines.append(f"Relevant links: {', '.join(self.relevant_links)}")
        if self.relevant_joints:
            lines.append(f"Relevant joints: {', '.join(self.relevant_joints)}")
        return "\n".join(lines)


@dataclass(frozen=True)
class Exemplar:
    """A verified solution of a similar task, used as an in-context example.

    Attributes:
        task: Task name.
        description: Task description.
        solution: The verified solution.
        similarity: Cosine similarity to the requested task (1 = same).
    """

    task: str
    description: str
    solution: Solution
    similarity: float = 0.0


@runtime_checkable
class Proposer(Protocol):
    """Turns a task into candidate solutions."""

    name: str

    def propose(
        self,
        task: TaskRequest,
        exemplars: Sequence[Exemplar] = (),
        n: int = 1,
        seed: int = 0,
        feedback: str = "",
    ) -> list[Solution]:
        """Up to ``n`` candidate solutions (fewer if some could not be produced).

        ``feedback`` is what independent verification said about an earlier round's
        candidates (repair rounds); a proposer uses it to propose better ones.
        """
