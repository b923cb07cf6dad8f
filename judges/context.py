"""What a judge is told before an episode: :class:`JudgeContext`.

Why a plain record with names and trees rather than the env: pre-execution judges (the rule
judge, an LLM judge) must work on a proposal before any scene exists, and judges travel to
worker processes (SB3 ``SubprocVecEnv``), so the context holds only picklable data — task
text, the scene config as a dict, the articulation trees (RoboGen text and structured), the
names the state API accepts, the subtask's kind and code, and the task verb.

Example:
    >>> ctx = JudgeContext(task="Open the drawer", object_names=("Cabinet",),
    ...                    links={"Cabinet": ("base", "link_0")},
    ...                    joints={"Cabinet": ("joint_0",)})
    >>> ctx.verb, ctx.link_names("Cabinet"), ctx.joint_names("Oven")
    ('open', ('base', 'link_0'), None)
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from simjudge.envs.articulation import ArticulationTree, JointSpec, JointType, LinkSpec

from .signals import to_jsonable

__all__ = ["VERB_TARGETS", "JudgeContext", "infer_verb", "parse_articulation_text"]

VERB_TARGETS: dict[str, str] = {
    "open": "upper",
    "pull": "upper",
    "press": "upper",
    "unfold": "upper",
    "raise": "upper",
    "lift": "upper",
    "close": "lower",
    "shut": "lower",
    "fold": "lower",
    "lower": "lower",
}
"""Task verb -> the joint limit it drives towards (a lower limit is the closed / natural
state, RoboGen's convention). Ambiguous verbs (``push``, ``turn``, ``rotate``) are absent."""

_WORD = re.compile(r"[a-z]+")


def infer_verb(text: str) -> str:
    """The first verb of :data:`VERB_TARGETS` in ``text`` ("" if none), e.g. "Open Drawer"."""
    for word in _WORD.findall(str(text).lower()):
        if word in VERB_TARGETS:
            return str(word)
    return ""


_HEADER = re.compile(r"articulation tree of (?P<category>\S+) \((?P<asset>[^)]*)\)")
_JOINT = re.compile(
    r"joint_name:\s*(?P<name>\S+)\s+joint_type:\s*(?P<type>\S+)\s+parent_link:\s*(?P<parent>\S+)"
    r"\s+child_link:\s*(?P<child>\S+)(?:\s+lower:\s*(?P<lower>\S+)\s+upper:\s*(?P<upper>\S+))?"
)


def parse_articulation_text(text: str) -> ArticulationTree:
    """Read RoboGen-style articulation tree text (``ArticulationTree.to_text``) back.

    Why: LLM-facing contexts often carry only the text; judges still need the names and
    limits. Sections are the fenced ``links``, ``joints`` and ``semantics`` blocks.

    Raises:
        ValueError: The text has no ``links`` block.
    """
    header = _HEADER.search(text)
    blocks: dict[str, list[str]] = {}
    current: str | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("```"):
            tag = line[3:].strip()
            current = tag if tag and current is None else None
            if current is not None:
                blocks[current] = []
            continue
        if current is not None and line:
            blocks[current].append(line)
    if "links" not in blocks:
        raise ValueError("articulation text has no ```links block; pass ArticulationTree.to_text()")
    semantics = {}
    for line in blocks.get("semantics", []):
        parts = line.split(maxsplit=2)
        if len(parts) == 3:
            semantics[parts[0]] = (parts[1], parts[2])
    links = tuple(
        LinkSpec(name, semantics.get(name, ("", ""))[1], semantics.get(name, ("", ""))[0])
        for name in blocks["links"]
    )
    joints = []
    for line in blocks.get("joints", []):
        m = _JOINT.search(line)
        if m:
            lower, upper = float(m["lower"] or 0.0), float(m["upper"] or 0.0)
            kind = cast(JointType, m["type"])  # as the prompt names it (not validated)
            joints.append(JointSpec(m["name"], kind, m["parent"], m["child"], lower, upper))
    return ArticulationTree(
        asset_id=header["asset"] if header else "",
        category=header["category"] if header else "",
        links=links,
        joints=tuple(joints),
    )


@dataclass(frozen=True)
class JudgeContext:
    """Everything a judge may know about the task before observing it.

    Missing pieces are derived on construction: ``trees`` from ``articulation`` text,
    ``links``/``joints`` from ``trees``, ``object_names`` from all of them and the scene,
    ``verb`` from the subtask name, then the task text (see :func:`infer_verb`).

    Attributes:
        task: Task description shown to judges ("Pull the top drawer open.").
        task_name: Short task name ("Open Drawer").
        scene: Scene config as a dict (``SceneConfig.model_dump(mode="json")``).
        articulation: Object -> RoboGen articulation tree text.
        trees: Object -> ``ArticulationTree.to_dict()`` (structured: limits, semantics).
        object_names: Objects in the scene.
        links: Object -> link names the state API accepts.
        joints: Object -> movable joint names the state API accepts.
        subtask_kind: ``primitive``, ``reward`` or ``success`` (None outside subtasks).
        subtask_code: The subtask's code (None outside subtasks).
        subtask_name: The subtask's name ("open the drawer").
        verb: Task verb of :data:`VERB_TARGETS` ("" = unknown: direction is not checked).
        goal: Privileged goal (``JointGoal``/``PlaceGoal``); only privileged judges read it.
        seed: Reset seed of the episode (None if not seeded).
        episode: Episode index within the wrapper's lifetime (0-based).
        extra: Free-form additions (LLM judges: keyframe settings, prompts ...).
    """

    task: str = ""
    task_name: str = ""
    scene: Mapping[str, Any] = field(default_factory=dict)
    articulation: Mapping[str, str] = field(default_factory=dict)
    trees: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    object_names: tuple[str, ...] = ()
    links: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    joints: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    subtask_kind: str | None = None
    subtask_code: str | None = None
    subtask_name: str = ""
    verb: str = ""
    goal: Any = None
    seed: int | None = None
    episode: int = 0
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        trees = {k: dict(v) for k, v in self.trees.items()}
        for obj, text in self.articulation.items():
            if obj not in trees and text:
                trees[obj] = parse_articulation_text(text).to_dict()
        links = {k: tuple(v) for k, v in self.links.items()}
        joints = {k: tuple(v) for k, v in self.joints.items()}
        for obj, tree in trees.items():
            links.setdefault(obj, tuple(link["name"] for link in tree["links"]))
            movable = [j["name"] for j in tree["joints"] if j["type"] != "fixed"]
            joints.setdefault(obj, tuple(movable))
        names = list(self.object_names)
        scene_objects = [
            o.get("name") for o in self.scene.get("objects", []) if isinstance(o, Mapping)
        ]
        for name in [*scene_objects, *trees, *links, *joints]:
            if name and name not in names:
                names.append(name)
        verb = self.verb or infer_verb(self.subtask_name) or infer_verb(self.task_name)
        verb = verb or infer_verb(self.task)
        object.__setattr__(self, "trees", trees)
        object.__setattr__(self, "links", links)
        object.__setattr__(self, "joints", joints)
        object.__setattr__(self, "object_names", tuple(names))
        object.__setattr__(self, "verb", verb)

    # name queries -------------------------------------------------------------------------
    def link_names(self, obj: str) -> tuple[str, ...] | None:
        """Link names of ``obj``, or None if the context does not know them."""
        return self.links.get(obj)

    def joint_names(self, obj: str) -> tuple[str, ...] | None:
        """Movable joint names of ``obj``, or None if the context does not know them."""
        return self.joints.get(obj)

    def joint_limit(self, obj: str, joint: str) -> tuple[float, float] | None:
        """``(lower, upper)`` from the tree, or None if unknown."""
        for spec in self.trees.get(obj, {}).get("joints", ()):
            if spec["name"] == joint and spec["type"] != "fixed":
                lo, hi = sorted((float(spec["lower"]), float(spec["upper"])))
                return lo, hi
        return None

    def tree(self, obj: str) -> ArticulationTree | None:
        """The structured tree of ``obj`` (None for rigid or unknown objects)."""
        data = self.trees.get(obj)
        return ArticulationTree.from_dict(dict(data)) if data else None

    @property
    def verb_target(self) -> str | None:
        """``upper``/``lower``: where the verb drives joints (None if unknown)."""
        return VERB_TARGETS.get(self.verb)

    # derived contexts ---------------------------------------------------------------------
    def with_subtask(self, kind: str | None, code: str | None, name: str = "") -> JudgeContext:
        """The same context about one subtask (the verb is re-derived from ``name``)."""
        verb = infer_verb(name) or self.verb
        return dataclasses.replace(
            self, subtask_kind=kind, subtask_code=code, subtask_name=name, verb=verb
        )

    def for_episode(self, seed: int | None, episode: int) -> JudgeContext:
        """The same context for one episode (seed and index set).

        Why not ``dataclasses.replace``: it re-runs ``__post_init__``, which derives trees,
        names and the verb from fields that do not change here, on every reset; a copy with
        the two fields set is the same context (see ``test_for_episode_equals_replace``).
        """
        context = object.__new__(JudgeContext)
        context.__dict__.update(self.__dict__)
        context.__dict__["seed"] = seed
        context.__dict__["episode"] = int(episode)
        return context

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (the goal as its pydantic dump)."""
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return cast(dict[str, Any], to_jsonable(fields))

    @classmethod
    def from_env(cls, env: Any, **overrides: Any) -> JudgeContext:
        """Build a context from a (possibly wrapped) :class:`~simjudge.envs.sim_env.SimEnv`.

        Reads the task name, scene config, trees, the names the state API accepts and the
        env goal (privileged). Envs without a built scene give only ``overrides``.

        Args:
            env: The env.
            **overrides: Field values that replace the derived ones (``task``, ``verb``,
                ``subtask_kind``, ``subtask_code`` ...).
        """
        base = getattr(env, "unwrapped", env)
        scene = getattr(base, "scene", None)
        if scene is None or not hasattr(scene, "objects"):
            return cls(**overrides)
        fields: dict[str, Any] = {
            "task": getattr(base, "task_name", ""),
            "task_name": getattr(base, "task_name", ""),
            "scene": base.scene_config.model_dump(mode="json", by_alias=True),
            "goal": getattr(base, "goal", None),
            "object_names": tuple(scene.objects),
            "links": {n: tuple(o.link_index) for n, o in scene.objects.items()},
            "joints": {n: tuple(o.joint_index) for n, o in scene.objects.items()},
            "trees": {n: o.tree.to_dict() for n, o in scene.objects.items() if o.tree},
            "articulation": {n: o.tree.to_text() for n, o in scene.objects.items() if o.tree},
        }
        fields.update(overrides)
        return cls(**fields)
