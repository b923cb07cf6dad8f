"""The proposer protocol and the task request every proposer starts from.

A proposer turns a task into candidate :class:`~simjudge.tasks.spec.Solution`
objects: ``propose(task, exemplars, n) -> list[Solution]`` (docs/design.md). Backends:
an LLM (:mod:`simjudge.pipelines.llm_proposer`) and the deterministic
:class:`~simjudge.pipelines.template_proposer.TemplateProposer` baseline.
"""

from __future__ import annotations

import difflib
import functools
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from simjudge.envs.articulation import ArticulationTree
from simjudge.envs.catalogue import AssetEntry, default_catalogue
from simjudge.tasks.spec import (
    GoalDerivation,
    Solution,
    TaskGoal,
    TaskSpec,
    TaskSpecError,
    derive_goal,
    library_ids,
    load_task,
)

__all__ = ["Exemplar", "Proposer", "TaskRequest"]

_log = logging.getLogger(__name__)


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
        note: Why the request is not what its name alone would give (a built-in
            task's name with the user's own description or object); empty otherwise.
    """

    name: str
    description: str
    object_name: str
    asset: str
    tree: ArticulationTree | None
    relevant_links: tuple[str, ...] = ()
    relevant_joints: tuple[str, ...] = ()
    builtin: TaskSpec | None = field(default=None, compare=False)
    note: str = field(default="", compare=False)

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

        What the user gives wins. A built-in task's name alone (or with its own
        description or object) is that built-in task, scene and reference goal included.
        With a description or an object of its own, it is a new task under that name:
        the given description (else the name) and object (else the built-in's), a scene
        proposed for it and a goal derived from its name and description — nothing is
        inherited from the built-in; :attr:`note` says so, and it is logged as a warning.

        Args:
            name: A built-in task (``Open Drawer``, ``OpenDrawer-v0``) or a new task's name.
            description: What to do; empty for the built-in's description (or the name).
            asset: The main object: an asset id (``Laptop-0``) or a category (``Laptop``:
                its instance 0); None for the built-in's object.

        Returns:
            The request.

        Raises:
            TaskSpecError: Not a built-in task and no ``asset`` given, or ``asset`` is not
                in the catalogue (the message lists close matches).
        """
        try:
            spec = load_task(name)
        except TaskSpecError:
            spec = None
        entry = None if asset is None else _catalogue_entry(asset)
        if spec is not None:
            same_asset = entry is None or entry.asset_id == spec.asset
            if same_asset and (not description or _same_text(description, spec.description)):
                return cls.from_spec(spec)
            entry = entry or default_catalogue().get(spec.asset)
            if name.removeprefix("simjudge/") == spec.env_id:
                name = spec.name
            given = [f"object {entry.asset_id}"] if not same_asset else []
            if description and not _same_text(description, spec.description):
                given.insert(0, "description")
            note = (f"{name!r} is the built-in task {spec.env_id}, but a different "
                    f"{' and '.join(given)} was given: solving a new task {name!r} on "
                    f"{entry.asset_id} as given (goal derived from its name and description; "
                    "the built-in's scene and reference goal are not used)")
            _log.warning(note)
            return cls(name=name, description=description or name, object_name=entry.category,
                       asset=entry.asset_id, tree=entry.tree, note=note)
        if entry is None:
            raise TaskSpecError(
                f"{name!r} is not a built-in task; give the object to use with --object ASSET "
                f"(see `simjudge assets list`). Built-in tasks: {library_ids()}"
            )
        return cls(
            name=name,
            description=description or name,
            object_name=entry.category,
            asset=entry.asset_id,
            tree=entry.tree,
        )

    @property
    def goal_derivation(self) -> GoalDerivation:
        """How the task's independent goal is derived (never from a proposal).

        A built-in task's reference goal, else the goal parser's reading of the name and
        description against the tree (no goal, with the ambiguities, when it cannot tell).
        """
        if self.builtin is not None and self.builtin.goal is not None:
            goal = TaskGoal.from_reference(self.builtin)
            return GoalDerivation(goal, [f"the reference goal of {self.builtin.env_id}"], [])
        return _derive(self.name, self.description, self.asset, self.object_name)

    @property
    def goal(self) -> TaskGoal | None:
        """The task's independent goal — what its final state is judged by — or None."""
        return self.goal_derivation.goal

    def prompt_text(self) -> str:
        """The task as shown to a proposer.

        Name, description, tree, relevant parts, and the goal it will be judged by.
        """
        lines = [f"Task name: {self.name}", f"Description: {self.description}"]
        lines.append(f"Object: {self.object_name} (asset {self.asset})")
        if self.tree is not None:
            lines.append(self.tree.to_text().replace(self.tree.category, self.object_name, 1))
        if self.relevant_links:
            lines.append(f"Relevant links: {', '.join(self.relevant_links)}")
        if self.relevant_joints:
            lines.append(f"Relevant joints: {', '.join(self.relevant_joints)}")
        goal = self.goal
        if goal is not None:
            lines.append("Success is checked independently of your code, on the final state, "
                         "against this goal (joint positions as fractions of the joint's range, "
                         "0 = lower limit = closed):\n" + goal.describe())
        return "\n".join(lines)


def _catalogue_entry(asset: str) -> AssetEntry:
    """The catalogue entry of an asset id or a category name (its instance 0).

    Raises:
        TaskSpecError: Neither an asset id nor a category; the message lists close matches.
    """
    catalogue = default_catalogue()
    if asset in catalogue:
        return catalogue.get(asset)
    categories = catalogue.categories()
    by_case = {name.lower(): name for name in [*categories, *(e.asset_id for e in catalogue)]}
    found = by_case.get(asset.lower())
    if found in categories:
        return catalogue.by_category(found)[0]
    if found is not None:
        return catalogue.get(found)
    close = difflib.get_close_matches(asset, categories, n=3, cutoff=0.5)
    ids = [e.asset_id for e in catalogue if e.category not in close]
    close += difflib.get_close_matches(asset, ids, n=3, cutoff=0.6)
    word = asset.lower()  # a part's name ("drawer") -> the categories that have one
    for category in categories:
        tree = catalogue.by_category(category)[0].tree
        if tree is not None and category not in close and any(
            word in link.semantic.split() for link in tree.links
        ):
            close.append(category)
    hint = f"did you mean {', '.join(close)}? " if close else ""
    raise TaskSpecError(
        f"unknown object {asset!r}: {hint}Give an asset id (Laptop-0) or a category (Laptop, "
        f"meaning its instance 0); categories are {categories} (ids: `simjudge assets list`)"
    )


def _same_text(a: str, b: str) -> bool:
    """Whether two descriptions say the same (case, spacing and a final period aside)."""
    return " ".join(a.split()).rstrip(".").lower() == " ".join(b.split()).rstrip(".").lower()


@functools.lru_cache(maxsize=256)
def _derive(name: str, description: str, asset: str, object_name: str) -> GoalDerivation:
    return derive_goal(name, description, asset, object_name)


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
