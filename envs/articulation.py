"""Semantic articulation trees: what a task proposer and generated code may name.

An :class:`ArticulationTree` mirrors the PartNet-Mobility / RoboGen description
of an articulated object: links ``base, link_0, link_1, ...``, joints
``joint_0, joint_1, ...`` (``joint_i`` moves ``link_i``), joint types, limits and
one semantic label per link such as ``link_0 hinge door``.

Convention the prompts rely on (RoboGen): a joint's **lower limit is its
closed / natural state** (door shut, drawer in, button released, lid down).

The tree is serialised both as JSON (:meth:`ArticulationTree.to_json`) and as
RoboGen-style text (:meth:`ArticulationTree.to_text`), the form shown to LLMs.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

__all__ = ["JointType", "LinkSpec", "JointSpec", "ArticulationTree", "SEMANTIC_KIND", "urdf_joint_link"]

JointType = Literal["revolute", "prismatic", "continuous", "fixed"]

SEMANTIC_KIND: dict[str, str] = {
    "revolute": "hinge",
    "prismatic": "slider",
    "continuous": "free",
    "fixed": "static",
}
"""PartNet-Mobility's word for how a link moves, by URDF joint type."""


@dataclass(frozen=True)
class LinkSpec:
    """One link of an articulated object.

    Attributes:
        name: URDF link name (``base`` or ``link_<i>``).
        semantic: What the part is (``door``, ``drawer``, ``handle``, ``lid``,
            ``button``, ``knob``, ``screen``, ...).
        kind: How it moves relative to its parent: ``hinge``, ``slider``,
            ``free`` (continuous rotation), ``static`` or ``heavy`` (the base).
    """

    name: str
    semantic: str
    kind: str


@dataclass(frozen=True)
class JointSpec:
    """One joint of an articulated object.

    Attributes:
        name: URDF joint name (``joint_<i>``).
        type: URDF joint type.
        parent: Parent link name.
        child: Child link name.
        lower: Closed / natural position (rad or m).
        upper: Fully actuated position (rad or m). For ``continuous`` joints the
            range ``[lower, upper]`` is the useful dial range (one turn).
        spring: If set, the joint returns to ``lower`` by itself (buttons,
            self-closing lids), emulated by a weak position motor.
    """

    name: str
    type: JointType
    parent: str
    child: str
    lower: float = 0.0
    upper: float = 0.0
    spring: bool = False


@dataclass(frozen=True)
class ArticulationTree:
    """Links, joints and semantics of one articulated asset instance.

    Attributes:
        asset_id: Catalogue id, e.g. ``StorageFurniture-2``.
        category: PartNet-Mobility style category, e.g. ``StorageFurniture``.
        links: All links, ``base`` first.
        joints: All joints; fixed joints included (handles are fixed links).
    """

    asset_id: str
    category: str
    links: tuple[LinkSpec, ...]
    joints: tuple[JointSpec, ...] = field(default_factory=tuple)

    @property
    def link_names(self) -> list[str]:
        """Names of all links, ``base`` first."""
        return [link.name for link in self.links]

    @property
    def joint_names(self) -> list[str]:
        """Names of all joints."""
        return [joint.name for joint in self.joints]

    @property
    def movable_joints(self) -> list[JointSpec]:
        """Joints that are not fixed."""
        return [j for j in self.joints if j.type != "fixed"]

    def link(self, name: str) -> LinkSpec:
        """Return a link by name; raise ``KeyError`` listing the valid names."""
        for link in self.links:
            if link.name == name:
                return link
        raise KeyError(f"{self.asset_id} has no link {name!r}; links are {self.link_names}")

    def joint(self, name: str) -> JointSpec:
        """Return a joint by name; raise ``KeyError`` listing the valid names."""
        for joint in self.joints:
            if joint.name == name:
                return joint
        raise KeyError(f"{self.asset_id} has no joint {name!r}; joints are {self.joint_names}")

    def joint_of_link(self, link_name: str) -> JointSpec | None:
        """The joint whose child is ``link_name`` (None for the base)."""
        for joint in self.joints:
            if joint.child == link_name:
                return joint
        return None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "asset_id": self.asset_id,
            "category": self.category,
            "links": [asdict(link) for link in self.links],
            "joints": [asdict(joint) for joint in self.joints],
        }

    def to_json(self) -> str:
        """Serialise to indented JSON."""
        return json.dumps(self.to_dict(), indent=2) + "\n"

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ArticulationTree:
        """Inverse of :meth:`to_dict`."""
        return cls(
            asset_id=data["asset_id"],
            category=data["category"],
            links=tuple(LinkSpec(**link) for link in data["links"]),
            joints=tuple(JointSpec(**joint) for joint in data["joints"]),
        )

    @classmethod
    def from_json(cls, text: str) -> ArticulationTree:
        """Inverse of :meth:`to_json`."""
        return cls.from_dict(json.loads(text))

    def to_text(self) -> str:
        """RoboGen-style articulation tree and semantics, as shown to an LLM."""
        lines = [f"The articulation tree of {self.category} ({self.asset_id}):", "```links"]
        lines += [link.name for link in self.links]
        lines += ["```", "", "```joints"]
        for joint in self.joints:
            limit = ""
            if joint.type != "fixed":
                limit = f" lower: {joint.lower:.4g} upper: {joint.upper:.4g}"
            lines.append(
                f"joint_name: {joint.name} joint_type: {joint.type} "
                f"parent_link: {joint.parent} child_link: {joint.child}{limit}"
            )
        lines += ["```", "", "```semantics"]
        lines += [f"{link.name} {link.kind} {link.semantic}" for link in self.links]
        lines.append("```")
        return "\n".join(lines) + "\n"


def urdf_joint_link(joint: ET.Element, tag: str) -> str:
    """The link named by a URDF ``<joint>``'s ``parent`` or ``child`` tag.

    Raises:
        ValueError: The tag or its ``link`` attribute is missing (the message names the joint).
    """
    element = joint.find(tag)
    link = element.get("link") if element is not None else None
    if link is None:
        raise ValueError(f"URDF joint {joint.get('name')!r} has no <{tag} link=...> tag")
    return link
