"""Tasks from an object (RoboGen's task proposal): what an arm could do with it, with goals.

RoboGen starts skill acquisition by asking an LLM which tasks an object affords. Here
:func:`propose_tasks` asks either a deterministic template over the articulation tree
(every movable part: open / close / open halfway for doors, lids, drawers, windows and
screens; turn knobs; press buttons and pumps; unfold / fold a chair) or an LLM (task names
and descriptions as schema-checked JSON). Every proposal then gets its goal from the goal
parser (:func:`simjudge.tasks.spec.goal_parser.derive_goal`), never from the proposer: a
task whose goal cannot be derived without guessing is kept with its ambiguities and
reported, and the acquisition loop skips it.

Example:
    >>> found = propose_tasks("Safe-0", n=3)
    >>> [(p.name, p.goal is not None) for p in found]
    [('Open the safe door', True), ('Close the safe door', True), ('Open the safe door halfway', True)]
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field

from simjudge.tasks.spec import TaskGoal, atomic_write
from simjudge.tasks.spec.goal_parser import Part, derive_goal, object_parts

__all__ = ["TaskProposal", "load_task_proposals", "propose_tasks", "save_task_proposals",
           "template_tasks"]

_OPENABLE = ("door", "lid", "drawer", "window", "screen")
_PRESSABLE = ("button", "pump")


@dataclass(frozen=True)
class TaskProposal:
    """A proposed task and the goal it will be judged by.

    Attributes:
        name: Task name (``Open the top drawer``).
        description: One sentence of what to do.
        asset: The object's catalogue id.
        source: ``template`` or the LLM's ``backend:model``.
        goal: The derived goal, or None when it cannot be derived without guessing.
        reasons: How the goal parser chose each target.
        ambiguities: Why no goal was derived (empty when there is one).
    """

    name: str
    description: str
    asset: str
    source: str
    goal: TaskGoal | None = None
    reasons: list[str] = field(default_factory=list)
    ambiguities: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the goal as its JSON model)."""
        return {"name": self.name, "description": self.description, "object": self.asset,
                "source": self.source,
                "goal": None if self.goal is None else self.goal.model_dump(mode="json"),
                "reasons": list(self.reasons), "ambiguities": list(self.ambiguities)}


def _qualifiers(parts: Sequence[Part]) -> dict[str, str]:
    """A position word per part when several parts share a semantic (top/bottom, left/right)."""
    groups: dict[str, list[Part]] = defaultdict(list)
    for part in parts:
        groups[part.semantic].append(part)
    words: dict[str, str] = {}
    for group in groups.values():
        if len(group) < 2 or any(p.position is None for p in group):
            continue
        for axis, (low, high) in ((2, ("bottom", "top")), (1, ("right", "left"))):
            values = sorted(p.position[axis] for p in group)  # type: ignore[index]
            if len(group) == 2 and values[1] - values[0] > 0.05:
                for p in group:
                    words[p.link] = high if p.position[axis] == values[1] else low  # type: ignore[index]
                break
    return words


def template_tasks(asset: str) -> list[tuple[str, str]]:
    """``(name, description)`` of every task the object's parts afford (deterministic).

    Raises:
        GoalParseError: ``asset`` is not in the catalogue.
    """
    parts = object_parts(asset)
    if not parts:
        return []
    category = asset.split("-")[0]
    noun = {"StorageFurniture": "cabinet", "FoldingChair": "chair", "TrashCan": "trash can",
            "ButtonPanel": "panel"}.get(category, category.lower())
    words = _qualifiers(parts)
    tasks: list[tuple[str, str]] = []
    for part in parts:
        where = words.get(part.link)
        thing = f"{where} {part.semantic}" if where else (
            part.semantic if part.semantic == noun else f"{noun} {part.semantic}")
        if part.semantic == "seat":
            tasks += [("Unfold the chair", "Unfold the folding chair by lifting its seat."),
                      ("Fold the chair", "Fold the folding chair by lowering its seat.")]
        elif part.semantic in _OPENABLE:
            of = "" if thing == noun else f" of the {noun}"
            tasks += [(f"Open the {thing}", f"Open the {thing}{of}."),
                      (f"Close the {thing}", f"Close the {thing}{of}."),
                      (f"Open the {thing} halfway", f"Open the {thing}{of} halfway.")]
        elif part.semantic == "knob":
            tasks.append((f"Turn the {thing}", f"Turn the {thing} of the {noun}."))
        elif part.semantic in _PRESSABLE:
            tasks.append((f"Press the {thing}", f"Press the {thing} of the {noun}."))
        elif part.semantic in ("head", "handle"):
            tasks.append((f"Rotate the {thing}", f"Rotate the {thing} of the {noun}."))
    unique = dict.fromkeys(tasks)
    return list(unique)


class _TaskOut(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=3)
    description: str = Field(min_length=3)


class TaskListOutput(BaseModel):
    """The JSON an LLM task proposer must return.

    Attributes:
        tasks: Task names and one-sentence descriptions.
    """

    model_config = ConfigDict(extra="forbid")
    tasks: list[_TaskOut] = Field(min_length=1)


def _llm_tasks(client: Any, asset: str, n: int, seed: int) -> list[tuple[str, str]]:
    from simjudge.envs.catalogue import default_catalogue
    from simjudge.llm.structured import complete_structured

    tree = default_catalogue().get(asset).tree
    prompt = (
        f"A robot arm with a suction gripper stands in front of this object ({asset}):\n"
        f"{tree.to_text() if tree is not None else asset}\n\n"
        f"Propose {n} different manipulation tasks the arm could do with it, each changing "
        "one part's joint (open, close, turn, press, by an amount such as halfway or fully). "
        "Name the part as the tree does (door, drawer, lid, knob, button ...)."
    )
    messages = [{"role": "system", "content": "You propose robot manipulation tasks."},
                {"role": "user", "content": prompt}]
    output, _ = complete_structured(client, messages, TaskListOutput, temperature=0.7,
                                    max_tokens=512, seed=seed)
    return [(t.name, t.description) for t in output.tasks]


def propose_tasks(
    asset: str, n: int | None = None, client: Any = None, seed: int = 0
) -> list[TaskProposal]:
    """Tasks an arm could do with ``asset``, each with its derived goal (or why not).

    Args:
        asset: Catalogue id (``Microwave-0``) or category (instance 0).
        n: At most this many (None: every template task; the LLM is asked for 5).
        client: An LLM client (:mod:`simjudge.llm`), or None for the template.
        seed: Sampling seed of the LLM.

    Raises:
        GoalParseError: ``asset`` is not in the catalogue.
    """
    from simjudge.envs.catalogue import default_catalogue

    catalogue = default_catalogue()
    asset = asset if asset in catalogue else catalogue.by_category(asset)[0].asset_id
    if client is None:
        found, source = template_tasks(asset), "template"
    else:
        found = _llm_tasks(client, asset, n or 5, seed)
        source = f"{client.backend}:{client.model}"
    proposals = []
    for name, description in found[:n] if n else found:
        derivation = derive_goal(name, description, asset)
        proposals.append(TaskProposal(name, description, asset, source, derivation.goal,
                                      list(derivation.reasons), list(derivation.ambiguities)))
    return proposals


def save_task_proposals(path: str | Path, proposals: Sequence[TaskProposal]) -> Path:
    """Write proposals as YAML (what ``acquire --tasks-from`` reads)."""
    path = Path(path)
    atomic_write(path, yaml.safe_dump({"tasks": [p.to_dict() for p in proposals]},
                                      sort_keys=False, allow_unicode=True))
    return path


def load_task_proposals(path: str | Path) -> list[dict[str, str]]:
    """``[{"name", "description", "object"}]`` from a YAML or JSON task file.

    Accepts the file :func:`save_task_proposals` writes, or a plain list of such entries.

    Raises:
        ValueError: The file is not a list of tasks with ``name`` and ``object``; the message
            names the bad entry.
    """
    from simjudge.tasks.spec.bounded import load_json_text, load_yaml, read_text_bounded

    text = read_text_bounded(path)
    data = (load_json_text(text, str(path)) if str(path).endswith(".json")
            else load_yaml(text, str(path)))
    entries = data.get("tasks") if isinstance(data, dict) else data
    if not isinstance(entries, list) or not entries:
        raise ValueError(f"{path}: expected a list of tasks (or {{tasks: [...]}}), got "
                         f"{type(entries).__name__}; write it with `simjudge propose-tasks`")
    out = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or not entry.get("name") or not entry.get("object"):
            raise ValueError(f"{path}: tasks[{i}] needs 'name' and 'object' (an asset id), got "
                             f"{entry!r}")
        out.append({"name": str(entry["name"]), "description": str(entry.get("description", "")),
                    "object": str(entry["object"])})
    return out
